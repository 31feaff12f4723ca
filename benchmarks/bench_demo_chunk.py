"""What one chunk of `ppp-tui demo` costs its worker: the chunk's runs made and turned
into table rows, in milliseconds per chunk of 2,000 runs.

    python benchmarks/bench_demo_chunk.py [--chunks 20] [--seed 0]

Chunks 1 to --chunks of a 100,000-run demo, each made as a chunk worker makes it (chunk
0 first, left out: it fills the caches a worker keeps from chunk to chunk). Prints the
median and the fastest chunk, making the runs and building their rows apart. The cycle
collector is off, as in the workers. Other processes on the machine slow the figures down:
compare two versions in the same minute. A quick check that it works: --chunks 1.
"""

from __future__ import annotations

import argparse
import gc
import random
import statistics
import time

from ppp_tui.storage.demo.draw import _timestamps
from ppp_tui.storage.demo.generator import CHUNK, _chunk_models
from ppp_tui.storage.rows import Rows

RUNS = 100_000


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--chunks", type=int, default=20)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    chunks = max(1, min(args.chunks, RUNS // CHUNK - 1))
    times = _timestamps(random.Random(f"{args.seed}:time"), RUNS)
    gc.disable()
    made: list[float] = []
    built: list[float] = []
    for chunk in range(chunks + 1):
        start = time.perf_counter()
        runs = list(_chunk_models(args.seed, times, chunk))
        middle = time.perf_counter()
        rows = Rows("stamp", 0)
        for run in runs:
            rows.add(run)
        rows.take()
        end = time.perf_counter()
        if chunk:
            made.append((middle - start) * 1000)
            built.append((end - middle) * 1000)
    total = [a + b for a, b in zip(made, built, strict=True)]
    print(f"demo chunks of {CHUNK} runs, {chunks} chunks (seed {args.seed}), ms per chunk:")
    for label, values in (("runs made", made), ("rows built", built), ("both", total)):
        print(f"  {label:<10} median {statistics.median(values):6.1f}  fastest {min(values):6.1f}")


if __name__ == "__main__":
    main()
