"""The command line's whole-database documents: `regret --json`, `tune --json` and
the rows of `export`, built from a database's score arrays (`core.scores.Scores`).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np

from ..core.arrays import Outcome
from ..core.scores import Scores, finals, ranks
from ..core.settings import Weights
from ..core.stages import NO_STAGE, ordered, scope_label
from ..core.tuning import Tuning
from ..core.tuning2d import Tuning2D
from ..storage.store import Store


def _weights(weights: Weights) -> dict[str, float]:
    return weights.document()


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


def tune_document(scope: str | None, tuning: Tuning) -> dict[str, Any]:
    """`tune --json` for one scope (None: the global weights)."""
    before = Weights.from_technical(tuning.before_technical)
    return {
        "scope": scope_label(scope),
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


def tune_free_document(scope: str, tuning: Tuning2D) -> dict[str, Any]:
    """`tune --three-weights --json` for one scope."""
    region = tuning.region
    return {
        "scope": scope,
        "marked_runs": tuning.marked_runs,
        "technical": tuning.technical,
        "proactivity": tuning.proactivity,
        "personalization": tuning.personalization,
        "mean_regret": tuning.mean_regret,
        "agreement": tuning.agreement,
        "before": {
            "technical": tuning.before.technical,
            "proactivity": tuning.before.proactivity,
            "personalization": tuning.before.personalization,
            "mean_regret": tuning.before_mean_regret,
            "agreement": tuning.before_agreement,
        },
        "cv": {
            "folds": tuning.cv_folds,
            "mean_regret": tuning.cv_mean_regret,
            "agreement": tuning.cv_agreement,
        },
        # Percentile intervals (95%) of each tuned weight over bootstrap resamples, and
        # the spread of their optima: root-mean-square distance from the cloud's mean.
        "bootstrap": None
        if region is None
        else {
            "resamples": region.resamples,
            "technical": list(region.technical),
            "proactivity": list(region.proactivity),
            "personalization": list(region.personalization),
            "spread": region.spread,
        },
    }


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
