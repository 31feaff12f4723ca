"""Screens whose figures are computed off the UI thread from the loaded database: again
when the weights or marks change (once changes settle), and when they show again out
of date. The tuning panel and the dashboard."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from textual import work
from textual.content import Content
from textual.screen import Screen
from textual.timer import Timer
from textual.widgets import Static

if TYPE_CHECKING:
    from .app import PPPApp

# Changes closer together than this (a slider held down) are computed for once.
DEBOUNCE_S = 0.15


class RecomputingScreen(Screen[None]):
    """Subclasses say what their figures depend on (`_inputs`), list their menus once
    the runs are there (`_runs_loaded`) and start a computation on the loaded workspace
    (`_start`: it sets `_computed_for`, bumps `_generation` and clears `_awaiting` when
    the newest result arrives). `STATUS` is the widget that tells how it goes."""

    app: PPPApp
    STATUS = ""

    def __init__(self) -> None:
        super().__init__()
        self._generation = 0  # the latest computation asked for; older results are dropped
        self._computed_for: Any = None  # what the shown figures were computed from
        self._pending: Timer | None = None  # a recomputation waiting for changes to settle
        self._awaiting = False  # a computation is under way (or waits for the database)

    def _inputs(self) -> Any:
        raise NotImplementedError

    def _start(self) -> None:
        raise NotImplementedError

    def _runs_loaded(self) -> None:
        """The whole database has loaded (also when it had before the screen opened)."""

    def _set_status(self, text: str) -> None:
        self.query_one(self.STATUS, Static).update(Content(text))

    @property
    def computing(self) -> bool:
        """Figures are asked for and not shown yet."""
        return self._pending is not None or self._awaiting

    def weights_changed(self) -> None:
        """Weights or marks changed (the app calls this): compute again."""
        self.recompute()

    def on_screen_resume(self) -> None:
        # Weights or marks may have changed while another screen was on top.
        if self._computed_for is not None and self._computed_for != self._inputs():
            self.recompute()

    def recompute(self, now: bool = False) -> None:
        if self._pending is not None:
            self._pending.stop()
            self._pending = None
        if now:
            self._begin()
        else:
            self._pending = self.set_timer(DEBOUNCE_S, self._begin)

    def _begin(self) -> None:
        self._pending = None
        self._awaiting = True
        workspace = self.app.workspace
        if workspace is None or workspace.scores is None:
            self._set_status("loading the database…")
            self._when_loaded()
            return
        self._start()

    @work(exclusive=True, group="recompute-wait")
    async def _when_loaded(self) -> None:
        await self.app.load_done.wait()
        if self.app.workspace is None:
            self._awaiting = False
            self._set_status("the database could not be opened")
            return
        self._runs_loaded()
        self.recompute(now=True)
