"""Where each agent ranks first over the whole weight triangle of one run.

With the three weights tied by w_t + (w_p + w_s) / 2 = 1, every point of the triangle
{w_p >= 0, w_s >= 0, w_p + w_s <= 2} is one choice of weights, and every agent's final
score is an affine function of (w_p, w_s):

    final = C + P * w_t + Q_p * w_p + Q_s * w_s,  w_t = 1 - (w_p + w_s) / 2

with (C, P, Q_p, Q_s) from `scoring.split_coefficients`: (R_Proact, R_Pers) weigh in
for an agent with a trajectory, while the no-trajectory fallbacks and PPP off give flat
or technical-only planes. The agent ranking first
is the upper envelope of these planes, so its region is convex: the triangle clipped by
the half-planes final_i >= final_j for every other agent j. The polygons are computed
exactly (up to floating point), no grid. Failed agents never rank first beside a working
one, and two agents with the same plane are split by the ranking's tie rule
(technical, then name), as `scoring.rank_key` orders them.

On the diagonal w_p = w_s the regions' edges are the flip points of `sensitivity.flips`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .model import Run
from .scoring import AgentScore, rank_key, rank_run, split_coefficients, tie_key
from .settings import Settings

Point = tuple[float, float]  # (w_p, w_s)

# The whole triangle of weights, counter-clockwise, in (w_p, w_s).
TRIANGLE: tuple[Point, ...] = ((0.0, 0.0), (2.0, 0.0), (0.0, 2.0))
TRIANGLE_AREA = 2.0

# Vertices closer than this are one (clipping a polygon through a vertex repeats it).
_SAME_POINT = 1e-12
# Two planes whose finals differ by less than this everywhere on the triangle tie
# everywhere: the ranking's tie rule (finals equal to 9 decimals) decides between them.
_SAME_PLANE = 5e-10


def technical_of(w_p: float, w_s: float) -> float:
    """The technical weight the rule leaves for these two free weights."""
    return round(1.0 - (w_p + w_s) / 2.0, 12)


@dataclass(frozen=True)
class Plane:
    """One agent's final over the triangle: c + p * w_t + q_p * w_p + q_s * w_s, that is
    a + b_p * w_p + b_s * w_s."""

    agent: str
    technical: float
    failed: bool
    c: float
    p: float
    q_p: float
    q_s: float

    @property
    def a(self) -> float:
        return self.c + self.p

    @property
    def b_p(self) -> float:
        return self.q_p - self.p / 2.0

    @property
    def b_s(self) -> float:
        return self.q_s - self.p / 2.0

    def at(self, w_p: float, w_s: float) -> float:
        """The agent's final at these weights (in the ranking's own formula order)."""
        return self.c + self.p * technical_of(w_p, w_s) + self.q_p * w_p + self.q_s * w_s


def plane(score: AgentScore, settings: Settings) -> Plane:
    """`score`'s final over the triangle (only its technical and reward scores count)."""
    split = None
    if score.interaction is not None and score.r_proact is not None and score.r_pers is not None:
        split = (score.r_proact, score.r_pers)
    c, p, q_p, q_s = split_coefficients(score.technical, split, settings)
    return Plane(score.name, score.technical, score.failure is not None, c, p, q_p, q_s)


def polygon_area(polygon: Sequence[Point]) -> float:
    """The polygon's area (shoelace; positive counter-clockwise)."""
    total = 0.0
    for k, (x0, y0) in enumerate(polygon):
        x1, y1 = polygon[(k + 1) % len(polygon)]
        total += x0 * y1 - x1 * y0
    return total / 2.0


def clip_polygon(polygon: list[Point], a: float, b: float, c: float) -> list[Point]:
    """The part of a convex polygon where a + b * x + c * y >= 0 (Sutherland-Hodgman)."""
    result: list[Point] = []
    count = len(polygon)
    for k in range(count):
        p0, p1 = polygon[k], polygon[(k + 1) % count]
        d0 = a + b * p0[0] + c * p0[1]
        d1 = a + b * p1[0] + c * p1[1]
        if d0 >= 0.0:
            result.append(p0)
        if (d0 >= 0.0) != (d1 >= 0.0):
            t = d0 / (d0 - d1)
            result.append((p0[0] + t * (p1[0] - p0[0]), p0[1] + t * (p1[1] - p0[1])))
    return _tidy(result)


def _tidy(polygon: list[Point]) -> list[Point]:
    """Without repeated vertices (a cut through a vertex adds it twice)."""
    result: list[Point] = []
    for point in polygon:
        if not result or max(abs(point[0] - result[-1][0]), abs(point[1] - result[-1][1])) > (
            _SAME_POINT
        ):
            result.append(point)
    while (
        len(result) > 1
        and max(abs(result[0][0] - result[-1][0]), abs(result[0][1] - result[-1][1])) <= _SAME_POINT
    ):
        result.pop()
    return result


