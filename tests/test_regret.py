"""Regret, agreement and exact tuning (SPEC 6) against the per-run ranking and brute force."""

from __future__ import annotations

import numpy as np
import pytest

from ppp_tui.core.model import Agent, Effort, Question, Run, Trajectory
from ppp_tui.core.regret import AgentRow, ScoreArrays, cross_validate, optimum, tune
from ppp_tui.core.scoring import rank_run
from ppp_tui.core.settings import STAGE_TUNED, Settings, Weights


def random_rows(rng: np.random.Generator, count: int, stages: tuple[str, ...] = ("implement",)):
    rows = []
    for r in range(count):
        k = int(rng.integers(1, 6))
        agents = [
            AgentRow(
                f"agent{j}",
                float(rng.choice([0.5, 0.7, 0.8, 0.9, 1.0]))
                if rng.random() < 0.3
                else float(rng.random()),
                None
                if rng.random() < 0.15
                else float(rng.choice([0.1, 0.05, 0.0, -0.1, -0.5, -1.5])),
            )
            for j in range(k)
        ]
        preferred = agents[int(rng.integers(0, k))].name if rng.random() < 0.85 else None
        rows.append((f"run-{r}", stages[r % len(stages)], agents, preferred))
    return rows


def brute_force(lines, grid):
    return np.array([lines.outcome(float(w)).mean_regret for w in grid])


@pytest.mark.parametrize("seed", range(12))
def test_exact_optimum_is_never_worse_than_a_fine_grid(seed: int) -> None:
    rng = np.random.default_rng(seed)
    settings = Settings(missing_trajectory="neutral" if seed % 3 == 0 else "technical_only")
    lines = ScoreArrays.build(random_rows(rng, int(rng.integers(2, 60)))).lines(settings)
    tuning = tune(lines, current=0.7)
    assert tuning is not None
    grid = np.linspace(0.0, 1.0, 4001)
    regrets = brute_force(lines.marked_only(), grid)
    assert tuning.mean_regret <= regrets.min() + 1e-9
    # And the optimum is really attained at the reported weight.
    assert lines.marked_only().outcome(tuning.technical).mean_regret == pytest.approx(
        tuning.mean_regret, abs=1e-12
    )


@pytest.mark.parametrize("seed", range(6))
def test_curve_matches_exact_evaluation(seed: int) -> None:
    rng = np.random.default_rng(100 + seed)
    lines = ScoreArrays.build(random_rows(rng, 40)).lines(Settings())
    tuning = tune(lines, current=0.7)
    assert tuning is not None
    assert len(tuning.curve) == 101
    marked = lines.marked_only()
    for point in tuning.curve:
        assert marked.outcome(point.technical).mean_regret == pytest.approx(
            point.mean_regret, abs=1e-9
        )


@pytest.mark.parametrize("seed", range(8))
def test_array_selection_matches_the_per_run_ranking(seed: int) -> None:
    """The slider's arrays pick exactly the agent `rank_run` puts first, ties included."""
    rng = np.random.default_rng(200 + seed)
    runs = []
    for r in range(30):
        agents = []
        for j in range(int(rng.integers(1, 6))):
            high = int(rng.integers(0, 3))
            trajectory = (
                None
                if rng.random() < 0.2
                else Trajectory(questions=tuple(Question("Why?", Effort.HIGH) for _ in range(high)))
            )
            # Coarse technical scores make exact ties common.
            agents.append(Agent(f"a{j}", float(rng.choice([0.6, 0.8, 0.9])), trajectory))
        runs.append(Run(f"r{r}", tuple(agents), stage="plan", preferred_agent="a0"))
    settings = Settings(stage_weights=STAGE_TUNED)
    arrays = ScoreArrays.from_runs(runs, settings)
    outcome = arrays.lines(settings).outcome()
    for index, run in enumerate(runs):
        assert arrays.names[index, outcome.selected[index]] == rank_run(run, settings).best_agent


def test_regret_and_agreement_under_a_weight() -> None:
    """Seed 000's run marked for agent_a: 70/30 picks agent_b with regret 0.645 - 0.25."""
    rows = [
        (
            "seed-000",
            "implement",
            [AgentRow("agent_a", 1.0, -1.5), AgentRow("agent_b", 0.9, 0.05)],
            "agent_a",
        )
    ]
    lines = ScoreArrays.build(rows).lines(Settings())
    outcome = lines.outcome(0.7)
    assert outcome.agreement == 0.0
    assert outcome.mean_regret == pytest.approx(0.645 - 0.25)
    # At w = 1 technical alone decides and the user's pick wins.
    assert lines.outcome(1.0).agreement == 1.0
    assert lines.outcome(1.0).mean_regret == pytest.approx(0.0)


