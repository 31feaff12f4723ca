"""Exact tuning of both free weights (proactivity and personalization)."""

from __future__ import annotations

import numpy as np
import pytest

from ppp_tui.core.arrays import AgentRow, ScoreArrays
from ppp_tui.core.free_optimum import Planes, _box, optimum
from ppp_tui.core.settings import Settings, Weights
from ppp_tui.core.tuning import tune
from ppp_tui.core.tuning2d import bootstrap, cross_validate

NAMES = ("aider", "claude-code", "codex", "cursor", "gemini-cli", "goose")


def random_planes(runs: int, slots: int, seed: int) -> Planes:
    rng = np.random.default_rng(seed)
    a = rng.uniform(0.3, 1.0, (runs, slots))
    bp = rng.uniform(-0.5, 0.2, (runs, slots))
    bs = rng.uniform(-0.5, 0.2, (runs, slots))
    preferred = rng.integers(0, slots, runs)
    return Planes(a, bp, bs, preferred, np.ones((runs, slots), dtype=bool))


def grid(planes: Planes, steps: int = 201) -> tuple[float, tuple[float, float]]:
    """The least mean regret (largest plane minus the preferred one) on a grid of the
    triangle w_p, w_s >= 0, w_p + w_s <= 2, and where."""
    values = np.linspace(0.0, 2.0, steps)
    wp, ws = np.meshgrid(values, values, indexing="ij")
    inside = wp + ws <= 2.0 + 1e-12
    wp, ws = wp[inside], ws[inside]
    rows = np.arange(len(planes))
    best, where = np.inf, (0.0, 0.0)
    for chunk in range(0, wp.size, 2000):
        p, s = wp[chunk : chunk + 2000, None, None], ws[chunk : chunk + 2000, None, None]
        final = planes.a + planes.bp * p + planes.bs * s
        final = np.where(planes.selectable, final, -np.inf)
        regret = (final.max(axis=2) - final[:, rows, planes.preferred]).mean(axis=1)
        k = int(regret.argmin())
        if regret[k] < best:
            best, where = float(regret[k]), (float(p.ravel()[k]), float(s.ravel()[k]))
    return best, where


def max_regret(planes: Planes, p: float, s: float) -> float:
    final = np.where(planes.selectable, planes.a + planes.bp * p + planes.bs * s, -np.inf)
    rows = np.arange(len(planes))
    return float((final.max(axis=1) - final[rows, planes.preferred]).mean())


@pytest.mark.parametrize("seed", range(6))
def test_no_worse_than_a_fine_grid(seed: int) -> None:
    planes = random_planes(40, 3 + seed % 4, seed)
    found = optimum(planes, (0.3, 0.3))
    assert found is not None
    best, _ = grid(planes)
    assert max_regret(planes, found.proactivity, found.personalization) <= best + 1e-12
    assert found.mean_regret <= best + 1e-9
    assert found.proactivity >= 0 and found.personalization >= 0
    assert found.proactivity + found.personalization <= 2.0 + 1e-12
    assert found.technical == pytest.approx(1 - (found.proactivity + found.personalization) / 2)


def test_reaches_the_grid_minimum_at_a_vertex_on_the_grid() -> None:
    # Every run's crease passes through (0.4, 1.1), a grid point, from all sides:
    # mean regret is 0 there and positive everywhere else.
    rng = np.random.default_rng(3)
    vertex = np.array([0.4, 1.1])
    slopes = np.vstack([[1.0, 0.0], [0.0, 1.0], [-1.0, -1.0], rng.normal(size=(20, 2))])
    runs = len(slopes)
    a = np.zeros((runs, 2))
    a[:, 1] = -slopes @ vertex
    bp = np.column_stack([np.zeros(runs), slopes[:, 0]])
    bs = np.column_stack([np.zeros(runs), slopes[:, 1]])
    planes = Planes(a, bp, bs, np.zeros(runs, dtype=np.int64), np.ones((runs, 2), dtype=bool))
    best, where = grid(planes)
    assert where == pytest.approx((0.4, 1.1))
    found = optimum(planes, (0.3, 0.3))
    assert found is not None
    assert abs(found.mean_regret - best) <= 1e-9
    assert (found.proactivity, found.personalization) == pytest.approx((0.4, 1.1), abs=1e-9)


