"""Tuning both free weights (proactivity and personalization, and so technical) on the
marked runs: the exact optimum (`free_optimum`), the figures before and after,
k-fold cross-validation with the one-weight tuner's folds, and a bootstrap region of
the tuned weights. Resamples and folds are counts per run, so the same planes serve
every bootstrap resample and every training fold.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from .arrays import group_draw, group_folds, run_groups
from .free_optimum import FloatArray, IntArray, Planes, optimum
from .settings import Weights

if TYPE_CHECKING:
    from .arrays import Lines

# Runs with a crease through a resample's or a fold's box (around the full optimum).
RESAMPLE_BOX_RUNS = 800
BOOTSTRAP_RESAMPLES = 50
CONFIDENCE = 0.95


@dataclass(frozen=True)
class Region:
    """The bootstrap cloud of the tuned weights: per-weight percentile intervals
    (CONFIDENCE), and its spread: the root-mean-square distance of the resample
    optima from their mean, in weight units."""

    resamples: int
    technical: tuple[float, float]
    proactivity: tuple[float, float]
    personalization: tuple[float, float]
    spread: float
    points: tuple[tuple[float, float], ...]  # every resample's (w_p, w_s)


def bootstrap(
    planes: Planes,
    current: tuple[float, float],
    resamples: int = BOOTSTRAP_RESAMPLES,
    seed: int = 0,
    start: tuple[float, float] | None = None,
    pair: bool = False,
    groups: tuple[IntArray, int] | None = None,
) -> Region | None:
    """The tuned weights of `resamples` seeded resamples of the runs, as counts. Each
    resample is tuned as the runs are (the optimal point nearest `current`), so where
    the optimum is a flat region the interval holds the tuned weights, not whichever
    corner of it the solver met first. `groups` ties rows of one run (`run_groups`)."""
    n = len(planes)
    if groups is None:
        groups = (np.arange(n, dtype=np.int64), n)
    if n == 0 or resamples <= 0:
        return None
    if start is None:
        found = optimum(planes, current, pair=pair)
        assert found is not None
        start = (found.proactivity, found.personalization)
    rng = np.random.default_rng(seed)
    points = []
    for _ in range(resamples):
        counts = group_draw(groups, rng)
        found = optimum(planes, current, counts, start, RESAMPLE_BOX_RUNS, pair)
        assert found is not None
        points.append((found.proactivity, found.personalization))
    cloud = np.array(points)
    technical = 1.0 - cloud.sum(axis=1) / 2
    tail = (1.0 - CONFIDENCE) / 2 * 100

    def interval(values: FloatArray) -> tuple[float, float]:
        low, high = np.percentile(values, [tail, 100 - tail])
        return float(low), float(high)

    spread = float(np.sqrt(((cloud - cloud.mean(axis=0)) ** 2).sum(axis=1).mean()))
    return Region(
        resamples,
        interval(technical),
        interval(cloud[:, 0]),
        interval(cloud[:, 1]),
        spread,
        tuple((float(p), float(s)) for p, s in points),
    )


def cross_validate(
    planes: Planes,
    current: tuple[float, float],
    folds: int = 5,
    seed: int = 0,
    start: tuple[float, float] | None = None,
    pair: bool = False,
    groups: tuple[IntArray, int] | None = None,
) -> tuple[int, float, float] | None:
    """k-fold, with the one-weight tuner's folds: tune on k-1 folds (as counts), score
    the held-out fold at the tuned weights. (folds, mean regret, agreement)."""
    n = len(planes)
    if groups is None:
        groups = (np.arange(n, dtype=np.int64), n)
    k = min(folds, groups[1])
    if k < 2:
        return None
    assignment = group_folds(groups, k, seed)
    regret_sum = agree_sum = 0.0
    for fold in range(k):
        test = assignment == fold
        train = (~test).astype(float)
        found = optimum(planes, current, train, start, RESAMPLE_BOX_RUNS, pair)
        assert found is not None
        regret, agree = planes.outcome(found.proactivity, found.personalization)
        regret_sum += float(regret[test].sum())
        agree_sum += float(agree[test].sum())
    return k, regret_sum / n, agree_sum / n


@dataclass(frozen=True)
class Tuning2D:
    """The exact optimum over both free weights of a set of marked runs, with the
    figures before, k-fold cross-validated figures and the bootstrap region."""

    marked_runs: int
    technical: float
    proactivity: float
    personalization: float
    mean_regret: float
    agreement: float
    before: Weights
    before_mean_regret: float
    before_agreement: float
    cv_folds: int | None = None
    cv_mean_regret: float | None = None
    cv_agreement: float | None = None
    region: Region | None = None

    @property
    def weights(self) -> Weights:
        return Weights.from_free(self.proactivity, self.personalization)


def tune2d(
    lines: Lines,
    current: Weights,
    folds: int = 5,
    seed: int = 0,
    resamples: int = BOOTSTRAP_RESAMPLES,
) -> Tuning2D | None:
    """Tune proactivity and personalization (and so technical) on the marked runs of
    `lines`, from `current` (None without marked runs). Mean regret and agreement
    before and after are scored as the rankings score them (`Lines.outcome_at`)."""
    marked = lines.marked_only()
    planes = Planes.from_lines(marked)
    start = (current.proactivity, current.personalization)
    found = optimum(planes, start)
    if found is None:
        return None
    tuned = found.weights
    after = marked.outcome_at(tuned)
    before = marked.outcome_at(current)
    center = (found.proactivity, found.personalization)
    groups = run_groups(marked.arrays.run_ids)
    cv = cross_validate(planes, start, folds, seed, center, groups=groups)
    region = bootstrap(planes, start, resamples, seed, center, groups=groups)
    return Tuning2D(
        marked_runs=len(planes),
        technical=tuned.technical,
        proactivity=tuned.proactivity,
        personalization=tuned.personalization,
        mean_regret=after.mean_regret or 0.0,
        agreement=after.agreement or 0.0,
        before=current,
        before_mean_regret=before.mean_regret or 0.0,
        before_agreement=before.agreement or 0.0,
        cv_folds=cv[0] if cv else None,
        cv_mean_regret=cv[1] if cv else None,
        cv_agreement=cv[2] if cv else None,
        region=region,
    )
