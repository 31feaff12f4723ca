"""Regret, agreement and weight tuning over all marked runs: the public names.

The array model (scores of every run's agents, their lines under the settings, and
the outcome at a weighting) is in `arrays`; its (slots, runs) copy for the walk in
`by_slot`; the exact 1-D tuner, cross-validation and the bootstrap in `tuning`.
Import from here or from those modules alike.
"""

from __future__ import annotations

from .arrays import AgentRow, FreeLines, Lines, Outcome, ScoreArrays
from .tuning import (
    BOOTSTRAP_RESAMPLES,
    CONFIDENCE,
    CURVE_POINTS,
    MAX_POINT_CANDIDATES,
    REGRET_TOLERANCE,
    CurvePoint,
    Resampler,
    Tuning,
    bootstrap,
    cross_validate,
    optimum,
    tune,
)

__all__ = [
    "BOOTSTRAP_RESAMPLES",
    "CONFIDENCE",
    "CURVE_POINTS",
    "MAX_POINT_CANDIDATES",
    "REGRET_TOLERANCE",
    "AgentRow",
    "CurvePoint",
    "FreeLines",
    "Lines",
    "Outcome",
    "Resampler",
    "ScoreArrays",
    "Tuning",
    "bootstrap",
    "cross_validate",
    "optimum",
    "tune",
]
