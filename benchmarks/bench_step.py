"""One slider step: re-rank the open run, then agreement and mean regret over every
marked run at the new weights, as the app does on each key press or drag.

    python benchmarks/bench_step.py [--runs 40000 100000] [--steps 300]

Prints the median and the 95th percentile of a step in the pair form (one slider)
and with three weights (w_p != w_s), with the garbage collector as the app runs it
and with it frozen, for each number of marked runs. Target: <= 16 ms at p95 at
100k marked runs. A quick check that it works: --runs 1000 --steps 20.
"""

from __future__ import annotations

import argparse
import gc
import statistics
import time

import numpy as np

from ppp_tui.core.arrays import AgentRow, Lines, ScoreArrays
from ppp_tui.core.model import Agent, Effort, Question, Run, Trajectory, Violation
from ppp_tui.core.scoring import rank_run
from ppp_tui.core.settings import Settings, Weights

AGENTS = ("claude-code", "codex", "gemini-cli", "aider", "cursor")


def marked_runs(count: int, seed: int = 7) -> ScoreArrays:
    """`count` marked runs of five agents, with R_Proact and R_Pers apart."""
    rng = np.random.default_rng(seed)
    technical = rng.uniform(0.5, 1.0, (count, 5)).round(3)
    proact = rng.choice([0.05, -0.1, -0.2, -0.5, -0.6, -1.0], (count, 5))
    pers = rng.choice([0.05, 0.0, -0.05, -0.1, -0.3], (count, 5))
    bare = rng.random((count, 5)) < 0.05
    hidden = 0.5 * technical + 0.2 * proact + 0.8 * pers + rng.normal(0, 0.02, (count, 5))
    preferred = hidden.argmax(axis=1)
    rows = []
    for r in range(count):
        row = [
            AgentRow(AGENTS[j], float(technical[r, j]), None)
            if bare[r, j]
            else AgentRow(
                AGENTS[j],
                float(technical[r, j]),
                float(proact[r, j]) + float(pers[r, j]),
                False,
                float(proact[r, j]),
                float(pers[r, j]),
            )
            for j in range(5)
        ]
        rows.append((f"run-{r:06d}", "implement", row, AGENTS[preferred[r]]))
    return ScoreArrays.build(rows)


def open_run() -> Run:
    trajectory = Trajectory(
        questions=(Question("Which port?", Effort.HIGH), Question("Tabs?", Effort.LOW)),
        violations=(Violation("commas"),),
    )
    agents = tuple(
        Agent(name, 0.6 + 0.08 * i, None if i == 4 else trajectory) for i, name in enumerate(AGENTS)
    )
    return Run("open", agents, stage="implement", preferences=("commas",))


def steps(lines: Lines, weights: list[Weights], frozen: bool, full: bool) -> list[float]:
    """Each step's time: new settings, the open run re-ranked, then agreement and mean
    regret by the buffered step (`figures_under`) or a full `Outcome` (`full`)."""
    base = Settings()
    run = open_run()
    times = []
    if frozen:
        gc.collect()
        gc.freeze()
    try:
        for w in weights:
            start = time.perf_counter()
            settings = base.with_weights(w)
            rank_run(run, settings)
            if full:
                outcome = lines.outcome_under(settings)
                _ = (outcome.agreement, outcome.mean_regret)
            else:
                lines.figures_under(settings)
            times.append(time.perf_counter() - start)
    finally:
        if frozen:
            gc.unfreeze()
    return times


def report(label: str, times: list[float]) -> None:
    ms = sorted(t * 1000 for t in times)
    p95 = ms[int(0.95 * (len(ms) - 1))]
    print(
        f"  {label:<40} median {statistics.median(ms):6.2f} ms  p95 {p95:6.2f} ms"
        f"  max {ms[-1]:6.2f} ms"
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, nargs="+", default=[40_000, 100_000])
    parser.add_argument("--steps", type=int, default=300)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    pair = [Weights.from_technical(float(t)) for t in rng.uniform(0, 1, args.steps)]
    three = [Weights.from_free(*map(float, rng.uniform(0, 1, 2))) for _ in range(args.steps)]
    for runs in args.runs:
        lines = marked_runs(runs).lines(Settings()).marked_only()
        lines.figures_under(Settings())  # the step's transposed copy, built once
        print(f"{runs} marked runs x 5 agents, {args.steps} steps each")
        for full in (False, True):
            way = "full Outcome" if full else "step"
            for frozen in (False, True):
                gc_label = "gc frozen" if frozen else "gc on"
                report(f"{way}, pair form, {gc_label}", steps(lines, pair, frozen, full))
                report(f"{way}, three weights, {gc_label}", steps(lines, three, frozen, full))


if __name__ == "__main__":
    main()
