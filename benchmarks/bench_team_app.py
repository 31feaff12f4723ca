"""The app's first screen and whole load on a PostgreSQL team store, against a SQLite file.

    python benchmarks/bench_team_app.py [--runs 100000] [--pairs 5] [--url URL]

The demo's --runs runs are written to a SQLite file and brought into a new database on
the server (--url, a superuser's URL: the database is made there and dropped at the
end; else a throwaway cluster started in a temporary folder, as bench_team_store.py
does). Then, in turns so a slower moment of the machine hits both:
- from process start, `ppp-tui browse --db FILE|URL` as a user starts it (headless,
  160x48) to its first frame with the runs listed, and to the moment the whole load
  starts (settled);
- in process, creating the app to every run listed and the arrays loaded, the moment
  the sliders and figures cover the whole database.
Each is the median of --pairs, with the ratio of the store to the file (target: within
3x).

A quick check that it works: --runs 300 --pairs 1.
"""

from __future__ import annotations

import asyncio
import statistics
import subprocess
import time
from pathlib import Path

from _common import isolated_env, ppp_tui, scratch
from bench_app import OURS, SIZE, process_first_screen, wait_for_load
from bench_team_store import database, parse_arguments

from ppp_tui.app.app import PPPApp
from ppp_tui.storage.demo import write_demo
from ppp_tui.storage.location import ServerURL, parse_server_url

TARGET_RATIO = 3.0


async def whole_load(db: Path | ServerURL, config: Path) -> float:
    """Seconds from creating the app to every run listed and the arrays loaded."""
    start = time.perf_counter()
    app = PPPApp(db, config)
    async with app.run_test(size=SIZE):
        await wait_for_load(app)
    return time.perf_counter() - start


def main() -> None:
    args = parse_arguments("--pairs", 5, "Times to time each, in turns.")
    with scratch("ppp-bench-team-app-") as folder, database(args.url, "ppp_bench_app") as server:
        if server is None:
            return
        env = isolated_env(folder)
        demo, config = folder / "demo.db", folder / "config.toml"
        start = time.perf_counter()
        write_demo(demo, args.runs, seed=0)
        print(f"demo database: {args.runs:,} runs in {time.perf_counter() - start:.1f} s")
        start = time.perf_counter()
        subprocess.run(
            [*ppp_tui(), "import", str(demo), "--db", server],
            env=env,
            check=True,
            capture_output=True,
        )
        print(f"brought into the store in {time.perf_counter() - start:.1f} s")
        places: dict[str, tuple[str, Path | ServerURL]] = {
            "file": (str(demo), demo),
            "store": (server, parse_server_url(server)),
        }
        for given, _ in places.values():  # each into its cache once, untimed
            process_first_screen(OURS, given, str(config))
        times: dict[str, dict[str, list[float]]] = {
            where: {"first frame": [], "settled": [], "whole load": []} for where in places
        }
        for _ in range(args.pairs):
            for where, (given, opened) in places.items():
                frame, settled = process_first_screen(OURS, given, str(config))
                times[where]["first frame"].append(frame)
                times[where]["settled"].append(settled)
                times[where]["whole load"].append(asyncio.run(whole_load(opened, config)))
    print(f"{args.runs:,} runs; median of {args.pairs}, SQLite file / PostgreSQL store")
    for moment in ("first frame", "settled", "whole load"):
        on_file = statistics.median(times["file"][moment])
        on_store = statistics.median(times["store"][moment])
        ratio = on_store / on_file
        mark = "ok" if ratio <= TARGET_RATIO else "over"
        print(
            f"  {moment:<12} {on_file * 1000:8.0f} ms {on_store * 1000:8.0f} ms"
            f"  {ratio:5.2f}x  {mark} (target <= {TARGET_RATIO:g}x)"
        )


if __name__ == "__main__":
    main()
