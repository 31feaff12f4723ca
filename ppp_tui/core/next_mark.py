"""Which unmarked runs to mark next: those whose mark tells the most about the technical
weight that `tune` fits (`ppp-tui next`, `n` in the app's runs list).

A scope's marked runs leave a stretch of technical weights undecided: the weights of
least mean regret (`tune`'s flat minimum, within its tolerance), all of which the marks
fit equally well; with no marked run, all of [0, 1]. A run's mark can only move the fit
if its pick changes at a weight (a flip: where two agents' lines cross, `tuning`'s
envelope walk) near that stretch, and the flip nearest the middle of the stretch splits
it most evenly: whichever agent the user prefers, about half the stretch is ruled out,
so marks chosen this way halve it each time (a bisection), where random marks narrow it
slowly. So the rule:

- the target is the middle (`centre`) of each scope's undecided stretch;
- each unmarked run's key is the distance from that target to its nearest flip;
  a run whose pick never changes in (0, 1) tells nothing and is left out;
- runs come by key, those whose flip lies strictly inside their scope's stretch first
  (a mark of one is sure to narrow it; within one scope they are the nearest anyway),
  then the others, nearest first; ties go by run id.

When the marks disagree with each other (a user's noise), the stretch shrinks to one
weight, the tuned one, and the runs flipping nearest it come first. Scopes are `tune`'s:
the global weights fit the runs whose stage has no table of its own, a stage's table
its own runs (`scopes`). docs/marks.md states the rule; benchmarks/bench_next.py
measures it against random marks.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .arrays import BoolArray, FloatArray, IntArray, Lines, ScoreArrays
from .settings import Settings
from .stages import NO_STAGE, ordered
from .tuning import REGRET_TOLERANCE, _choose, _profile, _walked

# How many runs `ppp-tui next` lists (and the app shows) unless told otherwise.
NEXT_RUNS = 10


@dataclass(frozen=True)
class Scope:
    """One weights scope as `tune` fits it: its runs (marked or not), its configured
    technical weight, and which of its unmarked runs may be suggested (None: all)."""

    name: str | None  # None: the global weights
    runs: BoolArray  # (runs,)
    current: float
    candidates: BoolArray | None = None  # (runs,)


@dataclass(frozen=True)
class Estimate:
    """What a scope's marks say about its technical weight, and its unmarked runs."""

    scope: str | None  # None: the global weights
    marked_runs: int
    technical: float  # the tuned weight (`tune`'s); the configured one with no marks
    undecided: tuple[float, float]  # the weights of least mean regret
    unmarked_runs: int  # the runs that could be suggested
    changing_runs: int  # those whose pick changes somewhere in (0, 1)

    @property
    def centre(self) -> float:
        """The target: the middle of the undecided stretch."""
        low, high = self.undecided
        return (low + high) / 2


@dataclass(frozen=True)
class Suggestion:
    """One run to mark, and why: its flip nearest its scope's target."""

    row: int  # the run's row in the arrays
    run_id: str
    stage: str | None
    scope: str | None
    flip: float  # the technical weight at which its pick changes
    distance: float  # |flip - the scope's centre|
    inside: bool  # the flip lies strictly inside the scope's undecided stretch
    below: str  # the agent ranked first just below the flip
    above: str  # and just above it


@dataclass(frozen=True)
class NextMarks:
    """Every scope's estimate and the runs to mark next, the most telling first."""

    estimates: tuple[Estimate, ...]
    suggestions: tuple[Suggestion, ...]

    @property
    def unmarked_runs(self) -> int:
        return sum(e.unmarked_runs for e in self.estimates)

    @property
    def changing_runs(self) -> int:
        return sum(e.changing_runs for e in self.estimates)


def scopes(arrays: ScoreArrays, settings: Settings, stage: str | None = None) -> list[Scope]:
    """The scopes to suggest runs for, as `tune` fits them.

    `stage` None: the global weights (the runs whose stage has no table) and each stage
    table with runs; a stage's name: that stage's runs alone (`tune --stage`); `NO_STAGE`:
    the global scope, suggesting only runs without a stage.
    """
    if stage is not None and stage != NO_STAGE:
        return [Scope(stage, arrays.stage_mask(stage), settings.weights_for(stage).technical)]
    tables = settings.stage_weights
    governed = np.array([s not in tables for s in arrays.stages], dtype=bool)
    current = settings.weights.technical
    if stage == NO_STAGE:
        return [Scope(None, governed, current, arrays.stage_mask(None))]
    found = [Scope(None, governed, current)] if governed.any() else []
    for name in ordered(tables):  # the pipeline's order
        mask = arrays.stage_mask(name)
        if name is not None and mask.any():
            found.append(Scope(name, mask, tables[name].technical))
    return found


