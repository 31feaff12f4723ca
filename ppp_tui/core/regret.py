"""Regret, agreement and exact weight tuning over all marked runs, as arrays.

Each agent's final score is a line in the technical weight w (interaction = 1 - w):
final(w) = a + b * w, with a = C + Q and b = P - Q from `scoring.coefficients`. A
run's selected agent is on the upper envelope of its lines, so its regret
max_j final_j(w) - final_preferred(w) is convex and piecewise linear in w, and so
is the mean over runs. `tune` walks every run's envelope at once, collects the
breakpoints, and reads the exact minimum off them: no grid.

Arrays are (runs, agent slots); a run with fewer agents pads its row. Within a row
agents are ordered by the ranking's tie rule (technical descending, then name), so
"the first maximum" is always the agent the per-run ranking puts first.

`Resampler` gives the tuned weight of bootstrap resamples of the marked runs from
one walk: a resample is a count per run, so its mean regret is a weighted sum of the
walk's per-run starts and breakpoints, with no copy of the runs; `bootstrap` takes
the percentiles of those optima as the tuned weight's confidence interval.

Tuning works on a transposed copy, (slots, runs), cached per `Lines` with reusable
scratch buffers (`Lines.columns`): with few slots, per-slot vector arithmetic is
many times faster than reductions along each run's short row, and reused buffers
spare the page faults of fresh multi-megabyte temporaries.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cached_property
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
# The tuned weight's bootstrap confidence interval: resamples and level.
BOOTSTRAP_RESAMPLES = 200
CONFIDENCE = 0.95


def _rows(mask: BoolArray | IntArray, count: int) -> IntArray:
    """The row numbers a boolean mask selects (row numbers pass through).

    take() with row numbers copies (runs, slots) rows several times faster than
    boolean indexing does.
    """
    if mask.dtype != np.bool_:
        return np.asarray(mask, dtype=np.int64)
    if mask.shape != (count,):
        raise IndexError(f"a boolean mask of shape {mask.shape} for {count} runs")
    return np.flatnonzero(mask)


@dataclass(frozen=True)
class AgentRow:
    """One agent as the arrays need it: technical, and interaction (None: no trajectory),
    with its parts R_Proact (`proactivity`) and R_Pers (`personalization`). A row with
    an interaction but no parts counts all of it as R_Proact (R_Pers = 0)."""

    name: str
    technical: float
    interaction: float | None
    failed: bool = False
    proactivity: float | None = None
    personalization: float | None = None

    def split(self) -> tuple[float, float] | None:
        """(R_Proact, R_Pers), None without a trajectory."""
        if self.interaction is None:
            return None
        if self.proactivity is None or self.personalization is None:
            return self.interaction, 0.0
        return self.proactivity, self.personalization


@dataclass(frozen=True)
class ScoreArrays:
    """Whole-database score columns, loaded once; settings-independent."""

    run_ids: npt.NDArray[np.object_]  # (runs,)
    stages: npt.NDArray[np.object_]  # (runs,) stage names, None for none
    names: npt.NDArray[np.object_]  # (runs, slots) agent names, "" in padding
    technical: FloatArray  # (runs, slots)
    interaction: FloatArray  # (runs, slots), nan where there is no trajectory
    # R_Proact and R_Pers (interaction is their sum, as the per-run scoring adds them).
    proactivity: FloatArray  # (runs, slots), nan where there is no trajectory
    personalization: FloatArray  # (runs, slots), nan where there is no trajectory
    valid: BoolArray  # (runs, slots)
    preferred: IntArray  # (runs,) slot of the preferred agent, -1 unmarked
    # (runs, slots) agents whose output is a failure; None: none failed. A failed agent
    # is never selected in a run that has a working agent.
    failed: BoolArray | None = None

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
        proactivity = np.full((count, slots), np.nan)
        personalization = np.full((count, slots), np.nan)
        valid = np.zeros((count, slots), dtype=bool)
        failed = np.zeros((count, slots), dtype=bool)
        preferred = np.full(count, -1, dtype=np.int64)
        for row, (_, _, agents, preferred_name) in enumerate(collected):
            ordered = sorted(agents, key=lambda agent: (-agent.technical, agent.name))
            for slot, agent in enumerate(ordered):
                names[row, slot] = agent.name
                technical[row, slot] = agent.technical
                if (split := agent.split()) is not None:
                    interaction[row, slot] = agent.interaction
                    proactivity[row, slot], personalization[row, slot] = split
                valid[row, slot] = True
                failed[row, slot] = agent.failed
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
            proactivity=proactivity,
            personalization=personalization,
            valid=valid,
            preferred=preferred,
            failed=failed if failed.any() else None,
        )

    @classmethod
    def from_runs(cls, runs: Iterable[Run], settings: Settings) -> ScoreArrays:
        """From parsed runs, scoring each agent's interaction with the per-run formulas."""
        rows = []
        for run in runs:
            scores = rank_agents(run.agents, run.preferences, settings.weights, settings)
            agents = [
                AgentRow(
                    s.name,
                    s.technical,
                    s.interaction,
                    s.failure is not None,
                    s.r_proact,
                    s.r_pers,
                )
                for s in scores
            ]
            rows.append((run.id, run.stage, agents, run.preferred_agent))
        return cls.build(rows)

    def __len__(self) -> int:
        return len(self.run_ids)

    @property
    def marked(self) -> BoolArray:
        return self.preferred >= 0

    def subset(self, mask: BoolArray | IntArray) -> ScoreArrays:
        """The runs a boolean mask (or row numbers, in order) selects."""
        rows = _rows(mask, len(self))
        return ScoreArrays(
            run_ids=self.run_ids.take(rows, axis=0),
            stages=self.stages.take(rows, axis=0),
            names=self.names.take(rows, axis=0),
            technical=self.technical.take(rows, axis=0),
            interaction=self.interaction.take(rows, axis=0),
            proactivity=self.proactivity.take(rows, axis=0),
            personalization=self.personalization.take(rows, axis=0),
            valid=self.valid.take(rows, axis=0),
            preferred=self.preferred.take(rows, axis=0),
            failed=None if self.failed is None else self.failed.take(rows, axis=0),
        )

    @property
    def selectable(self) -> BoolArray:
        """(runs, slots) the agents selection may pick: every agent, but in a run with a
        working agent none whose output is a failure (failures never win)."""
        if self.failed is None:
            return self.valid
        working: BoolArray = self.valid & ~self.failed
        has_working: BoolArray = np.any(working, axis=1)
        result: BoolArray = np.where(has_working[:, None], working, self.valid)
        return result

    def stage_mask(self, stage: str | None) -> BoolArray:
        mask: BoolArray = self.stages == stage
        return mask

    @cached_property
    def _stage_rows(self) -> dict[str | None, IntArray]:
        """Each stage's row numbers, found once (the slider re-weights every step)."""
        names = np.array(["" if s is None else s for s in self.stages], dtype=str)
        present, inverse = np.unique(names, return_inverse=True)
        order = np.argsort(inverse, kind="stable")
        bounds = np.searchsorted(inverse[order], np.arange(len(present) + 1))
        return {
            str(name): order[bounds[i] : bounds[i + 1]]
            for i, name in enumerate(present)
            if name  # None (no stage) never has a table of its own
        }

    def weights(self, settings: Settings) -> tuple[FloatArray, FloatArray]:
        """(technical, interaction) weight of every run: its stage's table, else global.
        Interaction is `Weights.interaction` (the mean of w_p and w_s off the pair form)."""
        technical = self.weights3(settings)[0]
        interaction = np.full(len(self), settings.weights.interaction)
        rows = self._stage_rows
        for stage, weights in settings.stage_weights.items():
            if stage in rows:
                interaction[rows[stage]] = weights.interaction
        return technical, interaction

    def weights3(self, settings: Settings) -> tuple[FloatArray, FloatArray, FloatArray]:
        """(technical, proactivity, personalization) weights of every run: its stage's
        table, else the global weights."""
        given = settings.weights
        technical = np.full(len(self), given.technical)
        proactivity = np.full(len(self), given.proactivity)
        personalization = np.full(len(self), given.personalization)
        rows = self._stage_rows
        for stage, weights in settings.stage_weights.items():
            if stage in rows:
                technical[rows[stage]] = weights.technical
                proactivity[rows[stage]] = weights.proactivity
                personalization[rows[stage]] = weights.personalization
        return technical, proactivity, personalization

    def lines(self, settings: Settings, failures_last: bool = True) -> Lines:
        """The (C, P, Q, QP, QS) coefficients of every agent under `settings`. With
        `failures_last` (selection, regret, tuning) a failed agent beside a working one
        gets C = -inf: it can never be selected. Without, its real score."""
        has_trajectory = ~np.isnan(self.interaction)
        tech = self.technical
        zero = np.zeros_like(tech)
        if not settings.enabled:
            c, p, q = tech.copy(), zero, zero.copy()
            qp, qs = zero.copy(), zero.copy()
        else:
            interaction = np.where(has_trajectory, self.interaction, 0.0)
            if settings.missing_trajectory == "neutral":
                c = zero
                p = tech.copy()
            else:
                c = np.where(has_trajectory, 0.0, tech)
                p = np.where(has_trajectory, tech, 0.0)
            q = interaction
            qp = np.where(has_trajectory, self.proactivity, 0.0)
            qs = np.where(has_trajectory, self.personalization, 0.0)
        # Padding can never be selected: -inf beats nothing. Nor can a failed agent
        # beside a working one (a failed agent is never anyone's preferred agent).
        c = np.where(self.selectable if failures_last else self.valid, c, -np.inf)
        p = np.where(self.valid, p, 0.0)
        q = np.where(self.valid, q, 0.0)
        qp = np.where(self.valid, qp, 0.0)
        qs = np.where(self.valid, qs, 0.0)
        technical, interaction, proactivity, personalization = (
            *self.weights(settings),
            *self.weights3(settings)[1:],
        )
        return Lines(self, c, p, q, technical, interaction, qp, qs, proactivity, personalization)


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


