"""The runs list's search at 100k runs, keystroke by keystroke.

    python benchmarks/bench_search.py [--db PATH|URL] [--runs 100000] [--repeat 5]

Makes a demo database of --runs runs (`ppp-tui demo`, which builds the full-text index)
in a temporary folder, or uses the one --db names (made there first if it is missing,
and kept), copies it, and prints:

- building the full-text index on a database that has none (what the first search of a
  database made by an older ppp-tui does), an import of 1000 runs (which adds them to the
  index as it goes), and bringing the index up to date after it (nothing left to do);
- queries typed letter by letter ("the", "SPEC-", "migration", "pytest", a run id, a
  word that matches nothing): for each keystroke, the median of --repeat timings of
  `Store.search_first`, the first screenful the app shows (target: p95 <= 50 ms), and of
  `Store.search`, every match in order: what the app waited for before it showed
  anything (the figure before the first screenful came first), and what it now finds in
  the background, stopped when the next key comes. Then p50 and p95 over each sequence's
  keystrokes and over all of them;
- a few queries against the substring filter the runs screen applied before full-text
  search (id, spec id and task of the loaded rows, in memory).

With --db a team store's postgresql:// URL, the same keystrokes and queries are timed
on the store (PostgreSQL's full-text index, search_server.py); a store without runs is
first filled with a demo of --runs runs (`ppp-tui import demo.db --db URL`, timed). There
is no index to build there: the server keeps it as runs are written.

Everything but --db is written to the temporary folder, which is removed at the end. The
machine's load average is printed: other processes slow the figures down. A quick check
that it works: --runs 300.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import time
from pathlib import Path

from _common import isolated_env, ppp_tui, scratch

from ppp_tui.storage import search
from ppp_tui.storage.demo import generate
from ppp_tui.storage.files import read_records
from ppp_tui.storage.location import is_server_url, parse_server_url
from ppp_tui.storage.store import RunInfo, Store

QUERIES = ("webhook", "crash upload", "SPEC-KIT-01", "the", "zzz")
# Typed letter by letter; None: a run id of the demo (the middle one by id).
SEQUENCES: tuple[str | None, ...] = ("the", "SPEC-", "migration", "pytest", None, "xylophone")
TARGET_MS = 50.0


def substring(infos: list[RunInfo], text: str) -> list[str]:
    """The runs screen's search before full-text search (a copy of its filter)."""
    query = text.strip().lower()
    return [
        i.id
        for i in infos
        if query in i.id.lower()
        or query in (i.spec_id or "").lower()
        or query in (i.task or "").lower()
    ]


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[round(share * (len(ordered) - 1))]


def median_ms(call: object, repeat: int = 3) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        call()  # type: ignore[operator]
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000


def index(db: Path) -> None:
    """Bring the full-text index up to date (not an `assert`: `python -O` would skip it)."""
    if not search.update_index(db, 5.0):
        raise SystemExit(f"bench_search: the index of {db} was not brought up to date")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument(
        "--db",
        help="Use this SQLite file (made if missing) and keep it, or this team store's URL.",
    )
    parser.add_argument("--runs", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=5, help="Timings of each keystroke.")
    args = parser.parse_args()
    if args.db and is_server_url(args.db):
        team_store(args.db, args.runs, args.repeat)
        return
    with scratch("ppp-bench-search-") as folder:
        db = Path(args.db) if args.db else folder / "demo.db"
        if not db.exists():
            start = time.perf_counter()
            subprocess.run(
                [*ppp_tui(), "demo", "--runs", str(args.runs), "--db", str(db)],
                env=isolated_env(folder),
                check=True,
                stdout=subprocess.DEVNULL,
            )
            print(f"demo of {args.runs:,} runs made in {time.perf_counter() - start:.1f} s")
        copy = folder / "runs.db"
        shutil.copyfile(db, copy)
        with Store.open(copy) as store:
            runs = store.count()
            for table in ("runs", "agents", "trajectory_questions"):
                store.conn.execute(f'DROP TABLE IF EXISTS "{table}_fts"')
            start = time.perf_counter()
            index(copy)
            print(f"index built over {runs:,} runs in {time.perf_counter() - start:.2f} s")

            lines = folder / "more.jsonl"
            with lines.open("w", encoding="utf-8") as out:
                for run in generate(1000, seed=99):
                    run["id"] = f"more-{run['id']}"
                    out.write(json.dumps(run) + "\n")
            start = time.perf_counter()
            store.import_records(read_records(str(lines)))  # adds its runs to the index
            imported = time.perf_counter() - start
            start = time.perf_counter()
            index(copy)
            print(
                f"import of 1,000 more runs, the index kept current, in {imported:.2f} s;"
                f" index caught up after it in {time.perf_counter() - start:.2f} s"
            )
            start = time.perf_counter()
            if not search.is_current(store.conn):
                raise SystemExit("bench_search: the index is not current after its update")
            print(f"index checked current in {(time.perf_counter() - start) * 1000:.1f} ms")
            searches(store, args.repeat)
        print(f"load average {os.getloadavg()[0]:.2f} (1 min), {os.cpu_count()} cores")


