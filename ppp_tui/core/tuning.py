"""Exact tuning of the technical weight (pair form) over all marked runs.

Each agent's final score is a line in the technical weight w (interaction = 1 - w):
final(w) = a + b * w, with a = C + Q and b = P - Q from `scoring.coefficients`. A
run's selected agent is on the upper envelope of its lines, so its regret
max_j final_j(w) - final_preferred(w) is convex and piecewise linear in w, and so
is the mean over runs. `tune` walks every run's envelope at once, collects the
breakpoints, and reads the exact minimum off them: no grid. `cross_validate` scores
the tuned weight on held-out folds.

`Resampler` gives the tuned weight of bootstrap resamples of the marked runs from
one walk: a resample is a count per run, so its mean regret is a weighted sum of the
walk's per-run starts and breakpoints, with no copy of the runs; `bootstrap` takes
the percentiles of those optima as the tuned weight's confidence interval.

The walk works on the (slots, runs) copy of `by_slot`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from .arrays import BoolArray, FloatArray, IntArray, Lines, group_draw, group_folds, run_groups
from .by_slot import BySlot, first_true, infinities
from .scoring import TIE_SCALE
from .settings import Weights

# Regret values within this of the minimum count as optimal (float noise only).
REGRET_TOLERANCE = 1e-9
# Breakpoints evaluated exactly (with the tie rule) when tuning breaks a tie.
MAX_POINT_CANDIDATES = 64
CURVE_POINTS = 101
# The tuned weight's bootstrap confidence interval: resamples and level.
BOOTSTRAP_RESAMPLES = 200
CONFIDENCE = 0.95


@dataclass(frozen=True)
class CurvePoint:
    technical: float
    mean_regret: float
    agreement: float


@dataclass(frozen=True)
class Tuning:
    """The exact optimum of mean regret over the technical weight."""

    marked_runs: int
    technical: float
    mean_regret: float
    agreement: float
    before_technical: float
    before_mean_regret: float
    before_agreement: float
    curve: tuple[CurvePoint, ...]
    cv_folds: int | None = None
    cv_mean_regret: float | None = None
    cv_agreement: float | None = None
    # The bootstrap confidence interval of `technical` (CONFIDENCE), and its resamples.
    ci: tuple[float, float] | None = None
    ci_resamples: int | None = None

    @property
    def interaction(self) -> float:
        return Weights.from_technical(self.technical).interaction


def _start(a: FloatArray, b: FloatArray, work: FloatArray, mask: BoolArray) -> IntArray:
    """The envelope's line just right of w = 0: max a, then max slope, then slot order.

    (slots, runs) arrays; `work` and `mask` are scratch of that shape. Padding has
    a = -inf, so it is never on top.
    """
    np.subtract(a, a.max(axis=0) - 0.5 / TIE_SCALE, out=work)
    np.fmin(b, infinities(work), out=work)  # the slopes of the lines on top
    np.greater_equal(work, work.max(axis=0) - 0.5 / TIE_SCALE, out=mask)
    return first_true(mask)


@dataclass(frozen=True)
class _Profile:
    """Mean regret and agreement of a set of runs as functions of w on [0, 1]."""

    xs: FloatArray  # 0, breakpoints ascending, 1
    regret: FloatArray  # mean regret at each x
    agreement: FloatArray  # agreement on (xs[k], xs[k+1]); last entry repeats
    # How many runs' breakpoints each x stands for (a resample's repeated runs); None: 1.
    multiplicity: IntArray | None = None

    def count(self, lo: int, hi: int) -> int:
        """How many breakpoints xs[lo : hi + 1] are, repeats counted."""
        if self.multiplicity is None:
            return hi + 1 - lo
        return int(self.multiplicity[lo : hi + 1].sum())


@dataclass(frozen=True)
class _Walked:
    """Every run's upper envelope walked from w = 0 to 1 (`_walk`): per run its regret,
    regret slope and agreement at w = 0, then each breakpoint (unsorted) with its run."""

    regret0: FloatArray  # (runs,)
    slope0: FloatArray  # (runs,)
    agree0: BoolArray  # (runs,)
    x: FloatArray  # (breakpoints,)
    d_slope: FloatArray  # (breakpoints,) the run's regret slope change there
    d_agree: FloatArray  # (breakpoints,) its agreement change there (-1, 0 or 1)
    run: IntArray  # (breakpoints,)
    order: IntArray  # the breakpoints in ascending x


def _walked(lines: Lines) -> _Walked:
    by_slot = lines.by_slot
    with by_slot.scratch.lend() as (first, second, mask):
        start, events = _walk(by_slot, lines.arrays.preferred, first, second, mask)
    xs = np.concatenate(events[0])
    return _Walked(
        *start,
        xs,
        np.concatenate(events[1]),
        np.concatenate(events[2]),
        np.concatenate(events[3]),
        np.argsort(xs),
    )


def _profile(lines: Lines, walked: _Walked | None = None) -> _Profile:
    """Walk every run's upper envelope from w = 0 to 1 at once; sum the breakpoints."""
    walked = _walked(lines) if walked is None else walked
    n = len(lines.arrays)
    with lines.by_slot.scratch.lend() as (first, second, _):
        regret0, slope0, agree0 = (
            float(np.mean(x)) for x in (walked.regret0, walked.slope0, walked.agree0)
        )
        xs, order = walked.x, walked.order
        # Sums along the sorted breakpoints, with the scratch (at least slots * runs
        # long, and there are at most (slots - 1) * runs breakpoints) for temporaries.
        e = xs.size
        points = np.empty(e + 2)
        points[0], points[-1] = 0.0, 1.0
        np.take(xs, order, out=points[1:-1])
        d_slope = second.ravel()[:e]
        np.take(walked.d_slope, order, out=d_slope)
        d_slope /= n
        slopes = first.ravel()[: e + 1]  # slope after each point
        slopes[0] = 0.0
        np.cumsum(d_slope, out=slopes[1:])
        slopes += slope0
        steps = second.ravel()[: e + 1]
        np.subtract(points[1:], points[:-1], out=steps)
        steps *= slopes
        regret = np.empty(e + 2)
        regret[0] = 0.0
        np.cumsum(steps, out=regret[1:])
        regret += regret0
        d_agree = second.ravel()[:e]
        np.take(walked.d_agree, order, out=d_agree)
        d_agree /= n
        agreement = np.empty(e + 2)  # the last entry repeats
        agreement[0] = 0.0
        np.cumsum(d_agree, out=agreement[1:-1])
        agreement[:-1] += agree0
        agreement[-1] = agreement[-2]
    return _Profile(points, regret, agreement)