def test_tuning_reports_before_and_after() -> None:
    rows = [
        (
            "r1",
            "plan",
            [AgentRow("steady", 0.8, 0.05), AgentRow("brilliant", 0.95, -0.5)],
            "brilliant",
        ),
        (
            "r2",
            "plan",
            [AgentRow("steady", 0.8, 0.05), AgentRow("brilliant", 0.95, -0.5)],
            "brilliant",
        ),
    ]
    lines = ScoreArrays.build(rows).lines(Settings())
    tuning = tune(lines, current=0.7)
    assert tuning is not None
    # brilliant wins once 0.95w - 0.5(1-w) > 0.8w + 0.05(1-w): w > 0.55 / 0.7 = 0.7857.
    assert tuning.before_agreement == 0.0
    assert tuning.before_mean_regret == pytest.approx(
        (0.7 * 0.8 + 0.3 * 0.05) - (0.7 * 0.95 - 0.3 * 0.5)
    )
    assert tuning.mean_regret == pytest.approx(0.0)
    assert tuning.agreement == 1.0
    # Ties go to the weight nearest the current one: the flip point itself, where the
    # finals tie and the higher technical score (brilliant) wins.
    assert tuning.technical == pytest.approx(0.55 / 0.7)
    assert tuning.interaction == pytest.approx(1.0 - tuning.technical)


def test_ties_go_to_higher_agreement_then_nearest_current() -> None:
    """Zero regret everywhere (identical scores): the current weight stays."""
    rows = [("r1", None, [AgentRow("a", 0.9, 0.05), AgentRow("b", 0.9, 0.05)], "a")]
    lines = ScoreArrays.build(rows).lines(Settings())
    assert optimum(lines, 0.42) == pytest.approx(0.42)


def test_no_marked_runs_gives_nothing_to_tune() -> None:
    rows = [("r1", None, [AgentRow("a", 0.9, 0.05)], None)]
    assert tune(ScoreArrays.build(rows).lines(Settings()), 0.7) is None


def test_cross_validation_scores_held_out_runs() -> None:
    rng = np.random.default_rng(5)
    lines = ScoreArrays.build(random_rows(rng, 50)).lines(Settings()).marked_only()
    folds, regret, agreement = cross_validate(lines, 0.7, folds=5, seed=1)
    assert folds == 5
    tuned = tune(lines, 0.7)
    assert tuned is not None
    # Held-out regret can only be as good as the in-sample optimum, or worse.
    assert regret >= tuned.mean_regret - 1e-12
    assert 0.0 <= agreement <= 1.0
    assert cross_validate(lines, 0.7, folds=5, seed=1) == (folds, regret, agreement)


def test_per_stage_subsets_tune_independently() -> None:
    rows = [
        ("p1", "plan", [AgentRow("asker", 0.95, -0.5), AgentRow("quiet", 0.8, 0.05)], "quiet"),
        ("u1", "unlock", [AgentRow("asker", 0.95, -0.5), AgentRow("quiet", 0.8, 0.05)], "asker"),
    ]
    arrays = ScoreArrays.build(rows)
    lines = arrays.lines(Settings())
    plan = tune(lines.subset(arrays.stage_mask("plan")), 0.7)
    unlock = tune(lines.subset(arrays.stage_mask("unlock")), 0.7)
    assert plan is not None and unlock is not None
    assert plan.technical < 0.55 / 0.7 <= unlock.technical
    assert plan.mean_regret == pytest.approx(0.0)
    assert unlock.mean_regret == pytest.approx(0.0)


def test_configured_stage_weights_apply_per_run() -> None:
    rows = [
        ("p1", "plan", [AgentRow("a", 0.8, 0.0)], "a"),
        ("x1", "custom", [AgentRow("a", 0.8, 0.0)], "a"),
    ]
    settings = Settings(weights=Weights(0.9, 0.1), stage_weights=STAGE_TUNED)
    outcome = ScoreArrays.build(rows).lines(settings).outcome()
    assert outcome.final[0, 0] == pytest.approx(0.6 * 0.8)
    assert outcome.final[1, 0] == pytest.approx(0.9 * 0.8)
