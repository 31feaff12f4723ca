"""Mean regret over the whole triangle of weights, as a heat map (the tuning panel).

Across is proactivity (0 to 2), up is personalization (0 to 2), as on the flip map;
each pixel (half a terminal cell) is coloured by the mean regret over the marked runs
at its middle's weights, from green (the lowest on the map) to red (the highest). The
current weights are marked ◆ and the exact optimum over both free weights ✚.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from textual.content import Content
from textual.reactive import reactive
from textual.widget import Widget

from ...core.arrays import Lines
from ...core.free_optimum import Optimum, Planes, optimum

Point = tuple[float, float]  # (proactivity, personalization)

OUTSIDE = "$surface"


@dataclass(frozen=True)
class Heat:
    """Mean regret at the middle of each pixel of a columns x rows grid over the
    triangle (rows top to bottom; None beyond its diagonal edge), and the optimum."""

    regret: tuple[tuple[float | None, ...], ...]
    optimum: Optimum
    marked_runs: int

    @property
    def low(self) -> float:
        return min(v for row in self.regret for v in row if v is not None)

    @property
    def high(self) -> float:
        return max(v for row in self.regret for v in row if v is not None)


def regret_heat(lines: Lines, current: Point, columns: int = 48, rows: int = 24) -> Heat | None:
    """The heat map of the marked runs of `lines` and their exact optimum over both free
    weights (the one nearest `current` among equal optima); None without marked runs."""
    planes = Planes.from_lines(lines)
    if not len(planes):
        return None
    best = optimum(planes, current)
    if best is None:
        return None
    grid: list[tuple[float | None, ...]] = []
    for row in range(rows):
        personalization = 2.0 - (row + 0.5) / rows * 2.0
        values: list[float | None] = []
        for column in range(columns):
            proactivity = (column + 0.5) / columns * 2.0
            if proactivity + personalization > 2.0:
                values.append(None)
            else:
                values.append(planes.evaluate(proactivity, personalization)[0])
        grid.append(tuple(values))
    return Heat(tuple(grid), best, len(planes))


def _colour(value: float | None, low: float, high: float) -> str:
    """Green at `low`, through yellow, to red at `high`."""
    if value is None:
        return OUTSIDE
    share = 0.0 if high <= low else float(np.clip((value - low) / (high - low), 0.0, 1.0))
    red = round(255 * min(1.0, 2 * share))
    green = round(200 * min(1.0, 2 * (1 - share)))
    return f"#{red:02x}{green:02x}30"


class RegretHeatMap(Widget):
    """The heat map, drawn with half blocks, the current weights and the optimum marked."""

    DEFAULT_CSS = """
    RegretHeatMap {
        width: 1fr;
        height: 12;
        min-width: 10;
    }
    """

    heat: reactive[Heat | None] = reactive(None)
    current: reactive[Point] = reactive((0.3, 0.3))

    def _cell(self, heat: Heat, point: Point) -> tuple[int, int]:
        rows, columns = len(heat.regret), len(heat.regret[0])
        x = min(columns - 1, int(point[0] / 2.0 * columns))
        y = min(rows - 1, int((2.0 - point[1]) / 2.0 * rows)) // 2
        return x, y

    def render(self) -> Content:
        heat = self.heat
        if heat is None:
            return Content("No marked runs to map (p marks one).")
        low, high = heat.low, heat.high
        marks = {self._cell(heat, self.current): "◆"}
        marks.setdefault(
            self._cell(heat, (heat.optimum.proactivity, heat.optimum.personalization)), "✚"
        )
        parts: list[tuple[str, str] | str] = []
        for y in range(len(heat.regret) // 2):
            if y:
                parts.append("\n")
            top_row, bottom_row = heat.regret[2 * y], heat.regret[2 * y + 1]
            for x, (top, bottom) in enumerate(zip(top_row, bottom_row, strict=True)):
                if (x, y) in marks:
                    ground = _colour(bottom if bottom is not None else top, low, high)
                    parts.append((marks[(x, y)], f"bold #ffffff on {ground}"))
                elif top is None and bottom is None:
                    parts.append((" ", f"on {OUTSIDE}"))
                else:
                    parts.append(
                        ("▀", f"{_colour(top, low, high)} on {_colour(bottom, low, high)}")
                    )
        return Content.assemble(*parts)


def heat_figures(heat: Heat | None) -> Content:
    """The optimum over both free weights in words, beside the map."""
    if heat is None:
        return Content("")
    best = heat.optimum
    return Content.assemble(
        ("Both free weights\n", "bold"),
        ("→ proactivity, ↑ personalization\n", "dim"),
        ("◆ current  ✚ optimum\n", "dim"),
        f"optimum: technical {best.technical:.4f},\n"
        f"proactivity {best.proactivity:.4f},\n"
        f"personalization {best.personalization:.4f}\n",
        f"mean regret {best.mean_regret:.4f}, agreement {best.agreement:.1%}\n",
        (f"map: {heat.low:.4f} (green) to {heat.high:.4f} (red)\n", "dim"),
        ("u moves all three weights to it", "dim"),
    )
