"""Screens whose figures are computed off the UI thread from the loaded database: again
when the weights or marks change (once changes settle), and when they show again out
of date. The tuning panel and the dashboard."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from textual.screen import Screen
from textual.timer import Timer

if TYPE_CHECKING:
    from .app import PPPApp

# Changes closer together than this (a slider held down) are computed for once.
DEBOUNCE_S = 0.15


class RecomputingScreen(Screen[None]):
    """Subclasses say what their figures depend on (`_inputs`) and start a computation
    (`_start`: it sets `_computed_for`, bumps `_generation` and clears `_awaiting` when
    the newest result arrives)."""

    app: PPPApp

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
        self._start()
