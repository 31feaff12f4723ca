"""Ranking one run, and the effort classifier's throughput.

python benchmarks/bench_rank.py
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from ppp_tui.core.effort import classify_effort
from ppp_tui.core.runs import run_from_dict
from ppp_tui.core.scoring import rank_run
from ppp_tui.core.settings import Settings

ROOT = Path(__file__).resolve().parent.parent


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
    raw = classify_effort.__wrapped__  # type: ignore[attr-defined]
    for label, with_context in (("without task text", False), ("with task text", True)):
        repeats = 20
        start = time.perf_counter()
        for _ in range(repeats):
            for row in rows:
                raw(row["question"], row["context"] if with_context else None)
        rate = repeats * len(rows) / (time.perf_counter() - start)
        print(f"classifier, {len(rows)} distinct questions {label}: {rate:,.0f} questions/s")
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
