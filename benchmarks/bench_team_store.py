"""A team store on PostgreSQL against a SQLite file at 100k runs, as whole processes.

    python benchmarks/bench_team_store.py [--runs 100000] [--repeat 3] [--url URL]

Prints, each against its SQLite twin (target: within 3x): bringing the runs in (the
demo written to a SQLite file, against `ppp-tui import demo.db --db URL` copying that
file into the store, `demo --db URL` writing it there, and the copy back, `import URL
--db copy.db`; the same runs as JSON Lines imported into a new SQLite file and into an
empty store), then `rank`, `regret`, `runs` and `leaderboard` on each (the median of
--repeat runs). The server is --url (a superuser's URL: the databases are made there
and dropped at the end), else a throwaway cluster started in a temporary folder with
the server binaries found (tests/pg_server.py), stopped and removed at the end.
Without psycopg or a server it says so and stops. The app's first screen and whole
load are timed by bench_team_app.py.

A quick check that it works: --runs 200 --repeat 1.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from _common import isolated_env, ppp_tui, scratch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))


def timed(args: list[str], env: dict[str, str], repeat: int = 1) -> float:
    """Median wall-clock seconds of running `args` as a process."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        subprocess.run(args, env=env, check=True, capture_output=True)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


@contextmanager
def server(url: str | None) -> Iterator[str | None]:
    """A superuser's URL of the server (`url`, or a throwaway cluster's); None when
    there is no server to use."""
    if importlib.util.find_spec("psycopg") is None:
        print("skipped: psycopg is not installed (pip install 'ppp-tui[postgres]')")
        yield None
        return
    import pg_server

    cluster = None
    if url is None:
        if pg_server.bindir() is None:
            print("skipped: no PostgreSQL server binaries (initdb, pg_ctl) and no --url")
            yield None
            return
        cluster = pg_server.start()
        url = cluster.url
    try:
        yield url
    finally:
        if cluster is not None:
            pg_server.stop(cluster.folder)


@contextmanager
def database(url: str | None, prefix: str) -> Iterator[str | None]:
    """The URL of a new, empty database on the server (`server`), dropped at the end;
    None when there is no server to use."""
    with server(url) as admin:
        if admin is None:
            yield None
            return
        import pg_server

        with pg_server.new_database(admin, prefix) as made:
            yield made


def parse_arguments(times: str, default: int, help: str) -> argparse.Namespace:
    """The team store benchmarks' arguments: --runs, how many times to time each
    (`times`, its `default` and `help`) and --url."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=100_000)
    parser.add_argument(times, type=int, default=default, help=help)
    parser.add_argument("--url", help="A PostgreSQL superuser's URL (else a throwaway server).")
    return parser.parse_args()


def main() -> None:
    args = parse_arguments("--repeat", 3, "Runs of each command to time.")
    with scratch("ppp-bench-team-") as folder, server(args.url) as admin:
        if admin is None:
            return
        import pg_server

        with (
            pg_server.new_database(admin, "ppp_bench") as store,
            pg_server.new_database(admin, "ppp_bench_demo") as demo_store,
            pg_server.new_database(admin, "ppp_bench_lines") as lines_store,
        ):
            rows = measure(args, folder, store, demo_store, lines_store)
    print(f"{args.runs:,} runs; seconds, SQLite file / PostgreSQL store (target: within 3x)")
    for label, sqlite, postgres in rows:
        ratio = postgres / sqlite
        mark = "ok" if ratio <= 3 else "over"
        print(f"  {label:<48} {sqlite:8.2f} {postgres:8.2f}  {ratio:5.2f}x  {mark}")


def measure(
    args: argparse.Namespace, folder: Path, store: str, demo_store: str, lines_store: str
) -> list[tuple[str, float, float]]:
    from ppp_tui.storage.demo import generate

    env = isolated_env(folder)
    cli = ppp_tui()
    demo, back, lines, lines_db = (
        folder / name for name in ("demo.db", "back.db", "runs.jsonl", "lines.db")
    )
    rows = []
    lite = timed([*cli, "demo", "--runs", str(args.runs), "--db", str(demo)], env)
    into = timed([*cli, "import", str(demo), "--db", store], env)
    rows.append(("runs in: demo (SQLite) / import into the store", lite, into))
    there = timed([*cli, "demo", "--runs", str(args.runs), "--db", demo_store], env)
    rows.append(("runs in: demo (SQLite) / demo --db URL", lite, there))
    out = timed([*cli, "import", store, "--db", str(back)], env)
    rows.append(("runs in: demo (SQLite) / import back to a file", lite, out))
    with lines.open("w", encoding="utf-8") as handle:
        for run in generate(args.runs, seed=0):
            handle.write(json.dumps(run) + "\n")
    on_file = timed([*cli, "import", str(lines), "--db", str(lines_db)], env)
    on_server = timed([*cli, "import", str(lines), "--db", lines_store], env)
    rows.append(("import runs.jsonl: a new file / an empty store", on_file, on_server))
    run_id = "demo-" + f"{max(1, args.runs // 2):06d}"
    commands = (["rank", run_id], ["regret", "--all-reviewers"], ["runs"])
    for command in (*commands, ["leaderboard", "--all-reviewers"]):
        on_file = timed([*cli, *command, "--db", str(demo)], env, args.repeat)
        on_server = timed([*cli, *command, "--db", store], env, args.repeat)
        rows.append((" ".join(command[:1]), on_file, on_server))
    return rows


if __name__ == "__main__":
    main()
