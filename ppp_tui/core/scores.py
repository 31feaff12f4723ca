"""A database's scores under one set of settings, as arrays, and what follows from them:
every agent's final and rank, and tuning the weights over the marked runs of one scope.

Both the command line and the terminal app work from these; the figures come from one
load of the store's flat agent columns (`Scores.load`), so nothing here does IO itself.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

import numpy as np

from .arrays import Lines, Outcome, ScoreArrays
from .columns import AgentColumns
from .scoring import TIE_SCALE
from .settings import Settings
from .stages import ordered
from .tuning import Tuning, tune
from .tuning2d import Tuning2D, tune2d
from .wording import counted

TuningT = TypeVar("TuningT", Tuning, Tuning2D)


class ColumnSource(Protocol):
    """Where `Scores.load` reads from: the run store."""

    def agent_columns(
        self,
        settings: Settings,
        stage: str | None = None,
        marked_only: bool = False,
        limit: int | None = None,
    ) -> AgentColumns: ...


@dataclass(frozen=True)
class Scores:
    """A database's score arrays under one set of settings, and their outcome."""

    settings: Settings
    columns: AgentColumns
    arrays: ScoreArrays
    lines: Lines
    outcome: Outcome  # under each run's configured weights

    @classmethod
    def load(
        cls,
        store: ColumnSource,
        settings: Settings,
        stage: str | None = None,
        marked_only: bool = False,
        limit: int | None = None,
    ) -> Scores:
        """Scores of every run, or of `stage`'s, or only the marked ones (for regret, tuning),
        or of the first `limit` runs."""
        columns = store.agent_columns(settings, stage, marked_only, limit)
        arrays = columns.score_arrays(settings)
        lines = arrays.lines(settings)
        return cls(settings, columns, arrays, lines, lines.outcome())


def provenance(tuning: Tuning | Tuning2D) -> str:
    """The comment written beside tuned weights: when, from what, and what it changed."""
    from datetime import datetime

    stamp = datetime.now().astimezone().strftime("%Y-%m-%d %H:%M")
    return (
        f"tuned {stamp} from {counted(tuning.marked_runs, 'marked run')};"
        f" mean regret {tuning.before_mean_regret:.4f} -> {tuning.mean_regret:.4f}"
    )


def tune_scope(
    scores: Scores, stage: str | None, folds: int = 5, seed: int = 0
) -> tuple[str | None, Tuning | None]:
    """Tune the global weight over the marked runs it governs (`stage` None), or one
    stage's over its own; the scope comes back as given (None: the global weights).

    A run whose stage has its own table is scored under that table, not the global
    pair, so it neither informs nor is changed by a global tune.
    """
    if stage is None:
        tables = scores.settings.stage_weights
        governed = np.array([s not in tables for s in scores.arrays.stages], dtype=bool)
        lines = scores.lines.subset(governed)
        return None, tune(lines, scores.settings.weights.technical, folds, seed)
    lines = scores.lines.subset(scores.arrays.stage_mask(stage))
    return stage, tune(lines, scores.settings.weights_for(stage).technical, folds, seed)


def tune_scope_free(
    scores: Scores, stage: str | None, folds: int = 5, seed: int = 0
) -> tuple[str | None, Tuning2D | None]:
    """`tune_scope` with proactivity and personalization free (three weights)."""
    if stage is None:
        tables = scores.settings.stage_weights
        governed = np.array([s not in tables for s in scores.arrays.stages], dtype=bool)
        lines = scores.lines.subset(governed)
        return None, tune2d(lines, scores.settings.weights, folds, seed)
    lines = scores.lines.subset(scores.arrays.stage_mask(stage))
    return stage, tune2d(lines, scores.settings.weights_for(stage), folds, seed)


def tune_stages_free(scores: Scores) -> list[tuple[str, Tuning2D]]:
    """`tune_stages` with proactivity and personalization free."""
    return _each_marked_stage(scores, tune_scope_free)


def stage_order(stages: Iterable[str | None]) -> list[str | None]:
    """The distinct stages: the six spec-kit stages in their order, then others by name,
    then None (runs without a stage) if present."""
    return ordered(stages)


def tune_stages(scores: Scores) -> list[tuple[str, Tuning]]:
    """Every stage with marked runs, the six spec-kit stages first."""
    return _each_marked_stage(scores, tune_scope)


def _each_marked_stage(
    scores: Scores, tune: Callable[[Scores, str], tuple[str | None, TuningT | None]]
) -> list[tuple[str, TuningT]]:
    """`tune` on every stage with marked runs, in stage order; stages it cannot tune left out."""
    result = []
    marked_stages = scores.arrays.stages[scores.arrays.marked]
    for stage in stage_order(s for s in marked_stages if s is not None):
        assert stage is not None
        _, tuning = tune(scores, stage)
        if tuning is not None:
            result.append((stage, tuning))
    return result


def finals(scores: Scores) -> np.ndarray[Any, np.dtype[np.float64]]:
    """(runs, slots) every agent's final score under each run's configured weights.
    Selection never picks a failed agent beside a working one (its line starts at
    -inf in `scores.outcome`); its real final is given here."""
    outcome = scores.outcome
    shut = scores.arrays.valid & np.isneginf(outcome.final)
    if not shut.any():
        return outcome.final
    real = scores.arrays.lines(scores.settings, failures_last=False).outcome().final
    result: np.ndarray[Any, np.dtype[np.float64]] = np.where(shut, real, outcome.final)
    return result


def ranks(
    outcome: Outcome,
    arrays: ScoreArrays,
    final: np.ndarray[Any, np.dtype[np.float64]] | None = None,
) -> np.ndarray[Any, np.dtype[np.int64]]:
    """(runs, slots) rank of every agent (final, then technical, then name), failed agents
    after working ones; 0 in padding. `final`: the real finals (`finals`), so that failed
    agents rank among themselves by them too."""
    values = outcome.final if final is None else final
    quantised = np.where(arrays.valid, np.round(values * TIE_SCALE), -np.inf)
    # Working agents, then failed ones beside a working one (selection's -inf), then
    # padding; within each, final descending. Slots are already in tie-break order
    # (technical desc, name) and lexsort is stable, so that applies the whole rule.
    group = np.where(arrays.valid, np.isneginf(outcome.final).astype(np.int64), 2)
    order = np.lexsort((-quantised, group), axis=1)
    result = np.empty_like(order)
    np.put_along_axis(result, order, np.arange(1, order.shape[1] + 1)[None, :], axis=1)
    return np.where(arrays.valid, result, 0)