def estimate(marked: Lines, current: float) -> tuple[float, tuple[float, float]]:
    """(the tuned weight, the undecided stretch) of a set of marked runs: `tune`'s
    optimum, and the weights of least mean regret over the marks some weight agrees
    with; (`current`, [0, 1]) with no marked run.

    A mark of an agent that ranks first at no weight (the user's noise, or a reason the
    scores miss) fits no weight: its regret is least at an end or a kink of its run's
    envelope, wherever that is, and one such mark would pin the stretch there. So it
    is left out of the stretch (not of the tuned weight)."""
    if len(marked.arrays) == 0:
        return current, (0.0, 1.0)
    walked = _walked(marked)
    profile = _profile(marked, walked)
    tuned = _choose(profile, current, marked.by_slot.agreements)
    # Agreeing somewhere: at w = 0, or where the envelope turns to the preferred agent.
    fits = walked.agree0.copy()
    fits[walked.run[walked.d_agree > 0]] = True
    if not fits.all():
        if not fits.any():
            return tuned, (0.0, 1.0)
        profile = _profile(marked.subset(fits))
    optimal = np.flatnonzero(profile.regret <= profile.regret.min() + REGRET_TOLERANCE)
    return tuned, (float(profile.xs[optimal[0]]), float(profile.xs[optimal[-1]]))


def flips(lines: Lines) -> tuple[FloatArray, IntArray]:
    """Every weight in (0, 1) at which a run's pick changes, and that run's row."""
    if len(lines.arrays) == 0:
        return np.zeros(0), np.zeros(0, dtype=np.int64)
    walked = _walked(lines)
    return walked.x, walked.run


def suggest(lines: Lines, scoped: Sequence[Scope], count: int = NEXT_RUNS) -> NextMarks:
    """The `count` unmarked runs of `scoped` whose marks tell the most (the module's rule)."""
    arrays = lines.arrays
    n = len(arrays)
    unmarked = ~arrays.marked
    low, high = np.zeros(n), np.zeros(n)
    owner = np.full(n, -1, dtype=np.int64)  # the scope each candidate is suggested for
    fitted = []
    for k, scope in enumerate(scoped):
        marked = lines.subset(scope.runs & arrays.marked)
        technical, stretch = estimate(marked, scope.current)
        candidates = scope.runs & unmarked & (owner < 0)  # a run belongs to one scope
        if scope.candidates is not None:
            candidates &= scope.candidates
        owner[candidates] = k
        low[candidates], high[candidates] = stretch
        fitted.append((scope.name, len(marked.arrays), technical, stretch, int(candidates.sum())))
    rows = np.flatnonzero(owner >= 0)
    x, local = flips(lines.subset(rows))
    run = rows[local]
    distance = np.abs(x - (low[run] + high[run]) / 2)
    # Each run's flip nearest its target (of two as near, the lower one).
    order = np.lexsort((x, distance, run))
    first = order[np.diff(run[order], prepend=-1) != 0]
    inside = (low[run[first]] < x[first]) & (x[first] < high[run[first]])
    changing = np.bincount(owner[run[first]], minlength=len(scoped))
    estimates = tuple(Estimate(*figures, int(changing[k])) for k, figures in enumerate(fitted))
    ids = arrays.run_ids[run[first]].astype(str)
    best = np.lexsort((ids, distance[first], ~inside))[:count]
    chosen = first[best]
    below, above = _sides(lines, x, run, chosen)
    suggestions = tuple(
        Suggestion(
            row=int(r),
            run_id=str(arrays.run_ids[r]),
            stage=arrays.stages[r],
            scope=scoped[int(owner[r])].name,
            flip=float(x[i]),
            distance=float(distance[i]),
            inside=bool(inside[b]),
            below=str(arrays.names[r, below[j]]),
            above=str(arrays.names[r, above[j]]),
        )
        for j, (i, b, r) in enumerate(zip(chosen, best, run[chosen], strict=True))
    )
    return NextMarks(estimates, suggestions)


def _sides(
    lines: Lines, x: FloatArray, run: IntArray, chosen: IntArray
) -> tuple[IntArray, IntArray]:
    """The slots ranked first just below and just above each of the flips `chosen`: at
    the middle between it and its run's neighbouring flips (or 0 and 1)."""
    by_run = np.lexsort((x, run))
    place = np.empty_like(by_run)
    place[by_run] = np.arange(by_run.size)
    at = place[chosen]
    before = by_run[np.maximum(at - 1, 0)]
    after = by_run[np.minimum(at + 1, by_run.size - 1)]
    rows, flip = run[chosen], x[chosen]
    previous = np.where((at > 0) & (run[before] == rows), x[before], 0.0)
    following = np.where((at < by_run.size - 1) & (run[after] == rows), x[after], 1.0)
    sides = lines.subset(rows)
    below = sides.outcome((previous + flip) / 2).selected
    above = sides.outcome((flip + following) / 2).selected
    return below, above
