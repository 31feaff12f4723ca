"""Grouping runs read from sessions in the app, the app's side: after the box that asks
first (screens/regroup.py), the change is written off the UI thread and the runs list
shows the new run (storage/sessions/regroup.py does the work)."""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from textual import work

from ..core.errors import PPPError
from ..core.wording import counted
from ..storage.store import DatabaseLocked
from .messages import GroupRuns, UngroupRun
from .rereading import Rereading
from .text import inline, literal

if TYPE_CHECKING:
    from ..storage.sessions.regroup import Grouped, Ungrouped
    from ..storage.store import Store

WAIT_S = 5.0  # how long a grouping waits for another process's lock (as a mark does)


class Regrouping(Rereading):
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
        app = self
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
        from .screens.run import RunScreen

        app = self
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
            note = f"{literal(done.run_id, True)} ungrouped into {counted(len(done.runs), 'run')}"
        app._runs_screen().grouped(shown)
        app.notify(note, markup=False)
        app._read_again()
