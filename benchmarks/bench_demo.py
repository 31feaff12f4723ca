"""How long `ppp-tui demo --runs 100000` takes, as a whole process (target: <= 10 s).

    python benchmarks/bench_demo.py [--runs 100000] [--repeat 1]

Prints the wall-clock seconds of each run, the processor seconds the command and its
chunk workers used (on a machine with one core, or where the workers cannot fork, the
demo is made in one process), then the median and its ratio to the 10 s target, with the
load average (other processes on the machine slow the figure down). The database is
made in a temporary folder that is removed at the end. A quick check that it works:
--runs 200.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import time

from _common import isolated_env, ppp_tui, scratch

TARGET_S = 10.0


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=1)
    args = parser.parse_args()
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    print(f"ppp-tui demo --runs {args.runs}, {cores} cores")
    times = []
    with scratch("ppp-bench-demo-") as folder:
        db = folder / "demo.db"
        env = isolated_env(folder)
        for attempt in range(args.repeat):
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            start = time.perf_counter()
            subprocess.run(
                [*ppp_tui(), "demo", "--runs", str(args.runs), "--db", str(db), "--replace"],
                env=env,
                check=True,
                stdout=subprocess.DEVNULL,
            )
            wall = time.perf_counter() - start
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
            times.append(wall)
            print(f"  run {attempt + 1}: {wall:.2f} s wall, {cpu:.2f} s processor")
        size = db.stat().st_size / 1e6
    median = statistics.median(times)
    verdict = "met" if median <= TARGET_S else "missed"
    print(
        f"median {median:.2f} s wall = {median / TARGET_S:.2f} x the {TARGET_S:g} s target"
        f" ({verdict}); load average {os.getloadavg()[0]:.2f}; database {size:.0f} MB"
    )


if __name__ == "__main__":
    main()
