"""The terminal app at 100k runs: first-screen time and per-step slider latency.

    python benchmarks/bench_app.py [--db PATH] [--runs 100000] [--steps 60]

First screen (target: within 1.5x of a bare Textual app with a Header and a Footer),
measured two ways, both headless at 160x48:
- as a user waits for it: from starting the process (`python -c`, importing the
  CLI and the app) to the first screen painted, with its first page of runs;
- in process: from creating the app object to that first paint.
Step latency: from the slider's Changed message to the refreshed screen (the app
records it per step), over `--steps` presses of the right arrow with a run open,
agreement and mean regret recomputed over every marked run each time (target:
under 16 ms).
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from textual.app import App, ComposeResult
from textual.widgets import Footer, Header

from ppp_tui.app.app import PPPApp
from ppp_tui.app.slider import WeightSlider
from ppp_tui.storage.demo import write_demo

SIZE = (160, 48)


class Bare(App[None]):
    def __init__(self) -> None:
        super().__init__()
        self.created = time.perf_counter()
        self.first_screen_seconds: float | None = None

    def compose(self) -> ComposeResult:
        yield Header()
        yield Footer()

    def on_mount(self) -> None:
        self.call_after_refresh(self._painted)

    def _painted(self) -> None:
        self.first_screen_seconds = time.perf_counter() - self.created


async def first_screen(make: Callable[[], App[None]]) -> float:
    """In process: creating the app to its first screen painted."""
    gc.collect()  # the last run's 100k-run arrays are not this run's cost
    app = make()
    async with app.run_test(size=SIZE) as pilot:
        while getattr(app, "first_screen_seconds", None) is None:
            await asyncio.sleep(0.001)
        await pilot.pause()
        if isinstance(app, PPPApp):
            await app.load_done.wait()
    seconds: float = app.first_screen_seconds  # type: ignore[attr-defined]
    return seconds


# Whole process: each prints the wall-clock time of its first paint, then exits.
OURS = """
import sys, time
from pathlib import Path
import ppp_tui.cli
from ppp_tui.app.app import PPPApp
painted = PPPApp._first_screen_painted
def timed(self, workspace):
    painted(self, workspace)
    print(time.time(), flush=True)
    self.exit()
PPPApp._first_screen_painted = timed
PPPApp(Path(sys.argv[1]), Path(sys.argv[2])).run(headless=True, size=(160, 48))
"""
BARE = """
import time
from textual.app import App
from textual.widgets import Footer, Header
class Bare(App):
    def compose(self):
        yield Header()
        yield Footer()
    def on_mount(self):
        self.call_after_refresh(self.painted)
    def painted(self):
        print(time.time(), flush=True)
        self.exit()
Bare().run(headless=True, size=(160, 48))
"""


def process_first_screen(code: str, *args: str) -> float:
    start = time.time()
    done = subprocess.run(
        [sys.executable, "-c", code, *args], capture_output=True, text=True, check=True
    )
    return float(done.stdout.split()[0]) - start


async def loaded_and_steps(db: Path, config: Path, steps: int) -> tuple[float, list[float], int]:
    start = time.perf_counter()
    app = PPPApp(db, config)
    async with app.run_test(size=SIZE) as pilot:
        await app.load_done.wait()
        await pilot.pause()
        loaded = time.perf_counter() - start
        await pilot.press("enter")
        await pilot.pause()
        app.screen.query_one(WeightSlider).focus()
        await pilot.pause()
        app.step_latencies.clear()
        for i in range(steps):
            await pilot.press("left" if (i // 20) % 2 else "right")
            await pilot.pause()
        assert app.workspace is not None
        marked = app.workspace.figures().marked_runs
        return loaded, list(app.step_latencies), marked


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--db", type=Path)
    parser.add_argument("--runs", type=int, default=100_000)
    parser.add_argument("--steps", type=int, default=60)
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="ppp-bench-app-"))
    db = args.db or folder / "demo.db"
    if not db.exists():
        start = time.perf_counter()
        write_demo(db, args.runs, seed=0)
        print(f"demo database: {args.runs} runs in {time.perf_counter() - start:.1f} s")
    config = folder / "config.toml"

    bare = [process_first_screen(BARE) for _ in range(5)]
    ours = [process_first_screen(OURS, str(db), str(config)) for _ in range(5)]
    b, o = statistics.median(bare), statistics.median(ours)
    print(
        f"first screen, process start to first paint: ppp-tui {o * 1000:.0f} ms, bare Textual"
        f" app {b * 1000:.0f} ms; ratio {o / b:.2f}x (target <= 1.5x)"
    )
    bare = [asyncio.run(first_screen(Bare)) for _ in range(5)]
    ours = [asyncio.run(first_screen(lambda: PPPApp(db, config))) for _ in range(5)]
    b, o = statistics.median(bare), statistics.median(ours)
    print(
        f"first screen, app created to first paint: ppp-tui {o * 1000:.0f} ms, bare"
        f" {b * 1000:.0f} ms; ratio {o / b:.2f}x"
    )
    loaded, latencies, marked = asyncio.run(loaded_and_steps(db, config, args.steps))
    latencies.sort()
    p95 = latencies[int(0.95 * (len(latencies) - 1))]
    print(f"all runs listed and arrays loaded: {loaded:.2f} s (in a worker; the screen is live)")
    print(
        f"slider step ({len(latencies)} steps, {marked:,} marked runs):"
        f" median {statistics.median(latencies) * 1000:.1f} ms, p95 {p95 * 1000:.1f} ms,"
        f" max {latencies[-1] * 1000:.1f} ms (target < 16 ms)"
    )


if __name__ == "__main__":
    main()
