"""A one-line horizontal slider for a value in [0, 1] (textual has none built in).

Our own rather than textual-slider (GPL-3.0, incompatible with this MIT project).
It is dragged or clicked with the mouse and moved with the keys; every change
posts `WeightSlider.Changed`, so listeners must stay cheap (they do: re-ranking
is array arithmetic).
"""

from __future__ import annotations

from dataclasses import dataclass

from textual import events
from textual.binding import Binding
from textual.content import Content
from textual.message import Message
from textual.reactive import reactive

from .dragging import Dragged

PAGE = 0.1  # pageup/pagedown (left/right step by 0.01)


def snap(value: float) -> float:
    """Clamp to [0, 1] and round away binary noise (0.7000000001 -> 0.7)."""
    return min(1.0, max(0.0, round(value, 10)))


class WeightSlider(Dragged, can_focus=True):
    """The technical weight; interaction is 1 - value."""

    # Dragging the knob is not selecting text (in a browser it left a highlight).
    ALLOW_SELECT = False

    DEFAULT_CSS = """
    WeightSlider {
        height: 1;
        width: 1fr;
        min-width: 12;
    }
    """

    BINDINGS = [
        Binding(
            "left",
            "step(-1)",
            "-0.01",
            tooltip="Move the focused slider -0.01",
            show=False,
            id="slider.left",
        ),
        Binding("right", "step(1)", "+0.01", show=False, id="slider.right"),
        Binding("pageup", "page(1)", "+0.1", show=False),
        Binding("pagedown", "page(-1)", "-0.1", show=False),
        Binding("home", "set_value(0)", "0", tooltip="Slider to its lowest", show=False),
        Binding("end", "set_value(1)", "1", tooltip="highest", show=False),
    ]

    # Not repainted by itself at once: whoever handles Changed repaints it together
    # with what the new value changes (`WeightsBar.show`), in one frame. Textual's frame
    # clock would otherwise spend a frame on the knob alone and put the figures one or
    # two frames (17-33 ms) behind it.
    value: reactive[float] = reactive(0.7, repaint=False)
    # Marks drawn on the track (e.g. the tuned optimum), as values in [0, 1].
    marks: reactive[tuple[float, ...]] = reactive(())

    @dataclass
    class Changed(Message):
        slider: WeightSlider
        value: float

        @property
        def control(self) -> WeightSlider:
            return self.slider

    def __init__(
        self,
        value: float = 0.7,
        *,
        name: str | None = None,
        id: str | None = None,
        classes: str | None = None,
    ) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self.set_reactive(WeightSlider.value, snap(value))
        self._painted: float | None = None  # the value last drawn

    def validate_value(self, value: float) -> float:
        return snap(value)

    def watch_value(self, value: float) -> None:
        self.post_message(self.Changed(self, value))
        # Unhandled, it repaints once the screen has settled (handled, it has by then).
        self.call_after_refresh(self._repaint_if_stale)

    def _repaint_if_stale(self) -> None:
        if self._painted != self.value:
            self.refresh()

    # -- geometry ----------------------------------------------------------------

    @property
    def _track(self) -> int:
        return max(2, self.size.width)

    def _position(self, value: float) -> int:
        return round(value * (self._track - 1))

    def _value_at(self, x: int) -> float:
        return round(min(max(x, 0), self._track - 1) / (self._track - 1), 2)

    def render(self) -> Content:
        self._painted = self.value
        knob = self._position(self.value)
        focused = self.has_focus
        filled = ("━", "$accent" if focused else "$foreground 70%")
        empty = ("─", "$foreground 30%")
        special = {self._position(m): ("┃", "bold $warning") for m in self.marks}
        special[knob] = ("●", "bold $accent" if focused else "bold $foreground")
        # One span per run of like cells, not one per cell: a step repaints the
        # sliders, and a hundred spans each took milliseconds to style and draw.
        parts: list[tuple[str, str]] = []
        x = 0
        for at in sorted(p for p in special if 0 <= p < self._track):
            if at > x:
                self._run(parts, x, at, knob, filled, empty)
            parts.append(special[at])
            x = at + 1
        self._run(parts, x, self._track, knob, filled, empty)
        return Content.assemble(*parts)

    @staticmethod
    def _run(
        parts: list[tuple[str, str]],
        start: int,
        stop: int,
        knob: int,
        filled: tuple[str, str],
        empty: tuple[str, str],
    ) -> None:
        """Cells start..stop-1 (none special): filled left of the knob, empty right."""
        split = min(max(knob, start), stop)
        if split > start:
            parts.append((filled[0] * (split - start), filled[1]))
        if stop > split:
            parts.append((empty[0] * (stop - split), empty[1]))

    # -- input -------------------------------------------------------------------

    def action_step(self, direction: int) -> None:
        hundredths = round(self.value * 100)
        if direction > 0 and self.value * 100 < hundredths - 1e-9:
            hundredths -= 1  # an off-grid value (a tuned one) goes to its neighbour
        if direction < 0 and self.value * 100 > hundredths + 1e-9:
            hundredths += 1
        self.value = (hundredths + direction) / 100

    def action_page(self, direction: int) -> None:
        self.value = self.value + direction * PAGE

    def action_set_value(self, value: float) -> None:
        self.value = value

    async def _on_mouse_down(self, event: events.MouseDown) -> None:
        self.focus()  # then Dragged's handler (Textual calls each class's in turn)

    def _dragged_to(self, x: int, y: int) -> None:
        self.value = self._value_at(x)

    def on_focus(self) -> None:
        self.refresh()

    def on_blur(self) -> None:
        self.refresh()
