"""Agreement between reviewers on the runs two or more of them marked.

Each reviewer's current mark of a run is a nominal value (the agent's name). Over the
runs marked by at least two reviewers:

- Krippendorff's alpha (nominal): 1 - (n - 1) * sum of the coincidence matrix's
  off-diagonal / sum over c != k of n_c * n_k, where each run with m marks adds
  1 / (m - 1) for every ordered pair of its marks (Krippendorff 2011, "Computing
  Krippendorff's alpha-reliability"). Undefined (None) when every mark names the same
  agent: there is no disagreement to expect.
- Cohen's kappa for each pair of reviewers, over the runs both marked:
  (p_o - p_e) / (1 - p_e), p_e from each reviewer's own share of each agent. None
  when p_e is 1 (both always pick one and the same agent) or they share no run.
- Raw agreement: the share of agreeing pairs among all pairs of marks of one run.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import combinations

from .stages import ordered

# (run id, stage, reviewer, agent): one current mark.
MarkRow = tuple[str, str | None, str, str]


@dataclass(frozen=True)
class PairAgreement:
    """Two reviewers over the runs both marked."""

    first: str
    second: str
    runs: int
    agreed: int
    kappa: float | None

    @property
    def raw(self) -> float | None:
        return self.agreed / self.runs if self.runs else None


@dataclass(frozen=True)
class Agreement:
    """Agreement over one scope's runs marked by two or more reviewers."""

    reviewers: tuple[str, ...]  # everyone with a mark in the scope, by name
    marked_runs: int  # runs with at least one mark
    shared_runs: int  # runs marked by two or more reviewers (the units)
    marks: int  # marks on the shared runs
    pairs: int  # pairs of marks of one shared run
    agreeing_pairs: int
    alpha: float | None
    by_pair: tuple[PairAgreement, ...]

    @property
    def raw(self) -> float | None:
        """The share of agreeing pairs among all pairs of marks of one run."""
        return self.agreeing_pairs / self.pairs if self.pairs else None


def krippendorff_alpha(units: Iterable[Sequence[str]]) -> float | None:
    """Nominal alpha over `units`, each the values given to one unit (a unit with
    fewer than two values is not pairable and counts for nothing)."""
    coincidence: dict[tuple[str, str], float] = defaultdict(float)
    for values in units:
        m = len(values)
        if m < 2:
            continue
        counts = Counter(values)
        for c, n_c in counts.items():
            for k, n_k in counts.items():
                pairs = n_c * (n_c - 1) if c == k else n_c * n_k
                if pairs:
                    coincidence[c, k] += pairs / (m - 1)
    totals: dict[str, float] = defaultdict(float)
    for (c, _), value in coincidence.items():
        totals[c] += value
    n = sum(totals.values())
    observed = sum(value for (c, k), value in coincidence.items() if c != k)
    expected = n * n - sum(value * value for value in totals.values())  # sum over c != k
    if n <= 1 or expected <= 0:
        return None
    return 1.0 - (n - 1) * observed / expected


def cohen_kappa(pairs: Sequence[tuple[str, str]]) -> float | None:
    """Cohen's kappa of two raters' values on the same items (`pairs`)."""
    n = len(pairs)
    if not n:
        return None
    observed = sum(a == b for a, b in pairs) / n
    first = Counter(a for a, _ in pairs)
    second = Counter(b for _, b in pairs)
    expected = sum(first[c] * second[c] for c in first) / (n * n)
    if expected >= 1.0:
        return None
    return (observed - expected) / (1.0 - expected)


def agreement(marks: Iterable[MarkRow]) -> Agreement:
    """Agreement over `marks` (every reviewer's current marks of some runs)."""
    by_run: dict[str, dict[str, str]] = {}
    for run_id, _, reviewer, agent in marks:
        by_run.setdefault(run_id, {})[reviewer] = agent
    shared = {run: given for run, given in by_run.items() if len(given) >= 2}
    reviewers = sorted({reviewer for given in by_run.values() for reviewer in given})
    pairs = agreeing = count = 0
    for given in shared.values():
        values = list(given.values())
        count += len(values)
        for a, b in combinations(values, 2):
            pairs += 1
            agreeing += a == b
    by_pair = []
    for first, second in combinations(reviewers, 2):
        both = [
            (given[first], given[second])
            for given in shared.values()
            if first in given and second in given
        ]
        if both:
            by_pair.append(
                PairAgreement(
                    first, second, len(both), sum(a == b for a, b in both), cohen_kappa(both)
                )
            )
    return Agreement(
        reviewers=tuple(reviewers),
        marked_runs=len(by_run),
        shared_runs=len(shared),
        marks=count,
        pairs=pairs,
        agreeing_pairs=agreeing,
        alpha=krippendorff_alpha([list(given.values()) for given in shared.values()]),
        by_pair=tuple(by_pair),
    )


def agreement_by_stage(marks: Sequence[MarkRow]) -> list[tuple[str | None, Agreement]]:
    """Agreement within each stage that has marks, in pipeline order."""
    stages: dict[str | None, list[MarkRow]] = {}
    for mark in marks:
        stages.setdefault(mark[1], []).append(mark)
    return [(stage, agreement(stages[stage])) for stage in ordered(stages)]
