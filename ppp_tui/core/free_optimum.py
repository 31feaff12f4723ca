"""The exact minimum of mean regret over both free weights: proactivity and personalization.

With w_t = 1 - (w_p + w_s) / 2, every agent's final is a plane over the free weights,
final_j = a_j + bp_j * w_p + bs_j * w_s, on the triangle w_p, w_s >= 0, w_p + w_s <= 2.
A run's regret, the largest final of the agents the selection may pick minus the
preferred agent's final, is convex and piecewise linear there, and so is the mean
over marked runs: its minimum is a linear program, solved exactly (HiGHS, through
scipy) rather than searched on a grid.

A linear program over every run at once is slow at 100k runs, so it is solved over a
small box of the triangle: in a box, a run whose top agent is the same everywhere
adds one plane, and all those planes sum into one; only the runs with a crease
through the box need a variable of their own. A box's optimum that lies inside the
box (off its sides that are not the triangle's) is the global one, as the mean
regret is convex; otherwise the box moves there and grows, at worst to the whole
triangle. The first box is centred on the optimum of a sample of the runs.

The solver's point is good to its tolerances (about 1e-9), so it is snapped to the
exact vertex it stands for: the intersection of the creases and sides through it.
When that vertex is the only optimum (regret rises along every ray from it) it is
the answer; otherwise the optimal point nearest the current weights wins (a second
linear program: least L1 distance with the regret held at its minimum), so optimal
weights are kept, a rounded point is preferred when it is as good, and agreement
breaks ties as in the one-weight tuner.

Runs may carry counts (a bootstrap resample, a training fold), so the same planes
serve every resample and fold; `tuning2d` uses them for cross-validation and the
bootstrap region.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from .scoring import TIE_SCALE
from .settings import Weights

if TYPE_CHECKING:
    from .arrays import FreeLines, Lines

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]

# The free weights' triangle: w_p, w_s >= 0 and w_p + w_s <= FREE_SUM.
FREE_SUM = 2.0
# Runs with a crease through the first box (the linear program's size).
BOX_RUNS = 2000
# A point this close to a side of a box that is not the triangle's counts as on it.
_EDGE = 1e-9
# A rounded point is preferred only when its regret is the minimum's to float noise.
_CHOICE_TOLERANCE = 1e-12
# How far the solver's point may be from the vertex it stands for; lines tried at most.
_REACH = 1e-6
_MAX_LINES = 24
_METHOD = "highs-ipm"
_LP_OPTIONS = {"primal_feasibility_tolerance": 1e-10, "dual_feasibility_tolerance": 1e-10}


class TuningError(RuntimeError):
    """The linear program solver failed (it should not on these problems)."""


@dataclass(frozen=True)
class Planes:
    """The marked runs' finals as planes over (w_p, w_s): (runs, slots) arrays.

    `selectable` marks the agents the selection may pick (no padding, no failed agent
    beside a working one); `preferred` is each run's preferred slot (all runs marked).
    """

    a: FloatArray
    bp: FloatArray
    bs: FloatArray
    preferred: IntArray
    selectable: BoolArray

    def __post_init__(self) -> None:
        shape = self.a.shape
        if len(shape) != 2 or self.bp.shape != shape or self.bs.shape != shape:
            raise ValueError("a, bp and bs must be (runs, slots) arrays of one shape")
        if self.selectable.shape != shape or self.preferred.shape != shape[:1]:
            raise ValueError("selectable must be (runs, slots) and preferred (runs,)")
        if shape[0] and (self.preferred.min() < 0 or self.preferred.max() >= shape[1]):
            raise ValueError("every run needs a preferred slot")
        if shape[0] and not self.selectable.any(axis=1).all():
            raise ValueError("every run needs an agent the selection may pick")

    @classmethod
    def from_free(cls, free: FreeLines) -> Planes:
        """The marked runs of `FreeLines` (its unmarked runs are left out)."""
        rows = np.flatnonzero(free.preferred >= 0)
        selectable = free.selectable[rows]
        return cls(
            np.where(selectable, free.a[rows], 0.0),
            free.bp[rows],
            free.bs[rows],
            free.preferred[rows],
            selectable,
        )

    @classmethod
    def from_lines(cls, lines: Lines) -> Planes:
        return cls.from_free(lines.free())

    def __len__(self) -> int:
        return int(self.a.shape[0])

    def subset(self, rows: IntArray) -> Planes:
        return Planes(
            self.a[rows], self.bp[rows], self.bs[rows], self.preferred[rows], self.selectable[rows]
        )

    @cached_property
    def _diffs(self) -> tuple[FloatArray, FloatArray, FloatArray]:
        """Each agent's plane minus the preferred agent's: a run's regret is the
        largest of its row (-inf where the agent cannot be selected)."""
        rows = np.arange(len(self))
        da = self.a - self.a[rows, self.preferred][:, None]
        dp = self.bp - self.bp[rows, self.preferred][:, None]
        ds = self.bs - self.bs[rows, self.preferred][:, None]
        da = np.where(self.selectable, da, -np.inf)
        dp = np.where(self.selectable, dp, 0.0)
        ds = np.where(self.selectable, ds, 0.0)
        return da, dp, ds

    @cached_property
    def _around(self) -> dict[tuple[float, float], tuple[IntArray, FloatArray, FloatArray]]:
        return {}

    @np.errstate(divide="ignore", invalid="ignore")
    def around(self, center: tuple[float, float]) -> tuple[IntArray, FloatArray, FloatArray]:
        """At `center`: each run's top agent (regret's maximum), each agent's distance
        (largest change of either weight) before it can overtake the top one, and
        each run's nearest such distance. Kept for the last centre (resamples share it).
        """
        if center in self._around:
            return self._around[center]
        da, dp, ds = self._diffs
        rows = np.arange(len(self))
        final = da + dp * center[0] + ds * center[1]
        top = np.argmax(final, axis=1)
        # The top agent stays on top across a box of half-width h around the centre
        # unless an agent's distance is below h: the gap over the gap's slope (L1).
        reach = final[rows, top][:, None] - final
        slope = np.abs(dp[rows, top][:, None] - dp) + np.abs(ds[rows, top][:, None] - ds)
        distance = reach / slope
        distance[~np.isfinite(final) | np.isnan(distance)] = np.inf
        distance[rows, top] = np.inf
        found = (top, distance, distance.min(axis=1))
        self._around.clear()
        self._around[center] = found
        return found

    def outcome(self, proactivity: float, personalization: float) -> tuple[FloatArray, BoolArray]:
        """Each run's regret and whether its selected agent is the preferred one, with
        the ranking's tie rule (finals equal to 9 decimals tie; the first slot wins)."""
        final = self.a + self.bp * proactivity + self.bs * personalization
        keys = np.where(self.selectable, np.rint(final * TIE_SCALE), -np.inf)
        selected = np.argmax(keys, axis=1)
        rows = np.arange(len(self))
        regret: FloatArray = final[rows, selected] - final[rows, self.preferred]
        agree: BoolArray = selected == self.preferred
        return regret, agree

    def evaluate(
        self, proactivity: float, personalization: float, counts: FloatArray | None = None
    ) -> tuple[float, float]:
        """(mean regret, agreement) at the free weights; `counts` weights the runs."""
        regret, agree = self.outcome(proactivity, personalization)
        if counts is None:
            return float(regret.mean()), float(agree.mean())
        total = float(counts.sum())
        return (
            float(np.dot(regret, counts) / total),
            float(np.dot(agree.astype(float), counts) / total),
        )


