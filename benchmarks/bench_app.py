"""The terminal app at 100k runs: first-screen time and per-step slider latency.

    python benchmarks/bench_app.py [--db PATH] [--runs 100000] [--steps 60] [--pairs 7]

First screen (target: within 1.3x of a bare Textual app with a Header and a Footer),
headless at 160x48, two moments of it for both apps:
- first frame: the first frame written to the terminal with the screen on it (for
  ppp-tui, the runs screen with its first page of runs). This is when the screen is up,
  and the target applies to it.
- settled: the app's `call_after_refresh` from mounting, once the messages queued by
  then are handled, which includes the footer's keys (one for the bare app, eleven for
  ppp-tui). ppp-tui's stage menu is not in either: it comes with the whole load.
Where ppp-tui's extra time to its first frame went when last measured (about 1.4-1.5x,
2-core machine): click and the command line about 28 ms, ppp-tui's own modules about
50 ms (no one of them above 6 ms: the store, the app, the run model, the settings, the
scoring), reading and scoring the first page 8 ms; numpy, scipy, plotext and the other
commands' modules load after the first frame (tests/test_layers.py). Textual itself
loads about 15 ms sooner than in the bare app, collections held off while it does.
Each is timed from starting the process (`python -c`: ppp-tui through `ppp-tui browse`'s
own start, the command line and then the app, as a user waits for it; interleaved, 7
pairs) and in process from creating the app object.
Step latency: from the slider's Changed message to the refreshed screen (the app
records it per step), over `--steps` presses of the right arrow with a run open,
agreement and mean regret recomputed over every marked run each time. Then as many
steps off the pair form: the proactivity and personalization keys in turn (the three
sliders walk, the run re-ranks under three weights, and the figures come from the
three-weight arrays), and as many clicks on the flip map. Each kind is reported in
three parts: the compute alone (the open run re-ranked, agreement and mean regret:
the target, p95 <= 16 ms, applies to it), the app's whole handler (the compute and
every widget's update, no paint), and the whole step to the refreshed screen, which
adds the paint and the wait for Textual's frame clock. Every wait on the app has a
limit: a load that fails or crashes the app ends the benchmark with one line saying
so rather than waiting forever.

The demo database of --runs runs and the app's config.toml are made in a temporary
folder that is removed at the end; a database named with --db is used (made there first
if it is missing) and kept. A quick check that it works: --runs 300 --steps 3 --pairs 1.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from _common import scratch
from textual.app import App, ComposeResult
from textual.widgets import Footer, Header

from ppp_tui.app.app import PPPApp
from ppp_tui.app.screens import run as run_screen
from ppp_tui.app.widgets.flip_map import FlipMap
from ppp_tui.app.widgets.slider import WeightSlider
from ppp_tui.app.workspace import Workspace
from ppp_tui.storage.demo import write_demo

SIZE = (160, 48)
PAIRS = 7


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


def shown(app: App[None], screen: object) -> bool:
    """Is `screen` the one whose first frame counts (ppp-tui: the runs, listed)?"""
    if not isinstance(app, PPPApp):
        return True
    from ppp_tui.app.screens.runs import RunsScreen

    return isinstance(screen, RunsScreen) and screen.table.display


FIRST_FRAMES: dict[int, float] = {}  # id(app): perf_counter of its first frame
_display = App._display


def _timed_display(self: App[None], screen: object, update: object) -> None:
    _display(self, screen, update)  # type: ignore[arg-type]
    if update is not None and id(self) not in FIRST_FRAMES and shown(self, screen):
        FIRST_FRAMES[id(self)] = time.perf_counter()


App._display = _timed_display  # type: ignore[method-assign, assignment]


async def first_screen(make: Callable[[], App[None]]) -> tuple[float, float]:
    """In process: creating the app to its first frame, and to settled."""
    gc.collect()  # the last run's 100k-run arrays are not this run's cost
    start = time.perf_counter()
    app = make()
    async with app.run_test(size=SIZE) as pilot:
        deadline = time.perf_counter() + 60
        while getattr(app, "first_screen_seconds", None) is None:
            if not app.is_running or time.perf_counter() > deadline:
                raise SystemExit("bench_app: the app never painted its first screen")
            await asyncio.sleep(0.001)
        await pilot.pause()
        if isinstance(app, PPPApp):
            await wait_for_load(app)
    settled: float = app.first_screen_seconds  # type: ignore[attr-defined]
    return FIRST_FRAMES.pop(id(app)) - start, settled


# Whole process: each prints the wall-clock times of its first frame and of settling,
# then exits.
HOOK = """
import time
from textual.app import App
_display = App._display
def display(self, screen, update):
    _display(self, screen, update)
    if update is not None and not hasattr(self, "first_frame") and SHOWN:
        self.first_frame = time.time()
        print(self.first_frame, flush=True)