def test_boxes_give_the_whole_triangle_optimum() -> None:
    # Small boxes (a few creased runs each) must move and grow to the same optimum as
    # one linear program over the whole triangle.
    planes = random_planes(600, 5, 11)
    whole = optimum(planes, (0.3, 0.3), box_runs=10**6)
    for box_runs in (5, 20, 100):
        boxed = optimum(planes, (0.3, 0.3), box_runs=box_runs)
        assert whole is not None and boxed is not None
        assert boxed.mean_regret == pytest.approx(whole.mean_regret, abs=1e-12)
        assert boxed.proactivity == pytest.approx(whole.proactivity, abs=1e-9)
        assert boxed.personalization == pytest.approx(whole.personalization, abs=1e-9)


def test_keeps_the_current_weights_when_they_are_optimal() -> None:
    # The preferred agent is on top in a whole region: every point there is optimal.
    a = np.array([[1.0, 0.8], [0.9, 0.7]])
    zeros = np.zeros((2, 2))
    planes = Planes(a, zeros, zeros, np.zeros(2, dtype=np.int64), np.ones((2, 2), dtype=bool))
    found = optimum(planes, (0.3, 0.7))
    assert found is not None
    assert (found.proactivity, found.personalization) == (0.3, 0.7)
    assert found.mean_regret == 0.0 and found.agreement == 1.0


def test_nearest_optimal_point_to_the_current_weights() -> None:
    # Regret is max(0, w_p - 0.5): optimal wherever w_p <= 0.5; from (1.2, 0.4) the
    # nearest optimal point is (0.5, 0.4).
    a = np.array([[0.0, -0.5]])
    planes = Planes(
        a,
        np.array([[0.0, 1.0]]),
        np.zeros((1, 2)),
        np.zeros(1, dtype=np.int64),
        np.ones((1, 2), dtype=bool),
    )
    found = optimum(planes, (1.2, 0.4))
    assert found is not None
    assert found.mean_regret == pytest.approx(0.0, abs=1e-12)
    assert (found.proactivity, found.personalization) == pytest.approx((0.5, 0.4), abs=1e-9)


def test_an_agent_that_cannot_be_selected_never_counts() -> None:
    # Agent 1's plane is highest everywhere, but it failed beside a working agent.
    a = np.array([[0.5, 2.0, 0.4]])
    bp = np.array([[0.0, 0.0, 0.3]])
    planes = Planes(
        a, bp, np.zeros((1, 3)), np.zeros(1, dtype=np.int64), np.array([[True, False, True]])
    )
    found = optimum(planes, (1.0, 1.0))
    assert found is not None
    # Regret max(0, 0.3 w_p - 0.1): zero for w_p <= 1/3; nearest to (1, 1) is (1/3, 1).
    assert found.mean_regret == pytest.approx(0.0, abs=1e-12)
    assert found.proactivity == pytest.approx(1 / 3, abs=1e-9)


def simulated(
    weights: tuple[float, float, float], runs: int = 300, seed: int = 0, noise: float = 0.02
) -> ScoreArrays:
    """Marked runs of 4-6 agents, each marked by a user who ranks by `weights`
    (technical, proactivity, personalization) with noise: the argmax of noisy finals."""
    rng = np.random.default_rng(seed)
    wt, wp, ws = weights
    rows = []
    for r in range(runs):
        count = int(rng.integers(4, 7))
        agents = []
        finals = []
        for j in range(count):
            technical = float(rng.uniform(0.4, 1.0))
            proact = float(rng.choice([0.05, 0.0, -0.05, -0.1, -0.2, -0.5]))
            pers = float(rng.choice([0.05, 0.0, -0.02, -0.05, -0.1, -0.3]))
            agents.append(AgentRow(NAMES[j], technical, proact + pers, False, proact, pers))
            finals.append(wt * technical + wp * proact + ws * pers + rng.normal(0, noise))
        preferred = NAMES[int(np.argmax(finals))]
        rows.append((f"run-{r:04d}", "implement", agents, preferred))
    return ScoreArrays.build(rows)


