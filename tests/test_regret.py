"""Regret, agreement and exact tuning (SPEC 6) against the per-run ranking and brute force."""

from __future__ import annotations

import numpy as np
import pytest

from ppp_tui.core import tuning as tuning_module
from ppp_tui.core.arrays import AgentRow, ScoreArrays
from ppp_tui.core.by_slot import first_true
from ppp_tui.core.model import Agent, Effort, Question, Run, Trajectory
from ppp_tui.core.scoring import TIE_SCALE, final_score, rank_run
from ppp_tui.core.settings import STAGE_TUNED, Settings, Weights
from ppp_tui.core.tuning import Resampler, bootstrap, cross_validate, optimum, tune


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
    settings = Settings(weights=Weights.pair(0.9, 0.1), stage_weights=STAGE_TUNED)
    outcome = ScoreArrays.build(rows).lines(settings).outcome()
    assert outcome.final[0, 0] == pytest.approx(0.6 * 0.8)
    assert outcome.final[1, 0] == pytest.approx(0.9 * 0.8)


def near_flat_rows(rng: np.random.Generator, count: int, gap: float):
    """Runs whose two agents' finals differ by at most `gap`, crossing anywhere in [0, 1]:
    mean regret stays within the tolerance across many breakpoints, so tuning is
    decided by agreement and distance, among many candidate intervals."""
    rows = []
    for r in range(count):
        tech, inter, cross = float(rng.random()), float(rng.random()), float(rng.random())
        a = AgentRow("a", tech, inter)
        b = AgentRow("b", tech + gap * (1 - cross), inter - gap * cross)
        agents = [a, b] + ([AgentRow("c", tech - 0.1, inter - 0.1)] if rng.random() < 0.3 else [])
        rows.append((f"run-{r}", None, agents, "a" if rng.random() < 0.5 else "b"))
    return rows


def reference_choice(lines, current: float) -> float:
    """SPEC 6's choice spelled out: every open interval of optimal breakpoints and (if
    few) every optimal breakpoint, scored by `outcome`, then the tie rule."""
    profile = tuning_module._profile(lines)
    xs, regret = profile.xs, profile.regret
    optimal = np.flatnonzero(regret <= regret.min() + tuning_module.REGRET_TOLERANCE)
    lo, hi = int(optimal[0]), int(optimal[-1])
    candidates = []
    for k in range(lo, hi):
        if xs[k + 1] - xs[k] > 1e-12:
            w = tuning_module._inside(float(xs[k]), float(xs[k + 1]), current)
            candidates.append((float(profile.agreement[k]), -abs(w - current), w))
    points = [float(x) for x in xs[lo : hi + 1]]
    if len(points) <= tuning_module.MAX_POINT_CANDIDATES or not candidates:
        for w in dict.fromkeys(points):
            candidates.append((lines.outcome(w).agreement or 0.0, -abs(w - current), w))
    top = max(agreement for agreement, _, _ in candidates)
    near = [c for c in candidates if c[0] >= top - 1e-12]
    return max(near, key=lambda c: (c[1], -c[2]))[2]


@pytest.mark.parametrize("seed", range(10))
def test_tuned_weight_follows_the_tie_rule_among_many_candidates(seed: int) -> None:
    rng = np.random.default_rng(300 + seed)
    if seed % 2:
        rows = near_flat_rows(rng, int(rng.integers(100, 600)), gap=[1e-8, 3e-8, 1e-7][seed % 3])
    else:
        rows = random_rows(rng, int(rng.integers(20, 200)))
    lines = ScoreArrays.build(rows).lines(Settings()).marked_only()
    grid = np.linspace(0.0, 1.0, 11)
    for current in (*grid, float(rng.random())):
        assert optimum(lines, float(current)) == reference_choice(lines, float(current))