@dataclass(frozen=True)
class Lines:
    """Every agent's final score as C + P * w_t + Q * w_i in the pair form, and as
    C + P * w_t + QP * w_p + QS * w_s with three weights (the per-run ranking's own
    expressions, so the same bits); the sliders' hot path."""

    arrays: ScoreArrays
    c: FloatArray
    p: FloatArray
    q: FloatArray  # QP + QS as the scoring adds them: R_Proact + R_Pers
    # The configured weights of each run (its stage table, else the global weights);
    # interaction is `Weights.interaction`.
    tech_weights: FloatArray
    inter_weights: FloatArray
    qp: FloatArray  # R_Proact where it counts, else 0 (as P and Q)
    qs: FloatArray  # R_Pers likewise
    pro_weights: FloatArray
    pers_weights: FloatArray

    def outcome_at(self, weights: Weights) -> Outcome:
        """Select and score every run at one `Weights` (any of the three forms)."""
        if weights.is_pair:
            return self.outcome(weights.technical, weights.interaction)
        return self.outcome3(weights.technical, weights.proactivity, weights.personalization)

    def outcome3(
        self,
        technical: float | FloatArray,
        proactivity: float | FloatArray,
        personalization: float | FloatArray,
    ) -> Outcome:
        """Select and score every run at three weights (scalars, or one per run), with
        the three-weight expression in every run, whatever its weights."""
        final = self._final3(technical, proactivity, personalization)
        return self._score(final, self._select(final))

    def _final3(self, wt: Any, wp: Any, ws: Any) -> FloatArray:
        if np.ndim(wt):
            wt = np.asarray(wt)[:, None]
        if np.ndim(wp):
            wp = np.asarray(wp)[:, None]
        if np.ndim(ws):
            ws = np.asarray(ws)[:, None]
        # ((C + P * w_t) + QP * w_p) + QS * w_s, left to right as `final_score` adds.
        final: FloatArray = np.multiply(self.p, wt)
        np.add(self.c, final, out=final)
        scratch: FloatArray = np.multiply(self.qp, wp)
        final += scratch
        np.multiply(self.qs, ws, out=scratch)
        final += scratch
        return final

    def _select(self, final: FloatArray) -> IntArray:
        """The ranking's tie rule: finals equal to 9 decimals tie, and the slot order
        (technical descending, then name) breaks ties: argmax takes the first."""
        keys = np.multiply(final, TIE_SCALE)
        selected: IntArray = np.argmax(np.rint(keys, out=keys), axis=1)
        return selected

    @cached_property
    def _three_rows(self) -> IntArray:
        """The runs whose configured weights are not in the pair form."""
        rows: IntArray = np.flatnonzero(self.pro_weights != self.pers_weights)
        return rows

    def free(self) -> FreeLines:
        """The lines over the two free weights (w_t = 1 - (w_p + w_s) / 2 substituted)."""
        return FreeLines.build(self)

    def outcome(
        self,
        technical: float | FloatArray | None = None,
        interaction: float | FloatArray | None = None,
    ) -> Outcome:
        """Select and score every run in the pair form; weights default to each run's
        configured weights (a run configured with three weights scores with those)."""
        if technical is None and interaction is None and self._three_rows.size:
            return self._configured()
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
        # final = C + P * w_t + Q * w_i, with two (runs, slots) buffers rather than five
        # temporaries: addition commutes exactly, so the values are the same bits.
        final: FloatArray = np.multiply(self.p, wt)
        np.add(self.c, final, out=final)
        scratch: FloatArray = np.multiply(self.q, wi)
        final += scratch
        # The ranking's tie rule: finals equal to 9 decimals tie, and the slot order
        # (technical descending, then name) breaks ties: argmax takes the first.
        np.multiply(final, TIE_SCALE, out=scratch)
        selected: IntArray = np.argmax(np.rint(scratch, out=scratch), axis=1)
        return self._score(final, selected)

    def _score(self, final: FloatArray, selected: IntArray) -> Outcome:
        preferred = self.arrays.preferred
        marked = preferred >= 0
        # final[rows, slot] as a flat gather (final is C-contiguous: built above).
        flat, base = final.ravel(), np.arange(len(selected)) * final.shape[1]
        safe = np.where(marked, preferred, 0)
        regret = np.where(marked, flat[base + selected] - flat[base + safe], np.nan)
        agree = marked & (selected == preferred)
        return Outcome(selected, final, regret, agree, marked)

    def _configured(self) -> Outcome:
        """Every run at its configured weights, each in its own form's expression."""
        rows = self._three_rows
        final = np.multiply(self.p, self.tech_weights[:, None])
        np.add(self.c, final, out=final)
        final += self.q * self.inter_weights[:, None]
        three = self.subset(rows)._final3(
            self.tech_weights[rows], self.pro_weights[rows], self.pers_weights[rows]
        )
        final[rows] = three
        return self._score(final, self._select(final))

    def subset(self, mask: BoolArray | IntArray) -> Lines:
        """The runs a boolean mask (or row numbers, in order) selects."""
        rows = _rows(mask, len(self.arrays))
        return Lines(
            self.arrays.subset(rows),
            self.c.take(rows, axis=0),
            self.p.take(rows, axis=0),
            self.q.take(rows, axis=0),
            self.tech_weights.take(rows, axis=0),
            self.inter_weights.take(rows, axis=0),
            self.qp.take(rows, axis=0),
            self.qs.take(rows, axis=0),
            self.pro_weights.take(rows, axis=0),
            self.pers_weights.take(rows, axis=0),
        )

    def marked_only(self) -> Lines:
        marked = self.arrays.marked
        return self if marked.all() else self.subset(marked)

    @cached_property
    def columns(self) -> _Columns:
        """The same coefficients as (slots, runs) arrays, computed once per `Lines`."""
        return _Columns.build(self)


