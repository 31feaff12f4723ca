"""Regret, agreement and exact weight tuning over all marked runs (SPEC 6), as arrays.

Each agent's final score is a line in the technical weight w (interaction = 1 - w):
final(w) = a + b * w, with a = C + Q and b = P - Q from `scoring.coefficients`. A
run's selected agent is on the upper envelope of its lines, so its regret
max_j final_j(w) - final_preferred(w) is convex and piecewise linear in w, and so
is the mean over runs. `tune` walks every run's envelope at once, collects the
breakpoints, and reads the exact minimum off them: no grid.

Arrays are (runs, agent slots); a run with fewer agents pads its row. Within a row
agents are ordered by the SPEC 2 tie rule (technical descending, then name), so
"the first maximum" is always the agent the per-run ranking puts first.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from .model import Run
from .scoring import TIE_SCALE, rank_agents
from .settings import Settings, Weights

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]

# Regret values within this of the minimum count as optimal (float noise only).
REGRET_TOLERANCE = 1e-9
# Breakpoints evaluated exactly (with the tie rule) when tuning breaks a tie.
MAX_POINT_CANDIDATES = 64
CURVE_POINTS = 101


@dataclass(frozen=True)
class AgentRow:
    """One agent as the arrays need it: technical, and interaction (None: no trajectory)."""

    name: str
    technical: float
    interaction: float | None


@dataclass(frozen=True)
class ScoreArrays:
    """Whole-database score columns, loaded once; settings-independent."""

    run_ids: npt.NDArray[np.object_]  # (runs,)
    stages: npt.NDArray[np.object_]  # (runs,) stage names, None for none
    names: npt.NDArray[np.object_]  # (runs, slots) agent names, "" in padding
    technical: FloatArray  # (runs, slots)
    interaction: FloatArray  # (runs, slots), nan where there is no trajectory
    valid: BoolArray  # (runs, slots)
    preferred: IntArray  # (runs,) slot of the preferred agent, -1 unmarked

    @classmethod
    def build(
        cls, rows: Iterable[tuple[str, str | None, Sequence[AgentRow], str | None]]
    ) -> ScoreArrays:
        """From (run_id, stage, agents, preferred agent name or None) rows."""
        collected = list(rows)
        slots = max((len(agents) for _, _, agents, _ in collected), default=1) or 1
        count = len(collected)
        names = np.full((count, slots), "", dtype=object)
        technical = np.zeros((count, slots))
        interaction = np.full((count, slots), np.nan)
        valid = np.zeros((count, slots), dtype=bool)
        preferred = np.full(count, -1, dtype=np.int64)
        for row, (_, _, agents, preferred_name) in enumerate(collected):
            ordered = sorted(agents, key=lambda agent: (-agent.technical, agent.name))
            for slot, agent in enumerate(ordered):
                names[row, slot] = agent.name
                technical[row, slot] = agent.technical
                if agent.interaction is not None:
                    interaction[row, slot] = agent.interaction
                valid[row, slot] = True
                if agent.name == preferred_name:
                    preferred[row] = slot
        run_ids = np.empty(count, dtype=object)
        run_ids[:] = [run_id for run_id, _, _, _ in collected]
        stages = np.empty(count, dtype=object)
        stages[:] = [stage for _, stage, _, _ in collected]
        return cls(
            run_ids=run_ids,
            stages=stages,
            names=names,
            technical=technical,
            interaction=interaction,
            valid=valid,
            preferred=preferred,
        )

    @classmethod
    def from_runs(cls, runs: Iterable[Run], settings: Settings) -> ScoreArrays:
        """From parsed runs, scoring each agent's interaction with the per-run formulas."""
        rows = []
        for run in runs:
            scores = rank_agents(run.agents, run.preferences, settings.weights, settings)
            agents = [AgentRow(s.name, s.technical, s.interaction) for s in scores]
            rows.append((run.id, run.stage, agents, run.preferred_agent))
        return cls.build(rows)

    def __len__(self) -> int:
        return len(self.run_ids)

    @property
    def marked(self) -> BoolArray:
        return self.preferred >= 0

    def subset(self, mask: BoolArray) -> ScoreArrays:
        return ScoreArrays(
            run_ids=self.run_ids[mask],
            stages=self.stages[mask],
            names=self.names[mask],
            technical=self.technical[mask],
            interaction=self.interaction[mask],
            valid=self.valid[mask],
            preferred=self.preferred[mask],
        )

    def stage_mask(self, stage: str | None) -> BoolArray:
        mask: BoolArray = self.stages == stage
        return mask

    def lines(self, settings: Settings) -> Lines:
        """The (C, P, Q) coefficients of every agent under `settings` (SPEC 2)."""
        has_trajectory = ~np.isnan(self.interaction)
        tech = self.technical
        zero = np.zeros_like(tech)
        if not settings.enabled:
            c, p, q = tech.copy(), zero, zero.copy()
        else:
            interaction = np.where(has_trajectory, self.interaction, 0.0)
            if settings.missing_trajectory == "neutral":
                c = zero
                p = tech.copy()
            else:
                c = np.where(has_trajectory, 0.0, tech)
                p = np.where(has_trajectory, tech, 0.0)
            q = interaction
        # Padding can never be selected: -inf beats nothing.
        c = np.where(self.valid, c, -np.inf)
        p = np.where(self.valid, p, 0.0)
        q = np.where(self.valid, q, 0.0)
        tech_weights = np.full(len(self), settings.weights.technical)
        inter_weights = np.full(len(self), settings.weights.interaction)
        for stage, weights in settings.stage_weights.items():
            mask = self.stage_mask(stage)
            tech_weights[mask] = weights.technical
            inter_weights[mask] = weights.interaction
        return Lines(self, c, p, q, tech_weights, inter_weights)


