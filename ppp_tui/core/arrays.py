"""The whole-database score arrays: every marked run's agents as rows of lines.

`ScoreArrays` holds every agent's technical score, R_Proact and R_Pers (and their sum,
interaction) as (runs, agent slots) arrays; a run with fewer agents pads its row.
Within a row agents are ordered by the ranking's tie rule (technical descending, then
name), so "the first maximum" is always the agent the per-run ranking puts first.

`Lines` is those agents' final scores under one `Settings`, as coefficients:

    pair form (w_p = w_s = w_i):  final = C + P * w_t + Q * w_i,  Q = R_Proact + R_Pers
    three weights:                final = C + P * w_t + QP * w_p + QS * w_s

computed with exactly the float operations of `scoring.final_score`, so every pick
and every figure equals the per-run ranking's, bit for bit. `Lines.outcome_at(w)`
selects every run's rank-1 agent at a `Weights` and gives agreement with the marks
and mean regret (`Outcome`); `Lines.outcome` is the pair form's one-slider path.

`FreeLines` is the representation for work over the two free weights (2-D tuning,
maps): with w_t = 1 - (w_p + w_s) / 2 substituted, final_j = a_j + bp_j * w_p +
bs_j * w_s, as (runs, slots) arrays with the preferred slot and the masks of real and
selectable agents.

The transposed (slots, runs) copy the 1-D tuner walks is in `by_slot`; the tuner
itself in `tuning`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from .model import Run
from .scoring import TIE_SCALE, rank_agents
from .settings import Settings, Weights

if TYPE_CHECKING:
    from .by_slot import BySlot, Stepper

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]


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
        technical = np.full(len(self), settings.weights.technical)
        interaction = np.full(len(self), settings.weights.interaction)
        rows = self._stage_rows
        for stage, weights in settings.stage_weights.items():
            if stage in rows:
                technical[rows[stage]] = weights.technical
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

    @cached_property
    def stepper(self) -> Stepper:
        """The sliders' step over these runs, its buffers kept (`by_slot.Stepper`)."""
        from .by_slot import Stepper  # imports this module: loaded on first use

        return Stepper(self)

    def figures_at(self, weights: Weights) -> tuple[int, float | None, float | None]:
        """(marked runs, mean regret, agreement) with every run at `weights`: what
        `outcome_at(weights)` gives, bit for bit, several times faster."""
        return self.stepper.figures(weights.technical, weights.proactivity, weights.personalization)

    def figures_under(self, settings: Settings) -> tuple[int, float | None, float | None]:
        """(marked runs, mean regret, agreement) with every run at the weights `settings`
        gives it: what `outcome_under(settings)` gives, bit for bit, several times faster."""
        uniform = self._uniform_weights(settings)
        if uniform is not None:
            return self.figures_at(uniform)
        return self.stepper.figures(*self.arrays.weights3(settings))

    def _uniform_weights(self, settings: Settings) -> Weights | None:
        """The weights of every run, if all runs have the same; else None."""
        rows = self.arrays._stage_rows
        tables = {s: w for s, w in settings.stage_weights.items() if s in rows}
        covered = sum(len(rows[s]) for s in tables)
        used = set(tables.values())
        if covered < len(self.arrays):
            used.add(settings.weights)
        return used.pop() if len(used) == 1 else None

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
        return self._mixed(
            self.tech_weights, self.inter_weights, self.pro_weights, self.pers_weights
        )

    def outcome_under(self, settings: Settings) -> Outcome:
        """Every run at the weights `settings` gives it (its stage's table, else the
        global weights), each in its own form's expression: the per-run ranking's picks
        and finals, as the sliders change the settings."""
        technical, proactivity, personalization = self.arrays.weights3(settings)
        if np.array_equal(proactivity, personalization):
            return self.outcome(technical, proactivity)
        interaction = self.arrays.weights(settings)[1]
        return self._mixed(technical, interaction, proactivity, personalization)

    def _mixed(
        self,
        technical: FloatArray,
        interaction: FloatArray,
        proactivity: FloatArray,
        personalization: FloatArray,
    ) -> Outcome:
        rows: IntArray = np.flatnonzero(proactivity != personalization)
        if rows.size == len(technical):
            final = self._final3(technical, proactivity, personalization)
        else:
            final = np.multiply(self.p, technical[:, None])
            np.add(self.c, final, out=final)
            final += self.q * interaction[:, None]
            if rows.size:
                three = self.subset(rows)._final3(
                    technical[rows], proactivity[rows], personalization[rows]
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
    def by_slot(self) -> BySlot:
        """The same coefficients as (slots, runs) arrays, computed once per `Lines`."""
        from .by_slot import BySlot  # imports this module: loaded on first use

        return BySlot.build(self)


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


def run_groups(run_ids: npt.NDArray[np.object_]) -> tuple[IntArray, int]:
    """(each row's run number, how many runs): rows of one run (its marks by several
    reviewers) share a number, so that cross-validation folds and bootstrap resamples
    take a run whole. With one row per run, sorted by id (as the store loads them),
    the numbers are 0, 1, 2, ...: the folds and resamples are the rows' own."""
    if len(run_ids) == 0:
        return np.zeros(0, dtype=np.int64), 0
    _, inverse = np.unique(run_ids.astype(str), return_inverse=True)
    inverse = inverse.astype(np.int64).reshape(-1)
    return inverse, int(inverse.max()) + 1


def group_draw(groups: tuple[IntArray, int], rng: np.random.Generator) -> IntArray:
    """One bootstrap resample as a count per row: the runs drawn with replacement (as
    many draws as runs), each row counted as often as its run is drawn."""
    inverse, n = groups
    counts: IntArray = np.bincount(rng.integers(0, n, size=n), minlength=n)
    return counts[inverse]


def group_folds(groups: tuple[IntArray, int], folds: int, seed: int) -> IntArray:
    """Each row's fold of k-fold cross-validation, whole runs to a fold."""
    inverse, n = groups
    by_run: IntArray = np.random.default_rng(seed).permutation(n) % folds
    return by_run[inverse]
