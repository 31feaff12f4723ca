"""The Changes tab's table: a row per changed file, a column per agent with the lines it
added and removed there, and a cursor on one cell; drawn one screen row at a time.

A DataTable measures every cell as rows are added: a refactor touching 5,000 files took
two seconds to show. Here the widths come from the paths' lengths and the counts' digits,
and a row is drawn when it scrolls into sight; the header row stays at the top.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from rich.cells import cell_len
from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.binding import Binding
from textual.content import Content
from textual.geometry import Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.strip import Strip

from ...core.sessions.changes import FileChange
from ..text import inline

PATH_CELLS = 48  # a longer path is cut with "…" (the line above the diff has it whole)
GAP = 2  # cells between columns
UNTOUCHED = "—"  # an agent's cell for a file it left alone
MINUS = "−"


def figures(change: FileChange) -> tuple[str, str]:
    """The lines an agent added to a file and removed from it, signed: '+12', and 3
    after a minus sign."""
    return f"+{change.added}", f"{MINUS}{change.removed}"


class FilesTable(ScrollView, can_focus=True):
    """Changed files by agents: ↑/↓ (and the page keys) move the cursor between files,
    ←/→ between the path (every agent) and the agents; a click picks a cell."""

    BINDINGS = [
        Binding("up", "move(-1, 0)", "Up", show=False),
        Binding("down", "move(1, 0)", "Down", show=False),
        Binding("left", "move(0, -1)", "Left", show=False),
        Binding("right", "move(0, 1)", "Right", show=False),
        Binding("pageup", "page(-1)", "Page up", show=False),
        Binding("pagedown", "page(1)", "Page down", show=False),
        Binding("home", "move(-1_000_000_000, 0)", "First", show=False),
        Binding("end", "move(1_000_000_000, 0)", "Last", show=False),
    ]
    COMPONENT_CLASSES = {
        "files-table--header",
        "files-table--odd",
        "files-table--cursor",
        "files-table--added",
        "files-table--removed",
        "files-table--untouched",
    }
    DEFAULT_CSS = """
    FilesTable {
        height: auto;
        overflow-x: auto;
        overflow-y: auto;
        &:focus { background-tint: $foreground 5%; }
    }
    FilesTable > .files-table--header { text-style: bold; background: $panel; }
    FilesTable > .files-table--odd { background: $foreground 4%; }
    FilesTable > .files-table--cursor { background: $block-cursor-blurred-background; }
    FilesTable:focus > .files-table--cursor {
        background: $block-cursor-background; color: $block-cursor-foreground;
        text-style: bold;
    }
    FilesTable > .files-table--added { color: $success; }
    FilesTable > .files-table--removed { color: $error; }
    FilesTable > .files-table--untouched { color: $text-muted; }
    """

    class Picked(Message):
        """The cursor is on another cell: `row` a file's, `column` 0 for the path, else
        1 + the agent's index."""

        def __init__(self, row: int, column: int) -> None:
            super().__init__()
            self.row = row
            self.column = column

    def __init__(
        self,
        agents: Sequence[str],
        paths: Sequence[str],
        changes: Mapping[tuple[str, str], FileChange],
        *,
        id: str | None = None,
    ) -> None:
        super().__init__(id=id)
        self.agents = list(agents)
        self.paths = [inline(path) for path in paths]  # as shown: controls as stand-ins
        self._raw = list(paths)
        self._changes = changes
        self.row = 0
        self.column = 0
        path_width = max((cell_len(path) for path in self.paths), default=0)
        widths = [max(min(path_width, PATH_CELLS), len("file"))]
        for agent in self.agents:
            own = [figures(c) for (a, _), c in changes.items() if a == agent]
            cells = max((len(a) + 1 + len(r) for a, r in own), default=len(UNTOUCHED))
            widths.append(max(cell_len(inline(agent)), cells))
        self.widths = widths
        self.starts = [sum(widths[:k]) + GAP * k + 1 for k in range(len(widths))]
        self.virtual_size = Size(self.starts[-1] + widths[-1] + 1, len(self.paths) + 1)

    # -- the cursor ------------------------------------------------------------------

    def action_move(self, rows: int, columns: int) -> None:
        self.move_to(self.row + rows, self.column + columns)

    def action_page(self, direction: int) -> None:
        self.move_to(self.row + direction * max(self.size.height - 2, 1), self.column)

    def move_to(self, row: int, column: int) -> None:
        """Put the cursor on a cell (kept inside the table) and show it."""
        row = max(0, min(row, len(self.paths) - 1))
        column = max(0, min(column, len(self.agents)))
        if (row, column) == (self.row, self.column):
            return
        self.row, self.column = row, column
        self._into_view()
        self.refresh()
        self.post_message(self.Picked(row, column))

    def on_resize(self) -> None:
        self._into_view()  # the cursor's cell stays in sight when the table shrinks

    def _into_view(self) -> None:
        rows = max(self.scrollable_content_region.height - 1, 1)  # under the header
        y = self.scroll_offset.y
        if self.row < y:
            y = self.row
        elif self.row >= y + rows:
            y = self.row - rows + 1
        width = self.scrollable_content_region.width
        x = self.scroll_offset.x
        left, right = (
            self.starts[self.column] - 1,
            self.starts[self.column] + self.widths[self.column],
        )
        if left < x:
            x = left
        elif right > x + width:
            x = right - width
        self.scroll_to(x, y, animate=False, immediate=True)

    def on_click(self, event: events.Click) -> None:
        offset = event.get_content_offset(self)
        if offset is None or offset.y == 0:  # the header
            return
        x = offset.x + self.scroll_offset.x
        column = max((k for k, start in enumerate(self.starts) if start - 1 <= x), default=0)
        self.move_to(self.scroll_offset.y + offset.y - 1, column)

    # -- drawing -----------------------------------------------------------------------

    def _style(self, name: str) -> Style:
        return self.get_component_rich_style(f"files-table--{name}")

    def _cells(self, row: int) -> list[list[tuple[str, str]]]:
        """Each cell of a file's row as (text, style name) pieces."""
        path = self.paths[row]
        if cell_len(path) > self.widths[0]:
            path = Content(path).truncate(self.widths[0], ellipsis=True).plain
        cells: list[list[tuple[str, str]]] = [[(path, "")]]
        for agent in self.agents:
            change = self._changes.get((agent, self._raw[row]))
            if change is None:
                cells.append([(UNTOUCHED, "untouched")])
            else:
                added, removed = figures(change)
                cells.append([(added, "added"), (" ", ""), (removed, "removed")])
        return cells

    def render_line(self, y: int) -> Strip:
        width = self.size.width
        base = self.rich_style
        if y == 0:
            header = base + self._style("header")
            titles = ["file", *(inline(agent) for agent in self.agents)]
            pieces = [[(title, "")] for title in titles]
            return self._strip(pieces, header, None, width)
        row = int(self.scroll_offset.y) + y - 1
        if row >= len(self.paths):
            return Strip.blank(width, base)
        style = base + self._style("odd") if row % 2 else base
        cursor = self.column if row == self.row else None
        return self._strip(self._cells(row), style, cursor, width)

    def _strip(
        self,
        cells: list[list[tuple[str, str]]],
        style: Style,
        cursor: int | None,
        width: int,
    ) -> Strip:
        segments = [Segment(" ", style)]
        for k, pieces in enumerate(cells):
            on_cursor = k == cursor
            cell_style = style + self._style("cursor") if on_cursor else style
            used = 0
            for text, name in pieces:
                piece = cell_style if on_cursor or not name else cell_style + self._style(name)
                segments.append(Segment(text, piece))
                used += cell_len(text)
            segments.append(Segment(" " * (self.widths[k] - used), cell_style))
            segments.append(Segment(" " * GAP, style))
        x = int(self.scroll_offset.x)
        return Strip(segments).crop(x, x + width).extend_cell_length(width, style)

    def plain(self) -> list[list[str]]:
        """The header and every row, cell by cell, as text."""
        rows = [["file", *map(inline, self.agents)]]
        for row in range(len(self.paths)):
            rows.append(["".join(text for text, _ in cell) for cell in self._cells(row)])
        return rows