# The walk divides by zero (parallel lines, padding) and subtracts inf from inf (runs
# that stopped), always in entries it masks off right after.
@np.errstate(divide="ignore", invalid="ignore")
def _walk(
    by_slot: BySlot,
    preferred: IntArray,
    cross_buffer: FloatArray,
    work_buffer: FloatArray,
    mask_buffer: BoolArray,
) -> tuple[
    tuple[FloatArray, FloatArray, BoolArray],
    tuple[list[FloatArray], list[FloatArray], list[FloatArray], list[IntArray]],
]:
    """Per run at w = 0: regret, its slope and agreement; then every breakpoint of the
    envelopes: (x, slope change, agreement change, run), step by step in run order."""
    a, b, steepest, last = by_slot.a, by_slot.b, by_slot.steepest, by_slot.last
    slots, n = a.shape
    runs = np.arange(n)
    selected = _start(a, b, work_buffer, mask_buffer)
    # The current envelope line of every run, as it walks right from w = 0.
    a_sel, b_sel = a.ravel()[selected * n + runs], b.ravel()[selected * n + runs]
    start = (
        a_sel - a.ravel()[preferred * n + runs],
        b_sel - b.ravel()[preferred * n + runs],
        selected == preferred,
    )

    where = np.zeros(n)
    event_x: list[FloatArray] = [np.zeros(0)]
    event_slope: list[FloatArray] = [np.zeros(0)]
    event_agree: list[FloatArray] = [np.zeros(0)]
    event_run: list[IntArray] = [np.zeros(0, dtype=np.int64)]
    # Only runs whose current line has a steeper rival can still change selection,
    # and not once they are on their clear last line.
    active = (b_sel < steepest - 1e-15) & (selected != last)
    for step in range(slots - 1):
        idx = np.flatnonzero(active)
        if idx.size == 0:
            break
        # While many runs are active, walking all of them (and ignoring the inactive
        # ones' crossings) is cheaper than gathering the active ones' columns.
        wide = 3 * idx.size > n
        if wide:
            idx = runs
            a_j, b_j, a_s, b_s, w_s = a, b, a_sel, b_sel, where
        else:
            a_j, b_j = np.take(a, idx, axis=1), np.take(b, idx, axis=1)
            a_s, b_s, w_s = a_sel[idx], b_sel[idx], where[idx]
        m = idx.size
        cross, work, mask = cross_buffer[:, :m], work_buffer[:, :m], mask_buffer[:, :m]
        # Where each steeper line crosses the current one; inf for the others (and
        # for padding, whose b = -inf is never steeper).
        np.subtract(a_s, a_j, out=cross)
        np.subtract(b_j, b_s, out=work)
        np.divide(cross, work, out=cross)
        np.subtract(b_s + 1e-15, b_j, out=work)
        np.fmax(cross, infinities(work), out=cross)
        if step:
            # Float noise must not move a crossing before where the walk already is.
            np.maximum(cross, w_s, out=cross)
        t = cross.min(axis=0)
        moving = np.flatnonzero(t < 1.0)
        if wide:
            moving = moving[active[moving]]
        # Among lines crossing at t, the steepest takes over (ties: slot order). Where
        # t < 1, a crossing at t is finite, so its line is steeper and valid.
        np.subtract(t + 1e-12, cross, out=work)  # nan where t = inf: not moving
        np.fmin(b_j, infinities(work), out=work)
        np.equal(work, work.max(axis=0), out=mask)
        new = first_true(mask)[moving]
        rows_moving = moving if wide else idx[moving]
        old = selected[rows_moving]
        a_new, b_new = a_j.ravel()[new * m + moving], b_j.ravel()[new * m + moving]
        pref = preferred[rows_moving]
        event_x.append(t[moving])
        event_slope.append(b_new - b_s[moving])
        event_agree.append((new == pref).astype(float) - (old == pref).astype(float))
        event_run.append(rows_moving)
        active[idx] = False
        # A run stays active only while a steeper line is left to cross.
        active[rows_moving] = (steepest[rows_moving] > b_new + 1e-15) & (new != last[rows_moving])
        selected[rows_moving] = new
        a_sel[rows_moving] = a_new
        b_sel[rows_moving] = b_new
        where[rows_moving] = t[moving]
    return start, (event_x, event_slope, event_agree, event_run)


