"""A widget the mouse drags: a press captures the mouse, and every place the pointer goes
until the release is handed to the widget (the weight slider, the flip map)."""

from __future__ import annotations

from textual import events
from textual.widget import Widget


class Dragged(Widget):
    """The base of a widget the mouse drags: `_dragged_to` gets the pointer's place at the
    press and at every move until the release."""

    _dragging = False

    def _dragged_to(self, x: int, y: int) -> None:
        raise NotImplementedError

    async def _on_mouse_down(self, event: events.MouseDown) -> None:
        self.capture_mouse()
        self._dragging = True
        self._dragged_to(event.x, event.y)
        event.stop()

    async def _on_mouse_move(self, event: events.MouseMove) -> None:
        if self._dragging:
            self._dragged_to(event.x, event.y)
            event.stop()

    async def _on_mouse_up(self, event: events.MouseUp) -> None:
        if self._dragging:
            self._dragging = False
            self.release_mouse()
            event.stop()
