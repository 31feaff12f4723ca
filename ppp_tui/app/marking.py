"""Marks and ratings from the app: the preferred agent of a run (`p`), written at once or,
while another process holds the database's lock, off the UI thread as soon as it is
free; and a technical score given by hand (`e`), after which the runs are read again.
"""

from __future__ import annotations

import sqlite3
import time
from typing import TYPE_CHECKING

from textual import work

from ..core.errors import PPPError
from ..storage.store import DatabaseLocked
from .rereading import Rereading
from .text import inline, literal

if TYPE_CHECKING:
    from collections.abc import Callable

    from ..core.model import Run

MARK_LOCK_WAIT_S = 5.0  # a mark waits this long for the lock (off the UI thread), as the CLI


def _when_unlocked(write: Callable[[], object]) -> None:
    """Call `write` until the database's lock lets it, for MARK_LOCK_WAIT_S at the most:
    then PPPError, the lock's message and the wait."""
    deadline = time.monotonic() + MARK_LOCK_WAIT_S
    while True:
        try:
            write()
            return
        except DatabaseLocked as error:
            if time.monotonic() >= deadline:
                raise PPPError(f"{error} (waited {MARK_LOCK_WAIT_S:g} s)") from None
            # Each try waits UI_LOCK_WAIT_S inside SQLite; the UI's reads go between tries.
            time.sleep(0.05)


class Marking(Rereading):
    """The app's side of marks and ratings by hand (PPPApp is one)."""

    _mark_waiting: bool  # a mark waits for another process's lock

    def mark_preferred(self, run_id: str, agent: str | None, stored: bool = False) -> None:
        """Mark (with None clear) the run's preferred agent; `stored`: the mark waited
        for a lock and is in the database already."""
        workspace = self.workspace
        if workspace is None:
            return
        if self._mark_waiting and not stored:
            self.notify("the last mark is still waiting for the database", severity="warning")
            return
        self._own_marks += 1
        try:
            if stored:
                workspace.marked(run_id, agent)
            else:
                workspace.mark(run_id, agent)
        except DatabaseLocked:
            self._mark_waiting = True
            self.notify(
                "another process is writing to the database: the mark is saved when it is done",
                timeout=3,
            )
            self._mark_when_unlocked(run_id, agent, workspace.store.reviewer)
            return
        except PPPError as error:
            self.notify(inline(error), title="Mark not saved", severity="error", markup=False)
            return
        shown = f"preferred {literal(agent, True)}" if agent else "mark cleared"
        self.notify(f"{literal(run_id, True)}: {shown}", markup=False)
        self._workspace_changed()

    @work(thread=True, group="mark")
    def _mark_when_unlocked(self, run_id: str, agent: str | None, reviewer: str) -> None:
        """Record the mark for `reviewer` (the one when `p` was pressed) once the
        database's lock lets it."""
        workspace = self.workspace
        assert workspace is not None
        try:
            _when_unlocked(
                lambda: workspace.store.mark(run_id, agent, source="app", reviewer=reviewer)
            )
        except (PPPError, sqlite3.Error) as error:  # the lock kept, or e.g. the run is gone
            self._mark_failed(str(error))
            return
        finally:
            self._mark_waiting = False
        self.call_from_thread(self.mark_preferred, run_id, agent, True)

    def _mark_failed(self, error: str) -> None:
        if not self.is_running:
            return  # quitting closed the database under the wait
        self.call_from_thread(
            self.notify, error, title="Mark not saved", severity="error", timeout=10, markup=False
        )

    # -- technical scores by hand -----------------------------------------------------

    def rate_technical(self, run_id: str, agent: str, technical: float) -> None:
        """Store the user's own technical score for one agent, then show it on the open
        run, the runs list and the figures (written off the UI thread: it may wait for
        another process's lock, as a mark does)."""
        workspace = self.workspace
        if workspace is None or not workspace.loaded:
            self.notify("the database is still loading", severity="warning")
            return
        self._rate(run_id, agent, technical)

    @work(thread=True, group="rate")
    def _rate(self, run_id: str, agent: str, technical: float) -> None:
        from ..storage.technical import Score

        workspace = self.workspace
        assert workspace is not None
        try:
            _when_unlocked(
                lambda: workspace.store.set_technical([Score(run_id, agent, technical, "rating")])
            )
            run = workspace.store.get_run(run_id)
        except (PPPError, sqlite3.Error) as error:
            if not self._closed:  # else quitting closed the database under the write
                self.call_from_thread(
                    self.notify,
                    inline(error),
                    title="Rating not saved",
                    severity="error",
                    timeout=10,
                    markup=False,
                )
            return
        self.call_from_thread(self._rated, run, agent, technical)

    def _rated(self, run: Run, agent: str, technical: float) -> None:
        """A rating is stored: the open run shows it now, the arrays once read again."""
        from .screens.run import RunScreen  # a run screen asked for the rating

        # A look for outside changes that read the database before the rating would
        # show it undone: its result is dropped, as after a mark.
        self._own_marks += 1
        for screen in self.screen_stack:
            if isinstance(screen, RunScreen) and screen.run.id == run.id:
                screen.replace_run(run)
        self.notify(
            f"{literal(run.id, True)}: {literal(agent, True)} technical {technical:.2f}"
            " (your rating)",
            markup=False,
        )
        self._read_again()