def _inside(lo: float, hi: float, target: float) -> float:
    """A point of the open interval (lo, hi) nearest `target`, preferring round numbers."""
    if lo < target < hi:
        return target
    anchor = lo if target <= lo else hi
    for decimals in (2, 3, 4, 6, 9):
        step = 10.0**-decimals
        candidate = round(anchor + step if anchor == lo else anchor - step, decimals)
        if lo < candidate < hi:
            # The nearest value at this precision strictly inside.
            return candidate
    return (lo + hi) / 2


def _choose(
    profile: _Profile, current: float, agreements: Callable[[list[float]], list[float]]
) -> float:
    """The optimal weight: least regret, then most agreement, then nearest `current`.

    Candidates are the open intervals between the optimal breakpoints (agreement is
    constant on each) and, if there are few of them (or no interval), the breakpoints
    themselves, where the tie rule is evaluated exactly: `agreements` gives the
    agreement at each of a list of weights (`BySlot.agreements`).
    """
    xs, regret = profile.xs, profile.regret
    best = regret.min()
    optimal = np.flatnonzero(regret <= best + REGRET_TOLERANCE)
    lo, hi = int(optimal[0]), int(optimal[-1])
    # (agreement, -distance, weight) candidates: open intervals, then breakpoints.
    starts = lo + np.flatnonzero(xs[lo + 1 : hi + 1] - xs[lo:hi] > 1e-12)
    points: list[tuple[float, float, float]] = []
    if profile.count(lo, hi) <= MAX_POINT_CANDIDATES or starts.size == 0:
        weights = list(dict.fromkeys(float(x) for x in xs[lo : hi + 1]))
        at_points = agreements(weights)
        points = [(g, -abs(w - current), w) for g, w in zip(at_points, weights, strict=True)]
    interval_agreement = profile.agreement[starts]
    top = max(
        [agreement for agreement, _, _ in points]
        + ([float(interval_agreement.max())] if starts.size else [])
    )
    # Among the intervals as agreeable as the best candidate, only three can be the
    # nearest to `current`: the one containing it and the nearest on either side (any
    # farther interval's point lies beyond these), so only they get a weight.
    near = starts[interval_agreement >= top - 1e-12]
    left, right = xs[near], xs[near + 1]
    containing = near[(left < current) & (current < right)]
    before = near[right <= current]
    after = near[left >= current]
    candidates = [c for c in points if c[0] >= top - 1e-12]
    for k in (*containing[:1], *before[-1:], *after[:1]):
        w = _inside(float(xs[k]), float(xs[k + 1]), current)
        candidates.append((float(profile.agreement[k]), -abs(w - current), w))
    return max(candidates, key=lambda c: (c[1], -c[2]))[2]


