"""What a run's screen adds to its own wiring (run.py): the order tab moves the focus
in.

A base of RunScreen, kept apart so that run.py stays one screen's wiring.
"""

from __future__ import annotations

from textual.widget import Widget
from textual.widgets import TabbedContent, Tabs

from ..services import WorkspaceView


class RunKeys(WorkspaceView):
    """The run screen's focus order."""

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