@dataclass(frozen=True)
class Optimum:
    """The weights minimising mean regret, that minimum and the agreement there."""

    proactivity: float
    personalization: float
    mean_regret: float
    agreement: float

    @property
    def technical(self) -> float:
        return round(1.0 - (self.proactivity + self.personalization) / 2, 12)

    @property
    def weights(self) -> Weights:
        return Weights.from_free(self.proactivity, self.personalization)


def _as_counts(planes: Planes, counts: FloatArray | IntArray | None) -> FloatArray:
    if counts is None:
        return np.ones(len(planes))
    result = np.asarray(counts, dtype=float)
    if result.shape != (len(planes),) or (result < 0).any():
        raise ValueError("counts must be one non-negative number per run")
    return result


def optimum(
    planes: Planes,
    current: tuple[float, float] = (0.3, 0.3),
    counts: FloatArray | IntArray | None = None,
    start: tuple[float, float] | None = None,
    box_runs: int = BOX_RUNS,
    pair: bool = False,
    settle: bool = True,
) -> Optimum | None:
    """The exact minimum of mean regret over the free weights (None without runs).

    `current` (w_p, w_s) is kept when optimal, else the optimal point nearest it;
    `counts` weights each run (a bootstrap resample, a training fold); `start`
    centres the first box (else a sample's optimum does); `pair` holds w_p = w_s (the
    one-weight tuner's line). Without `settle`, any exact optimum will do (the
    solver's): no second program for the nearest one, no rounding (resamples).
    """
    weight = _as_counts(planes, counts)
    if not len(planes) or weight.sum() <= 0:
        return None
    if pair:
        middle = (current[0] + current[1]) / 2
        current = (middle, middle)
    center = start if start is not None else _first_center(planes, weight, box_runs, pair)
    exact, nearest = _solve(planes, weight, center, box_runs, current if settle else None, pair)
    if nearest is None:  # the only optimum (or any will do)
        regret, agreement = planes.evaluate(*exact, None if counts is None else weight)
        return Optimum(exact[0], exact[1], regret, agreement)
    return _choose(planes, None if counts is None else weight, [nearest, exact], current, pair)


