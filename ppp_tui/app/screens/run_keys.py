"""What a run's screen adds to its own wiring (run.py): the order tab moves the focus
in, a step of the conversation opened whole, and `n`, which opens the next run to mark
in this one's place.

A base of RunScreen, kept apart so that run.py stays one screen's wiring.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual import on, work
from textual.widget import Widget
from textual.widgets import TabbedContent, Tabs
from textual.worker import get_current_worker

from ..messages import OpenRun
from ..services import WorkspaceView
from ..text import inline
from ..widgets.conversation import Conversation
from .next_runs import NextRequest, next_marks, next_request, none_left
from .whole_text import WholeTextScreen

if TYPE_CHECKING:
    from ...core.model import Run
    from ...core.next_mark import NextMarks


class RunKeys(WorkspaceView):
    """The run screen's focus order and its way to the next run to mark."""

    run: Run

    @property
    def focus_chain(self) -> list[Widget]:
        """Textual's order (by place on screen), but each tab bar after what its tab
        shows: tab goes from the agents straight to the conversation (or the questions),
        where the bar between them took a press of its own."""
        chain = super().focus_chain
        for bar in [widget for widget in chain if isinstance(widget, Tabs)]:
            tabs = bar.parent
            if not isinstance(tabs, TabbedContent):
                continue
            inside = [i for i, w in enumerate(chain) if w is not bar and tabs in w.ancestors]
            if inside:
                chain.remove(bar)
                chain.insert(inside[-1], bar)  # one place earlier now that it is out
        return chain

    @on(Conversation.Open)
    def _open_whole(self, event: Conversation.Open) -> None:
        event.stop()
        self.app.push_screen(WholeTextScreen(event.text, event.title))

    # -- the next run to mark ------------------------------------------------------

    def action_next_run(self) -> None:
        """Open the run the runs list's `n` puts first (this one aside), in place of this
        screen: marking run after run needs no way back to the list."""
        workspace = self.app.workspace
        request = None if workspace is None else next_request(workspace, self.app.stage_filter)
        if request is None:
            self.notify("The runs are still loading.", severity="warning")
            return
        self._find_next_run(request, self.app.stage_filter)

    @work(thread=True, exclusive=True, group="next-run")
    def _find_next_run(self, request: NextRequest, stage_filter: str | None) -> None:
        result = next_marks(request)
        if not get_current_worker().is_cancelled:
            self.app.call_from_thread(self._open_next_run, result, stage_filter)

    def _open_next_run(self, result: NextMarks, stage_filter: str | None) -> None:
        others = [s.run_id for s in result.suggestions if s.run_id != self.run.id]
        if others:
            self.post_message(OpenRun(others[0], instead=True))
            self.notify(f"Next to mark: {inline(others[0])}", timeout=3, markup=False)
        elif result.suggestions:
            self.notify(
                "No other run to mark next: this one is the last whose mark tells"
                " about the weights.",
                severity="warning",
            )
        else:
            self.notify(none_left(result, stage_filter), severity="warning")