@dataclass(frozen=True)
class Outcome:
    """Selected agents and regret of every run in a `Lines`, under one weighting."""

    selected: IntArray  # (runs,) slot of the rank-1 agent
    final: FloatArray  # (runs, slots)
    regret: FloatArray  # (runs,), nan for unmarked runs
    agree: BoolArray  # (runs,), False for unmarked runs
    marked: BoolArray

    @property
    def marked_runs(self) -> int:
        return int(self.marked.sum())

    @property
    def mean_regret(self) -> float | None:
        n = self.marked_runs
        return float(np.nansum(self.regret) / n) if n else None

    @property
    def agreement(self) -> float | None:
        n = self.marked_runs
        return float(self.agree.sum() / n) if n else None


@dataclass(frozen=True)
class CurvePoint:
    technical: float
    mean_regret: float
    agreement: float


@dataclass(frozen=True)
class Tuning:
    """The exact optimum of mean regret over the technical weight (SPEC 6)."""

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

    @property
    def interaction(self) -> float:
        return Weights.from_technical(self.technical).interaction


@dataclass(frozen=True)
class Lines:
    """Every agent's final score as C + P * w_t + Q * w_i; the slider's hot path."""

    arrays: ScoreArrays
    c: FloatArray
    p: FloatArray
    q: FloatArray
    # The configured weights of each run (its stage table, else the global pair).
    tech_weights: FloatArray
    inter_weights: FloatArray

    def outcome(
        self,
        technical: float | FloatArray | None = None,
        interaction: float | FloatArray | None = None,
    ) -> Outcome:
        """Select and score every run; weights default to each run's configured pair."""
        wt: Any = self.tech_weights if technical is None else technical
        if interaction is not None:
            wi: Any = interaction
        elif technical is None:
            wi = self.inter_weights
        else:
            wi = 1.0 - np.asarray(wt)
        if np.ndim(wt):
            wt = np.asarray(wt)[:, None]
        if np.ndim(wi):
            wi = np.asarray(wi)[:, None]
        final = self.c + self.p * wt + self.q * wi
        # The SPEC 2 tie rule: finals equal to 9 decimals tie, and the slot order
        # (technical descending, then name) breaks ties: argmax takes the first.
        selected = np.argmax(np.rint(final * TIE_SCALE), axis=1)
        return self._score(final, selected)

    def _score(self, final: FloatArray, selected: IntArray) -> Outcome:
        preferred = self.arrays.preferred
        marked = preferred >= 0
        rows = np.arange(len(selected))
        safe = np.where(marked, preferred, 0)
        regret = np.where(marked, final[rows, selected] - final[rows, safe], np.nan)
        agree = marked & (selected == preferred)
        return Outcome(selected, final, regret, agree, marked)

    def subset(self, mask: BoolArray) -> Lines:
        return Lines(
            self.arrays.subset(mask),
            self.c[mask],
            self.p[mask],
            self.q[mask],
            self.tech_weights[mask],
            self.inter_weights[mask],
        )

    def marked_only(self) -> Lines:
        marked = self.arrays.marked
        return self if marked.all() else self.subset(marked)


