"""Following sessions as they are written (`ppp-tui import --watch`).

    python benchmarks/bench_watch.py [--appends 200] [--idle 60] [--mb 100] [--grow 60]

Prints three figures, each from `ppp-tui import --watch` run as a process:

- the delay from a line appended to a Claude Code session to its run updated in the
  database (the watcher's line saying so), median and p95 over `--appends` appends,
  one every 0.2 s;
- the processor time the watcher takes while nothing changes, over `--idle` seconds
  (the target: under 2% of one core);
- following a session of `--mb` megabytes (written as bench_sessions.py writes Claude
  Code's) that grows by one line a second for `--grow` seconds: the processor share the
  watcher takes, and the delays of those lines.

Processor times are read from /proc (Linux). Everything is written to a temporary folder
that is removed at the end. A quick check that it works: --appends 20 --idle 5 --mb 2
--grow 5.
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import signal
import statistics
import subprocess
import threading
import time
from pathlib import Path
from typing import IO

from _common import isolated_env, ppp_tui, scratch
from bench_sessions import write

from ppp_tui.core.sessions.model import Tool

SESSION = "b7c1d2e3-4f50-4a6b-8c7d-9e0f1a2b3c4d"  # bench_sessions' Claude Code session
TICK = os.sysconf("SC_CLK_TCK")


class Watch:
    """`ppp-tui import --watch FOLDER` and the lines it prints."""

    def __init__(self, folder: Path, env: dict[str, str]) -> None:
        self.process = subprocess.Popen(
            [*ppp_tui(), "import", "--watch", str(folder)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        self.lines: queue.Queue[tuple[float, str]] = queue.Queue()
        self.ready = threading.Event()
        assert self.process.stdout is not None and self.process.stderr is not None
        threading.Thread(target=self._pump, args=(self.process.stdout,), daemon=True).start()
        threading.Thread(target=self._errors, args=(self.process.stderr,), daemon=True).start()
        if not self.ready.wait(600):
            raise SystemExit("the watcher did not start")
        self.drain()

    def _pump(self, stream: IO[str]) -> None:
        for line in stream:
            self.lines.put((time.perf_counter(), line))

    def _errors(self, stream: IO[str]) -> None:
        for line in stream:
            if "for changes" in line:
                self.ready.set()
            elif line.startswith("error"):
                print("  watcher:", line.rstrip())

    def drain(self) -> None:
        while True:
            try:
                self.lines.get(timeout=0.5)
            except queue.Empty:
                return

    def updates(self, until: float, quiet: float = 60.0) -> list[float]:
        """When the watcher said a run was written, from now until `until` (or until it
        has said nothing for `quiet` seconds)."""
        times = []
        while (left := until - time.perf_counter()) > 0:
            try:
                at, line = self.lines.get(timeout=min(left, quiet))
            except queue.Empty:
                break
            if " updated " in line or " new " in line:
                times.append(at)
        return times

    def cpu(self) -> float:
        """The processor seconds the watcher has taken so far."""
        fields = Path(f"/proc/{self.process.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / TICK

    def stop(self) -> None:
        self.process.send_signal(signal.SIGTERM)
        self.process.wait(timeout=60)


def _line(k: int) -> str:
    """One more answer of the agent, as Claude Code writes it."""
    return json.dumps(
        {
            "sessionId": SESSION,
            "cwd": "/home/dev/shop-api",
            "type": "assistant",
            "uuid": f"live-{k}",
            "timestamp": "2026-03-02T12:00:00.000Z",
            "message": {
                "id": f"msg_live_{k}",
                "role": "assistant",
                "model": "claude-opus-4-5",
                "content": [{"type": "text", "text": f"Step {k} done."}],
            },
        }
    )


def _delays(watch: Watch, path: Path, count: int, every: float) -> list[float]:
    """The delay of each of `count` lines appended `every` seconds apart: from its write
    to the first run written after it (a batch may take several lines at once)."""
    written: list[float] = []
    updated: list[float] = []
    for k in range(count):
        written.append(time.perf_counter())
        with path.open("a", encoding="utf-8") as handle:
            handle.write(_line(k) + "\n")
        updated += watch.updates(written[-1] + every)
    updated += watch.updates(time.perf_counter() + 120, quiet=5)  # the last ones written
    delays = []
    for at in written:
        later = [u for u in updated if u > at]
        if not later:
            raise SystemExit("a line appended was never written to the database")
        delays.append(later[0] - at)
    return delays


def _ms(values: list[float]) -> str:
    ordered = sorted(values)
    p95 = ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))]
    return f"median {statistics.median(ordered) * 1000:.0f} ms, p95 {p95 * 1000:.0f} ms"


def latency_and_idle(folder: Path, appends: int, idle: float) -> None:
    sessions = folder / "projects" / "-home-dev-shop-api"
    sessions.mkdir(parents=True)
    path = sessions / f"{SESSION}.jsonl"
    write(Tool.CLAUDE_CODE, path, 0.05)
    watch = Watch(folder / "projects", isolated_env(folder))
    try:
        delays = _delays(watch, path, appends, 0.2)
        print(f"line appended to run updated, {appends} appends: {_ms(delays)}")
        before, start = watch.cpu(), time.perf_counter()
        time.sleep(idle)
        used, wall = watch.cpu() - before, time.perf_counter() - start
        print(
            f"idle watcher over {wall:.0f} s: {used:.2f} processor seconds"
            f" ({100 * used / wall:.2f}% of one core; target under 2%)"
        )
    finally:
        watch.stop()


def large(folder: Path, megabytes: float, seconds: int) -> None:
    sessions = folder / "large" / "-home-dev-shop-api"
    sessions.mkdir(parents=True)
    path = sessions / f"{SESSION}.jsonl"
    size = write(Tool.CLAUDE_CODE, path, megabytes)
    env = isolated_env(folder)
    env["PPP_TUI_DB"] = str(folder / "large.db")
    started = time.perf_counter()
    watch = Watch(folder / "large", env)
    took = time.perf_counter() - started
    print(f"{size / (1 << 20):.0f} MB session: imported and watched in {took:.1f} s")
    try:
        before, start = watch.cpu(), time.perf_counter()
        delays = _delays(watch, path, seconds, 1.0)
        used, wall = watch.cpu() - before, time.perf_counter() - start
        print(
            f"  growing by a line a second for {wall:.0f} s: {used:.2f} processor seconds"
            f" ({100 * used / wall:.1f}% of one core); each line: {_ms(delays)}"
        )
    finally:
        watch.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--appends", type=int, default=200)
    parser.add_argument("--idle", type=float, default=60.0)
    parser.add_argument("--mb", type=float, default=100.0)
    parser.add_argument("--grow", type=int, default=60)
    args = parser.parse_args()
    with scratch("ppp-bench-watch-") as folder:
        latency_and_idle(folder, args.appends, args.idle)
        large(folder, args.mb, args.grow)


if __name__ == "__main__":
    main()