def searches(store: Store, repeat: int) -> None:
    """The keystrokes, then the queries against the substring filter."""
    infos = store.run_infos()
    typed_letter_by_letter(store, infos, repeat)
    print(f"{'query as typed':<22} {'matches':>8} {'fts ms':>8} {'substr':>8} {'ms':>8}")
    for query in QUERIES:
        for end in sorted({min(3, len(query)), len(query)}):
            typed = query[:end]
            found = store.search(typed)
            fts = median_ms(lambda typed=typed: store.search(typed))
            old = median_ms(lambda typed=typed: substring(infos, typed))
            print(
                f"{typed!r:<22} {len(found):>8,} {fts:>8.1f}"
                f" {len(substring(infos, typed)):>8,} {old:>8.1f}"
            )


def team_store(url: str, runs: int, repeat: int) -> None:
    """The searches on a team store, filled with a demo first if it has no runs."""
    from ppp_tui.storage.store_server import ServerStore

    server = parse_server_url(url)
    with scratch("ppp-bench-search-") as folder:
        with ServerStore.connect(server, create=True) as store:
            empty = store.count() == 0
        if empty:
            env = isolated_env(folder)
            demo = folder / "demo.db"
            subprocess.run(
                [*ppp_tui(), "demo", "--runs", str(runs), "--db", str(demo)],
                env=env,
                check=True,
                stdout=subprocess.DEVNULL,
            )
            start = time.perf_counter()
            subprocess.run(
                [*ppp_tui(), "import", str(demo), "--db", url],
                env=env,
                check=True,
                stdout=subprocess.DEVNULL,
            )
            took = time.perf_counter() - start
            print(f"demo of {runs:,} runs imported into the store in {took:.1f} s")
        with ServerStore.connect(server) as store:
            print(f"{server}: {store.count():,} runs")
            searches(store, repeat)
    print(f"load average {os.getloadavg()[0]:.2f} (1 min), {os.cpu_count()} cores")


def typed_letter_by_letter(store: Store, infos: list[RunInfo], repeat: int) -> None:
    """Each sequence typed a letter at a time: per keystroke, the first screenful and
    every match (medians of `repeat` timings), then p50 and p95 of each."""
    demo = sorted(i.id for i in infos if not i.id.startswith("more-"))  # not the 1000 added
    middle = demo[len(demo) // 2] if demo else "run"
    firsts: list[float] = []
    wholes: list[float] = []
    print(
        f"per keystroke, median of {repeat}: the first screenful shown (target <= {TARGET_MS:g}"
        " ms) and every match (what the app waited for before)"
    )
    print(f"  {'typed':<14} {'matches':>8} {'first ms':>9} {'all ms':>8}")
    for sequence in SEQUENCES:
        word = middle if sequence is None else sequence
        first_ms, whole_ms = [], []
        for end in range(1, len(word) + 1):
            typed = word[:end]
            found = store.search(typed)
            first_ms.append(median_ms(lambda typed=typed: store.search_first(typed), repeat))
            whole_ms.append(median_ms(lambda typed=typed: store.search(typed), repeat))
            print(f"  {typed!r:<14} {len(found):>8,} {first_ms[-1]:>9.1f} {whole_ms[-1]:>8.1f}")
        print(
            f"  {word!r}: first screenful p50 {statistics.median(first_ms):.1f} ms,"
            f" p95 {percentile(first_ms, 0.95):.1f} ms; every match p50"
            f" {statistics.median(whole_ms):.1f} ms, p95 {percentile(whole_ms, 0.95):.1f} ms"
        )
        firsts += first_ms
        wholes += whole_ms
    p95 = percentile(firsts, 0.95)
    verdict = "met" if p95 <= TARGET_MS else "missed"
    print(
        f"all {len(firsts)} keystrokes: first screenful p50 {statistics.median(firsts):.1f} ms,"
        f" p95 {p95:.1f} ms (target <= {TARGET_MS:g} ms: {verdict}); every match p50"
        f" {statistics.median(wholes):.1f} ms, p95 {percentile(wholes, 0.95):.1f} ms"
    )


if __name__ == "__main__":
    main()
