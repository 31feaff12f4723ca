"""Grouping runs read from sessions in the app: the boxes that ask first (`g` on the runs
list, `u` on a run), and the app's side, which writes off the UI thread and then shows
the new run (storage/sessions/regroup.py does the work)."""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, cast

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, Static

from ..core.errors import PPPError
from ..storage.store import DatabaseLocked
from .messages import GroupRuns, UngroupRun
from .text import inline, literal

if TYPE_CHECKING:
    from ..core.model import Run
    from ..storage.sessions.regroup import Grouped, Ungrouped
    from ..storage.store import RunInfo, Store
    from .app import PPPApp

LISTED = 6  # runs the grouping box names; the rest are counted
WAIT_S = 5.0  # how long a grouping waits for another process's lock (as a mark does)


def run_line(run_id: str, agents: int, task: str | None, width: int = 64) -> str:
    """One run as the boxes name it: its id, its agents and its task, on one line."""
    from .conversation import cut  # the run screen's module: loaded when a box opens

    head = f"{literal(run_id, True)} · {agents} agent{'s' * (agents != 1)}"
    shown = literal(task, True)
    return cut(f"{head} · {shown}" if shown else head, width)


class GroupScreen(ModalScreen[str | None]):
    """Asks before grouping runs, with a field for the grouped run's name; dismissed with
    the name ("" for the default id) or None if cancelled."""

    BINDINGS = [Binding("escape", "dismiss(None)", "Cancel")]

    def __init__(self, runs: Sequence[RunInfo], default: str, taken: Callable[[str], bool]) -> None:
        super().__init__()
        self.runs = runs
        self.default = default
        self.taken = taken  # whether a name is another run's id

    def compose(self) -> ComposeResult:
        lines = [run_line(i.id, i.agents, i.task) for i in self.runs[:LISTED]]
        if len(self.runs) > LISTED:
            lines.append(f"… and {len(self.runs) - LISTED} more")
        with Vertical(id="group"):
            yield Label(
                Content.styled(f"Group {len(self.runs)} runs into one run of their agents", "bold")
            )
            yield Static(Content("\n".join(lines)), id="group-runs")
            yield Static(
                "Marks, their history and ratings by hand go with the agents.",
                id="group-note",
                markup=False,
            )
            yield Input(placeholder=f"its id (empty: {self.default})", id="group-name")
            yield Label("", id="group-message", markup=False)
            yield Label("enter groups · escape cancels", id="group-close")

    @on(Input.Submitted, "#group-name")
    def _submitted(self, event: Input.Submitted) -> None:
        name = event.value
        if not name.strip():
            self.dismiss("")  # the default id
        elif self.taken(name):
            from .conversation import cut

            shown = cut(literal(name, True), 30)
            self.query_one("#group-message", Label).update(
                f"run {shown} exists already: choose another name"
            )
        else:
            self.dismiss(name)


class UngroupScreen(ModalScreen[bool]):
    """Asks before giving each session of a run its own run again."""

    BINDINGS = [Binding("escape", "dismiss(False)", "Cancel")]

    def __init__(self, run: Run) -> None:
        super().__init__()
        self.run = run

    def compose(self) -> ComposeResult:
        with Vertical(id="ungroup"):
            yield Label(Content.styled("Ungroup this run?", "bold"))
            run = self.run
            yield Static(Content(run_line(run.id, len(run.agents), run.task)), id="ungroup-run")
            yield Static(
                f"Each of its {len(run.agents)} sessions becomes a run of its own again; marks,"
                " their history and ratings by hand go with the agents.",
                id="ungroup-note",
                markup=False,
            )
            with Horizontal(id="ungroup-buttons"):
                yield Button("Ungroup", variant="warning", id="ungroup-yes")
                yield Button("Cancel", id="ungroup-no")

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "ungroup-yes")


class Regrouping:
    """The app's side (PPPApp is one): a message from the runs list (`GroupRuns`) or a run
    (`UngroupRun`) is written off the UI thread, waiting for another process's lock as
    a mark does; then the runs are read again and the runs list shows the new run."""

    def on_group_runs(self, message: GroupRuns) -> None:
        from ..storage.sessions.regroup import group_runs

        run_ids, name = message.run_ids, message.name
        self._regroup(lambda store: group_runs(store, run_ids, name), "Not grouped")

    def on_ungroup_run(self, message: UngroupRun) -> None:
        from ..storage.sessions.regroup import ungroup_run

        run_id = message.run_id
        self._regroup(lambda store: ungroup_run(store, run_id), "Not ungrouped")

    @work(thread=True, group="regroup")
    def _regroup(self, change: Callable[[Store], Grouped | Ungrouped], failed: str) -> None:
        app = cast("PPPApp", self)
        workspace = app.workspace
        if workspace is None:
            return
        deadline = time.monotonic() + WAIT_S
        try:
            while True:
                try:
                    done = change(workspace.store)
                    break
                except DatabaseLocked as error:
                    if time.monotonic() >= deadline:
                        raise PPPError(f"{error} (waited {WAIT_S:g} s)") from None
                    time.sleep(0.05)
        except (PPPError, sqlite3.Error) as error:
            if not app._closed:  # else quitting closed the database under the write
                app.call_from_thread(
                    app.notify,
                    inline(error),
                    title=failed,
                    severity="error",
                    timeout=10,
                    markup=False,
                )
            return
        app.call_from_thread(self._regrouped, done)

    def _regrouped(self, done: Grouped | Ungrouped) -> None:
        """Written: the runs list shows the new run once the runs are read again."""
        from ..storage.sessions.regroup import Grouped
        from .run_screen import RunScreen

        app = cast("PPPApp", self)
        # A look for outside changes that read the database before this would show the
        # old runs: its result is dropped, as after a mark.
        app._own_marks += 1
        while isinstance(app.screen, RunScreen) and app.screen.run.id == done.run_id:
            app.pop_screen()  # the run is gone (ungrouped)
        if isinstance(done, Grouped):
            shown = done.run_id
            count = len(done.agents)
            note = f"grouped into {literal(shown, True)}: {count} agent{'s' * (count != 1)}"
            if done.marked_twice:
                note += "; a reviewer's latest of their marks stays current"
        else:
            shown = done.runs[0][0]
            note = f"{literal(done.run_id, True)} ungrouped into {len(done.runs)} runs"
        app._runs_screen().grouped(shown)
        app.notify(note, markup=False)
        app._read_again()
