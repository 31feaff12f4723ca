"""Ranking one run, and the effort classifier's throughput.

python benchmarks/bench_rank.py

Takes a few seconds as it is: its own quick check.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path

from ppp_tui.core.effort import classifier, classify_effort, task_text
from ppp_tui.core.runs import run_from_dict
from ppp_tui.core.scoring import rank_run
from ppp_tui.core.settings import Settings
from ppp_tui.storage import demo

ROOT = Path(__file__).resolve().parent.parent


ROUNDS = 5


def best_rate(
    raw: Callable[[str, str | None], object], rows: list[dict[str, str]], with_context: bool
) -> float:
    """Questions per second: the best of ROUNDS rounds of 20 passes over `rows`."""
    best = 0.0
    for _ in range(ROUNDS):
        repeats = 20
        start = time.perf_counter()
        for _ in range(repeats):
            for row in rows:
                raw(row["question"], row["context"] if with_context else None)
        best = max(best, repeats * len(rows) / (time.perf_counter() - start))
    return best


def main() -> None:
    lines = (ROOT / "examples" / "runs.jsonl").read_text().splitlines()
    run = run_from_dict(json.loads(lines[1]))
    settings = Settings()
    count = 20_000
    start = time.perf_counter()
    for _ in range(count):
        rank_run(run, settings)
    per = (time.perf_counter() - start) / count * 1e6
    print(f"rank one run ({len(run.agents)} agents): {per:.1f} us")

    rows = [
        json.loads(line)
        for name in ("effort_labelled.jsonl", "effort_holdout.jsonl", "effort_blind.jsonl")
        for line in (ROOT / "tests" / "data" / name).read_text().splitlines()
        if line.strip()
    ]

    def raw(question: str, context: str | None) -> object:
        # Uncached: neither the classifier's cache nor its cache of each question's own words.
        classifier._own_effort.cache_clear()
        return classify_effort.__wrapped__(question, context)  # type: ignore[attr-defined]

    # The best of ROUNDS rounds (as timeit does: the others were slowed by something else).
    for label, with_context in (("without task text", False), ("with task text", True)):
        rate = best_rate(raw, rows, with_context)
        print(f"classifier, {len(rows)} distinct questions {label}: {rate:,.0f} questions/s")
    # A run's task text is prepared once for all its questions (task_text._task); the worst
    # case is a run with one question, whose task text is prepared for it alone.
    repeats = 20
    elapsed = 0.0
    for _ in range(repeats):
        task_text._TASKS.clear()
        start = time.perf_counter()
        for row in rows:
            raw(row["question"], row["context"])
        elapsed += time.perf_counter() - start
    rate = repeats * len(rows) / elapsed
    print(
        "classifier, every task text prepared for one question (worst case):",
        f"{rate:,.0f} questions/s",
    )
    # Demo runs' questions in order, each with its run's task text, as an import meets
    # them (without the question cache: few repeat exactly).
    pairs = [
        (question.text, run.task)
        for _, run in demo.generate_parsed(3000, seed=1)
        for agent in run.agents
        if agent.trajectory
        for question in agent.trajectory.questions
    ]
    task_text._TASKS.clear()
    start = time.perf_counter()
    for question, task in pairs:
        raw(question, task)
    rate = len(pairs) / (time.perf_counter() - start)
    print(
        f"classifier, {len(pairs):,} demo questions with their runs' task texts:",
        f"{rate:,.0f} questions/s",
    )
    classify_effort.cache_clear()  # type: ignore[attr-defined]
    start = time.perf_counter()
    for _ in range(20):
        for row in rows:
            classify_effort(row["question"], row["context"])
    rate = 20 * len(rows) / (time.perf_counter() - start)
    print(
        f"classifier with its cache (repeated questions, as in an import): {rate:,.0f} questions/s"
    )


if __name__ == "__main__":
    main()
