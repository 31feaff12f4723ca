"""Inverse error weighting: the technical weight from how far each score is from perfect.

Over every agent with a trajectory in a scope's runs (marked or not):

    technical_norm   = (technical - 0.5) / 0.5       1 for a perfect technical score
    interaction_norm = interaction / 0.1
    error_t = 1 - mean(technical_norm)
    error_i = |mean(interaction_norm)|
    w_t = (1 / error_t) / (1 / error_t + 1 / error_i),   w_i = 1 - w_t

so the score further from perfect weighs less. An error of exactly 0 means that score
is perfect and takes all the weight: error_t = 0 gives w_t = 1, error_i = 0 gives
w_t = 0, and both 0 give 0.5 / 0.5.

`tune_inverse_error` computes the weights of one scope (a stage's runs, or the runs the
global weights govern, as the exact tuner's scopes) and scores them over the scope's
marked runs beside the current weights and the exact optimum of mean regret
(`tuning.optimum`), so what each choice costs shows.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .arrays import BoolArray, Lines, ScoreArrays
from .errors import PPPError
from .settings import Settings, Weights
from .stages import ordered, scope_label
from .tuning import optimum

TECHNICAL_CENTRE = 0.5  # technical_norm = (technical - centre) / scale
TECHNICAL_SCALE = 0.5
INTERACTION_SCALE = 0.1  # interaction_norm = interaction / scale


class NoTrajectoryError(PPPError):
    """A scope where no agent has a trajectory: there is no interaction error."""


def inverse_error_weight(technical_error: float, interaction_error: float) -> float:
    """w_t from the two errors; a zero error takes all the weight (both zero: 0.5)."""
    if technical_error == 0.0:
        return 0.5 if interaction_error == 0.0 else 1.0
    if interaction_error == 0.0:
        return 0.0
    inverse_t, inverse_i = 1.0 / technical_error, 1.0 / interaction_error
    return inverse_t / (inverse_t + inverse_i)


@dataclass(frozen=True)
class InverseError:
    """The inverse-error weights of a set of runs and what they come from."""

    agents: int  # agents with a trajectory
    technical_norm: float  # mean technical_norm over them
    interaction_norm: float  # mean interaction_norm over them
    technical_error: float
    interaction_error: float
    technical: float  # w_t

    @property
    def interaction(self) -> float:
        return Weights.from_technical(self.technical).interaction


def inverse_error(arrays: ScoreArrays) -> InverseError | None:
    """The inverse-error weights over every agent with a trajectory (None: there is none)."""
    has_trajectory: BoolArray = arrays.valid & ~np.isnan(arrays.interaction)
    agents = int(np.count_nonzero(has_trajectory))
    if agents == 0:
        return None
    technical = (arrays.technical[has_trajectory] - TECHNICAL_CENTRE) / TECHNICAL_SCALE
    interaction = arrays.interaction[has_trajectory] / INTERACTION_SCALE
    technical_norm, interaction_norm = float(np.mean(technical)), float(np.mean(interaction))
    technical_error = 1.0 - technical_norm
    interaction_error = abs(interaction_norm)
    return InverseError(
        agents=agents,
        technical_norm=technical_norm,
        interaction_norm=interaction_norm,
        technical_error=technical_error,
        interaction_error=interaction_error,
        technical=inverse_error_weight(technical_error, interaction_error),
    )


@dataclass(frozen=True)
class Choice:
    """A technical weight (pair form) and its figures over the scope's marked runs."""

    technical: float
    mean_regret: float
    agreement: float

    @property
    def interaction(self) -> float:
        return Weights.from_technical(self.technical).interaction


@dataclass(frozen=True)
class InverseErrorTuning:
    """One scope's inverse-error weights beside the current weights and the exact optimum."""

    runs: int  # the scope's runs, marked or not
    marked_runs: int
    estimate: InverseError
    inverse_error: Choice
    exact: Choice  # the exact optimum of mean regret (`tune`'s weight)
    before: Choice  # the current weights

    @property
    def technical(self) -> float:
        return self.inverse_error.technical


def scope_mask(arrays: ScoreArrays, settings: Settings, stage: str | None) -> BoolArray:
    """The runs a scope's weights govern: the stage's, or (None) those whose stage has
    no table of its own, as the exact tuner's scopes (`scores.tune_scope`)."""
    if stage is not None:
        return arrays.stage_mask(stage)
    governed = np.ones(len(arrays), dtype=bool)
    for name in settings.stage_weights:
        governed &= arrays.stages != name
    return governed


def _choice(marked: Lines, technical: float) -> Choice:
    outcome = marked.outcome(technical)
    assert outcome.mean_regret is not None and outcome.agreement is not None
    return Choice(technical, outcome.mean_regret, outcome.agreement)


def tune_inverse_error(
    lines: Lines, settings: Settings, stage: str | None
) -> InverseErrorTuning | None:
    """The scope's inverse-error weights and figures: None when it has no marked runs.

    `lines` (under `settings`) must hold every run of the scope, marked or not: the
    weights come from all of them. Raises `NoTrajectoryError` when none of its agents
    has a trajectory.
    """
    lines = lines.subset(scope_mask(lines.arrays, settings, stage))
    marked = lines.marked_only()
    if len(marked.arrays) == 0:
        return None
    estimate = inverse_error(lines.arrays)
    if estimate is None:
        raise NoTrajectoryError(
            f"{scope_label(stage)}: no agent has a trajectory, so interaction has no"
            " error to weigh; inverse-error weights need R_Proact and R_Pers"
        )
    current = settings.weights_for(stage).technical
    exact = optimum(marked, current)
    assert exact is not None  # the scope has marked runs
    return InverseErrorTuning(
        runs=len(lines.arrays),
        marked_runs=len(marked.arrays),
        estimate=estimate,
        inverse_error=_choice(marked, estimate.technical),
        exact=_choice(marked, exact),
        before=_choice(marked, current),
    )


def tune_inverse_error_stages(
    lines: Lines, settings: Settings
) -> list[tuple[str, InverseErrorTuning]]:
    """Every stage with marked runs, the six spec-kit stages first."""
    result = []
    marked_stages = lines.arrays.stages[lines.arrays.marked]
    for stage in ordered(s for s in marked_stages if s is not None):
        assert stage is not None
        tuning = tune_inverse_error(lines, settings, stage)
        if tuning is not None:
            result.append((stage, tuning))
    return result