App._display = display
"""
# ppp-tui as `ppp-tui browse --db DB --config CONFIG` starts it (the command line, then
# the app), headless. The timing hooks go in as textual.app and the app's module are
# first imported, where `ppp-tui browse` imports them: not before the command line runs.
OURS = """
import importlib.machinery
import sys
import time

def display_hook(textual_app):
    App = textual_app.App
    _display = App._display
    def display(self, screen, update):
        _display(self, screen, update)
        shown = type(screen).__name__ == "RunsScreen" and screen.table.display
        if update is not None and not hasattr(self, "first_frame") and shown:
            self.first_frame = time.time()
            print(self.first_frame, flush=True)
    App._display = display

def app_hook(app_module):
    PPPApp = app_module.PPPApp
    painted = PPPApp._first_screen_painted
    def timed(self, workspace):
        painted(self, workspace)
        print(time.time(), flush=True)
        self.exit()
    PPPApp._first_screen_painted = timed
    run = PPPApp.run
    PPPApp.run = lambda self, **options: run(self, headless=True, size=(160, 48))

HOOKS = {"textual.app": display_hook, "ppp_tui.app.app": app_hook}

class AfterImport:
    def find_spec(self, name, path, target=None):
        if name not in HOOKS:
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        execute = spec.loader.exec_module
        def exec_module(module):
            execute(module)
            HOOKS.pop(name)(module)
        spec.loader.exec_module = exec_module
        return spec

sys.meta_path.insert(0, AfterImport())
from ppp_tui.cli import main
sys.argv[1:] = ["browse", "--db", sys.argv[1], "--config", sys.argv[2]]
main()
"""
BARE = (
    HOOK.replace("SHOWN", "True")
    + """
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
)


def process_first_screen(code: str, *args: str) -> tuple[float, float]:
    """Starting the process to its first frame, and to settled."""
    start = time.time()
    done = subprocess.run(
        [sys.executable, "-c", code, *args], capture_output=True, text=True, check=True
    )
    frame, settled = (float(t) - start for t in done.stdout.split()[:2])
    return frame, settled


def report(what: str, bare: list[tuple[float, float]], ours: list[tuple[float, float]]) -> None:
    for k, moment in enumerate(("first frame", "settled")):
        b = statistics.median(t[k] for t in bare)
        o = statistics.median(t[k] for t in ours)
        target = " (target <= 1.3x)" if k == 0 and what == "from process start" else ""
        print(
            f"{what}, {moment}: ppp-tui {o * 1000:.0f} ms, bare Textual app {b * 1000:.0f} ms;"
            f" ratio {o / b:.2f}x{target}"
        )


class Timed:
    """Wraps a method so each call's duration is recorded in `times`."""

    def __init__(self, owner: object, name: str) -> None:
        self.times: list[float] = []
        original: Callable[..., object] = getattr(owner, name)

        def timed(*args: object, **kwargs: object) -> object:
            start = time.perf_counter()
            try:
                return original(*args, **kwargs)
            finally:
                self.times.append(time.perf_counter() - start)

        setattr(owner, name, timed)
        self._undo = (owner, name, original)

    def undo(self) -> None:
        setattr(*self._undo)

    def take(self) -> list[float]:
        taken, self.times = self.times, []
        return taken


STEP_PARTS = ("compute", "handler")


async def loaded_and_steps(
    db: Path, config: Path, steps: int
) -> tuple[float, int, dict[str, dict[str, list[float]]]]:
    """The load, then each kind of step's times: the compute alone (the open run
    re-ranked, agreement and mean regret over the marked runs), the app's whole handler
    (the compute and every widget's update, before any paint), and the whole step to
    the refreshed screen (`total`)."""
    start = time.perf_counter()
    app = PPPApp(db, config)
    compute = Timed(Workspace, "set_weights"), Timed(run_screen, "rank_run")
    handler = Timed(PPPApp, "change_weights")
    kinds: dict[str, dict[str, list[float]]] = {}

    def collect(kind: str) -> None:
        figures, ranking = (t.take() for t in compute)
        # Each step re-ranks the run once and computes the figures once (cached after).
        kinds[kind] = {
            "compute": [a + b for a, b in zip(figures, ranking, strict=False)],
            "handler": handler.take(),
            "total": list(app.step_latencies),
        }
        app.step_latencies.clear()

    try:
        return await _steps(app, start, steps, compute, handler, collect, kinds)
    finally:
        for timed in (*compute, handler):
            timed.undo()


