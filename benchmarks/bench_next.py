"""Marking the runs `ppp-tui next` suggests against marking runs at random.

    python benchmarks/bench_next.py [--runs 2000] [--seeds 7] [--budget 600]
        [--hidden 0.45,0.62,0.8] [--tolerance 0.02] [--big 100000]

A demo database of --runs runs is made in a temporary folder (removed at the end) and its
marks are set aside. A simulated user with a hidden technical weight (the demo user's is
0.62) prefers, in each run, the agent whose final under that weight plus Gaussian noise
(the demo's, USER_NOISE on each final) is highest, as the demo's own user does. The user
marks one run at a time: the first run `next` suggests, or the next of a seeded random
order. After each mark `tune`'s weight (its optimum of the marks so far, ties nearest the
default 0.7) is compared with the hidden one: the marks needed are the count from which it
stays within --tolerance until --budget marks (more than the budget: never). Printed: the
marks needed per seed, their median for each strategy, and the ratio of the medians; then
how long one suggestion takes over --big runs (60% unmarked).
"""

from __future__ import annotations

import argparse
import statistics
import time
from dataclasses import replace

import numpy as np
from _common import scratch
from _data import marked_runs

from ppp_tui.core.arrays import ScoreArrays
from ppp_tui.core.next_mark import Scope, suggest
from ppp_tui.core.scores import Scores
from ppp_tui.core.settings import Settings
from ppp_tui.core.tuning import optimum
from ppp_tui.storage.demo import USER_NOISE, write_demo
from ppp_tui.storage.store import Store

CURRENT = 0.7  # the default technical weight: tune's tie rule and the start
SETTINGS = Settings()


def demo_arrays(runs: int) -> ScoreArrays:
    """The score arrays of a fresh demo database of `runs` runs, every mark set aside."""
    with scratch("ppp-bench-next-") as folder:
        path = folder / "demo.db"
        write_demo(path, runs, seed=0)
        with Store.open(path) as store:
            arrays = Scores.load(store, SETTINGS).arrays
    return replace(arrays, preferred=np.full(len(arrays), -1, dtype=np.int64))


def whole(arrays: ScoreArrays) -> list[Scope]:
    return [Scope(None, np.ones(len(arrays), dtype=bool), CURRENT)]


def marks_needed(
    pool: ScoreArrays, hidden: float, strategy: str, seed: int, budget: int, tolerance: float
) -> int:
    """How many marks the simulated user makes before tune's weight stays within
    `tolerance` of `hidden` (budget + 1: not within the budget)."""
    rng = np.random.default_rng(seed)
    arrays = replace(pool, preferred=np.full(len(pool), -1, dtype=np.int64))
    lines = arrays.lines(SETTINGS)
    noisy = lines.outcome(hidden).final + rng.normal(0.0, USER_NOISE, arrays.technical.shape)
    answers = np.where(np.isfinite(lines.c), noisy, -np.inf).argmax(axis=1)
    order = iter(rng.permutation(len(arrays)))
    off = 0  # the last mark count at which tune's weight was out of tolerance
    for count in range(1, min(budget, len(arrays)) + 1):
        if strategy == "next":
            suggestions = suggest(lines, whole(arrays), 1).suggestions
            row = suggestions[0].row if suggestions else int(np.argmin(arrays.preferred >= 0))
        else:
            row = int(next(order))
        arrays.preferred[row] = answers[row]
        lines = arrays.lines(SETTINGS)
        tuned = optimum(lines, CURRENT)
        if tuned is None or abs(tuned - hidden) > tolerance:
            off = count
    return off + 1


def shown(needed: float, budget: int) -> str:
    return f">{budget}" if needed > budget else f"{needed:g}"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=2000)
    parser.add_argument("--seeds", type=int, default=7)
    parser.add_argument("--budget", type=int, default=600)
    parser.add_argument("--hidden", default="0.45,0.62,0.8")
    parser.add_argument("--tolerance", type=float, default=0.02)
    parser.add_argument("--big", type=int, default=100_000)
    args = parser.parse_args()
    pool = demo_arrays(args.runs)
    print(
        f"demo database of {len(pool)} runs, marks set aside; user noise {USER_NOISE};"
        f" marks until tune's weight stays within {args.tolerance} (budget {args.budget})"
    )
    ratios = []
    for hidden in (float(h) for h in args.hidden.split(",")):
        medians, censored = {}, False
        for strategy in ("next", "random"):
            started = time.perf_counter()
            needed = [
                marks_needed(pool, hidden, strategy, seed, args.budget, args.tolerance)
                for seed in range(args.seeds)
            ]
            medians[strategy] = statistics.median(needed)
            censored |= strategy == "random" and max(needed) > args.budget
            each = ", ".join(shown(n, args.budget) for n in needed)
            median = shown(medians[strategy], args.budget)
            print(
                f"  hidden {hidden:.2f} {strategy:>6}: median {median}"
                f" ({each}; {time.perf_counter() - started:.1f} s)"
            )
        ratios.append(medians["random"] / medians["next"])
        # Runs past the budget count as budget + 1: the ratio is then at least this.
        print(f"  hidden {hidden:.2f}: random / next {'>= ' * censored}{ratios[-1]:.1f}")
    print(f"ratios of the medians, random / next: {', '.join(f'{r:.1f}' for r in ratios)}")

    big = marked_runs(args.big)
    rng = np.random.default_rng(1)
    big.preferred[rng.random(len(big)) < 0.6] = -1  # 60% unmarked
    lines = big.lines(SETTINGS)
    times = []
    for _ in range(5):
        started = time.perf_counter()
        suggest(lines, whole(big))
        times.append(time.perf_counter() - started)
    print(f"one suggestion over {len(big):,} runs x 5 agents: {statistics.median(times):.3f} s")


if __name__ == "__main__":
    main()
