"""The flip map: the whole triangle of weights, coloured by the agent ranking first.

Across is proactivity (0 to 2), up is personalization (0 to 2); technical is what the
rule leaves, 1 - (proactivity + personalization) / 2, so the bottom-left corner is
technical only and the diagonal edge is technical 0. Each terminal cell holds two
pixels (a half block: the top one in the glyph's colour, the bottom one behind it).
A pixel takes the colour of the one region it meets; a pixel that two regions meet
(an edge between them crosses it, however thin the sliver) is drawn in the edge
colour, so edges are exact to the pixel, computed from the exact polygons
(`core.regions`), not by sampling. The current weights are marked ◆; clicking or
dragging sets them.
"""

from __future__ import annotations

from dataclasses import dataclass

from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.content import Content
from textual.message import Message
from textual.reactive import reactive
from textual.widgets import Static

from ...core.regions import Point, Region, clip_polygon, polygon_area
from ..text import literal
from .dragging import Dragged

# Region colours, in the order of the regions (the agents' ranking order).
PALETTE = ("$primary", "$success", "$warning", "$error", "$secondary", "$accent")
EDGE = "$foreground"
OUTSIDE = "$surface"
MARK = "◆"
OPTIMUM = "✚"

# A pixel is in a region when the region covers more than this share of the pixel.
_SLIVER = 1e-9


def colours(regions: tuple[Region, ...]) -> dict[str, str]:
    """Each region's agent and its colour (the legend's and the map's)."""
    return {r.agent: PALETTE[k % len(PALETTE)] for k, r in enumerate(regions)}


def pixel_owners(regions: tuple[Region, ...], columns: int, rows: int) -> list[list[str | None]]:
    """For each pixel (rows top to bottom, columns left to right), the agent whose region
    it meets, "" where an edge crosses it (two regions meet it), None outside the
    triangle."""
    width, height = 2.0 / columns, 2.0 / rows
    owners: list[list[str | None]] = []
    for row in range(rows):
        top = 2.0 - row * height
        bottom = top - height
        line: list[str | None] = []
        for column in range(columns):
            left = column * width
            right = left + width
            if left + bottom >= 2.0:
                line.append(None)  # wholly beyond the diagonal edge
                continue
            pixel: list[Point] = [(left, bottom), (right, bottom), (right, top), (left, top)]
            pixel = clip_polygon(pixel, 2.0, -1.0, -1.0)  # inside the triangle
            if not pixel or polygon_area(pixel) <= _SLIVER * width * height:
                line.append(None)  # touches the diagonal edge at a corner only
                continue
            meets = []
            for region in regions:
                # Is the pixel's part of the triangle met by this region?
                part = list(pixel)
                for a, b, c in region.half_planes():
                    part = clip_polygon(part, a, b, c)
                    if not part:
                        break
                if part and polygon_area(part) > _SLIVER * width * height:
                    meets.append(region.agent)
                    if len(meets) > 1:
                        break
            line.append(meets[0] if len(meets) == 1 else "" if meets else None)
        owners.append(line)
    return owners