@dataclass(frozen=True)
class FreeLines:
    """Every agent's final as a plane over the two free weights, for 2-D tuning and
    maps: final_j = a_j + bp_j * w_p + bs_j * w_s, with w_t = 1 - (w_p + w_s) / 2
    substituted, so a = C + P, bp = QP - P / 2, bs = QS - P / 2. All arrays are
    (runs, slots) in the slot order of `Lines` (the tie rule's order).

    The planes are the scores in exact arithmetic; their float values can differ
    from the scoring's in the last bits, so an exact pick at a chosen point comes
    from `Lines.outcome_at`. The free weights range over the triangle w_p, w_s >= 0,
    w_p + w_s <= 2.
    """

    a: FloatArray  # -inf where the agent cannot be selected (padding, failures)
    bp: FloatArray  # 0 in padding
    bs: FloatArray  # 0 in padding
    preferred: IntArray  # (runs,) the preferred slot, -1 for an unmarked run
    valid: BoolArray  # (runs, slots) a real agent, not padding
    selectable: BoolArray  # (runs, slots) an agent the selection may pick

    @classmethod
    def build(cls, lines: Lines) -> FreeLines:
        half = lines.p / 2
        return cls(
            a=lines.c + lines.p,
            bp=lines.qp - half,
            bs=lines.qs - half,
            preferred=lines.arrays.preferred,
            valid=lines.arrays.valid,
            selectable=np.isfinite(lines.c) & lines.arrays.valid,
        )

    def final(self, proactivity: float, personalization: float) -> FloatArray:
        """(runs, slots) finals at the free weights (exact arithmetic's plane values)."""
        result: FloatArray = self.a + self.bp * proactivity + self.bs * personalization
        return result


