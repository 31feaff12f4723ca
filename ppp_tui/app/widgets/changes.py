"""A run's Changes tab: the files its agents edited side by side, and the diffs of the
file and agent under the cursor.

The table has a row per file (by path) and a column per agent: the lines that agent
added and removed in it, or a dim dash where it left the file alone. The cursor moves
over its cells: on an agent's cell the diff view below (beside, on a wide terminal)
shows that agent's edits of the file, on the path every agent's. The table is filled
from the store's index of edits (no diff read); a file's diffs are read when the
cursor reaches it (docs/sessions.md, "Reading a session in the app").
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.widgets import Static

from ...core.model import Edit, Run
from ...core.sessions.changes import FileChange
from ...core.wording import counted
from ..text import literal
from .diff_view import NOTE, DiffView, Row, diff_rows
from .files_table import FilesTable, figures

if TYPE_CHECKING:
    from ...storage.store import Store

WIDE = 120  # columns from which the diff may sit beside the files, not below them
ALL = "\x00all"  # the path column's agent: every agent's edits of the file

# Reads one agent's edits of one file: (agent, path) -> its edits in order.
EditReader = Callable[[str, str], list[Edit]]


class ChangesPanel(Vertical):
    """The changed files of a run's agents side by side, and the diffs of one."""

    ALLOW_MAXIMIZE = True
    BINDINGS = [
        Binding(
            "z",
            "zoom",
            "Zoom",
            tooltip="Changes tab: the files and diffs on the whole screen (again, or"
            " escape: back); ←/→ agent, ↑/↓ file, tab to the diff and back",
            id="changes.zoom",
            show=False,  # at 80 columns it would push "? Help" off the footer
        ),
    ]

    DEFAULT_CSS = """
    ChangesPanel { height: 1fr; }
    ChangesPanel #changed-files { height: auto; max-height: 50%; }
    ChangesPanel.-wide #changed-files {
        width: auto; max-width: 50%; height: 1fr; max-height: 100%;
        scrollbar-gutter: stable;  /* a long list's scroll bar hides no column */
    }
    ChangesPanel #change-heading {
        height: 1; padding: 0 1; background: $panel;
        text-wrap: nowrap; text-overflow: ellipsis;
    }
    ChangesPanel #change-side { height: 1fr; }
    ChangesPanel.-wide { layout: horizontal; }
    ChangesPanel.-wide #change-side { width: 1fr; }
    """

    def __init__(
        self,
        agents: list[str],
        files: dict[str, list[FileChange]],
        read: EditReader,
        *,
        id: str | None = None,
    ) -> None:
        super().__init__(id=id)
        self.agents = agents
        self.files = files
        self._read = read
        # (agent, path): its FileChange; the paths in order, by path
        self._by = {(name, c.path): c for name, changes in files.items() for c in changes}
        self.paths = sorted({path for _, path in self._by})
        self.shown: tuple[str, str] | None = None  # (agent or ALL, path) in the diff view

    def compose(self) -> ComposeResult:
        yield FilesTable(self.agents, self.paths, self._by, id="changed-files")
        with Vertical(id="change-side"):
            yield Static(id="change-heading")
            yield DiffView(id="diff")

    def on_mount(self) -> None:
        self._show_cell(0, 0)
        # Zoomed in and out with z, or out with escape: the heading says which key.
        self.watch(self.screen, "maximized", self._zoomed, init=False)

    def _zoomed(self) -> None:
        if self.shown is not None:
            self.query_one("#change-heading", Static).update(
                self._heading(*self.shown), layout=False
            )

    def on_resize(self) -> None:
        # Beside the diff when the terminal is wide and the table fits half of it (a
        # narrower table would hide agents' columns), else above it.
        table = self.query_one(FilesTable).virtual_size.width + 2  # and its scroll bar
        self.set_class(self.size.width >= WIDE and table <= self.size.width // 2, "-wide")

    @on(FilesTable.Picked)
    def _picked(self, event: FilesTable.Picked) -> None:
        event.stop()
        self._show_cell(event.row, event.column)

    def _show_cell(self, row: int, column: int) -> None:
        if not self.paths:
            return
        path = self.paths[min(row, len(self.paths) - 1)]
        agent = ALL if column == 0 else self.agents[column - 1]
        if self.shown == (agent, path):
            return
        self.shown = (agent, path)
        self.query_one("#change-heading", Static).update(self._heading(agent, path), layout=False)
        self.query_one(DiffView).show(self._rows(agent, path))

    def _rows(self, agent: str, path: str) -> list[Row]:
        if agent != ALL and (agent, path) not in self._by:
            return [Row(NOTE, f"{agent} did not change {path}.")]
        names = [agent] if agent != ALL else self.agents
        return diff_rows(
            (name, edit)
            for name in names
            if (name, path) in self._by
            for edit in self._read(name, path)
        )

    def _heading(self, agent: str, path: str) -> Content:
        """The line above the diff: the file, and who changed it by how much."""
        parts: list[Content | str] = [Content.styled(literal(path, True), "bold"), " · "]
        if agent == ALL:
            by = [(name, self._by[name, path]) for name in self.agents if (name, path) in self._by]
            parts.append(counted(len(by), "agent"))
            for name, change in by:
                parts += [", ", literal(name, True), " ", *self._figures(change)]
        else:
            parts.append(literal(agent, True))
            found = self._by.get((agent, path))
            if found is None:
                parts.append(": not changed")
            else:
                parts += [": ", counted(found.edits, "edit"), " ", *self._figures(found)]
        zoomed = self.is_mounted and self.screen.maximized is self
        parts.append(Content.styled(" · z: back" if zoomed else " · z: zoom", "dim"))
        return Content.assemble(*parts)

    @staticmethod
    def _figures(change: FileChange) -> list[Content]:
        added, removed = figures(change)
        return [Content.styled(added, "$success"), Content(" "), Content.styled(removed, "$error")]

    def action_zoom(self) -> None:
        """The Changes tab on the whole screen, or back in its place."""
        screen = self.screen
        if screen.maximized is self:
            screen.minimize()
        else:
            screen.maximize(self, container=False)


def changes_panel(store: Store, run: Run) -> ChangesPanel | None:
    """The Changes tab's panel of a run whose agents edited files; None when none did."""
    from ...storage.changes import changed_files, file_edits

    files = changed_files(store, run.id)
    if not files:
        return None

    def read(agent: str, path: str) -> list[Edit]:
        return file_edits(store, run.id, agent, path)

    return ChangesPanel([agent.name for agent in run.agents], files, read, id="changes")
