"""`browse --watch`: the agents' sessions followed while the app is open.

A worker thread imports what the folders hold and then follows them
(storage/sessions/watching.py), writing through a connection of its own; the app sees
each write as it sees any other process's (rereading.py), at once rather than at its
next look: new runs join the list and an open run shows its new turns, and the
screens keep their place. The thread ends when the app does.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING

from textual import work

from ..core.errors import PPPError
from .rereading import Rereading
from .text import inline

if TYPE_CHECKING:
    from pathlib import Path

    from ..storage.sessions.importing import SessionReport


class LiveSessions(Rereading):
    """The app's side of following sessions (PPPApp is one)."""

    db_path: Path
    _followed: tuple[str, ...]  # the folders and files followed (none: not watching)
    _stop_following: threading.Event

    def _start_following(self, names: Sequence[str]) -> None:
        self._followed = tuple(names)
        if self._followed:
            self._follow()

    def _end_following(self) -> None:
        self._stop_following.set()

    @work(thread=True, group="sessions")
    def _follow(self) -> None:
        from ..core.sessions.grouping import Grouping
        from ..storage.sessions.watching import watch_places
        from ..storage.store import Store

        try:
            store = Store.open(self.db_path)
        except PPPError as error:
            self.call_from_thread(self._following_failed, str(error))
            return
        try:
            watch_places(store, self._followed, Grouping(), self._stop_following, self._written)
        except PPPError as error:
            if not self._stop_following.is_set():
                self.call_from_thread(self._following_failed, str(error))
        finally:
            store.close()

    def _written(self, report: SessionReport) -> None:
        """A batch written (in the worker): shown now, and its errors told."""
        if self._stop_following.is_set():
            return
        self.call_from_thread(self._sessions_written, list(report.errors))

    def _sessions_written(self, errors: list[str]) -> None:
        self._look_for_changes()
        for error in errors[:3]:
            self.notify(inline(error), title="Sessions", severity="warning", markup=False)

    def _following_failed(self, error: str) -> None:
        self.notify(
            f"{inline(error)}; sessions are no longer followed",
            title="Sessions",
            severity="error",
            timeout=12,
            markup=False,
        )
