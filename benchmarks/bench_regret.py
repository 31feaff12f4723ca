"""Regret, agreement and exact tuning over 100k marked runs x 5 agents.

    python benchmarks/bench_regret.py [--runs N]

Targets (issue 2): agreement + mean regret under a new weight <= 10 ms (the
slider's hot path); exact tuning <= 1 s and >= 100x faster than seed 002's
pure-Python 101-point grid search, with regret no worse. Issue 5: the tuned
weight's bootstrap interval (200 resamples) in about a second or less. A quick check
that it works: --runs 500 --resamples 10.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np
from _data import marked_runs

from ppp_tui.core.settings import Settings
from ppp_tui.core.tuning import BOOTSTRAP_RESAMPLES, Resampler, bootstrap, optimum, tune


def grid_search(
    arrays_rows: list[tuple[list[tuple[float, float | None]], int]],
) -> tuple[float, float]:
    """Seed 002's grid search, as it writes it: a Python loop over weights and runs."""
    best_w, best_regret = 0.7, float("inf")
    for step in range(101):
        w_tech = step / 100
        w_inter = 1.0 - w_tech
        total = 0.0
        for agents, preferred in arrays_rows:
            finals = [t if i is None else w_tech * t + w_inter * i for t, i in agents]
            total += max(finals) - finals[preferred]
        mean = total / len(arrays_rows)
        if mean < best_regret:
            best_w, best_regret = w_tech, mean
    return best_w, best_regret


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=100_000)
    parser.add_argument("--resamples", type=int, default=BOOTSTRAP_RESAMPLES)
    args = parser.parse_args()
    arrays = marked_runs(args.runs)
    lines = arrays.lines(Settings()).marked_only()
    print(f"{args.runs} marked runs x {arrays.technical.shape[1]} agents")

    times = []
    for step in range(60):
        start = time.perf_counter()
        outcome = lines.outcome(0.40 + step / 100)
        _ = (outcome.agreement, outcome.mean_regret)
        times.append(time.perf_counter() - start)
    median = statistics.median(times) * 1000
    print(
        f"agreement + mean regret under a new weight: median {median:.2f} ms, "
        f"max {max(times) * 1000:.2f} ms (target <= 10 ms: {median <= 10})"
    )

    runs = []
    for _ in range(7):
        start = time.perf_counter()
        w = optimum(lines, 0.7)
        runs.append(time.perf_counter() - start)
    assert w is not None
    exact_s = statistics.median(runs)  # median of 7: the machine has 2 busy cores
    exact = lines.outcome(w)
    print(
        f"exact tuning: {exact_s:.3f} s -> technical {w:.4f}, mean regret "
        f"{exact.mean_regret:.5f}, agreement {exact.agreement:.3f} (target <= 1 s)"
    )
    print(f"  first call, building the per-Lines column cache: {runs[0]:.3f} s")
    start = time.perf_counter()
    full = tune(lines, 0.7, resamples=0)
    assert full is not None
    print(
        f"tune with curve + 5-fold cross-validation: {time.perf_counter() - start:.3f} s "
        f"(cv mean regret {full.cv_mean_regret:.5f})"
    )
    start = time.perf_counter()
    full = tune(lines, 0.7, resamples=args.resamples)
    assert full is not None
    print(
        f"  and with the bootstrap interval ({args.resamples} resamples, as `ppp-tui tune`):"
        f" {time.perf_counter() - start:.3f} s"
    )

    start = time.perf_counter()
    interval = bootstrap(lines, 0.7, args.resamples, seed=0)
    boot_s = time.perf_counter() - start
    assert interval is not None
    print(
        f"bootstrap interval, {args.resamples} resamples: {boot_s:.3f} s "
        f"({boot_s / args.resamples * 1000:.2f} ms a resample) -> 95% interval "
        f"{interval[0]:.4f}-{interval[1]:.4f} around {w:.4f} (target about 1 s or less)"
    )
    # The same resamples tuned on explicit copies of the runs drawn, for comparison.
    resampler, rng = Resampler(lines), np.random.default_rng(0)
    copies = 5
    start = time.perf_counter()
    for _ in range(copies):
        counts = resampler.draw(rng)
        optimum(lines.subset(np.repeat(np.arange(len(counts)), counts)), 0.7)
    copy_s = (time.perf_counter() - start) / copies
    print(
        f"  a resample tuned on an explicit copy instead: {copy_s * 1000:.1f} ms "
        f"({copy_s * args.resamples:.1f} s for {args.resamples})"
    )

    rows = []
    for r in range(len(arrays)):
        agents = [
            (
                float(arrays.technical[r, j]),
                None
                if arrays.interaction[r, j] != arrays.interaction[r, j]
                else float(arrays.interaction[r, j]),
            )
            for j in range(arrays.technical.shape[1])
            if arrays.valid[r, j]
        ]
        rows.append((agents, int(arrays.preferred[r])))
    start = time.perf_counter()
    grid_w, grid_regret = grid_search(rows)
    grid_s = time.perf_counter() - start
    print(
        f"pure-Python 101-point grid (seed 002): {grid_s:.2f} s -> technical {grid_w:.2f}, "
        f"mean regret {grid_regret:.5f}"
    )
    print(
        f"speed-up {grid_s / exact_s:.0f}x (first call {grid_s / runs[0]:.0f}x; target >= 100x); "
        f"regret no worse: {exact.mean_regret <= grid_regret + 1e-12}"
    )


if __name__ == "__main__":
    main()