def _first_max(values: FloatArray, mask: BoolArray) -> IntArray:
    masked = np.where(mask, values, -np.inf)
    result: IntArray = np.argmax(masked, axis=1)
    return result


def _start(a: FloatArray, b: FloatArray) -> IntArray:
    """The envelope's line just right of w = 0: max a, then max slope, then slot order.

    Padding has a = -inf, so it is never on top.
    """
    top = a >= a.max(axis=1, keepdims=True) - 0.5 / TIE_SCALE
    slope = np.where(top, b, -np.inf)
    result: IntArray = np.argmax(
        slope >= slope.max(axis=1, keepdims=True) - 0.5 / TIE_SCALE, axis=1
    )
    return result


@dataclass(frozen=True)
class _Profile:
    """Mean regret and agreement of a set of runs as functions of w on [0, 1]."""

    xs: FloatArray  # 0, breakpoints ascending, 1
    regret: FloatArray  # mean regret at each x
    agreement: FloatArray  # agreement on (xs[k], xs[k+1]); last entry repeats


def _profile(lines: Lines) -> _Profile:
    a = lines.c + lines.q
    b = lines.p - lines.q
    valid = lines.arrays.valid
    preferred = lines.arrays.preferred
    n, _ = a.shape
    rows = np.arange(n)
    selected = _start(a, b)
    a_pref, b_pref = a[rows, preferred], b[rows, preferred]
    regret0 = float(np.mean(a[rows, selected] - a_pref))
    slope0 = float(np.mean(b[rows, selected] - b_pref))
    agree0 = float(np.mean(selected == preferred))

    where = np.zeros(n)
    event_x: list[FloatArray] = []
    event_slope: list[FloatArray] = []
    event_agree: list[FloatArray] = []
    # Only runs whose current line has a steeper rival can still change selection.
    steepest = np.where(valid, b, -np.inf).max(axis=1)
    active = b[rows, selected] < steepest - 1e-15
    for step in range(a.shape[1] - 1):
        idx = np.flatnonzero(active)
        if idx.size == 0:
            break
        s = selected[idx]
        a_s, b_s = a[idx, s][:, None], b[idx, s][:, None]
        a_j, b_j = a[idx], b[idx]
        steeper = valid[idx] & (b_j > b_s + 1e-15)
        with np.errstate(divide="ignore", invalid="ignore"):
            cross = np.where(steeper, (a_s - a_j) / (b_j - b_s), np.inf)
        if step:
            # Float noise must not move a crossing before where the walk already is.
            cross = np.maximum(cross, where[idx][:, None])
        t = cross.min(axis=1)
        moving = t < 1.0
        # Among lines crossing at t, the steepest takes over (ties: slot order).
        at_t = cross <= t[:, None] + 1e-12
        nxt = _first_max(b_j, at_t & steeper)
        rows_moving = idx[moving]
        old, new = s[moving], nxt[moving]
        pref = preferred[rows_moving]
        event_x.append(t[moving])
        event_slope.append(b[rows_moving, new] - b[rows_moving, old])
        event_agree.append((new == pref).astype(float) - (old == pref).astype(float))
        selected[rows_moving] = new
        where[rows_moving] = t[moving]
        active[idx[~moving]] = False

    xs = np.concatenate(event_x) if event_x else np.zeros(0)
    order = np.argsort(xs)
    xs = xs[order]
    d_slope = (np.concatenate(event_slope)[order] / n) if event_x else np.zeros(0)
    d_agree = (np.concatenate(event_agree)[order] / n) if event_x else np.zeros(0)
    points = np.concatenate(([0.0], xs, [1.0]))
    slopes = slope0 + np.concatenate(([0.0], np.cumsum(d_slope)))  # slope after each point
    regret = regret0 + np.concatenate(([0.0], np.cumsum(slopes * np.diff(points))))
    agreement = agree0 + np.concatenate(([0.0], np.cumsum(d_agree)))
    agreement = np.concatenate((agreement, agreement[-1:]))
    return _Profile(points, regret, agreement)


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


