"""The agents' leaderboard: Bradley-Terry strengths fitted to the marks, and to the picks.

A mark says that the preferred agent beat each other agent of its run: a marked run of
k agents gives k - 1 pairwise wins. Under the Bradley-Terry model agent i beats agent j
with probability 1 / (1 + exp(theta_j - theta_i)), theta the log-strength, and the
strengths are the maximum of that likelihood over every pairwise win.

An agent that never lost (or never won) has no finite maximum, and agents never
compared have no common scale; so each agent also plays one virtual win and one
virtual loss against a reference agent of log-strength 0 (a weak prior: a logistic
density on each log-strength). The fit is the maximum of likelihood times prior:
always finite, and unique, whatever the comparison graph.

Log-strengths are shown centred on 0 (the mean over the agents); a rating is the
Elo-like reading, 400 / ln 10 points per unit, so that a difference of 1 in
log-strength (174 points) is a win probability of e / (1 + e) = 73%, and 400 points
one of 10 / 11 = 91%. The 95% interval is the percentile bootstrap: the 2.5th and
97.5th percentiles of the strength over resamples of the marked runs, drawn with
replacement, seeded so that they repeat.

The same fit to the picks (the rank-1 agent of each marked run under the weights, as
regret selects it) shows what the weights prefer next to what you prefer. Each fit
resamples the runs with the same seed, but on its own: your marks' intervals do not move
with the weights. Everything runs over pair counts, a small agents x agents matrix: the
runs are only counted, once, into their distinct patterns (who took part, who won).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from .arrays import run_groups

if TYPE_CHECKING:
    from .arrays import ScoreArrays
    from .settings import Settings

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]

# Rating points per unit of log-strength: Elo's scale (400 points: 10 to 1 odds).
RATING_PER_UNIT = 400.0 / math.log(10.0)
RESAMPLES = 200  # bootstrap resamples of the marked runs
SEED = 0
# Each agent's virtual wins (and as many losses) against the reference of log-strength 0.
PRIOR_GAMES = 1.0
CONFIDENCE = 0.95

_MAX_NEWTON = 100
_MAX_HALVINGS = 60
_STEP_TOL = 1e-11  # converged once no log-strength moves by more than this
_ROUNDING = 1e-12  # the objective's relative rounding error, generously
_BATCH_CELLS = 4_000_000  # resamples fitted at once: at most this many (agents x agents) cells


@dataclass(frozen=True)
class Fit:
    """Strengths fitted to one choice per marked run (your marks, or the weights' picks),
    each array over the leaderboard's agents, in its order."""

    strength: FloatArray  # centred log-strength
    low: FloatArray  # the 95% bootstrap interval of the strength
    high: FloatArray
    chosen: IntArray  # marked runs in which the agent was the one chosen
    wins: IntArray  # pairwise wins
    comparisons: IntArray  # pairwise wins and losses

    @property
    def rating(self) -> FloatArray:
        """The Elo-like reading of the strength (`RATING_PER_UNIT` points per unit)."""
        result: FloatArray = self.strength * RATING_PER_UNIT
        return result

    @property
    def rating_low(self) -> FloatArray:
        result: FloatArray = self.low * RATING_PER_UNIT
        return result

    @property
    def rating_high(self) -> FloatArray:
        result: FloatArray = self.high * RATING_PER_UNIT
        return result

    @property
    def win_rate(self) -> FloatArray:
        """Wins / comparisons, nan for an agent never compared."""
        with np.errstate(invalid="ignore", divide="ignore"):
            result: FloatArray = np.where(
                self.comparisons > 0, self.wins / np.maximum(self.comparisons, 1), np.nan
            )
        return result

    @property
    def one_sided(self) -> npt.NDArray[np.bool_]:
        """Agents that never lost or never won (or were never compared): their strength
        is finite only through the prior."""
        result: npt.NDArray[np.bool_] = (self.wins == 0) | (self.wins == self.comparisons)
        return result


@dataclass(frozen=True)
class Leaderboard:
    """Every agent of the marked runs, the strongest under your marks first."""

    agents: tuple[str, ...]
    runs: IntArray  # marked runs the agent took part in
    marks: Fit  # fitted to your marks
    picks: Fit  # fitted to the weights' picks
    marked_runs: int
    comparisons: int  # pairwise comparisons, all agents together
    resamples: int
    seed: int


def leaderboard(
    arrays: ScoreArrays,
    selected: IntArray,
    resamples: int = RESAMPLES,
    seed: int = SEED,
    prior: float = PRIOR_GAMES,
) -> Leaderboard | None:
    """The leaderboard of the marked runs of `arrays`, `selected` the slot the weights
    pick in each run (`Outcome.selected`); None without a marked run."""
    rows = np.flatnonzero(arrays.marked)
    if not rows.size:
        return None
    names = arrays.names.take(rows, axis=0)
    valid = arrays.valid.take(rows, axis=0)
    found, inverse = _factorise(names[valid].tolist())
    ids = np.full(names.shape, -1, dtype=np.int64)
    ids[valid] = inverse
    at = np.arange(len(rows))
    preferred = ids[at, arrays.preferred[rows]]
    picked = ids[at, selected[rows]]
    size = len(found)
    present = np.sort(ids, axis=1)
    groups = run_groups(arrays.run_ids[rows])
    # Rows of one run (marks by several reviewers) are resampled together.
    tied = groups if groups[1] < len(rows) else None
    marks = _fit_choices(preferred, present, size, resamples, seed, prior, tied)
    picks = _fit_choices(picked, present, size, resamples, seed, prior, tied)
    took_part = np.bincount(ids[valid], minlength=size)
    # Strongest first; strengths equal to 9 decimals (a tie but for rounding) by name,
    # the order the ids already have.
    order = np.argsort(-np.round(marks.strength, 9), kind="stable")
    return Leaderboard(
        agents=tuple(str(name) for name in found[order]),
        runs=took_part[order],
        marks=_reorder(marks, order),
        picks=_reorder(picks, order),
        marked_runs=len(rows),
        comparisons=int(marks.wins.sum()),
        resamples=resamples,
        seed=seed,
    )


def leaderboard_under(
    arrays: ScoreArrays, settings: Settings, resamples: int = RESAMPLES, seed: int = SEED
) -> Leaderboard | None:
    """The leaderboard of the marked runs of `arrays`, the picks under `settings`: each
    run's rank-1 agent at its stage's weights (else the global ones), as regret selects."""
    marked = arrays.subset(arrays.marked)
    return leaderboard(marked, marked.lines(settings).outcome().selected, resamples, seed)


def fit(wins: FloatArray | IntArray, prior: float = PRIOR_GAMES) -> FloatArray:
    """Centred log-strengths of the Bradley-Terry fit to `wins` (..., agents, agents),
    wins[i, j] the times agent i beat agent j: the maximum of the likelihood times the
    prior of `prior` virtual wins and losses against a reference of log-strength 0.

    prior 0 is the plain maximum likelihood, finite only when every agent has won and
    lost within a connected comparison graph. Newton's method with step halving: the
    objective is concave, strictly so on the centred strengths.
    """
    counts = np.asarray(wins, dtype=np.float64)
    shape = counts.shape
    size = shape[-1]
    flat = counts.reshape(-1, size, size)
    batch = max(1, _BATCH_CELLS // max(1, size * size))
    parts = [_newton(flat[i : i + batch], prior) for i in range(0, len(flat), batch)]
    theta = np.concatenate(parts) if parts else np.zeros((0, size))
    theta -= theta.mean(axis=1, keepdims=True)
    result: FloatArray = theta.reshape(shape[:-1])
    return result


def log_posterior(theta: FloatArray, wins: FloatArray, prior: float = PRIOR_GAMES) -> FloatArray:
    """The objective `fit` maximises, at log-strengths theta (batch, agents) for wins
    (batch, agents, agents)."""
    diff = theta[:, :, None] - theta[:, None, :]
    # log P(i beats j) = -log(1 + exp(theta_j - theta_i)), for every pairwise win.
    value: FloatArray = -(wins * np.logaddexp(0.0, -diff)).sum(axis=(1, 2))
    if prior:
        value -= prior * (np.logaddexp(0.0, -theta) + np.logaddexp(0.0, theta)).sum(axis=1)
    return value


def _expit(x: FloatArray) -> FloatArray:
    """1 / (1 + exp(-x)), without overflow."""
    result: FloatArray = 0.5 + 0.5 * np.tanh(0.5 * x)
    return result


def _newton(wins: FloatArray, prior: float) -> FloatArray:
    batch, size = wins.shape[0], wins.shape[1]
    games = wins + wins.transpose(0, 2, 1)
    theta = np.zeros((batch, size))
    value = log_posterior(theta, wins, prior)
    diagonal = np.arange(size)
    for _ in range(_MAX_NEWTON):
        chance = _expit(theta[:, :, None] - theta[:, None, :])
        gradient = (wins - games * chance).sum(axis=2)
        curvature = games * chance * (1.0 - chance)
        information = -curvature
        information[:, diagonal, diagonal] += curvature.sum(axis=2)
        if prior:
            own = _expit(theta)
            gradient += prior * (1.0 - 2.0 * own)
            information[:, diagonal, diagonal] += 2.0 * prior * own * (1.0 - own)
        else:
            # Without the prior only differences count: the ones matrix pins the mean,
            # and the step (the gradient sums to 0) keeps it where it is.
            information += 1.0 / size
        step = np.linalg.solve(information, gradient[:, :, None])[:, :, 0]
        scale = np.ones(batch)
        for _ in range(_MAX_HALVINGS):
            moved = theta + scale[:, None] * step
            moved_value = log_posterior(moved, wins, prior)
            # A step is taken if the objective does not fall, up to its rounding error
            # (at the maximum, rounding alone would halve a converged step 60 times).
            taken = moved_value >= value - _ROUNDING * np.abs(value)
            if taken.all():
                break
            scale = np.where(taken, scale, scale / 2)
        theta, value = moved, moved_value
        if np.abs(scale[:, None] * step).max(initial=0.0) < _STEP_TOL:
            break
    return theta


def _fit_choices(
    winners: IntArray,
    present: IntArray,
    size: int,
    resamples: int,
    seed: int,
    prior: float,
    groups: tuple[IntArray, int] | None = None,
) -> Fit:
    """The fit to one choice per row: `winners` (rows,) the chosen agent's id, `present`
    (rows, slots) the ids of the run's agents (-1 in padding). `groups` ties the rows of
    one run (`run_groups`; None: a run per row)."""
    # Runs alike in who took part and who won count as one pattern: the pair counts
    # and the resamples work over the patterns' counts.
    if groups is None:
        patterns, counts = _distinct(np.column_stack([winners, present]), size)
        # Resampling the runs with replacement is drawing the patterns' counts from a
        # multinomial over the patterns, in proportion to how many runs each has.
        runs = len(winners)
        draws = np.random.default_rng(seed).multinomial(runs, counts / runs, size=resamples)
    else:
        patterns, counts, draws = _grouped_draws(winners, present, groups, resamples, seed)
    pairs = _pairs(patterns, size)
    wins = _wins(counts[None, :], pairs, size)[0]
    low, high = _interval(fit(_wins(draws, pairs, size), prior))
    won = wins.sum(axis=1)
    return Fit(
        strength=fit(wins, prior),
        low=low,
        high=high,
        chosen=np.bincount(winners, minlength=size),
        wins=np.rint(won).astype(np.int64),
        comparisons=np.rint(won + wins.sum(axis=0)).astype(np.int64),
    )


def _factorise(names: list[str]) -> tuple[npt.NDArray[np.object_], IntArray]:
    """The distinct names, sorted, and each name's position among them: what
    `np.unique(names, return_inverse=True)` gives, through a dict rather than a sort of
    every name (strings compare in Python: several times slower at 100k runs)."""
    codes: dict[str, int] = {}
    first = np.fromiter(
        (codes.setdefault(name, len(codes)) for name in names), np.int64, len(names)
    )
    ordered = sorted(codes)
    rank = np.empty(len(ordered), dtype=np.int64)
    rank[[codes[name] for name in ordered]] = np.arange(len(ordered))
    found = np.empty(len(ordered), dtype=object)
    found[:] = ordered
    inverse: IntArray = rank[first]
    return found, inverse


def _grouped_draws(
    winners: IntArray,
    present: IntArray,
    groups: tuple[IntArray, int],
    resamples: int,
    seed: int,
) -> tuple[IntArray, IntArray, IntArray]:
    """(patterns, their counts, each resample's pattern counts) when rows come in runs
    (a run marked by several reviewers): a resample draws whole runs with replacement,
    each bringing every row it has."""
    from scipy import sparse

    patterns, pattern_of, counts = np.unique(
        np.column_stack([winners, present]), axis=0, return_inverse=True, return_counts=True
    )
    inverse, n = groups
    per_run = sparse.csr_matrix(
        (np.ones(len(inverse)), (inverse, pattern_of.reshape(-1))), shape=(n, len(patterns))
    )
    rng = np.random.default_rng(seed)
    draws = np.empty((resamples, len(patterns)), dtype=np.int64)
    for r in range(resamples):
        drawn = np.bincount(rng.integers(0, n, size=n), minlength=n)
        draws[r] = np.rint(per_run.T @ drawn).astype(np.int64)
    return patterns, counts, draws


def _distinct(rows: IntArray, size: int) -> tuple[IntArray, IntArray]:
    """The distinct rows of agent ids (-1 to size - 1) in order, and how often each occurs:
    `np.unique(rows, axis=0)`, through one integer per row where one holds it (several
    times faster: no sort of rows as bytes)."""
    base = size + 1
    if rows.shape[1] * math.log2(base) >= 62:
        found, counts = np.unique(rows, axis=0, return_counts=True)
        return found, counts
    # The row's ids, shifted to 0..size, as the digits of a number in base size + 1:
    # the numbers sort as the rows do.
    places = base ** np.arange(rows.shape[1] - 1, -1, -1, dtype=np.int64)
    codes, counts = np.unique((rows + 1) @ places, return_counts=True)
    digits: IntArray = codes[:, None] // places % base - 1
    return digits, counts


def _pairs(patterns: IntArray, size: int) -> object:
    """(patterns, agents * agents) sparse counts: the pairwise wins of one run of each
    pattern (its winner's id, then its agents' ids): each other agent lost to the winner."""
    from scipy import sparse

    winner = patterns[:, 0]
    others = patterns[:, 1:]
    beaten = (others >= 0) & (others != winner[:, None])
    pattern, slot = np.nonzero(beaten)
    cells = winner[pattern] * size + others[pattern, slot]
    return sparse.csr_matrix(
        (np.ones(len(pattern)), (pattern, cells)), shape=(len(patterns), size * size)
    )


def _wins(counts: IntArray, pairs: object, size: int) -> FloatArray:
    """(draws, agents, agents) pairwise wins of `counts` (draws, patterns) runs of each
    pattern."""
    cells = (pairs.T @ counts.T.astype(np.float64)).T  # type: ignore[attr-defined]
    result: FloatArray = np.asarray(cells).reshape(len(counts), size, size)
    return result


def _interval(strengths: FloatArray) -> tuple[FloatArray, FloatArray]:
    tail = (1.0 - CONFIDENCE) / 2 * 100
    low, high = np.percentile(strengths, [tail, 100 - tail], axis=0)
    return low, high


def _reorder(figures: Fit, order: IntArray) -> Fit:
    return Fit(
        strength=figures.strength[order],
        low=figures.low[order],
        high=figures.high[order],
        chosen=figures.chosen[order],
        wins=figures.wins[order],
        comparisons=figures.comparisons[order],
    )
