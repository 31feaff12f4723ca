"""Regions of the weight triangle: where each agent ranks first, as exact polygons,
checked against the ranking at random points and against the flip points on the
diagonal (proactivity = personalization)."""

from __future__ import annotations

import random

import pytest
from test_sensitivity import random_run, random_settings

from ppp_tui.core.model import Agent, Effort, Question, Run, Trajectory, Violation
from ppp_tui.core.regions import (
    TRIANGLE_AREA,
    Region,
    on_edge,
    run_regions,
    technical_of,
    winner,
)
from ppp_tui.core.scoring import rank_run
from ppp_tui.core.sensitivity import run_flips
from ppp_tui.core.settings import Settings, Weights


def best_at(run: Run, settings: Settings, w_p: float, w_s: float) -> str:
    """The agent the per-run ranking puts first at these free weights."""
    best = rank_run(run, settings, Weights.from_free(w_p, w_s)).best_agent
    assert winner(rank_run(run, settings).agents, w_p, w_s, settings) == best
    return best


def holding(regions: tuple[Region, ...], w_p: float, w_s: float) -> list[str]:
    return [r.agent for r in regions if r.contains(w_p, w_s)]


def segment_on_diagonal(region: Region) -> tuple[float, float] | None:
    """The technical weights [from, to] where the region meets the diagonal w_p = w_s."""
    low, high = 0.0, 1.0  # x with (x, x) in the region, x = 1 - technical
    count = len(region.vertices)
    for k in range(count):
        (x0, y0), (x1, y1) = region.vertices[k], region.vertices[(k + 1) % count]
        # Inside: cross((x1-x0, y1-y0), (x-x0, x-y0)) >= 0, affine in x: a + b x >= 0.
        a = (x1 - x0) * (-y0) - (y1 - y0) * (-x0)
        b = (x1 - x0) - (y1 - y0)
        if abs(b) < 1e-15:
            if a < -1e-12:
                return None
        elif b > 0:
            low = max(low, -a / b)
        else:
            high = min(high, -a / b)
    if high - low <= 1e-12:
        return None
    return 1.0 - high, 1.0 - low


@pytest.mark.parametrize("seed", range(40))
def test_regions_tile_the_triangle(seed: int) -> None:
    rng = random.Random(seed)
    run = random_run(rng, 1 if seed % 10 == 0 else rng.randint(2, 7))
    regions = run_regions(run, random_settings(rng))
    assert sum(r.area for r in regions) == pytest.approx(TRIANGLE_AREA, abs=1e-9)
    assert len({r.agent for r in regions}) == len(regions)
    for region in regions:
        assert region.area > 0
        for (w_p, w_s), (t, p, s) in zip(region.vertices, region.weights(), strict=True):
            assert w_p >= -1e-12 and w_s >= -1e-12 and w_p + w_s <= 2 + 1e-12
            assert (p, s) == (w_p, w_s)
            assert t + (p + s) / 2 == pytest.approx(1.0, abs=1e-12)


@pytest.mark.parametrize("seed", range(40))
def test_random_points_lie_in_the_winners_region(seed: int) -> None:
    rng = random.Random(500 + seed)
    run, settings = random_run(rng, rng.randint(1, 7)), random_settings(rng)
    regions = run_regions(run, settings)
    agents = rank_run(run, settings).agents
    checked = 0
    for _ in range(400):
        w_p, w_s = rng.uniform(0, 2), rng.uniform(0, 2)
        if w_p + w_s > 2:
            w_p, w_s = 2 - w_p, 2 - w_s
        if on_edge(agents, w_p, w_s, settings):
            continue  # on an edge: the tie rule decides, both regions hold it
        inside = holding(regions, w_p, w_s)
        best = best_at(run, settings, w_p, w_s)
        assert best in inside, (w_p, w_s, regions)
        checked += 1
    assert checked > 300


@pytest.mark.parametrize("seed", range(40))
def test_on_the_diagonal_the_edges_are_the_flip_points(seed: int) -> None:
    rng = random.Random(2000 + seed)
    run, settings = random_run(rng, rng.randint(1, 8)), random_settings(rng)
    on_diagonal = {}
    for region in run_regions(run, settings):
        segment = segment_on_diagonal(region)
        if segment is not None:
            on_diagonal[region.agent] = segment
    flips = run_flips(run, settings)
    assert {f.agent for f in flips} == set(on_diagonal)
    for flip in flips:
        start, end = on_diagonal[flip.agent]
        assert abs(start - flip.start) < 1e-9 and abs(end - flip.end) < 1e-9, (flip, start, end)


def test_a_worked_example() -> None:
    """careful asks nothing and complies (R_Proact +0.05, R_Pers +0.05), at 0.8;
    chatty asks a high-effort question (R_Proact -0.5) and complies, at 0.7;
    rude asks nothing and breaks json (R_Pers -0.3), at 0.95. chatty never wins."""
    careful = Agent("careful", 0.8, Trajectory())
    chatty = Agent("chatty", 0.7, Trajectory(questions=(Question("Which?", Effort.HIGH),)))
    rude = Agent("rude", 0.95, Trajectory(violations=(Violation("json", penalty=0.3),)))
    run = Run("r", (careful, chatty, rude), preferences=("json",))
    regions = {r.agent: r for r in run_regions(run, Settings())}
    assert set(regions) == {"careful", "rude"}
    # careful - rude = -0.15 w_t + 0.35 w_s (R_Proact equal): with w_t = 1 - (p+s)/2,
    # careful wins where 0.075 p + 0.425 s >= 0.15.
    assert sorted(regions["rude"].vertices) == [
        (0.0, 0.0),
        pytest.approx((0.0, 0.15 / 0.425)),
        (2.0, 0.0),
    ]
    assert regions["rude"].area == pytest.approx(0.15 / 0.425)
    assert regions["careful"].area == pytest.approx(2 - 0.15 / 0.425)
    assert regions["careful"].document()["vertices"][0] == {
        "technical": pytest.approx(technical_of(*regions["careful"].vertices[0])),
        "proactivity": regions["careful"].vertices[0][0],
        "personalization": regions["careful"].vertices[0][1],
    }


def test_twins_go_to_the_tie_rule_and_failures_never_win() -> None:
    twin = Trajectory(questions=(Question("Which?", Effort.MEDIUM),))
    run = Run(
        "r",
        (
            Agent("bob", 0.9, twin),
            Agent("amy", 0.9, twin),
            Agent("zed", 1.0, Trajectory(), failure="crashed"),
        ),
    )
    regions = run_regions(run, Settings())
    assert [r.agent for r in regions] == ["amy"]
    assert regions[0].area == pytest.approx(TRIANGLE_AREA)
