"""PPP on vs off as a paired test over the marked runs.

Each marked run gives two picks: the PPP pick (rank 1 under the run's configured
weights, PPP on) and the technical-only pick (PPP off: rank 1 by technical alone,
with the same tie rule). `ppp_outcomes` selects both for every run; `ab_test` counts,
over the marked runs of a mask, how often each equals the preferred agent, and adds
McNemar's exact test on the discordant runs (exactly one of the two picks is the
preferred agent): under the null hypothesis that PPP on and off are right equally
often, each discordant run is a fair coin, so the two-sided p-value is the exact
binomial one with p = 1/2, min(1, 2 * P(X <= min(b, c))) for X ~ Bin(b + c, 1/2),
and 1 when there is no discordant run.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from .arrays import BoolArray, Outcome, ScoreArrays
from .settings import Settings


def ppp_outcomes(
    arrays: ScoreArrays, settings: Settings, current: Outcome
) -> tuple[Outcome, Outcome]:
    """Every run with PPP on and off (the technical-only ranking), each at its configured
    weights; `current` is `arrays`' outcome under `settings` (whichever of the two it is)."""
    if settings.enabled:
        return current, arrays.lines(replace(settings, enabled=False)).outcome()
    return arrays.lines(replace(settings, enabled=True)).outcome(), current


def mcnemar_p(ppp_only: int, technical_only: int) -> float:
    """McNemar's exact two-sided p-value for the discordant counts: 1 with none."""
    discordant = ppp_only + technical_only
    fewer = min(ppp_only, technical_only)
    if 2 * fewer + 1 >= discordant:
        # The counts differ by at most one: P(X <= fewer) >= 1/2, so p is 1 (exactly;
        # the incomplete beta would give 1 less a rounding error), and 1 with none.
        return 1.0
    from scipy.special import betainc  # scipy loads on first use

    # P(X <= fewer) for X ~ Bin(discordant, 1/2), as the regularised incomplete beta.
    tail = float(betainc(discordant - fewer, fewer + 1, 0.5))
    return min(1.0, 2.0 * tail)


@dataclass(frozen=True)
class ABTest:
    """The paired 2x2 table of PPP on vs off over marked runs, and McNemar's p-value."""

    marked_runs: int
    both_right: int  # both picks are the preferred agent
    ppp_only: int  # PPP's pick is, the technical-only pick is not
    technical_only: int  # the technical-only pick is, PPP's is not
    both_wrong: int
    p_value: float  # McNemar's exact two-sided p-value on the discordant runs

    @property
    def ppp_right(self) -> int:
        return self.both_right + self.ppp_only

    @property
    def technical_right(self) -> int:
        return self.both_right + self.technical_only

    @property
    def discordant(self) -> int:
        return self.ppp_only + self.technical_only

    @property
    def ppp_agreement(self) -> float | None:
        return self.ppp_right / self.marked_runs if self.marked_runs else None

    @property
    def technical_agreement(self) -> float | None:
        return self.technical_right / self.marked_runs if self.marked_runs else None


def ab_test(on: Outcome, off: Outcome, mask: BoolArray | None = None) -> ABTest:
    """The test over the marked runs `mask` selects (all runs if None)."""
    marked, right_on, right_off = on.marked, on.agree, off.agree
    if mask is not None:
        marked, right_on, right_off = marked[mask], right_on[mask], right_off[mask]
    both = int(np.count_nonzero(right_on & right_off))
    ppp_only = int(np.count_nonzero(right_on & ~right_off))
    technical_only = int(np.count_nonzero(right_off & ~right_on))
    count = int(np.count_nonzero(marked))
    return ABTest(
        marked_runs=count,
        both_right=both,
        ppp_only=ppp_only,
        technical_only=technical_only,
        both_wrong=count - both - ppp_only - technical_only,
        p_value=mcnemar_p(ppp_only, technical_only),
    )
