"""The dashboard's widgets: a plotext chart drawn for its size, text shown only whole,
and the tick rules its charts share."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from textual.app import RenderResult
from textual.content import Content
from textual.geometry import Size
from textual.reactive import reactive
from textual.widget import Widget
from textual_plotext import PlotextPlot


class Chart(PlotextPlot):
    """A plotext chart drawn when it renders, for its size then: bars get a text row
    each and date labels as many as fit, whatever the terminal's size."""

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self._draw: Callable[[Any, Size], None] | None = None
        self._drawn_for: Size | None = None

    def show(self, draw: Callable[[Any, Size], None]) -> None:
        """Draw with `draw(plt, size)` from now on."""
        self._draw, self._drawn_for = draw, None
        self.refresh()

    def render(self) -> RenderResult:
        if self._draw is not None and self._drawn_for != self.size:
            plt = self.plt
            plt.clear_data()
            plt.clear_figure()
            self._draw(plt, self.size)
            self._drawn_for = self.size
        return super().render()


class WholeText(Widget):
    """Plain text shown only when all of its lines fit: never a table cut in half."""

    text: reactive[str] = reactive("")

    def render(self) -> RenderResult:
        fits = self.text.count("\n") + 1 <= self.size.height
        return Content(self.text) if fits else Content("")


def spread_ticks(count: int, most: int) -> list[int]:
    """At most `most` evenly spread positions out of `count`, the first and last included."""
    if count <= most:
        return list(range(count))
    step = (count - 1) / (most - 1)
    return sorted({round(i * step) for i in range(most)})


def nice_ticks(low: float, high: float, most: int = 5) -> list[float]:
    """Round tick values (steps of 1, 2 or 5 times a power of ten) covering [low, high]."""
    span = high - low or abs(high) or 1.0
    raw = span / (most - 1)
    power = 10 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 5, 10) if m * power >= raw)
    start = math.floor(low / step) * step
    count = math.ceil((high - start) / step - 1e-9) + 1
    return [round(start + i * step, 10) for i in range(max(2, count))]
