"""Whole-database figures for the faces: the runs list, regret, tuning and export.

Each report loads the store's flat agent columns once and works on arrays; the
CLI prints the result and the terminal app shows it. The `*_document` functions
give the `--json` shapes the command line prints.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from .core.arrays import Lines, Outcome, ScoreArrays
from .core.columns import AgentColumns
from .core.scoring import TIE_SCALE
from .core.settings import Settings, Weights
from .core.stages import NO_STAGE as NO_STAGE
from .core.stages import ordered
from .core.tuning import Tuning, tune
from .storage.store import Store


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
        store: Store,
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


def _weights(weights: Weights) -> dict[str, float]:
    return {"technical": weights.technical, "interaction": weights.interaction}


def _summary(outcome: Outcome) -> dict[str, Any]:
    return {
        "marked_runs": outcome.marked_runs,
        "mean_regret": outcome.mean_regret,
        "agreement": outcome.agreement,
    }


def _stage_key(stage: str | None) -> str:
    return NO_STAGE if stage is None else stage


def regret_document(
    scores: Scores,
    stage: str | None = None,
    runs: bool = True,
    stages: list[str | None] | None = None,
) -> dict[str, Any]:
    """`regret --json`: overall (or `stage`'s runs), per stage, each marked run.

    `stages` lists the per-stage entries (by default the stages of the loaded runs:
    give the database's when only marked runs were loaded). Without `runs` the
    per-run list is left empty (the text report does not show it).
    """
    arrays, outcome, settings = scores.arrays, scores.outcome, scores.settings
    per_stage: dict[str, Any] = {}
    present = set(arrays.stages) if stages is None else set(stages)
    for name in ordered(present):
        sub = scores.lines.subset(arrays.stage_mask(name)).outcome()
        per_stage[_stage_key(name)] = {
            "weights": _weights(settings.weights_for(name)),
            **_summary(sub),
        }
    rows = []
    if runs:
        marked = np.flatnonzero(outcome.marked)
        names = arrays.names[marked]
        for run_id, run_stage, selected, preferred, regret in zip(
            arrays.run_ids[marked].tolist(),
            arrays.stages[marked].tolist(),
            names[np.arange(len(marked)), outcome.selected[marked]].tolist(),
            names[np.arange(len(marked)), arrays.preferred[marked]].tolist(),
            outcome.regret[marked].tolist(),
            strict=True,
        ):
            rows.append(
                {
                    "run_id": run_id,
                    "stage": run_stage,
                    "selected": selected,
                    "preferred": preferred,
                    "regret": regret,
                }
            )
    return {
        "weights": _weights(settings.weights_for(stage)),
        **_summary(outcome),
        "per_stage": per_stage,
        "runs": rows,
    }


def provenance(tuning: Tuning) -> str:
    """The comment written beside tuned weights: when, from what, and what it changed."""
    from datetime import datetime

    stamp = datetime.now().astimezone().strftime("%Y-%m-%d %H:%M")
    return (
        f"tuned {stamp} from {tuning.marked_runs} marked runs;"
        f" mean regret {tuning.before_mean_regret:.4f} -> {tuning.mean_regret:.4f}"
    )


def tune_scope(
    scores: Scores, stage: str | None, folds: int = 5, seed: int = 0
) -> tuple[str, Tuning | None]:
    """Tune the global weight over the marked runs it governs, or one stage's over its own.

    A run whose stage has its own table is scored under that table, not the global
    pair, so it neither informs nor is changed by a global tune.
    """
    if stage is None:
        tables = scores.settings.stage_weights
        governed = np.array([s not in tables for s in scores.arrays.stages], dtype=bool)
        lines = scores.lines.subset(governed)
        return "global", tune(lines, scores.settings.weights.technical, folds, seed)
    lines = scores.lines.subset(scores.arrays.stage_mask(stage))
    return stage, tune(lines, scores.settings.weights_for(stage).technical, folds, seed)


def stage_order(stages: Iterable[str | None]) -> list[str | None]:
    """The distinct stages: the six spec-kit stages in their order, then others by name,
    then None (runs without a stage) if present."""
    return ordered(stages)


def tune_stages(scores: Scores) -> list[tuple[str, Tuning]]:
    """Every stage with marked runs, the six spec-kit stages first."""
    result = []
    marked_stages = scores.arrays.stages[scores.arrays.marked]
    for stage in stage_order(s for s in marked_stages if s is not None):
        assert stage is not None
        scope, tuning = tune_scope(scores, stage)
        if tuning is not None:
            result.append((scope, tuning))
    return result


def tune_document(scope: str, tuning: Tuning) -> dict[str, Any]:
    """`tune --json` for one scope."""
    before = Weights.from_technical(tuning.before_technical)
    return {
        "scope": scope,
        "marked_runs": tuning.marked_runs,
        "technical": tuning.technical,
        "interaction": tuning.interaction,
        "mean_regret": tuning.mean_regret,
        "agreement": tuning.agreement,
        "before": {
            **_weights(before),
            "mean_regret": tuning.before_mean_regret,
            "agreement": tuning.before_agreement,
        },
        "cv": {
            "folds": tuning.cv_folds,
            "mean_regret": tuning.cv_mean_regret,
            "agreement": tuning.cv_agreement,
        },
        "curve": [
            {"technical": p.technical, "mean_regret": p.mean_regret, "agreement": p.agreement}
            for p in tuning.curve
        ],
        # The tuned technical weight's 95% bootstrap interval.
        "ci": list(tuning.ci) if tuning.ci is not None else None,
    }


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


EXPORT_COLUMNS = (
    "run_id",
    "spec_id",
    "stage",
    "task_type",
    "created_at",
    "agent",
    "rank",
    "technical",
    "r_proact",
    "r_pers",
    "interaction",
    "final",
    "weight_technical",
    "weight_interaction",
    "has_trajectory",
    "questions_low",
    "questions_medium",
    "questions_high",
    "violations",
    "penalty",
    "selected",
    "preferred",
    "failed",
)


def export_rows(store: Store, scores: Scores) -> Iterator[dict[str, Any]]:
    """One row per run and agent with all its scores under the configured weights."""
    columns, arrays, outcome = scores.columns, scores.arrays, scores.outcome
    settings = scores.settings
    info = {run.id: run for run in store.run_infos()}
    r_proact = columns.to_slots(columns.r_proact(settings), np.nan)
    r_pers = columns.to_slots(columns.r_pers(settings), np.nan)
    q_low = columns.to_slots(columns.q_low, 0)
    q_medium = columns.to_slots(columns.q_medium, 0)
    q_high = columns.to_slots(columns.q_high, 0)
    violations = columns.to_slots(columns.violations, 0)
    penalty = columns.to_slots(columns.penalty, 0.0)
    final = finals(scores)
    rank = ranks(outcome, arrays, final)
    failed = columns.to_slots(
        columns.failed if columns.failed is not None else np.zeros(len(columns.technical), bool),
        False,
    )
    wt, wi = scores.lines.tech_weights, scores.lines.inter_weights

    def number(value: float) -> float | None:
        return None if np.isnan(value) else float(value)

    for i in range(len(arrays)):
        run = info[arrays.run_ids[i]]
        for slot in np.flatnonzero(arrays.valid[i]):
            name = arrays.names[i, slot]
            yield {
                "run_id": run.id,
                "spec_id": run.spec_id,
                "stage": run.stage,
                "task_type": run.task_type,
                "created_at": run.created_at,
                "agent": name,
                "rank": int(rank[i, slot]),
                "technical": float(arrays.technical[i, slot]),
                "r_proact": number(r_proact[i, slot]),
                "r_pers": number(r_pers[i, slot]),
                "interaction": number(arrays.interaction[i, slot]),
                "final": float(final[i, slot]),
                "weight_technical": float(wt[i]),
                "weight_interaction": float(wi[i]),
                "has_trajectory": bool(not np.isnan(arrays.interaction[i, slot])),
                "questions_low": int(q_low[i, slot]),
                "questions_medium": int(q_medium[i, slot]),
                "questions_high": int(q_high[i, slot]),
                "violations": int(violations[i, slot]),
                "penalty": float(penalty[i, slot]),
                "selected": bool(outcome.selected[i] == slot),
                "preferred": name == run.preferred,
                "failed": bool(failed[i, slot]),
            }