@pytest.mark.parametrize(
    "weights", [(0.5, 0.2, 0.8), (0.7, 0.3, 0.3), (0.4, 0.9, 0.3), (0.8, 0.05, 0.35)]
)
def test_recovers_a_simulated_users_weights(weights: tuple[float, float, float]) -> None:
    arrays = simulated(weights, seed=int(weights[1] * 100))
    planes = Planes.from_lines(arrays.lines(Settings()))
    found = optimum(planes, (0.3, 0.3))
    assert found is not None
    tuned = (found.technical, found.proactivity, found.personalization)
    assert tuned == pytest.approx(weights, abs=0.1)
    assert found.weights == Weights.from_free(found.proactivity, found.personalization)


@pytest.mark.parametrize("seed", range(3))
def test_pair_form_agrees_with_the_one_weight_tuner(seed: int) -> None:
    arrays = simulated((0.5, 0.2, 0.8), runs=150, seed=seed)
    lines = arrays.lines(Settings())
    one = tune(lines, 0.7, resamples=0)
    planes = Planes.from_lines(lines)
    paired = optimum(planes, (0.3, 0.3), pair=True)
    free = optimum(planes, (0.3, 0.3))
    assert one is not None and paired is not None and free is not None
    assert paired.proactivity == paired.personalization
    assert paired.mean_regret == pytest.approx(one.mean_regret, abs=1e-9)
    # Its regret at the pair weights, scored as the app scores them.
    at_pair = lines.outcome_at(paired.weights).mean_regret
    assert at_pair == pytest.approx(one.mean_regret, abs=1e-9)
    assert free.mean_regret <= paired.mean_regret + 1e-12


@pytest.mark.parametrize("seed", range(3))
def test_counts_equal_duplicated_runs(seed: int) -> None:
    planes = random_planes(120, 4, seed + 40)
    counts = np.random.default_rng(seed).integers(0, 4, len(planes))
    weighted = optimum(planes, (0.3, 0.3), counts=counts)
    duplicated = optimum(planes.subset(np.repeat(np.arange(len(planes)), counts)), (0.3, 0.3))
    assert weighted is not None and duplicated is not None
    assert weighted.mean_regret == pytest.approx(duplicated.mean_regret, abs=1e-12)
    assert weighted.agreement == pytest.approx(duplicated.agreement, abs=1e-12)
    assert weighted.proactivity == pytest.approx(duplicated.proactivity, abs=1e-9)
    assert weighted.personalization == pytest.approx(duplicated.personalization, abs=1e-9)


def test_cross_validation_scores_each_held_out_fold_at_its_training_optimum() -> None:
    planes = random_planes(50, 4, 7)
    k, regret, agreement = cross_validate(planes, (0.3, 0.3), folds=5, seed=2) or (0, 0.0, 0.0)
    assert k == 5
    assignment = np.random.default_rng(2).permutation(50) % 5
    total_regret = total_agree = 0.0
    for fold in range(5):
        trained = optimum(planes.subset(np.flatnonzero(assignment != fold)), (0.3, 0.3))
        assert trained is not None
        held = planes.subset(np.flatnonzero(assignment == fold))
        r, g = held.outcome(trained.proactivity, trained.personalization)
        total_regret += float(r.sum())
        total_agree += float(g.sum())
    assert regret == pytest.approx(total_regret / 50, abs=1e-9)
    assert agreement == pytest.approx(total_agree / 50)
    assert cross_validate(planes.subset(np.arange(1)), (0.3, 0.3)) is None


def test_bootstrap_region_is_seeded_and_holds_the_optimum() -> None:
    arrays = simulated((0.5, 0.2, 0.8), runs=200, seed=5)
    planes = Planes.from_lines(arrays.lines(Settings()))
    region = bootstrap(planes, (0.3, 0.3), resamples=30, seed=1)
    again = bootstrap(planes, (0.3, 0.3), resamples=30, seed=1)
    found = optimum(planes, (0.3, 0.3))
    assert region is not None and found is not None
    assert region == again
    assert region.resamples == 30 and len(region.points) == 30
    low, high = region.proactivity
    assert low <= found.proactivity <= high
    low, high = region.personalization
    assert low <= found.personalization <= high
    low, high = region.technical
    assert low <= found.technical <= high
    cloud = np.array(region.points)
    assert region.spread == pytest.approx(
        float(np.sqrt(((cloud - cloud.mean(axis=0)) ** 2).sum(axis=1).mean()))
    )
    assert 0 < region.spread < 0.2
    assert bootstrap(planes, (0.3, 0.3), resamples=0) is None