def tune(
    lines: Lines,
    current: float,
    folds: int = 5,
    seed: int = 0,
    curve_points: int = CURVE_POINTS,
    resamples: int = BOOTSTRAP_RESAMPLES,
) -> Tuning | None:
    """The w_t minimising mean regret over the marked runs of `lines` (None if none).

    `seed` seeds the cross-validation folds and the `resamples` bootstrap resamples
    of the confidence interval (`bootstrap`; 0 resamples: no interval).
    """
    marked = lines.marked_only()
    n = len(marked.arrays)
    if n == 0:
        return None
    walked = _walked(marked)
    profile = _profile(marked, walked)
    chosen = _choose(profile, current, marked.by_slot.agreements)
    after = marked.outcome(chosen)
    before = marked.outcome(current)
    grid = np.linspace(0.0, 1.0, curve_points)
    curve_regret = np.interp(grid, profile.xs, profile.regret)
    steps = np.searchsorted(profile.xs, grid, side="right") - 1
    curve_agree = profile.agreement[np.clip(steps, 0, len(profile.agreement) - 1)]
    curve = tuple(
        CurvePoint(float(w), float(r), float(g))
        for w, r, g in zip(grid, curve_regret, curve_agree, strict=True)
    )
    cv = cross_validate(marked, current, folds, seed) if n >= 2 else None
    ci = None
    if resamples > 0:
        ci = Resampler(marked, walked).interval(current, resamples, seed)
    return Tuning(
        marked_runs=n,
        technical=chosen,
        mean_regret=after.mean_regret or 0.0,
        agreement=after.agreement or 0.0,
        before_technical=current,
        before_mean_regret=before.mean_regret or 0.0,
        before_agreement=before.agreement or 0.0,
        curve=curve,
        cv_folds=cv[0] if cv else None,
        cv_mean_regret=cv[1] if cv else None,
        cv_agreement=cv[2] if cv else None,
        ci=ci,
        ci_resamples=resamples if ci is not None else None,
    )


def optimum(lines: Lines, current: float) -> float | None:
    """Just the tuned weight of the marked runs (no curve, no cross-validation)."""
    marked = lines.marked_only()
    if len(marked.arrays) == 0:
        return None
    return _choose(_profile(marked), current, marked.by_slot.agreements)


def cross_validate(
    marked: Lines, current: float, folds: int = 5, seed: int = 0
) -> tuple[int, float, float] | None:
    """k-fold: tune on k-1 folds, score the held-out fold at the tuned weight."""
    n = len(marked.arrays)
    groups = run_groups(marked.arrays.run_ids)
    k = min(folds, groups[1])
    if k < 2:
        return None
    assignment = group_folds(groups, k, seed)
    regret_sum = 0.0
    agree_sum = 0
    for fold in range(k):
        test = assignment == fold
        train = marked.subset(~test)
        w = _choose(_profile(train), current, train.by_slot.agreements)
        held_out = marked.subset(test).outcome(w)
        regret_sum += float(np.nansum(held_out.regret))
        agree_sum += int(held_out.agree.sum())
    return k, regret_sum / n, agree_sum / n