class _Scratch:
    """Two float buffers and a mask of one (slots, runs) shape, lent to one caller at
    a time and kept between calls: fresh multi-megabyte temporaries each call would
    cost page faults on the scale of the arithmetic itself."""

    def __init__(self, shape: tuple[int, int]) -> None:
        self._shape = shape
        self._lock = threading.Lock()
        self._buffers: tuple[FloatArray, FloatArray, BoolArray] | None = None

    def __reduce__(self) -> tuple[type[_Scratch], tuple[tuple[int, int]]]:
        return _Scratch, (self._shape,)  # copies and pickles get buffers of their own

    def _fresh(self) -> tuple[FloatArray, FloatArray, BoolArray]:
        return np.empty(self._shape), np.empty(self._shape), np.empty(self._shape, dtype=bool)

    @contextmanager
    def lend(self) -> Iterator[tuple[FloatArray, FloatArray, BoolArray]]:
        if not self._lock.acquire(blocking=False):
            yield self._fresh()  # lent out (another thread): this caller gets its own
            return
        try:
            if self._buffers is None:
                self._buffers = self._fresh()
            yield self._buffers
        finally:
            self._lock.release()


@dataclass(frozen=True)
class _Columns:
    """What tuning needs of a `Lines`, as (slots, runs) C-contiguous arrays: each
    agent slot is one contiguous vector, so per-slot arithmetic and reductions over
    slots (axis 0) run at memory speed, where reductions over a short last axis cost
    per run."""

    # The (runs, slots) arrays of the `Lines` (shared, not copied: no reference back
    # to the `Lines`, which caches this), for `Lines.outcome`'s exact arithmetic.
    c: FloatArray
    p: FloatArray
    q: FloatArray
    preferred: IntArray
    a: FloatArray  # final at w = 0 (C + Q); -inf in padding
    b: FloatArray  # slope of final in w (P - Q); -inf in padding, so never steeper
    steepest: FloatArray  # (runs,) the steepest valid slope of each run
    # Bounds over valid agents of |P| + |Q| (how fast a final can move with w) and of
    # |C| + |P| + |Q| (the size of a final, for its rounding error).
    reach: float
    size: float
    # Each run's line on top at w = 1 if it leads every other line there by a clear
    # margin, else -1: once the walk reaches it, no steeper line crosses it before 1.
    last: IntArray
    scratch: _Scratch

    @classmethod
    @np.errstate(invalid="ignore")  # -inf * 0 in padding, on purpose
    def build(cls, lines: Lines) -> _Columns:
        n, slots = lines.c.shape
        a = np.empty((slots, n))
        np.add(lines.c.T, lines.q.T, out=a)
        b = np.empty((slots, n))
        np.subtract(lines.p.T, lines.q.T, out=b)
        b[~lines.arrays.valid.T] = -np.inf
        scratch = _Scratch((slots, n))
        with scratch.lend() as (work, _, mask):
            # P and Q are 0 in padding; C is -inf there, which C + C * 0 turns into
            # nan, which fmax / fmin skip.
            reach = _largest(lines.p) + _largest(lines.q)
            c = work.reshape(lines.c.shape)
            np.multiply(lines.c, 0.0, out=c)
            np.add(lines.c, c, out=c)
            size = reach + _largest(c)
            # Finals at w = 1. A lead of more than 1e-12 * (1 + size) is far beyond
            # the rounding of the walk's crossings, which then all come out >= 1.
            end = np.add(a, b, out=work)
            top = end.max(axis=0)
            last = _first_true(np.equal(end, top, out=mask))
            end.ravel()[last * n + np.arange(n)] = -np.inf
            last[~(top - end.max(axis=0) > 1e-12 * (1.0 + size))] = -1
        return cls(
            lines.c,
            lines.p,
            lines.q,
            lines.arrays.preferred,
            a,
            b,
            b.max(axis=0),
            reach,
            size,
            last,
            scratch,
        )

    def agreements(self, weights: Sequence[float], counts: IntArray | None = None) -> list[float]:
        """`[lines.outcome(w).agreement or 0.0 for w in weights]`, sharing the work.

        A run whose selected agent leads (quantised, as the tie rule compares) by more
        than any final can move between the weights keeps it at all of them; only
        the other runs are selected again at each weight.

        `counts` (per run, how many times it counts: a bootstrap resample) weights the
        runs: the agreement of the runs repeated that many times, exactly.
        """

        def tally(agree: BoolArray, rows: IntArray | None = None) -> int:
            if counts is None:
                return int(agree.sum())
            return int(np.dot(agree, counts if rows is None else counts[rows]))

        preferred = self.preferred
        marked_runs = tally(preferred >= 0)
        if not marked_runs:
            return [0.0] * len(weights)
        first = weights[0]
        agree, lead = self.select(first, lead=len(weights) > 1)
        agreeing = [tally(agree)]
        if len(weights) == 1:
            return [agreeing[0] / marked_runs]
        unsure = np.flatnonzero(~(lead > self.threshold(weights, first)))
        sure = agreeing[0] - tally(agree[unsure], unsure)
        for chosen in self.reselect(unsure, weights[1:]):
            agreeing.append(sure + tally(chosen == preferred[unsure], unsure))
        return [count / marked_runs for count in agreeing]

    def select(self, technical: float, lead: bool = True) -> tuple[BoolArray, FloatArray]:
        """Whether each run's selected agent at `technical` is its preferred one (an
        unmarked run never agrees), and (if `lead`) by how much, quantised, it leads
        the runner-up (inf for a single agent)."""
        n = self.preferred.size
        with self.scratch.lend() as (key, work, mask):
            # The keys in the arrays' (runs, slots) layout, then transposed.
            by_run = work.reshape(self.c.shape)
            _keys(self.c, self.p, self.q, technical, by_run, key.reshape(self.c.shape))
            np.copyto(key, by_run.T)
            top = key.max(axis=0)
            selected = _first_true(np.equal(key, top, out=mask))
            # An unmarked run's preferred slot is -1: it never agrees.
            agree = selected == self.preferred
            if not lead:
                return agree, np.zeros(0)
            key.ravel()[selected * n + np.arange(n)] = -np.inf
            leads: FloatArray = top - key.max(axis=0)
        return agree, leads

    def threshold(self, weights: Sequence[float], anchor: float) -> float:
        """The lead (quantised) above which a run selected at `anchor` keeps its agent
        at every one of `weights`: twice how far a key can move from `anchor` (the
        weight change, the rounding of final, and rint's half unit), plus one."""
        spread = max(abs(w - anchor) for w in weights)
        move = TIE_SCALE * (self.reach * spread + 1e-14 * self.size) + 1.0
        return 2.0 * move + 1.0

    def reselect(self, rows: IntArray, weights: Sequence[float]) -> Iterator[IntArray]:
        """The selected slot of each of `rows` at each of `weights`, in turn."""
        c, p, q = self.c[rows], self.p[rows], self.q[rows]
        for w in weights:
            keys = _keys(c, p, q, w, np.empty(c.shape), np.empty(c.shape))
            chosen: IntArray = np.argmax(keys, axis=1)
            yield chosen


