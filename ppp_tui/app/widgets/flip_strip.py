"""The open run's weight sensitivity, drawn under the slider: who wins where.

One segment per interval of the technical weight in which an agent ranks first
(`core.sensitivity.flips`), on the slider's own scale, so the knob sits over the
agent it selects and the segment edges are the flip points.
"""

from __future__ import annotations

from bisect import bisect_right

from textual.content import Content
from textual.reactive import reactive
from textual.widget import Widget

from ...core.sensitivity import Flip
from ..text import literal

# Segment colours, by the order in which agents first win from w = 0.
PALETTE = ("$primary", "$success", "$warning", "$error", "$secondary", "$accent")


class FlipStrip(Widget):
    """Coloured segments of [0, 1], each named after the agent that wins there."""

    DEFAULT_CSS = """
    FlipStrip {
        height: 1;
        width: 1fr;
        min-width: 12;
    }
    """

    flips: reactive[tuple[Flip, ...]] = reactive(())

    def render(self) -> Content:
        flips = self.flips
        width = max(2, self.size.width)
        if not flips:
            return Content("")
        starts = [flip.start for flip in flips]
        colours: dict[str, str] = {}
        for flip in flips:
            colours.setdefault(flip.agent, PALETTE[len(colours) % len(PALETTE)])
        # The winner at each column's weight, as the slider maps columns to weights.
        owners = [
            flips[max(0, bisect_right(starts, x / (width - 1)) - 1)].agent for x in range(width)
        ]
        parts: list[tuple[str, str]] = []
        x = 0
        while x < width:
            end = x
            while end < width and owners[end] == owners[x]:
                end += 1
            parts.append((_label(owners[x], end - x), f"bold $background on {colours[owners[x]]}"))
            x = end
        return Content.assemble(*parts)

    def describe(self) -> str:
        """The intervals in words (tooltips, tests): `cursor 0.00-0.79, aider 0.79-1.00`."""
        return ", ".join(f"{f.agent} {f.start:.2f}-{f.end:.2f}" for f in self.flips)

    def watch_flips(self) -> None:
        self.tooltip = Content(literal(self.describe(), True)) if self.flips else None


def _label(name: str, width: int) -> str:
    """`name` centred in `width` cells (cut with … when it does not fit)."""
    name = literal(name, one_line=True)
    if width <= 0:
        return ""
    if len(name) > width:
        name = name[: width - 1] + "…" if width > 1 else " "
    return name.center(width)