class FlipMap(Dragged, can_focus=True):
    """Who ranks first at every weight of the triangle, for the open run."""

    # Dragging over the map is not selecting text (in a browser it left a highlight).
    ALLOW_SELECT = False

    DEFAULT_CSS = """
    FlipMap {
        width: 1fr;
        height: 1fr;
        min-width: 10;
        min-height: 3;
    }
    """

    regions: reactive[tuple[Region, ...]] = reactive(())
    # The current free weights (proactivity, personalization), and an optimum to mark.
    current: reactive[Point] = reactive((0.3, 0.3))
    optimum: reactive[Point | None] = reactive(None)

    @dataclass
    class Picked(Message):
        """A click or drag on the map chose these free weights."""

        flip_map: FlipMap
        proactivity: float
        personalization: float

        @property
        def control(self) -> FlipMap:
            return self.flip_map

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._owners: tuple[tuple[tuple[Region, ...], int, int], list[list[str | None]]] | None
        self._owners = None
        self._rows: tuple[object, list[Content]] | None = None  # the lines without marks

    # -- geometry ----------------------------------------------------------------

    @property
    def grid(self) -> tuple[int, int]:
        """(columns, pixel rows): the map fills the widget, twice as many pixel rows as
        lines."""
        return max(2, self.size.width), max(2, 2 * self.size.height)

    def owners(self) -> list[list[str | None]]:
        columns, rows = self.grid
        key = (self.regions, columns, rows)
        if self._owners is None or self._owners[0] != key:
            self._owners = (key, pixel_owners(self.regions, columns, rows))
        return self._owners[1]

    def cell_of(self, proactivity: float, personalization: float) -> tuple[int, int]:
        """The (x, y) cell holding these free weights."""
        columns, rows = self.grid
        x = min(columns - 1, int(proactivity / 2.0 * columns))
        y = min(rows - 1, int((2.0 - personalization) / 2.0 * rows)) // 2
        return x, y

    def weights_at(self, x: int, y: int) -> Point:
        """The free weights at the middle of cell (x, y), pulled into the triangle and
        rounded to hundredths."""
        columns, rows = self.grid
        x = min(max(x, 0), columns - 1)
        y = min(max(y, 0), rows // 2 - 1)
        proactivity = (x + 0.5) / columns * 2.0
        personalization = 2.0 - (2 * y + 1) / rows * 2.0
        total = proactivity + personalization
        if total > 2.0:
            proactivity, personalization = proactivity * 2.0 / total, personalization * 2.0 / total
        proactivity = round(proactivity, 2)
        personalization = round(min(personalization, 2.0 - proactivity), 2)
        return proactivity, personalization

    # -- drawing -----------------------------------------------------------------

    def _row(self, y: int, marks: dict[tuple[int, int], str]) -> Content:
        """Line `y` of the map: runs of cells alike are one span (few spans a line)."""
        owners = self.owners()
        palette = colours(self.regions)

        def colour(owner: str | None) -> str:
            if owner is None:
                return OUTSIDE
            return palette.get(owner, EDGE) if owner else EDGE

        columns, _ = self.grid
        cells: list[tuple[str, str]] = []
        for x in range(columns):
            top, bottom = owners[2 * y][x], owners[2 * y + 1][x]
            if (x, y) in marks:
                ground = colour(bottom if bottom is not None else top)
                cells.append((marks[(x, y)], f"bold $text on {ground}"))
            elif top is None and bottom is None:
                cells.append((" ", f"on {OUTSIDE}"))
            else:
                cells.append(("▀", f"{colour(top)} on {colour(bottom)}"))
        parts: list[tuple[str, str]] = []
        for text, style in cells:
            if parts and parts[-1][1] == style:
                parts[-1] = (parts[-1][0] + text, style)
            else:
                parts.append((text, style))
        return Content.assemble(*parts)

    def render(self) -> Content:
        if not self.regions:
            return Content("No agents to map.")
        # The lines without marks are kept until the regions or the size change: a step
        # of the weights redraws only the lines the marks are on.
        key = (self.regions, self.grid)
        if self._rows is None or self._rows[0] != key:
            _, rows = self.grid
            self._rows = (key, [self._row(y, {}) for y in range(rows // 2)])
        lines = list(self._rows[1])
        marks = {self.cell_of(*self.current): MARK}
        if self.optimum is not None:
            marks.setdefault(self.cell_of(*self.optimum), OPTIMUM)
        for y in {y for _, y in marks}:
            lines[y] = self._row(y, marks)
        return Content("\n").join(lines)

    def describe(self) -> str:
        """The regions in words (tooltips, tests): each agent and its share of the map."""
        return ", ".join(f"{r.agent} {r.area / 2.0:.0%}" for r in self.regions)

    def watch_regions(self) -> None:
        self.tooltip = Content(literal(self.describe(), True)) if self.regions else None

    # -- input -------------------------------------------------------------------

    def _dragged_to(self, x: int, y: int) -> None:
        proactivity, personalization = self.weights_at(x, y)
        self.post_message(self.Picked(self, proactivity, personalization))


def legend(regions: tuple[Region, ...], winner: str | None) -> Content:
    """The map's key: each agent's colour, name and share of the triangle; the agent
    ranking first at the current weights in bold."""
    palette = colours(regions)
    parts: list[tuple[str, str] | str | Content] = [
        ("→ proactivity 0-2\n↑ personalization 0-2\n", "dim"),
        ("◆ ", "bold"),
        "current weights\n",
    ]
    for region in regions:
        name = literal(region.agent, True)
        parts += [
            ("██ ", palette[region.agent]),
            (name, "bold" if region.agent == winner else ""),
            (f" {region.area / 2.0:.0%}\n", "dim"),
        ]
    parts.append(("▀▀ ", EDGE))
    parts.append(("an edge", "dim"))
    return Content.assemble(*parts)


class FlipMapPanel(Horizontal):
    """The flip map with its legend beside it."""

    DEFAULT_CSS = """
    FlipMapPanel { height: 1fr; }
    FlipMapPanel > #map-legend { width: 24; padding: 0 0 0 1; }
    """

    def __init__(self) -> None:
        super().__init__()
        self._legend_for: tuple[tuple[Region, ...], str | None] | None = None

    def compose(self) -> ComposeResult:
        yield FlipMap(id="flip-map")
        yield Static(id="map-legend")

    def show(self, regions: tuple[Region, ...], current: Point, winner: str | None) -> None:
        """The open run's regions, the current free weights and who ranks first there."""
        flip_map = self.query_one(FlipMap)
        flip_map.regions = regions
        flip_map.current = current
        if (regions, winner) != self._legend_for:  # a slider step: usually the same
            self._legend_for = (regions, winner)
            self.query_one("#map-legend", Static).update(legend(regions, winner))