def test_bad_arrays_are_refused() -> None:
    planes = random_planes(3, 2, 0)
    with pytest.raises(ValueError, match="preferred"):
        Planes(planes.a, planes.bp, planes.bs, np.array([0, -1, 1]), planes.selectable)
    with pytest.raises(ValueError, match="counts"):
        optimum(planes, counts=np.array([1, -1, 1]))
    assert optimum(planes, counts=np.zeros(3)) is None


def test_a_unique_optimum_is_told_from_an_optimal_region() -> None:
    # Regret max(0, w_p - 0.5): optimal on the whole strip w_p <= 0.5, unique nowhere.
    flat = Planes(
        np.array([[0.0, -0.5]]),
        np.array([[0.0, 1.0]]),
        np.zeros((1, 2)),
        np.zeros(1, dtype=np.int64),
        np.ones((1, 2), dtype=bool),
    )
    box = _box(flat, np.ones(1), (0.5, 0.5), 10**6)
    assert not box.unique((0.5, 0.4), pair=False)
    assert not box.unique((0.0, 0.0), pair=False)
    # Creases through (0.4, 1.1) from all sides: the only optimum.
    slopes = np.array([[1.0, 0.0], [0.0, 1.0], [-1.0, -1.0]])
    a = np.column_stack([np.zeros(3), -slopes @ np.array([0.4, 1.1])])
    sharp = Planes(
        a,
        np.column_stack([np.zeros(3), slopes[:, 0]]),
        np.column_stack([np.zeros(3), slopes[:, 1]]),
        np.zeros(3, dtype=np.int64),
        np.ones((3, 2), dtype=bool),
    )
    box = _box(sharp, np.ones(3), (0.5, 0.5), 10**6)
    assert box.unique((0.4, 1.1), pair=False)
    # Without the third crease regret is 0 wherever w_p <= 0.4 and w_s <= 1.1.
    two = sharp.subset(np.array([0, 1]))
    box = _box(two, np.ones(2), (0.5, 0.5), 10**6)
    assert not box.unique((0.4, 1.1), pair=False)


def test_planes_from_the_score_arrays_leave_out_padding_failures_and_unmarked_runs() -> None:
    rows = [
        (
            "run-1",
            "plan",
            [
                AgentRow("aider", 0.9, -0.1, True, -0.1, 0.0),  # failed beside a working one
                AgentRow("codex", 0.6, 0.0, False, 0.05, -0.05),
                AgentRow("goose", 0.5, None),
            ],
            "codex",
        ),
        ("run-2", "plan", [AgentRow("aider", 0.8, 0.0, False, 0.0, 0.0)], None),
        ("run-3", "plan", [AgentRow("codex", 0.7, -0.2, False, -0.2, 0.0)], "codex"),
    ]
    planes = Planes.from_lines(ScoreArrays.build(rows).lines(Settings()))
    assert len(planes) == 2  # run-2 is not marked
    # Slots follow the tie rule's order: technical descending.
    assert planes.selectable.tolist() == [[False, True, True], [True, False, False]]
    assert planes.preferred.tolist() == [1, 0]
    # codex: a = technical, bp = R_Proact - technical / 2, bs = R_Pers - technical / 2.
    assert planes.a[0, 1] == pytest.approx(0.6)
    assert planes.bp[0, 1] == pytest.approx(0.05 - 0.3)
    assert planes.bs[0, 1] == pytest.approx(-0.05 - 0.3)
    # No trajectory: the technical-only line, flat in both weights.
    assert (planes.a[0, 2], planes.bp[0, 2], planes.bs[0, 2]) == (0.5, 0.0, 0.0)
    found = optimum(planes, (0.3, 0.3))
    assert found is not None
    # codex (0.6 - 0.25 w_p - 0.35 w_s) beats goose (0.5) where 0.25 w_p + 0.35 w_s <
    # 0.1: the current weights do not qualify; the nearest point that does is taken.
    assert 0.25 * found.proactivity + 0.35 * found.personalization <= 0.1 + 1e-12
    assert found.mean_regret == pytest.approx(0.0, abs=1e-12)
    assert found.agreement == 1.0