def _largest(values: FloatArray) -> float:
    """The largest |value|, skipping nan (0 if there is none)."""
    if values.size == 0:
        return 0.0
    high, low = float(np.fmax.reduce(values, axis=None)), float(np.fmin.reduce(values, axis=None))
    return 0.0 if high != high else max(high, -low)


def _keys(
    c: FloatArray, p: FloatArray, q: FloatArray, technical: float, out: FloatArray, work: FloatArray
) -> FloatArray:
    """rint(final * TIE_SCALE) at `technical`, into `out`: `Lines.outcome`'s arithmetic,
    so the same bits and the same selection, ties included."""
    np.multiply(p, technical, out=out)
    np.add(c, out, out=out)
    np.multiply(q, 1.0 - np.asarray(technical), out=work)
    out += work
    np.multiply(out, TIE_SCALE, out=out)
    return np.rint(out, out=out)


# The first set slot of each packed bit pattern of up to 8 slots (0 when none is set).
_FIRST_SET = np.array(
    [(code & -code).bit_length() - 1 if code else 0 for code in range(256)], dtype=np.int64
)
_SLOT_BITS = (1 << np.arange(8, dtype=np.uint8))[:, None]


def _first_true(mask: BoolArray) -> IntArray:
    """`np.argmax(mask, axis=0)` of a (slots, runs) mask: the first true slot, else 0.

    argmax over a short axis 0 costs per run; up to 8 slots, the slots are packed
    into one byte per run and the first set bit read off a table instead.
    """
    if mask.shape[0] > len(_SLOT_BITS):
        wide: IntArray = np.argmax(mask, axis=0)
        return wide
    packed = (mask.view(np.uint8) * _SLOT_BITS[: mask.shape[0]]).sum(axis=0, dtype=np.uint8)
    result: IntArray = _FIRST_SET[packed]
    return result