@pytest.mark.parametrize("seed", range(6))
def test_agreement_at_close_weights_matches_outcome(seed: int) -> None:
    """Several weights share one selection pass; near-tied runs are selected again."""
    rng = np.random.default_rng(400 + seed)
    lines = ScoreArrays.build(random_rows(rng, 150)).lines(Settings()).marked_only()
    breakpoints = tuning_module._profile(lines).xs
    for base in rng.choice(breakpoints, 5):
        offsets = (0.0, 1e-13, -1e-12, 1e-10, 2e-9, -5e-9, 1e-6, 0.2)
        weights = list(dict.fromkeys(min(max(float(base) + d, 0.0), 1.0) for d in offsets))
        expected = [lines.outcome(w).agreement for w in weights]
        assert lines.by_slot.agreements(weights) == expected


@pytest.mark.parametrize("agents", [1, 3, 8, 9, 12])
def test_profile_is_exact_at_its_breakpoints(agents: int) -> None:
    """Envelope walk (including more slots than the packed first-max lookup handles)."""
    rng = np.random.default_rng(500 + agents)
    rows = []
    for r in range(80):
        k = int(rng.integers(1, agents + 1))
        members = [
            AgentRow(
                f"agent{j:02d}",
                float(rng.choice([0.5, 0.8, 1.0])) if rng.random() < 0.4 else float(rng.random()),
                None if rng.random() < 0.15 else float(rng.choice([0.1, 0.0, -0.5, -1.5])),
            )
            for j in range(k)
        ]
        rows.append((f"run-{r}", None, members, members[int(rng.integers(0, k))].name))
    lines = ScoreArrays.build(rows).lines(Settings()).marked_only()
    profile = tuning_module._profile(lines)
    for x, regret in zip(profile.xs, profile.regret, strict=True):
        assert lines.outcome(float(x)).mean_regret == pytest.approx(regret, abs=1e-9)
    tuning = tune(lines, 0.7)
    assert tuning is not None
    assert tuning.mean_regret <= brute_force(lines, np.linspace(0, 1, 2001)).min() + 1e-9


def test_first_true_matches_argmax() -> None:
    rng = np.random.default_rng(9)
    for slots in (1, 2, 5, 8, 9, 13):
        mask = rng.random((slots, 500)) < 0.3
        assert np.array_equal(first_true(mask), np.argmax(mask, axis=0))


def test_tuning_while_the_scratch_is_lent_out() -> None:
    """A second user of the same arrays (another thread) gets buffers of its own."""
    rng = np.random.default_rng(11)
    lines = ScoreArrays.build(random_rows(rng, 60)).lines(Settings()).marked_only()
    expected = optimum(lines, 0.7)
    with lines.by_slot.scratch.lend():
        assert optimum(lines, 0.7) == expected
    assert optimum(lines, 0.7) == expected


def test_subset_by_mask_or_row_numbers() -> None:
    rng = np.random.default_rng(12)
    arrays = ScoreArrays.build(random_rows(rng, 30))
    lines = arrays.lines(Settings())
    mask = rng.random(30) < 0.5
    by_mask, by_rows = lines.subset(mask), lines.subset(np.flatnonzero(mask))
    assert list(by_mask.arrays.run_ids) == list(arrays.run_ids[mask])
    assert list(by_rows.arrays.run_ids) == list(arrays.run_ids[mask])
    assert np.array_equal(by_mask.c, lines.c[mask]) and np.array_equal(by_rows.q, lines.q[mask])
    with pytest.raises(IndexError):
        lines.subset(mask[:-1])


