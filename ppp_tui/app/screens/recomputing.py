"""Screens whose figures are computed off the UI thread from the loaded database: again
when the weights or marks change (once changes settle), and when they show again out
of date. The tuning panel and the dashboard."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Generic, TypeVar, cast

from textual import work
from textual.content import Content
from textual.message import Message
from textual.timer import Timer
from textual.widgets import Static
from textual.worker import get_current_worker

from ...core.errors import PPPError
from ..services import AppServices, WorkspaceView
from ..text import plain

if TYPE_CHECKING:
    from ..workspace import Workspace

# Changes closer together than this (a slider held down) are computed for once.
DEBOUNCE_S = 0.15

RequestT = TypeVar("RequestT")
ResultT = TypeVar("ResultT")


class RecomputingScreen(WorkspaceView, Generic[RequestT, ResultT]):
    """Owns the worker, the debounce and which result is the newest; a subclass gives

    - `request(workspace)`: on the UI thread, what the figures are computed from. Two
      equal requests give the same figures, so a request's equality must cover all
      they depend on (fields holding the arrays can be left out of it with
      `field(compare=False)`, as long as another field, such as the workspace's
      state, changes with them);
    - `compute(request)`: in a worker thread, the figures (a `PPPError` becomes a line
      on the status widget);
    - `show(result, seconds)`: on the UI thread, the newest figures.

    `STATUS` is the widget that tells how it goes; `runs_loaded` lists menus once the
    runs are there, `started` and `failed` can add to what the status line says.
    """

    app: AppServices
    STATUS = ""
    STAGE_SELECT = ""  # the stage menu's selector, for a screen that has one
    stage: str | None = None  # the stage its figures are of (None: every stage)

    @dataclass
    class Computed(Message):
        """A computation's result, or the error it ended with."""

        generation: int
        result: object
        error: str | None
        seconds: float

        bubble = False  # the screen's own business

    def __init__(self) -> None:
        super().__init__()
        self._generation = 0  # the latest computation asked for; older results are dropped
        self._computed_for: RequestT | None = None  # what the shown figures came from
        self._pending: Timer | None = None  # a recomputation waiting for changes to settle
        self._awaiting = False  # a computation is under way (or waits for the database)

    # -- what a subclass gives ---------------------------------------------------------

    def request(self, workspace: Workspace) -> RequestT:
        raise NotImplementedError

    def compute(self, request: RequestT) -> ResultT:
        raise NotImplementedError

    def show(self, result: ResultT, seconds: float) -> None:
        raise NotImplementedError

    def runs_loaded(self) -> None:
        """The whole database has loaded (also when it had before the screen opened):
        the stage menu (`STAGE_SELECT`, if the screen has one) lists the stages there
        are, the screen's `stage` chosen if it is one of them (else every stage)."""
        workspace = self.app.workspace
        if not self.STAGE_SELECT or workspace is None or not workspace.loaded:
            return
        from textual.widgets import Select

        from ..text import literal, stage_order

        names = stage_order(info.stage for info in workspace.infos)
        select: Select[str] = self.query_one(self.STAGE_SELECT, Select)
        with select.prevent(Select.Changed):
            select.set_options([(Content(literal(name, True)), name) for name in names])
            if self.stage in names:
                select.value = self.stage
            else:
                self.stage = None

    def started(self, request: RequestT) -> None:
        """A computation has started on `request`."""
        self._set_status("computing…")

    def failed(self, error: str) -> None:
        """A computation ended with `error`: the figures shown stay."""
        self.query_one(self.STATUS, Static).update(plain(error))

    # -- the bookkeeping ---------------------------------------------------------------

    def _set_status(self, text: str) -> None:
        self.query_one(self.STATUS, Static).update(Content(text))

    @property
    def computing(self) -> bool:
        """Figures are asked for and not shown yet."""
        return self._pending is not None or self._awaiting

    def workspace_changed(self) -> None:
        """Weights or marks changed: compute again, once they settle."""
        self.recompute()

    def on_screen_resume(self) -> None:
        # Weights or marks may have changed while another screen was on top.
        workspace = self.app.workspace
        if (
            self._computed_for is not None
            and workspace is not None
            and workspace.loaded
            and self._computed_for != self.request(workspace)
        ):
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
        if workspace is None or not workspace.loaded:
            self._set_status("loading the database…")
            self._when_loaded()
            return
        request = self.request(workspace)
        self._generation += 1
        self._computed_for = request
        self.started(request)
        self._compute(self._generation, request)

    @work(thread=True, exclusive=True, group="recompute")
    def _compute(self, generation: int, request: RequestT) -> None:
        began = time.perf_counter()
        try:
            result: object = self.compute(request)
            error = None
        except PPPError as caught:
            result, error = None, str(caught)
        if not get_current_worker().is_cancelled:
            seconds = time.perf_counter() - began
            self.post_message(self.Computed(generation, result, error, seconds))

    def on_recomputing_screen_computed(self, message: RecomputingScreen.Computed) -> None:
        if message.generation != self._generation:
            return  # a newer computation is on its way
        self._awaiting = False
        if message.error is not None:
            self.failed(message.error)
            return
        self.show(cast(ResultT, message.result), message.seconds)

    @work(exclusive=True, group="recompute-wait")
    async def _when_loaded(self) -> None:
        await self.app.load_done.wait()
        if self.app.workspace is None:
            self._awaiting = False
            self._set_status("the database could not be opened")
            return
        self.runs_loaded()
        self.recompute(now=True)