def _start(a: FloatArray, b: FloatArray, work: FloatArray, mask: BoolArray) -> IntArray:
    """The envelope's line just right of w = 0: max a, then max slope, then slot order.

    (slots, runs) arrays; `work` and `mask` are scratch of that shape. Padding has
    a = -inf, so it is never on top.
    """
    np.subtract(a, a.max(axis=0) - 0.5 / TIE_SCALE, out=work)
    np.fmin(b, _infinities(work), out=work)  # the slopes of the lines on top
    np.greater_equal(work, work.max(axis=0) - 0.5 / TIE_SCALE, out=mask)
    return _first_true(mask)


def _infinities(margin: FloatArray) -> FloatArray:
    """In place: +inf where `margin` >= 0 (x - y >= 0 exactly when x >= y), else -inf.

    fmax / fmin with it select without a branch, where np.where and masked copies
    cost several times more on unpredictable masks.
    """
    result: FloatArray = np.copysign(np.inf, margin, out=margin)
    return result


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
    columns = lines.columns
    with columns.scratch.lend() as (first, second, mask):
        start, events = _walk(columns, lines.arrays.preferred, first, second, mask)
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
    with lines.columns.scratch.lend() as (first, second, _):
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
    columns: _Columns,
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
    a, b, steepest, last = columns.a, columns.b, columns.steepest, columns.last
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
        np.fmax(cross, _infinities(work), out=cross)
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
        np.fmin(b_j, _infinities(work), out=work)
        np.equal(work, work.max(axis=0), out=mask)
        new = _first_true(mask)[moving]
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
    agreement at each of a list of weights (`_Columns.agreements`).
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
    chosen = _choose(profile, current, marked.columns.agreements)
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
    return _choose(_profile(marked), current, marked.columns.agreements)


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
        w = _choose(_profile(train), current, train.columns.agreements)
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
    `_Columns.agreements` does within one call). Not for two threads at once.
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
        # Runs selected again per point beyond which a new anchor pays off.
        self._budget = max(1024, len(marked.arrays) // 64)

    def __len__(self) -> int:
        return len(self.lines.arrays)

    def draw(self, rng: np.random.Generator) -> IntArray:
        """One resample: how many times each run is drawn, n draws with replacement."""
        n = len(self)
        counts: IntArray = np.bincount(rng.integers(0, n, size=n), minlength=n)
        return counts

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
        agree, leads = self.lines.columns.select(technical)
        leads = np.where(np.isnan(leads), -np.inf, leads)  # nan: never sure
        by_lead = np.argsort(leads, kind="stable")
        anchor = _Anchor(technical, agree, by_lead, leads[by_lead])
        self._anchors = [*self._anchors[-(self.MAX_ANCHORS - 1) :], anchor]
        return anchor

    def agreements(self, weights: Sequence[float], counts: IntArray) -> list[float]:
        """`self.lines.columns.agreements(weights, counts)`, from the nearest anchor."""
        columns = self.lines.columns

        def unsure(anchor: _Anchor) -> int:
            limit = columns.threshold(weights, anchor.technical)
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
        preferred, weight, total = columns.preferred[rows], counts[rows], int(counts.sum())
        return [
            (sure + int(np.dot(chosen == preferred, weight))) / total
            for chosen in columns.reselect(rows, weights)
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