def reference_breakpoints(lines) -> list[float]:
    """Every run's envelope walked one run at a time, in plain floats, as SPEC 6 walks it:
    start at the top line at w = 0 (ties: steepest, then slot order); move to the
    earliest crossing steeper line (ties within 1e-12: steepest, then slot order)."""
    half = 0.5 / TIE_SCALE
    xs = []
    for r in range(len(lines.arrays)):
        slots = [j for j in range(lines.c.shape[1]) if lines.arrays.valid[r, j]]
        a = {j: float(lines.c[r, j]) + float(lines.q[r, j]) for j in slots}
        b = {j: float(lines.p[r, j]) - float(lines.q[r, j]) for j in slots}
        top = max(a.values())
        on_top = [j for j in slots if a[j] >= top - half]
        steepest = max(b[j] for j in on_top)
        current = next(j for j in on_top if b[j] >= steepest - half)
        where = 0.0
        for step in range(len(slots)):
            steeper = [j for j in slots if b[j] > b[current] + 1e-15]
            if not steeper:
                break
            cross = {j: (a[current] - a[j]) / (b[j] - b[current]) for j in steeper}
            if step:
                cross = {j: max(x, where) for j, x in cross.items()}
            t = min(cross.values())
            if not t < 1.0:
                break
            at_t = [j for j in steeper if cross[j] <= t + 1e-12]
            steepest = max(b[j] for j in at_t)
            current = next(j for j in at_t if b[j] == steepest)
            xs.append(t)
            where = t
    return xs


def edge_rows(rng: np.random.Generator, count: int, agents: int):
    """Lines that cross at w = 0 or w = 1 exactly (in decimals, not in floats), ties,
    and coincident lines: where rounding decides whether a walk moves."""
    rows = []
    for r in range(count):
        members = []
        base_t, base_i = float(rng.random()), float(rng.choice([0.1, 0.05, 0.0, -0.5]))
        for j in range(int(rng.integers(1, agents + 1))):
            kind = rng.integers(0, 4)
            if kind == 0:  # same technical: the same final at w = 1
                tech, inter = base_t, round(float(rng.random()) - 0.5, 2)
            elif kind == 1:  # same interaction: the same final at w = 0
                tech, inter = round(float(rng.random()), 3), base_i
            elif kind == 2:  # an exact copy
                tech, inter = base_t, base_i
            else:
                tech, inter = round(float(rng.random()), 2), round(float(rng.random()) - 0.5, 2)
            members.append(AgentRow(f"agent{j:02d}", tech, None if rng.random() < 0.1 else inter))
        rows.append((f"run-{r}", None, members, members[int(rng.integers(0, len(members)))].name))
    return rows


@pytest.mark.parametrize("seed", range(8))
def test_breakpoints_match_a_run_by_run_walk(seed: int) -> None:
    rng = np.random.default_rng(600 + seed)
    agents = (2, 3, 5, 10)[seed % 4]
    make = edge_rows if seed % 2 == 0 else lambda g, n, _: random_rows(g, n)
    settings = Settings(missing_trajectory="neutral" if seed % 3 == 0 else "technical_only")
    lines = ScoreArrays.build(make(rng, 400, agents)).lines(settings).marked_only()
    profile = tuning_module._profile(lines)
    assert sorted(reference_breakpoints(lines)) == list(profile.xs[1:-1])


# --- the bootstrap interval of the tuned weight ------------------------------------------------

INTERACTIONS = [0.1, 0.05, 0.0, -0.05, -0.1, -0.45, -0.5, -1.0]


def hidden_rows(rng: np.random.Generator, count: int, hidden: float, noise: float = 0.03):
    """Runs marked by a simulated user, as the demo's: the agent with the best final under
    the hidden technical weight, plus a little noise (SPEC 2's fallback included)."""
    weights = Weights.from_technical(hidden)
    rows = []
    for r in range(count):
        agents = [
            AgentRow(
                f"agent{j}",
                float(rng.uniform(0.5, 1.0)),
                None if rng.random() < 0.05 else float(rng.choice(INTERACTIONS)),
            )
            for j in range(int(rng.integers(2, 6)))
        ]
        scores = [
            final_score(a.technical, a.interaction, weights, Settings()) + rng.normal(0, noise)
            for a in agents
        ]
        rows.append((f"run-{r}", None, agents, agents[int(np.argmax(scores))].name))
    return rows


