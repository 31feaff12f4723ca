"""Early stop for an iterative refinement loop (the N^2 loop).

The loop stops when quality plateaus (no gain over the best by more than 0.1 for
two iterations) or regresses (a drop of more than 0.3 from the previous one), and
uses the best result found so far.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

PLATEAU_GAIN = 0.1
PLATEAU_PATIENCE = 2
REGRESSION_DROP = 0.3
# Scores are decimals (8.7, 8.8): a gain of exactly 0.1 is "not more than 0.1" even
# though 8.7 + 0.1 is 8.7999... in binary floating point.
EPSILON = 1e-9

StopReason = Literal["plateau", "regression", "completed", "empty"]


@dataclass(frozen=True)
class EarlyStop:
    iterations: int  # how many the loop ran
    stopped_at: int  # 1-based iteration after which the early-stop loop would stop
    reason: StopReason
    best_score: float | None
    best_iteration: int | None  # 1-based

    @property
    def saved(self) -> int:
        """Iterations the early stop would have saved."""
        return self.iterations - self.stopped_at


def analyse(scores: Sequence[float]) -> EarlyStop:
    """Replay the plateau/regression early-stop controller over a finished series of
    quality scores."""
    if not scores:
        return EarlyStop(0, 0, "empty", None, None)
    # `reference` only moves on a real gain (> 0.1), as in the seed's controller;
    # the reported best is the highest score the loop had seen when it stopped.
    reference = scores[0]
    plateau = 0
    stopped_at, reason = len(scores), "completed"
    for index in range(1, len(scores)):
        score = scores[index]
        if score - reference > PLATEAU_GAIN + EPSILON:
            reference, plateau = score, 0
        else:
            plateau += 1
        if scores[index - 1] - score > REGRESSION_DROP + EPSILON:
            stopped_at, reason = index + 1, "regression"
            break
        if plateau >= PLATEAU_PATIENCE:
            stopped_at, reason = index + 1, "plateau"
            break
    seen = scores[:stopped_at]
    best_index = max(range(len(seen)), key=lambda i: (seen[i], -i))
    return EarlyStop(len(scores), stopped_at, reason, seen[best_index], best_index + 1)  # type: ignore[arg-type]
