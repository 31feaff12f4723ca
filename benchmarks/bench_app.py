"""The terminal app at 100k runs: first-screen time and per-step slider latency.

    python benchmarks/bench_app.py [--db PATH] [--runs 100000] [--steps 60]

First screen: from creating the app to its first screen mounted (headless), for
ppp-tui and for a bare Textual app with a Header and a Footer (target: within
1.5x). Step latency: from the slider's Changed message to the refreshed screen
(the app records it per step), over `--steps` presses of the right arrow with a
run open, agreement and mean regret recomputed over every marked run each time
(target: under 16 ms).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from pathlib import Path

from textual.app import App, ComposeResult
from textual.widgets import Footer, Header

from ppp_tui.app.app import PPPApp
from ppp_tui.app.slider import WeightSlider
from ppp_tui.storage.demo import write_demo

SIZE = (160, 48)


class Bare(App[None]):
    def compose(self) -> ComposeResult:
        yield Header()
        yield Footer()


async def first_screen(make: type[App[None]] | None, db: Path, config: Path) -> float:
    start = time.perf_counter()
    app: App[None] = PPPApp(db, config) if make is None else make()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        elapsed = time.perf_counter() - start
    return elapsed


async def loaded_and_steps(db: Path, config: Path, steps: int) -> tuple[float, list[float], int]:
    start = time.perf_counter()
    app = PPPApp(db, config)
    async with app.run_test(size=SIZE) as pilot:
        await app.workers.wait_for_complete()
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

    bare = [asyncio.run(first_screen(Bare, db, config)) for _ in range(5)]
    ours = [asyncio.run(first_screen(None, db, config)) for _ in range(5)]
    b, o = statistics.median(bare), statistics.median(ours)
    print(
        f"first screen: ppp-tui {o * 1000:.0f} ms, bare Textual app {b * 1000:.0f} ms;"
        f" ratio {o / b:.2f}x (target <= 1.5x)"
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