def resampled_copy(lines, counts):
    """The runs drawn, explicitly: each run repeated `counts` times."""
    return lines.subset(np.repeat(np.arange(len(counts)), counts))


@pytest.mark.parametrize("seed", range(12))
def test_a_weighted_resample_tunes_exactly_as_the_resampled_copy(seed: int) -> None:
    rng = np.random.default_rng(700 + seed)
    if seed % 3 == 0:
        rows = edge_rows(rng, int(rng.integers(5, 80)), (2, 3, 5, 10)[seed % 4])
    elif seed % 3 == 1:
        rows = near_flat_rows(rng, int(rng.integers(20, 300)), gap=[1e-8, 1e-7][seed % 2])
    else:
        rows = random_rows(rng, int(rng.integers(1, 120)))
    settings = Settings(missing_trajectory="neutral" if seed % 4 == 0 else "technical_only")
    lines = ScoreArrays.build(rows).lines(settings).marked_only()
    resampler = Resampler(lines)
    # A second one re-anchors whenever more than two runs would be selected again.
    anchored = Resampler(lines)
    anchored._budget = 2
    for _ in range(15):
        counts = resampler.draw(rng)
        copy = resampled_copy(lines, counts)
        current = float(rng.choice([0.7, rng.random()]))
        assert resampler.optimum(counts, current) == optimum(copy, current)
        assert anchored.optimum(counts, current) == optimum(copy, current)
        # The agreement at points (the tie rule, exactly) at and around breakpoints.
        xs = tuning_module._profile(copy).xs
        base = float(rng.choice(xs))
        weights = [min(max(base + d, 0.0), 1.0) for d in (0.0, 1e-13, -1e-10, 3e-9, 0.01)]
        expected = copy.by_slot.agreements(weights)
        assert lines.by_slot.agreements(weights, counts) == expected
        assert resampler.agreements(weights, counts) == expected
        assert anchored.agreements(weights, counts) == expected


def test_bootstrap_is_deterministic_under_a_seed() -> None:
    rng = np.random.default_rng(800)
    lines = ScoreArrays.build(hidden_rows(rng, 300, 0.62)).lines(Settings())
    first = bootstrap(lines, 0.7, resamples=60, seed=4)
    assert first is not None
    assert bootstrap(lines, 0.7, resamples=60, seed=4) == first
    assert Resampler(lines.marked_only()).interval(0.7, 60, seed=4) == first
    assert bootstrap(lines, 0.7, resamples=60, seed=5) != first
    tuning = tune(lines, 0.7, seed=4, resamples=60)
    assert tuning is not None and tuning.ci == first and tuning.ci_resamples == 60
    assert tune(lines, 0.7, resamples=0) == tune(lines, 0.7, resamples=0)
    untuned = tune(lines, 0.7, resamples=0)
    assert untuned is not None and untuned.ci is None and untuned.ci_resamples is None


@pytest.mark.parametrize("seed", range(5))
def test_the_interval_holds_the_optimum(seed: int) -> None:
    rng = np.random.default_rng(900 + seed)
    lines = ScoreArrays.build(hidden_rows(rng, 500, float(rng.uniform(0.3, 0.9)))).lines(Settings())
    tuning = tune(lines, 0.7, seed=seed)
    assert tuning is not None and tuning.ci is not None
    low, high = tuning.ci
    assert tuning.ci_resamples == 200
    assert 0.0 <= low <= tuning.technical <= high <= 1.0
    assert high - low < 0.2


def test_the_interval_holds_the_hidden_weight_on_most_seeds() -> None:
    """A 95% interval: over 100 seeds it held the hidden weight 92 times."""
    hidden, hits = 0.62, 0
    for seed in range(20):
        rng = np.random.default_rng(1000 + seed)
        lines = ScoreArrays.build(hidden_rows(rng, 300, hidden)).lines(Settings())
        interval = bootstrap(lines, 0.7, resamples=200, seed=seed)
        assert interval is not None
        hits += interval[0] <= hidden <= interval[1]
    assert hits >= 16


