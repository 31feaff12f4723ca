"""Flip points (issue 5): the technical-weight intervals in which each agent ranks first,
against `rank_run` at every point of a fine grid."""

from __future__ import annotations

import random
from itertools import pairwise
from typing import cast

import pytest

from ppp_tui.core.model import Agent, Effort, Question, Run, Severity, Trajectory, Violation
from ppp_tui.core.scoring import final_score, rank_run
from ppp_tui.core.sensitivity import Flip, flips, run_flips
from ppp_tui.core.settings import STAGE_TUNED, Settings, Weights

# What a grid point's top two finals must differ by for it to count as "away from a
# breakpoint": near one, the finals tie to 9 decimals and the tie rule decides.
CLEAR_MARGIN = 1e-8


def random_agent(rng: random.Random, name: str) -> Agent:
    # Coarse technical scores and efforts make exact ties and coincident lines common.
    technical = rng.choice([0.5, 0.8, 0.9, 1.0]) if rng.random() < 0.5 else rng.random()
    if rng.random() < 0.2:
        return Agent(name, technical, None)
    efforts = [Effort.LOW, Effort.MEDIUM, Effort.HIGH]
    questions = tuple(
        Question(f"q{n}?", rng.choice(efforts), turn=n) for n in range(rng.randint(0, 3))
    )
    violations = tuple(
        Violation(
            "json",
            rng.choice(list(Severity)),
            penalty=rng.choice([None, None, 0.2, 0.01]),
        )
        for _ in range(rng.randint(0, 2))
    )
    return Agent(name, technical, Trajectory(questions=questions, violations=violations))


def random_run(rng: random.Random, agents: int) -> Run:
    names = rng.sample(["zed", "amy", "bob", "cy", "dee", "eve", "fay", "gus", "hal"], agents)
    members = [random_agent(rng, name) for name in names]
    if agents > 1 and rng.random() < 0.3:
        twin = members[0]  # the same scores under another name: coincident lines
        members[-1] = Agent(members[-1].name, twin.technical, twin.trajectory)
    preferences = ("json",) if rng.random() < 0.5 else ()
    return Run("run", tuple(members), stage=rng.choice(["plan", None]), preferences=preferences)


def random_settings(rng: random.Random) -> Settings:
    return Settings(
        enabled=rng.random() < 0.85,
        missing_trajectory=rng.choice(["technical_only", "neutral"]),
        stage_weights=STAGE_TUNED,  # the run's stage table must not matter
    )


def check_against_the_ranking(run: Run, settings: Settings, points: int) -> int:
    """Every clear grid point ranks first the agent of the interval holding it; returns
    how many points were clear."""
    intervals = run_flips(run, settings)
    assert intervals[0].start == 0.0 and intervals[-1].end == 1.0
    for left, right in pairwise(intervals):
        assert left.end == right.start and left.start < left.end
        assert left.agent != right.agent
    ends = {
        a.name: tuple(
            final_score(a.technical, a.interaction, Weights.from_technical(w), settings)
            for w in (0.0, 1.0)
        )
        for a in rank_run(run, settings).agents
    }
    checked = 0
    for step in range(points):
        w = step / (points - 1)
        ranking = rank_run(run, settings, Weights.from_technical(w))
        best = ranking.best
        # Agents on the same line as the best tie with it at every weight (the tie rule
        # orders them alike everywhere); any other within the margin is near a crossing.
        # A failed agent never ranks first: it is no rival.
        rivals = [
            a.final
            for a in ranking.agents[1:]
            if a.failure is None
            and max(abs(x - y) for x, y in zip(ends[a.name], ends[best.name], strict=True)) > 1e-12
        ]
        if rivals and best.final - max(rivals) < CLEAR_MARGIN:
            continue
        holding = [f.agent for f in intervals if f.start <= w <= f.end]
        assert holding == [ranking.best_agent], (w, intervals)
        checked += 1
    return checked


@pytest.mark.parametrize("seed", range(40))
def test_intervals_match_the_ranking_on_a_grid(seed: int) -> None:
    rng = random.Random(seed)
    agents = 1 if seed % 10 == 0 else rng.randint(2, 7)
    run, settings = random_run(rng, agents), random_settings(rng)
    checked = check_against_the_ranking(run, settings, 10001 if seed < 4 else 1001)
    assert checked > 0.9 * (10001 if seed < 4 else 1001)


def test_the_breakpoints_are_the_exact_crossings() -> None:
    """Seed-style example: fast (0.95, a high-effort question) overtakes steady (0.8,
    compliant) where 0.95w - 0.5(1-w) = 0.8w + 0.05(1-w): w = 0.55 / 0.7."""
    steady = Agent("steady", 0.8, Trajectory())
    fast = Agent("fast", 0.95, Trajectory(questions=(Question("Which?", Effort.HIGH),)))
    run = Run("r", (steady, fast), preferences=("json",))
    assert run_flips(run, Settings()) == (
        Flip(0.0, cast(float, pytest.approx(0.55 / 0.7, abs=1e-15)), "steady"),
        Flip(cast(float, pytest.approx(0.55 / 0.7, abs=1e-15)), 1.0, "fast"),
    )
    assert run_flips(run, Settings()) == run_flips(
        Run("r", (fast, steady), preferences=("json",)), Settings()
    )
    assert run_flips(run, Settings())[0].document() == {
        "from": 0.0,
        "to": pytest.approx(0.7857142857),
        "agent": "steady",
    }