@dataclass(frozen=True)
class Region:
    """The convex polygon of (w_p, w_s) in which `agent` ranks first, counter-clockwise."""

    agent: str
    vertices: tuple[Point, ...]

    @property
    def area(self) -> float:
        return polygon_area(self.vertices)

    def weights(self) -> tuple[tuple[float, float, float], ...]:
        """Each vertex as (technical, proactivity, personalization)."""
        return tuple((technical_of(p, s), p, s) for p, s in self.vertices)

    def half_planes(self) -> tuple[tuple[float, float, float], ...]:
        """The region as half-planes a + b * w_p + c * w_s >= 0, one per edge."""
        planes = []
        count = len(self.vertices)
        for k in range(count):
            (x0, y0), (x1, y1) = self.vertices[k], self.vertices[(k + 1) % count]
            planes.append(((y1 - y0) * x0 - (x1 - x0) * y0, -(y1 - y0), x1 - x0))
        return tuple(planes)

    def contains(self, w_p: float, w_s: float, tolerance: float = 1e-9) -> bool:
        """True when the point is inside or on the edge (within `tolerance`)."""
        count = len(self.vertices)
        for k in range(count):
            (x0, y0), (x1, y1) = self.vertices[k], self.vertices[(k + 1) % count]
            length = max(abs(x1 - x0), abs(y1 - y0))
            cross = (x1 - x0) * (w_s - y0) - (y1 - y0) * (w_p - x0)
            if cross < -tolerance * length:
                return False
        return True

    def document(self) -> dict[str, Any]:
        """`{"agent", "area", "vertices"}` with each vertex's three weights, as
        `rank --json` lists it."""
        return {
            "agent": self.agent,
            "area": self.area,
            "vertices": [
                {"technical": t, "proactivity": p, "personalization": s}
                for t, p, s in self.weights()
            ],
        }


def _tie_order(plane: Plane) -> tuple[bool, float, str]:
    return plane.failed, -plane.technical, plane.agent


def regions(agents: Sequence[AgentScore], settings: Settings) -> tuple[Region, ...]:
    """Each agent's region of the triangle where it ranks first, in the order of
    `agents`; agents that rank first nowhere (or only on an edge) are left out. The
    regions tile the triangle: their areas sum to 2.

    `agents` are a run's scored agents (`Ranking.agents`, under any weights).
    """
    # A failed agent never ranks first beside a working one: only the working compete.
    working = [score for score in agents if score.failure is None] or list(agents)
    planes = [plane(score, settings) for score in working]
    result: list[Region] = []
    for i, mine in enumerate(planes):
        polygon: list[Point] = list(TRIANGLE)
        for j, other in enumerate(planes):
            if i == j or not polygon:
                continue
            if _same_plane(mine, other):
                # The same plane: the tie rule gives all of it to one of the two.
                if _tie_order(other) < _tie_order(mine):
                    polygon = []
                continue
            polygon = clip_polygon(
                polygon, mine.a - other.a, mine.b_p - other.b_p, mine.b_s - other.b_s
            )
        if len(polygon) >= 3 and polygon_area(polygon) > _SAME_POINT:
            result.append(Region(mine.agent, tuple(polygon)))
    return tuple(result)


def winner(agents: Sequence[AgentScore], w_p: float, w_s: float, settings: Settings) -> str:
    """The agent the ranking puts first at these free weights (with its tie rule)."""
    working = [score for score in agents if score.failure is None] or list(agents)
    planes = [plane(score, settings) for score in working]
    best = min(
        planes,
        key=lambda pl: rank_key(pl.at(w_p, w_s), pl.technical, pl.agent, pl.failed),
    )
    return best.agent


def _same_plane(one: Plane, other: Plane) -> bool:
    a, b_p, b_s = one.a - other.a, one.b_p - other.b_p, one.b_s - other.b_s
    # An affine difference is extreme at the triangle's corners.
    return max(abs(a), abs(a + 2.0 * b_p), abs(a + 2.0 * b_s)) < _SAME_PLANE


def on_edge(agents: Sequence[AgentScore], w_p: float, w_s: float, settings: Settings) -> bool:
    """True when the best final at this point ties to 9 decimals with another agent's
    that is not on the same plane: the point is on an edge between two regions."""
    working = [score for score in agents if score.failure is None] or list(agents)
    planes = [plane(score, settings) for score in working]
    best = max(planes, key=lambda pl: pl.at(w_p, w_s))
    top = tie_key(best.at(w_p, w_s))
    return any(
        abs(tie_key(pl.at(w_p, w_s)) - top) <= 1 for pl in planes if not _same_plane(pl, best)
    )


def run_regions(run: Run, settings: Settings) -> tuple[Region, ...]:
    """`regions` of a run's agents under `settings`."""
    return regions(rank_run(run, settings).agents, settings)