async def _steps(
    app: PPPApp,
    start: float,
    steps: int,
    compute: tuple[Timed, Timed],
    handler: Timed,
    collect: Callable[[str], None],
    kinds: dict[str, dict[str, list[float]]],
) -> tuple[float, int, dict[str, dict[str, list[float]]]]:
    async with app.run_test(size=SIZE) as pilot:
        await wait_for_load(app)
        await pilot.pause()
        loaded = time.perf_counter() - start
        await pilot.press("enter")
        await pilot.pause()
        app.screen.query_one(WeightSlider).focus()
        await pilot.pause()
        app.step_latencies.clear()
        for timed in (*compute, handler):
            timed.take()
        for i in range(steps):
            await pilot.press("left" if (i // 20) % 2 else "right")
            await pilot.pause()
        assert app.workspace is not None
        marked = app.workspace.figures().marked_runs
        collect("slider step")
        keys = ("right_parenthesis", "less_than_sign", "left_parenthesis", "greater_than_sign")
        for i in range(steps):
            await pilot.press(keys[(i // 10) % len(keys)])
            await pilot.pause()
        collect("three-weight step")
        await pilot.press("m")
        await pilot.pause()
        flip_map = app.screen.query_one(FlipMap)
        width, height = flip_map.size.width, flip_map.size.height
        for timed in (*compute, handler):
            timed.take()  # opening the map re-ranks nothing, but to be sure
        app.step_latencies.clear()
        for i in range(steps):
            await pilot.click(flip_map, offset=(i * 7 % width, i % height))
            await pilot.pause()
        collect("flip map click")
        return loaded, marked, kinds


async def wait_for_load(app: PPPApp, limit: float = 300.0) -> None:
    """The whole load, or a clear error: a load that failed or crashed the app never
    sets `load_done`, and a bare wait on it would hang the benchmark."""
    deadline = time.perf_counter() + limit
    while not app.load_done.is_set():
        if app.return_code is not None or not app.is_running:
            raise SystemExit(f"bench_app: the app stopped while loading {app.db_path}")
        if time.perf_counter() > deadline:
            raise SystemExit(f"bench_app: {app.db_path} not loaded in {limit:g} s")
        await asyncio.sleep(0.01)
    if app.workspace is None:
        raise SystemExit(f"bench_app: {app.db_path} could not be loaded")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--db", type=Path, help="Use this database (made if missing) and keep it.")
    parser.add_argument("--runs", type=int, default=100_000)
    parser.add_argument("--steps", type=int, default=60)
    parser.add_argument("--pairs", type=int, default=PAIRS, help="First screens to time, each way.")
    args = parser.parse_args()
    with scratch("ppp-bench-app-") as folder:
        measure(args, args.db or folder / "demo.db", folder / "config.toml")


def measure(args: argparse.Namespace, db: Path, config: Path) -> None:
    if not db.exists():
        start = time.perf_counter()
        write_demo(db, args.runs, seed=0)
        print(f"demo database: {args.runs} runs in {time.perf_counter() - start:.1f} s")

    process_first_screen(OURS, str(db), str(config))  # the database file into the page cache
    bare, ours = [], []
    for _ in range(args.pairs):  # in turns, so a slower moment of the machine hits both
        bare.append(process_first_screen(BARE))
        ours.append(process_first_screen(OURS, str(db), str(config)))
    report("from process start", bare, ours)
    asyncio.run(first_screen(lambda: PPPApp(db, config)))  # widget modules imported once
    bare, ours = [], []
    for _ in range(args.pairs):
        bare.append(asyncio.run(first_screen(Bare)))
        ours.append(asyncio.run(first_screen(lambda: PPPApp(db, config))))
    report("from creating the app", bare, ours)
    loaded, marked, kinds = asyncio.run(loaded_and_steps(db, config, args.steps))
    print(f"all runs listed and arrays loaded: {loaded:.2f} s (in a worker; the screen is live)")
    parts = {
        "compute": "re-rank + agreement + mean regret (target p95 <= 16 ms)",
        "handler": "compute + widget updates, before the paint",
        "total": "to the refreshed screen, paint included",
    }
    for what, times in kinds.items():
        print(f"{what} ({len(times['total'])} steps, {marked:,} marked runs):")
        for part, label in parts.items():
            values = sorted(times[part])
            if not values:
                print(f"  {part:<8} no steps recorded")
                continue
            p95 = values[int(0.95 * (len(values) - 1))]
            print(
                f"  {part:<8} median {statistics.median(values) * 1000:5.1f} ms,"
                f" p95 {p95 * 1000:5.1f} ms, max {values[-1] * 1000:5.1f} ms  {label}"
            )


if __name__ == "__main__":
    main()