@pytest.mark.parametrize("seed", range(30))
def test_adjacent_winners_tie_at_each_breakpoint(seed: int) -> None:
    rng = random.Random(1000 + seed)
    run, settings = random_run(rng, rng.randint(2, 9)), random_settings(rng)
    scores = {a.name: a for a in rank_run(run, settings).agents}
    intervals = run_flips(run, settings)
    for left, right in pairwise(intervals):
        weights = Weights.from_technical(left.end)
        a, b = scores[left.agent], scores[right.agent]
        assert final_score(a.technical, a.interaction, weights, settings) == pytest.approx(
            final_score(b.technical, b.interaction, weights, settings), abs=1e-12
        )


def test_three_lines_through_one_point_flip_once() -> None:
    """a, b and c all cross at w = 0.5; b (the steepest) wins right of it, c never."""
    agents = (
        Agent("a", 0.2, Trajectory(violations=(Violation("json", penalty=0.25),))),
        Agent("b", 0.8, Trajectory(violations=(Violation("json", penalty=0.85),))),
        Agent("c", 0.5, Trajectory(violations=(Violation("json", penalty=0.55),))),
    )
    intervals = run_flips(Run("r", agents, preferences=("json",)), Settings())
    assert [f.agent for f in intervals] == ["a", "b"]
    assert intervals[0].end == pytest.approx(0.5, abs=1e-12)


def test_one_agent_ties_and_ppp_off() -> None:
    solo = Run("r", (Agent("solo", 0.3, None),))
    assert run_flips(solo, Settings()) == (Flip(0.0, 1.0, "solo"),)
    # The same scores under two names: the name decides at every weight.
    twins = Run("r", (Agent("b", 0.7, Trajectory()), Agent("a", 0.7, Trajectory())))
    assert run_flips(twins, Settings()) == (Flip(0.0, 1.0, "a"),)
    # PPP off ranks by technical alone: no flip.
    steady = Agent("steady", 0.8, Trajectory())
    asker = Agent("asker", 0.95, Trajectory(questions=(Question("Which?", Effort.HIGH),)))
    run = Run("r", (steady, asker))
    assert run_flips(run, Settings(enabled=False)) == (Flip(0.0, 1.0, "asker"),)
    assert flips((), Settings()) == ()


def test_no_trajectory_fallbacks() -> None:
    """A flat technical-only line against a rising one; "neutral" makes it w * technical."""
    flat = Agent("flat", 0.78, None)
    rising = Agent("rising", 0.82, Trajectory())  # 0.82w + 0.05(1-w): asked nothing
    run = Run("r", (flat, rising))
    assert run_flips(run, Settings()) == (
        Flip(0.0, cast(float, pytest.approx(0.73 / 0.77)), "flat"),
        Flip(cast(float, pytest.approx(0.73 / 0.77)), 1.0, "rising"),
    )
    # Neutral: flat is 0.78w, below rising everywhere.
    assert run_flips(run, Settings(missing_trajectory="neutral")) == (Flip(0.0, 1.0, "rising"),)


@pytest.mark.parametrize("seed", range(20))
def test_failed_agents_never_hold_an_interval(seed: int) -> None:
    from dataclasses import replace

    rng = random.Random(500 + seed)
    run = random_run(rng, rng.randint(2, 6))
    # Fail some agents (not the first): technical 0, often with the best interaction.
    members = tuple(
        replace(a, technical=0.0, failure="stub agent", trajectory=Trajectory())
        if k and rng.random() < 0.5
        else a
        for k, a in enumerate(run.agents)
    )
    run = replace(run, agents=members)
    settings = random_settings(rng)
    intervals = run_flips(run, settings)
    working = {a.name for a in members if a.failure is None}
    assert {f.agent for f in intervals} <= working
    assert check_against_the_ranking(run, settings, 1001) > 500


def test_a_failed_agent_on_top_does_not_hide_a_flip_between_working_agents() -> None:
    # With a stated preference and nothing violated, R_Pers is +0.05 for each agent.
    high = tuple(Question("Why?", Effort.HIGH) for _ in range(3))
    run = Run(
        "run",
        (
            Agent("a", 1.0, Trajectory(questions=high)),  # 2.45 w - 1.45
            Agent("b", 0.3, Trajectory(questions=high[:1])),  # 0.75 w - 0.45
            Agent("c", 0.0, Trajectory(), failure="stub agent"),  # 0.1 (1 - w): on top below 0.608
        ),
        preferences=("json",),
    )
    (first, second) = run_flips(run, Settings())
    assert (first.agent, first.start, second.agent, second.end) == ("b", 0.0, "a", 1.0)
    assert first.end == pytest.approx(1.0 / 1.7)  # where a and b cross, not where c is passed
