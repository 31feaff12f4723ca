"""The command line's whole-database documents, `regret --json` and `tune --json`, built
from a database's score arrays (`core.scores.Scores`). The rows of `export` are in
`analysis.export`, shared with the app."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core.arrays import Outcome
from ..core.scores import Scores
from ..core.settings import Weights
from ..core.stages import NO_STAGE, ordered, scope_label
from ..core.tuning import Tuning
from ..core.tuning2d import Tuning2D
from ..storage.reviewers import shown


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
    rows: list[dict[str, Any]] = []
    if runs:
        marked = np.flatnonzero(outcome.marked)
        reviewers = scores.columns.reviewers
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
        if reviewers is not None:
            for row, who in zip(rows, reviewers[marked].tolist(), strict=True):
                row["reviewer"] = shown(who)
    return {
        "weights": _weights(settings.weights_for(stage)),
        **_summary(outcome),
        "per_stage": per_stage,
        "runs": rows,
    }


def _cv(tuning: Tuning | Tuning2D) -> dict[str, Any]:
    """The cross-validated figures of a tuning (folds 0 and None without them)."""
    return {
        "folds": tuning.cv_folds,
        "mean_regret": tuning.cv_mean_regret,
        "agreement": tuning.cv_agreement,
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
        "cv": _cv(tuning),
        "curve": [
            {"technical": p.technical, "mean_regret": p.mean_regret, "agreement": p.agreement}
            for p in tuning.curve
        ],
        # The tuned technical weight's 95% bootstrap interval.
        "ci": list(tuning.ci) if tuning.ci is not None else None,
    }


def tune_free_document(scope: str | None, tuning: Tuning2D) -> dict[str, Any]:
    """`tune --three-weights --json` for one scope (None: the global weights)."""
    region = tuning.region
    return {
        "scope": scope_label(scope),
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
        "cv": _cv(tuning),
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