def _choose(lines: Lines, profile: _Profile, current: float) -> float:
    """The optimal weight: least regret, then most agreement, then nearest `current`."""
    xs, regret = profile.xs, profile.regret
    best = regret.min()
    optimal = np.flatnonzero(regret <= best + REGRET_TOLERANCE)
    lo, hi = int(optimal[0]), int(optimal[-1])
    # (agreement, -distance, weight) candidates: open intervals, then breakpoints.
    candidates: list[tuple[float, float, float]] = []
    for k in range(lo, hi):
        if xs[k + 1] - xs[k] > 1e-12:
            w = _inside(float(xs[k]), float(xs[k + 1]), current)
            candidates.append((float(profile.agreement[k]), -abs(w - current), w))
    points = [float(x) for x in xs[lo : hi + 1]]
    if len(points) <= MAX_POINT_CANDIDATES or not candidates:
        for w in dict.fromkeys(points):
            agreement = lines.outcome(w).agreement or 0.0
            candidates.append((agreement, -abs(w - current), w))
    top = max(agreement for agreement, _, _ in candidates)
    near = [c for c in candidates if c[0] >= top - 1e-12]
    return max(near, key=lambda c: (c[1], -c[2]))[2]


def tune(
    lines: Lines,
    current: float,
    folds: int = 5,
    seed: int = 0,
    curve_points: int = CURVE_POINTS,
) -> Tuning | None:
    """The w_t minimising mean regret over the marked runs of `lines` (None if none)."""
    marked = lines.marked_only()
    n = len(marked.arrays)
    if n == 0:
        return None
    profile = _profile(marked)
    chosen = _choose(marked, profile, current)
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
    )


def optimum(lines: Lines, current: float) -> float | None:
    """Just the tuned weight of the marked runs (no curve, no cross-validation)."""
    marked = lines.marked_only()
    if len(marked.arrays) == 0:
        return None
    return _choose(marked, _profile(marked), current)


def cross_validate(
    marked: Lines, current: float, folds: int = 5, seed: int = 0
) -> tuple[int, float, float] | None:
    """k-fold: tune on k-1 folds, score the held-out fold at the tuned weight."""
    n = len(marked.arrays)
    k = min(folds, n)
    if k < 2:
        return None
    assignment = np.random.default_rng(seed).permutation(n) % k
    regret_sum = 0.0
    agree_sum = 0
    for fold in range(k):
        test = assignment == fold
        train = marked.subset(~test)
        w = _choose(train, _profile(train), current)
        held_out = marked.subset(test).outcome(w)
        regret_sum += float(np.nansum(held_out.regret))
        agree_sum += int(held_out.agree.sum())
    return k, regret_sum / n, agree_sum / n
