"""Weight sensitivity of one run: the technical-weight intervals in which each
agent ranks first, and the flip points between them.

Every agent's final score is a line in the technical weight w (with
interaction = 1 - w): final(w) = C + P * w + Q * (1 - w), with (C, P, Q) from
`scoring.coefficients`, so the no-trajectory fallbacks and PPP off are lines too
(flat ones). The rank-1 agent follows the upper envelope of these lines: `flips` walks
it from w = 0 to 1, and its vertices, the exact crossings of two lines, are the
breakpoints (no grid). Which agent ranks first between two breakpoints is then decided
by the ranking's own arithmetic and tie rule (`scoring.final_score`, `scoring.rank_key`)
at the middle of the interval, so coincident lines and ties go exactly as `rank_run`
sends them. Within about 1e-9 / (the two lines' slope difference) of a breakpoint the
finals tie to 9 decimals and the tie rule (technical, then name) decides there.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import Any

from .model import Run
from .scoring import AgentScore, coefficients, final_score, rank_key, rank_run
from .settings import Settings, Weights

# Breakpoints closer than this are one point: the crossings of three lines through one
# point, computed pairwise, differ in the last bits.
_SAME_POINT = 1e-12


@dataclass(frozen=True)
class Flip:
    """One interval [start, end] of the technical weight in which `agent` ranks first."""

    start: float
    end: float
    agent: str

    def document(self) -> dict[str, Any]:
        """`{"from", "to", "agent"}`, as `rank --json` lists it."""
        return {"from": self.start, "to": self.end, "agent": self.agent}


def _winner(agents: Sequence[AgentScore], technical: float, settings: Settings) -> str:
    """The agent `rank_agents` puts first at this technical weight."""
    weights = Weights.from_technical(technical)
    best = min(
        agents,
        key=lambda a: rank_key(
            final_score(a.technical, a.interaction, weights, settings),
            a.technical,
            a.name,
            a.failure is not None,
        ),
    )
    return best.name


def _breakpoints(lines: Sequence[tuple[float, float]]) -> list[float]:
    """The vertices of the upper envelope of lines a + b * w strictly inside (0, 1)."""
    # On top just right of w = 0: the highest line, and among equals the steepest.
    current = max(range(len(lines)), key=lambda i: lines[i])
    where = 0.0
    points: list[float] = []
    while True:
        a, b = lines[current]
        crossing, steepest, following = float("inf"), b, -1
        for j, (a_j, b_j) in enumerate(lines):
            if b_j <= b:
                continue  # never overtakes the current line to the right
            t = max((a - a_j) / (b_j - b), where)
            # The earliest crossing; among lines crossing there, the steepest stays on top.
            if t < crossing - _SAME_POINT or (t <= crossing + _SAME_POINT and b_j > steepest):
                crossing, steepest, following = min(t, crossing), b_j, j
        if following < 0 or crossing >= 1.0:
            return points
        if crossing > 0.0:
            points.append(crossing)
        current, where = following, crossing


def flips(agents: Sequence[AgentScore], settings: Settings) -> tuple[Flip, ...]:
    """The technical-weight intervals covering [0, 1] in order, each with the agent that
    ranks first in it; adjacent intervals with the same agent are merged.

    `agents` are a run's scored agents (`Ranking.agents`, under any weights: only their
    technical and interaction scores count).
    """
    if not agents:
        return ()
    # A failed agent never ranks first beside a working one: only the working draw lines.
    working = [score for score in agents if score.failure is None] or list(agents)
    lines = []
    for score in working:
        c, p, q = coefficients(score.technical, score.interaction, settings)
        lines.append((c + q, p - q))  # final at w = 0, and its slope in w
    edges = [0.0]
    for point in sorted(_breakpoints(lines)):
        if point - edges[-1] > _SAME_POINT and 1.0 - point > _SAME_POINT:
            edges.append(point)
    edges.append(1.0)
    result: list[Flip] = []
    for start, end in pairwise(edges):
        agent = _winner(working, (start + end) / 2, settings)
        if result and result[-1].agent == agent:
            result[-1] = Flip(result[-1].start, end, agent)
        else:
            result.append(Flip(start, end, agent))
    return tuple(result)


def run_flips(run: Run, settings: Settings) -> tuple[Flip, ...]:
    """`flips` of a run's agents under `settings`."""
    return flips(rank_run(run, settings).agents, settings)
