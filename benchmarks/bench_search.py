"""The runs list's search at 100k runs: full-text search against the in-memory substring filter.

    python benchmarks/bench_search.py [--db PATH] [--runs 100000]

Makes a demo database of --runs runs (`ppp-tui demo`) in a temporary folder, or uses the
one --db names (made there first if it is missing, and kept), copies it, and prints:
building the full-text index on a database that has none (what the first search does),
bringing it up to date after an import of 1000 runs, and for each query as typed letter by
letter, the median time of `Store.search` (index current) against the substring filter
the runs screen applied before (id, spec id and task of the loaded rows, in memory).
Everything but --db is written to the temporary folder, which is removed at the end. A
quick check that it works: --runs 300.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import time
from pathlib import Path

from _common import isolated_env, ppp_tui, scratch

from ppp_tui.storage import search
from ppp_tui.storage.demo import generate
from ppp_tui.storage.files import read_records
from ppp_tui.storage.store import RunInfo, Store

QUERIES = ("webhook", "crash upload", "SPEC-KIT-01", "the", "zzz")


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
    parser.add_argument("--db", type=Path, help="Use this database (made if missing) and keep it.")
    parser.add_argument("--runs", type=int, default=100_000)
    args = parser.parse_args()
    with scratch("ppp-bench-search-") as folder:
        db = args.db or folder / "demo.db"
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
            store.import_records(read_records(str(lines)))
            start = time.perf_counter()
            index(copy)
            print(f"index caught up after 1,000 more runs in {time.perf_counter() - start:.2f} s")
            start = time.perf_counter()
            if not search.is_current(store.conn):
                raise SystemExit("bench_search: the index is not current after its update")
            print(f"index checked current in {(time.perf_counter() - start) * 1000:.1f} ms")

            infos = store.run_infos()
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


if __name__ == "__main__":
    main()