def test_runs_with_one_agent_or_identical_agents_keep_the_current_weights() -> None:
    # Regret is 0 everywhere: every point is optimal, so the current weights stay.
    one = Planes(
        np.array([[0.7], [0.4]]),
        np.array([[-0.3], [0.1]]),
        np.array([[0.2], [0.0]]),
        np.zeros(2, dtype=np.int64),
        np.ones((2, 1), dtype=bool),
    )
    found = optimum(one, (0.25, 1.5))
    assert found is not None
    assert (found.proactivity, found.personalization) == (0.25, 1.5)
    assert found.mean_regret == 0.0 and found.agreement == 1.0
    same = Planes(
        np.full((1, 3), 0.5),
        np.full((1, 3), -0.1),
        np.full((1, 3), 0.1),
        np.array([2]),
        np.ones((1, 3), dtype=bool),
    )
    found = optimum(same, (0.6, 0.6))
    assert found is not None
    assert (found.proactivity, found.personalization) == (0.6, 0.6)
    assert found.mean_regret == 0.0
    # The tie rule picks the first slot: the preferred third never agrees.
    assert found.agreement == 0.0


def test_a_failing_solver_is_one_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    import scipy.optimize

    from ppp_tui.core import free_optimum

    class Failed:
        status, x, message = 2, None, "The problem is infeasible."

    monkeypatch.setattr(scipy.optimize, "linprog", lambda *args, **kwargs: Failed())
    with pytest.raises(free_optimum.TuningError, match="the linear program failed"):
        optimum(random_planes(5, 3, 0))


def test_tied_parallel_planes_are_no_crease() -> None:
    # Agents with the same plane tie everywhere: no crease between them (this used to
    # divide by zero while telling whether the optimum is unique). Few distinct
    # values make such agents common.
    rng = np.random.default_rng(1001)
    runs, slots = int(rng.integers(1, 60)), int(rng.integers(1, 6))
    a = rng.choice([0.5, 0.6, 0.7, 0.8], (runs, slots))
    bp = rng.choice([-0.3, -0.25, 0.0, 0.05], (runs, slots))
    bs = rng.choice([-0.3, -0.25, 0.0, 0.05], (runs, slots))
    selectable = rng.random((runs, slots)) < 0.85
    selectable[np.arange(runs), rng.integers(0, slots, runs)] = True
    planes = Planes(a, bp, bs, rng.integers(0, slots, runs), selectable)
    current = (float(rng.uniform(0, 1)), float(rng.uniform(0, 1)))
    with np.errstate(all="raise"):
        found = optimum(planes, current)
    assert found is not None
    best, _ = grid(planes)
    assert max_regret(planes, found.proactivity, found.personalization) <= best + 1e-12


def test_the_bootstrap_interval_holds_a_flat_optimum_s_tuned_weights() -> None:
    # One run whose preferred agent wins over a whole region: the tune keeps the
    # current weights, and every resample (the same run) must say so too, not report a
    # corner of the region the solver met first.
    a = np.array([[0.0, 0.1]])
    bp = np.array([[0.5, 0.0]])
    bs = np.array([[0.0, 0.2]])
    planes = Planes(a, bp, bs, np.array([0]), np.ones((1, 2), dtype=bool))
    current = (0.6, 0.2)  # inside the region where the preferred agent wins
    found = optimum(planes, current)
    assert found is not None
    region = bootstrap(planes, current, resamples=5)
    assert region is not None
    tuned = (found.proactivity, found.personalization)
    assert tuned == pytest.approx(current)
    assert all(point == pytest.approx(tuned) for point in region.points)