@dataclass(frozen=True)
class _Anchor:
    """Every run's selection at one weight, and the runs in ascending lead there."""

    technical: float
    agree: BoolArray  # (runs,)
    by_lead: IntArray  # (runs,) run numbers, ascending lead
    leads: FloatArray  # (runs,) those leads


class Resampler:
    """The tuned weight of bootstrap resamples of a set of marked runs, cheaply.

    A resample (runs drawn with replacement) is a vector of counts per run. Every
    run's envelope is walked once, here: a resample's mean regret is then the
    count-weighted sum of its runs' starts and breakpoints, and its optimum is chosen
    by `tune`'s own rule (`_choose`) on the stretch of breakpoints around its minimum,
    with the agreement at candidate points counted exactly with the same weights. So
    it equals `optimum` of the resampled copy, without building one.

    The agreement at a point needs every run's selection there: selections at a few
    anchor weights are kept, and at points near an anchor only the runs whose lead
    there is within reach of the distance are selected again (as
    `BySlot.agreements` does within one call). Not for two threads at once.
    """

    MAX_ANCHORS = 32

    def __init__(self, marked: Lines, walked: _Walked | None = None) -> None:
        if not marked.arrays.marked.all():
            raise ValueError("resample marked runs only (Lines.marked_only)")
        self.lines = marked
        walked = _walked(marked) if walked is None else walked
        order = walked.order
        e = order.size
        # The points 0, breakpoints ascending, 1, with the run of each (-1: none).
        self._points = np.empty(e + 2)
        self._points[0], self._points[-1] = 0.0, 1.0
        np.take(walked.x, order, out=self._points[1:-1])
        self._point_run = np.full(e + 2, -1, dtype=np.int64)
        np.take(walked.run, order, out=self._point_run[1:-1])
        self._run = self._point_run[1:-1]
        self._d_slope = walked.d_slope[order]
        self._d_agree = walked.d_agree[order]
        self._dx = np.diff(self._points)
        self._start = np.stack([walked.regret0, walked.slope0, walked.agree0.astype(float)])
        # Buffers reused by every resample.
        self._weight, self._slopes, self._regret = np.empty(e), np.empty(e + 1), np.empty(e + 2)
        self._anchors: list[_Anchor] = []
        self._groups = run_groups(marked.arrays.run_ids)
        # Runs selected again per point beyond which a new anchor pays off.
        self._budget = max(1024, len(marked.arrays) // 64)

    def __len__(self) -> int:
        return len(self.lines.arrays)

    def draw(self, rng: np.random.Generator) -> IntArray:
        """One resample: how many times each row is drawn, whole runs drawn with
        replacement (a run with marks by several reviewers brings all of them)."""
        return group_draw(self._groups, rng)

    def window(self, counts: IntArray) -> _Profile:
        """What `_choose` reads of the profile of the runs repeated `counts` times: its
        points from the first to the last within the regret tolerance of the minimum.
        A breakpoint of a run drawn several times stands once, with its multiplicity;
        those of runs not drawn are left out."""
        total = int(counts.sum())
        share = counts / total
        # Weighted sums by multiply and add: BLAS dot products are no faster here, and
        # far slower when its threads compete for busy cores.
        regret0, slope0, agree0 = (float(np.multiply(row, share).sum()) for row in self._start)
        weight = np.take(share, self._run, out=self._weight)
        # Regret at every point, those of runs not drawn too: it is linear across them.
        slopes, regret = self._slopes, self._regret
        slopes[0] = 0.0
        np.cumsum(np.multiply(self._d_slope, weight), out=slopes[1:])
        slopes += slope0
        regret[0] = 0.0
        np.cumsum(np.multiply(slopes, self._dx), out=regret[1:])
        regret += regret0
        optimal = np.flatnonzero(regret <= regret.min() + REGRET_TOLERANCE)
        lo, hi = int(optimal[0]), int(optimal[-1])
        # Agreement right of each point of [lo, hi]: the breakpoints before it summed.
        start = agree0 + float(np.multiply(self._d_agree[:lo], weight[:lo]).sum())
        agreement = np.empty(hi + 1 - lo)
        agreement[0] = start
        changes = self._d_agree[lo:hi] * weight[lo:hi]
        agreement[1 : 1 + changes.size] = start + np.cumsum(changes)
        if changes.size < hi - lo:  # the point 1: the last entry repeats
            agreement[-1] = agreement[-2]
        runs = self._point_run[lo : hi + 1]
        multiplicity = np.where(runs >= 0, counts[runs], 1)
        keep = multiplicity > 0
        return _Profile(
            self._points[lo : hi + 1][keep],
            regret[lo : hi + 1][keep],
            agreement[keep],
            multiplicity[keep],
        )

    def _anchor(self, technical: float) -> _Anchor:
        agree, leads = self.lines.by_slot.select(technical)
        leads = np.where(np.isnan(leads), -np.inf, leads)  # nan: never sure
        by_lead = np.argsort(leads, kind="stable")
        anchor = _Anchor(technical, agree, by_lead, leads[by_lead])
        self._anchors = [*self._anchors[-(self.MAX_ANCHORS - 1) :], anchor]
        return anchor

    def agreements(self, weights: Sequence[float], counts: IntArray) -> list[float]:
        """`self.lines.by_slot.agreements(weights, counts)`, from the nearest anchor."""
        by_slot = self.lines.by_slot

        def unsure(anchor: _Anchor) -> int:
            limit = by_slot.threshold(weights, anchor.technical)
            return int(np.searchsorted(anchor.leads, limit, side="right"))

        scored = [(unsure(anchor), i) for i, anchor in enumerate(self._anchors)]
        if scored and min(scored)[0] <= self._budget:
            k, i = min(scored)
            anchor = self._anchors[i]
        else:
            anchor = self._anchor((min(weights) + max(weights)) / 2)
            k = unsure(anchor)
        rows = anchor.by_lead[:k]
        sure = int(np.dot(anchor.agree, counts)) - int(np.dot(anchor.agree[rows], counts[rows]))
        preferred, weight, total = by_slot.preferred[rows], counts[rows], int(counts.sum())
        return [
            (sure + int(np.dot(chosen == preferred, weight))) / total
            for chosen in by_slot.reselect(rows, weights)
        ]

    def optimum(self, counts: IntArray, current: float) -> float:
        """The tuned weight of the runs repeated `counts` times (`tune`'s tie rules)."""

        def agreements(weights: list[float]) -> list[float]:
            return self.agreements(weights, counts)

        return _choose(self.window(counts), current, agreements)

    def optima(self, current: float, resamples: int, seed: int = 0) -> FloatArray:
        """The tuned weight of each of `resamples` seeded resamples."""
        rng = np.random.default_rng(seed)
        return np.array([self.optimum(self.draw(rng), current) for _ in range(resamples)])

    def interval(
        self, current: float, resamples: int = BOOTSTRAP_RESAMPLES, seed: int = 0
    ) -> tuple[float, float]:
        """The percentile bootstrap interval (`CONFIDENCE`) of the tuned weight."""
        tail = (1.0 - CONFIDENCE) / 2 * 100
        low, high = np.percentile(self.optima(current, resamples, seed), [tail, 100 - tail])
        return float(low), float(high)


def bootstrap(
    lines: Lines, current: float, resamples: int = BOOTSTRAP_RESAMPLES, seed: int = 0
) -> tuple[float, float] | None:
    """A 95% bootstrap confidence interval of the tuned weight of the marked runs of
    `lines`: their optima over `resamples` resamples (seeded: the same seed, the same
    interval), 2.5th and 97.5th percentiles. None without marked runs."""
    marked = lines.marked_only()
    if len(marked.arrays) == 0 or resamples <= 0:
        return None
    return Resampler(marked).interval(current, resamples, seed)