def _first_center(
    planes: Planes, weight: FloatArray, box_runs: int, pair: bool
) -> tuple[float, float]:
    """A point near the optimum: a sample's exact optimum when there are many runs."""
    active = np.flatnonzero(weight > 0)
    if active.size <= 2 * box_runs:
        return (FREE_SUM / 4, FREE_SUM / 4)  # few runs: the first box is the triangle
    size = max(box_runs, active.size // 10)
    rows = np.sort(np.random.default_rng(0).choice(active, size=size, replace=False))
    sample = planes.subset(rows)
    sample_weight = weight[rows]
    center = _first_center(sample, sample_weight, box_runs, pair)
    exact, _ = _solve(sample, sample_weight, center, box_runs, None, pair)
    return exact


def _choose(
    planes: Planes,
    weight: FloatArray | None,
    points: list[tuple[float, float]],
    current: tuple[float, float],
    pair: bool,
) -> Optimum:
    """Least regret (exactly evaluated), then most agreement, then nearest `current`,
    among the solver's points and their roundings (a round number when it is as good)."""
    candidates: list[tuple[float, float]] = []
    if pair:
        points = [(p, p) for p, _ in points]
    for point in points:
        for decimals in (2, 3, 4, 6):
            rounded = (round(point[0], decimals), round(point[1], decimals))
            if pair:
                rounded = (rounded[0], rounded[0])
            if min(rounded) >= 0 and rounded[0] + rounded[1] <= FREE_SUM:
                candidates.append(rounded)
        candidates.append(point)
    scored = []
    for p, s in dict.fromkeys(candidates):
        regret, agreement = planes.evaluate(p, s, weight)
        scored.append((regret, agreement, abs(p - current[0]) + abs(s - current[1]), p, s))
    best = min(item[0] for item in scored)
    good = [item for item in scored if item[0] <= best + _CHOICE_TOLERANCE * (1 + abs(best))]
    regret, agreement, _, p, s = max(good, key=lambda item: (item[1], -item[2]))
    return Optimum(p, s, regret, agreement)


@dataclass(frozen=True)
class _Box:
    """The linear program over one box: its planes summed, its creased runs' rows."""

    low: tuple[float, float]
    high: tuple[float, float]
    edges: tuple[bool, bool, bool, bool]  # artificial sides: low p, high p, low s, high s
    offset: float  # the summed planes' constant (mean regret units)
    cost: FloatArray  # (2 + creased,) objective of (w_p, w_s, t_i)
    rows: object  # the sparse constraint matrix (rows: a creased run's kept agents)
    bounds_rhs: FloatArray
    # Each row's run (0..creased-1) and plane (regret = the largest of a run's rows).
    row_run: IntArray
    row_p: FloatArray
    row_s: FloatArray

    def objective(self, points: FloatArray) -> FloatArray:
        """Mean regret (less `offset`) at each of (points, 2), exactly as the planes say."""
        values = -self.bounds_rhs + self.row_p * points[:, :1] + self.row_s * points[:, 1:]
        top = np.full((len(points), self.cost.size - 2), -np.inf)
        for k in range(len(points)):
            np.maximum.at(top[k], self.row_run, values[k])
        result: FloatArray = points @ self.cost[:2] + top @ self.cost[2:]
        return result

    def unique(self, point: tuple[float, float], pair: bool) -> bool:
        """Whether `point` is the only optimum: mean regret rises in every feasible
        direction from it. Its directional derivative is linear between the rays along
        the creases through the point (and the triangle's sides), so those rays
        decide. Rows whose tie is not exact are left out, which can only say no more
        often (then the second program settles it)."""
        x = np.array(point)
        values = -self.bounds_rhs + self.row_p * x[0] + self.row_s * x[1]
        top = np.full(self.cost.size - 2, -np.inf)
        np.maximum.at(top, self.row_run, values)
        scale = 1 + np.abs(values) + np.abs(self.row_p) + np.abs(self.row_s)
        near = values >= top[self.row_run] - 1e-12 * scale
        runs, bp, bs = self.row_run[near], self.row_p[near], self.row_s[near]
        rays = [(1.0, 0.0), (-1.0, 0.0), (0.0, 1.0), (0.0, -1.0), (1.0, -1.0), (-1.0, 1.0)]
        order = np.argsort(runs, kind="stable")
        runs, bp, bs = runs[order], bp[order], bs[order]
        starts = np.flatnonzero(np.r_[True, runs[1:] != runs[:-1], True])
        for begin, end in itertools.pairwise(starts):
            if end - begin > 8 or len(rays) > 4096:
                return False  # too many ties to list: let the second program decide
            for i in range(begin, end):
                for j in range(i + 1, end):
                    dp, ds = bp[j] - bp[i], bs[j] - bs[i]
                    rays += [(-ds, dp), (ds, -dp)]
        u = np.array(rays)
        if pair:
            u = np.array([(1.0, 1.0), (-1.0, -1.0)])
        feasible = np.ones(len(u), dtype=bool)
        if x[0] <= 0.0:
            feasible &= u[:, 0] >= 0
        if x[1] <= 0.0:
            feasible &= u[:, 1] >= 0
        if x[0] + x[1] >= FREE_SUM:
            feasible &= u[:, 0] + u[:, 1] <= 0
        u = u[feasible]
        norm = np.abs(u).sum(axis=1, keepdims=True)
        u = u[norm[:, 0] > 0] / norm[norm[:, 0] > 0]  # parallel tied planes: no crease
        slopes = np.full((len(u), self.cost.size - 2), -np.inf)
        for k in range(len(u)):
            np.maximum.at(slopes[k], runs, bp * u[k, 0] + bs * u[k, 1])
        rise = u @ self.cost[:2] + slopes @ self.cost[2:]
        steepest = max(
            float(np.abs(self.row_p).max(initial=0)), float(np.abs(self.row_s).max(initial=0))
        )
        size = float(np.abs(self.cost[:2]).sum() + self.cost[2:].sum() * (1 + steepest))
        return bool(len(u)) and bool(np.all(rise > 1e-12 * size))

    def polish(
        self, point: tuple[float, float], current: tuple[float, float] | None, pair: bool
    ) -> tuple[float, float]:
        """The solver's point snapped to the exact vertex it stands for.

        The solver's answer is good to its tolerances (about 1e-9); an optimum lies on
        a vertex of the creases and sides (and, nearest `current`, of the lines through
        it), so the intersections of the lines passing within reach of the point are
        computed exactly and the best of them (least regret, then nearest) is taken.
        """
        x = np.array(point)
        values = -self.bounds_rhs + self.row_p * x[0] + self.row_s * x[1]
        top = np.full(self.cost.size - 2, -np.inf)
        np.maximum.at(top, self.row_run, values)
        near = values >= top[self.row_run] - _REACH * (1 + np.abs(self.row_p) + np.abs(self.row_s))
        lines = [(0.0, 1.0, 0.0), (0.0, 0.0, 1.0), (-FREE_SUM, 1.0, 1.0)]
        if current is not None:
            lines += [(-current[0], 1.0, 0.0), (-current[1], 0.0, 1.0)]
        if pair:
            lines.append((0.0, 1.0, -1.0))
        order = np.argsort(self.row_run[near], kind="stable")
        runs, a = self.row_run[near][order], -self.bounds_rhs[near][order]
        bp, bs = self.row_p[near][order], self.row_s[near][order]
        for k in range(1, runs.size):
            if runs[k] == runs[k - 1]:
                first = int(np.searchsorted(runs, runs[k]))
                lines.append((a[k] - a[first], bp[k] - bp[first], bs[k] - bs[first]))
        table = np.array(lines)
        scale = np.hypot(table[:, 1], table[:, 2])
        gap = np.abs(table[:, 0] + table[:, 1] * x[0] + table[:, 2] * x[1])
        close = table[(scale > 0) & (gap <= _REACH * (1 + scale))]
        close = close[:_MAX_LINES]
        candidates = [x]
        for i in range(len(close)):
            ci, pi, si = close[i]
            # The point itself projected onto the line (an optimal edge's nearest point).
            norm = pi * pi + si * si
            step = (ci + pi * x[0] + si * x[1]) / norm
            candidates.append(np.array([x[0] - step * pi, x[1] - step * si]))
            for j in range(i + 1, len(close)):
                cj, pj, sj = close[j]
                det = pi * sj - pj * si
                if abs(det) > 1e-12:
                    candidates.append(
                        np.array([(si * cj - sj * ci) / det, (pj * ci - pi * cj) / det])
                    )
        points = np.array(candidates)
        points[np.abs(points) < 1e-15] = 0.0
        if pair:
            points[:, 1] = points[:, 0]
        keep = (
            (np.abs(points - x).max(axis=1) <= 10 * _REACH)
            & (points.min(axis=1) >= 0.0)
            & (points.sum(axis=1) <= FREE_SUM)
            & (points >= np.array(self.low)).all(axis=1)
            & (points <= np.array(self.high)).all(axis=1)
        )
        keep[0] = True
        points = points[keep]
        scores = self.objective(points)
        good = scores <= scores.min() + 1e-15 * (1 + abs(scores.min()))
        if current is None:
            chosen = points[good][0]
        else:
            distance = np.abs(points[good] - np.array(current)).sum(axis=1)
            chosen = points[good][int(np.argmin(distance))]
        return float(chosen[0]), float(chosen[1])

    def inside(self, point: tuple[float, float]) -> bool:
        """Whether `point` is off every artificial side (so a local optimum is global)."""
        sides = (
            point[0] - self.low[0],
            self.high[0] - point[0],
            point[1] - self.low[1],
            self.high[1] - point[1],
        )
        return not any(edge and gap <= _EDGE for edge, gap in zip(self.edges, sides, strict=True))


def _box(planes: Planes, weight: FloatArray, center: tuple[float, float], box_runs: int) -> _Box:
    from scipy import sparse

    da, dp, ds = planes._diffs
    cp, cs = center
    top, distance, nearest = planes.around(center)
    active = weight > 0
    radius = np.inf
    count = int(active.sum())
    if 2 * box_runs < count:
        radius = float(np.partition(nearest[active], box_runs)[box_runs])
        if radius <= 0.0:
            positive = nearest[active & (nearest > 0)]
            radius = float(positive.min()) if positive.size else np.inf
    if radius >= FREE_SUM:
        radius = np.inf
    creased = active & (nearest < radius)
    plain = np.flatnonzero(active & ~creased)
    total = float(weight.sum())
    w, j = weight[plain], top[plain]
    offset = float(np.dot(w, da[plain, j])) / total
    gp = float(np.dot(w, dp[plain, j])) / total
    gs = float(np.dot(w, ds[plain, j])) / total
    creased_rows = np.flatnonzero(creased)
    m = creased_rows.size
    keep = distance[creased_rows] < radius
    keep[np.arange(m), top[creased_rows]] = True
    run, slot = np.nonzero(keep)
    real = creased_rows[run]
    q = run.size
    index = np.arange(q)
    matrix = sparse.csr_matrix(
        (
            np.concatenate([dp[real, slot], ds[real, slot], -np.ones(q)]),
            (np.tile(index, 3), np.concatenate([np.zeros(q, int), np.ones(q, int), 2 + run])),
        ),
        shape=(q, m + 2),
    )
    cost = np.concatenate([[gp, gs], weight[creased_rows] / total])
    low = (max(0.0, cp - radius), max(0.0, cs - radius))
    high = (min(FREE_SUM, cp + radius), min(FREE_SUM, cs + radius))
    edges = (cp - radius > 0, cp + radius < FREE_SUM, cs - radius > 0, cs + radius < FREE_SUM)
    return _Box(
        low, high, edges, offset, cost, matrix, -da[real, slot], run, dp[real, slot], ds[real, slot]
    )


def _linprog(
    box: _Box,
    cost: FloatArray,
    extra_rows: list[tuple[FloatArray, float]],
    extra_columns: int,
    pair: bool,
) -> FloatArray:
    from scipy import sparse
    from scipy.optimize import linprog

    matrix = box.rows
    assert isinstance(matrix, sparse.csr_matrix)
    width = matrix.shape[1] + extra_columns
    triangle = np.zeros(width)
    triangle[:2] = 1.0
    dense = [triangle, *(row for row, _ in extra_rows)]
    a_ub = sparse.vstack(
        [sparse.hstack([matrix, sparse.csr_matrix((matrix.shape[0], extra_columns))]), *dense]
    ).tocsr()
    b_ub = np.concatenate([box.bounds_rhs, [FREE_SUM], [rhs for _, rhs in extra_rows]])
    bounds: list[tuple[float | None, float | None]] = [
        (box.low[0], box.high[0]),
        (box.low[1], box.high[1]),
    ]
    bounds += [(None, None)] * (matrix.shape[1] - 2) + [(0.0, None)] * extra_columns
    a_eq = b_eq = None
    if pair:
        a_eq = np.zeros((1, width))
        a_eq[0, :2] = (1.0, -1.0)
        b_eq = np.zeros(1)
    result = linprog(
        cost,
        A_ub=a_ub,
        b_ub=b_ub,
        A_eq=a_eq,
        b_eq=b_eq,
        bounds=bounds,
        method=_METHOD,
        options=_LP_OPTIONS,
    )
    if result.status != 0 or result.x is None:
        raise TuningError(f"the linear program failed: {result.message}")
    solution: FloatArray = result.x
    return solution


def _solve(
    planes: Planes,
    weight: FloatArray,
    center: tuple[float, float],
    box_runs: int,
    current: tuple[float, float] | None,
    pair: bool,
) -> tuple[tuple[float, float], tuple[float, float] | None]:
    """(an exact optimum, the optimum nearest `current`: None if `current` is None or
    the optimum is unique)."""
    if pair:
        center = ((center[0] + center[1]) / 2,) * 2
    while True:
        box = _box(planes, weight, center, box_runs)
        x = _linprog(box, box.cost, [], 0, pair)
        exact = box.polish((float(x[0]), float(x[1])), None, pair)
        if not box.inside(exact):
            center, box_runs = exact, box_runs * 4
            continue
        if current is None or box.unique(exact, pair):
            return exact, None
        # The optimal points nearest `current`: least |w_p - c_p| + |w_s - c_s| with
        # the regret held at its minimum (two extra columns: the distances).
        width = box.cost.size + 2
        cost = np.zeros(width)
        cost[-2:] = 1.0
        held = np.concatenate([box.cost, [0.0, 0.0]])
        minimum = float(np.dot(box.cost, x))
        rows: list[tuple[FloatArray, float]] = [(held, minimum + 1e-12 * (1 + abs(minimum)))]
        for axis in (0, 1):
            for sign in (1.0, -1.0):
                row = np.zeros(width)
                row[axis], row[width - 2 + axis] = sign, -1.0
                rows.append((row, sign * current[axis]))
        y = _linprog(box, cost, rows, 2, pair)
        nearest = box.polish((float(y[0]), float(y[1])), current, pair)
        if not box.inside(nearest):
            center, box_runs = nearest, box_runs * 4
            continue
        return exact, nearest