def test_bootstrap_edge_cases() -> None:
    rows = [("r1", None, [AgentRow("a", 0.9, 0.05)], None)]
    assert bootstrap(ScoreArrays.build(rows).lines(Settings()), 0.7) is None
    # One marked run: every resample is that run, so the interval is its optimum.
    one = ScoreArrays.build(
        [("r1", None, [AgentRow("steady", 0.8, 0.05), AgentRow("fast", 0.95, -0.5)], "fast")]
    ).lines(Settings())
    tuning = tune(one, 0.7)
    assert tuning is not None
    assert tuning.ci == (tuning.technical, tuning.technical) == pytest.approx((0.55 / 0.7,) * 2)
    with pytest.raises(ValueError):
        Resampler(ScoreArrays.build(rows).lines(Settings()))


def with_failures(rng: np.random.Generator, rows):  # type: ignore[no-untyped-def]
    """`rows` with some agents failed (technical 0), never a run's preferred agent."""
    failed_rows = []
    for run_id, stage, agents, preferred in rows:
        changed = [
            AgentRow(a.name, 0.0, a.interaction, True)
            if a.name != preferred and rng.random() < 0.35
            else a
            for a in agents
        ]
        failed_rows.append((run_id, stage, changed, preferred))
    return failed_rows


@pytest.mark.parametrize("seed", range(8))
def test_failed_agents_are_never_selected_and_tuning_stays_exact(seed: int) -> None:
    rng = np.random.default_rng(900 + seed)
    rows = with_failures(rng, random_rows(rng, int(rng.integers(5, 60))))
    settings = Settings(missing_trajectory="neutral" if seed % 2 else "technical_only")
    arrays = ScoreArrays.build(rows)
    lines = arrays.lines(settings)
    assert arrays.failed is not None and arrays.failed.any()
    for w in (0.0, 0.25, 0.5, 1.0):
        outcome = lines.outcome(w)
        for i, (_, _, agents, _) in enumerate(rows):
            working = {a.name for a in agents if not a.failed}
            chosen = arrays.names[i, outcome.selected[i]]
            assert chosen in (working or {a.name for a in agents})
        assert np.isfinite(outcome.regret[outcome.marked]).all()
    tuning = tune(lines, current=0.7)
    assert tuning is not None
    regrets = brute_force(lines.marked_only(), np.linspace(0.0, 1.0, 2001))
    assert tuning.mean_regret <= regrets.min() + 1e-9
    assert lines.marked_only().outcome(tuning.technical).mean_regret == pytest.approx(
        tuning.mean_regret, abs=1e-12
    )


@pytest.mark.parametrize("seed", range(4))
def test_array_selection_matches_the_per_run_ranking_with_failed_agents(seed: int) -> None:
    rng = np.random.default_rng(950 + seed)
    runs = []
    for r in range(30):
        agents = []
        for j in range(int(rng.integers(1, 6))):
            failed = j > 0 and rng.random() < 0.4
            trajectory = None if rng.random() < 0.2 else Trajectory()
            technical = 0.0 if failed else float(rng.choice([0.0, 0.05, 0.6]))
            agents.append(
                Agent(f"a{j}", technical, trajectory, failure="empty output" if failed else None)
            )
        runs.append(Run(f"r{r}", tuple(agents), stage="plan", preferred_agent="a0"))
    settings = Settings(missing_trajectory="neutral" if seed % 2 else "technical_only")
    arrays = ScoreArrays.from_runs(runs, settings)
    for w in (0.0, 0.5, 1.0):
        outcome = arrays.lines(settings).outcome(w)
        for index, run in enumerate(runs):
            best = rank_run(run, settings, Weights.from_technical(w)).best_agent
            assert arrays.names[index, outcome.selected[index]] == best
            assert run.agent(best).failure is None  # type: ignore[union-attr]
