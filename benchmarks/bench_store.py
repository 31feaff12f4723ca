"""Store and CLI wall-clock figures on a 100k-run demo database, against their targets.

    python benchmarks/bench_store.py [--runs 100000] [--import-repeat 3] [--repeat N]
                                     [--keep DIR] [--against DIR]

Prints: importing the demo runs as JSON Lines with `ppp-tui import` against
`sqlite-utils insert --nl` of the same lines, in turns (target: within 1.3x, the full-text
index, indexes and triggers included; each side's CPU time, user + sys of all its
processes, is printed too: steadier than the wall clock on a machine other work keeps
busy), and the whole-process times of `ppp-tui rank` (<= 0.3 s), `regret` (<= 1 s) and
`tune` (<= 2 s), each the
median of a few runs (--repeat sets how many). The commands read a config.toml of the
defaults made beside the database. Everything is written to a temporary folder that is
removed at the end, unless --keep names a folder to write it to and leave it in.

--against DIR imports the same lines, in the same turns, with the `ppp_tui` package of
another checkout (DIR holds its `ppp_tui` folder, say an earlier commit's `git archive`),
prints its times beside, and checks that both databases are the same whole: the schema,
and every table's rows in rowid order with their rowids, full-text index tables included,
the import's own times left out. It exits with status 1 if they differ.

A quick check that it works: --runs 200 --import-repeat 1 --repeat 1.
"""

from __future__ import annotations

import argparse
import hashlib
import itertools
import json
import resource
import sqlite3
import statistics
import subprocess
import sys
import time
from contextlib import nullcontext
from pathlib import Path

from _common import BIN, isolated_env, ppp_tui, scratch

from ppp_tui.storage.demo import generate

# The most an import may take against `sqlite-utils insert --nl` of the same lines.
TARGET_RATIO = 1.3


def timed(args: list[str], env: dict[str, str], repeat: int = 1) -> float:
    """Median wall-clock seconds of running `args` as a process."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        subprocess.run(args, env=env, check=True, stdout=subprocess.DEVNULL)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def timed_with_cpu(args: list[str], env: dict[str, str]) -> tuple[float, float]:
    """Wall-clock and CPU seconds (user + sys, the process and its children) of one run."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    wall = timed(args, env)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    return wall, cpu


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=100_000)
    parser.add_argument("--keep", type=Path, help="Write the files to this folder and keep them.")
    parser.add_argument("--import-repeat", type=int, default=3, help="Import pairs to time.")
    parser.add_argument(
        "--against", type=Path, help="A folder holding another ppp_tui package to compare with."
    )
    parser.add_argument(
        "--repeat", type=int, help="Runs of each command to time (default: 5 rank, 3 the others)."
    )
    args = parser.parse_args()
    if args.keep is not None:
        args.keep.mkdir(parents=True, exist_ok=True)
    with nullcontext(args.keep) if args.keep else scratch("ppp-bench-store-") as folder:
        measure(args, folder)


def warm_up(args: argparse.Namespace, lines: Path, folder: Path, env: dict[str, str]) -> None:
    """A few lines imported by each program first, untimed: their bytecode cached, and
    their files in the page cache, before the first pair."""
    few = folder / "few.jsonl"
    with lines.open(encoding="utf-8") as source:
        few.write_text("".join(itertools.islice(source, 100)), encoding="utf-8")
    commands = [
        [*ppp_tui(), "import", str(few), "--db", str(folder / "warm.db")],
        [str(BIN / "sqlite-utils"), "insert", str(folder / "warm-plain.db"), "runs", str(few)],
    ]
    commands[1].append("--nl")
    if args.against is not None:
        commands.append(
            [*package_at(args.against), "import", str(few), "--db", str(folder / "warm-other.db")]
        )
    for command in commands:
        subprocess.run(command, env=env, check=True, stdout=subprocess.DEVNULL)
    for stale in [few, *folder.glob("warm*.db*")]:
        stale.unlink()


def measure(args: argparse.Namespace, folder: Path) -> None:
    lines = folder / "runs.jsonl"
    start = time.perf_counter()
    with lines.open("w", encoding="utf-8") as out:
        for run in generate(args.runs, seed=0):
            out.write(json.dumps(run) + "\n")
    size = lines.stat().st_size / 1e6
    print(f"demo runs: {args.runs} written in {time.perf_counter() - start:.1f} s ({size:.0f} MB)")

    env = isolated_env(folder)  # its config.toml: the defaults
    ours = folder / "ppp.db"
    theirs = folder / "plain.db"
    ppp = ppp_tui()
    # Taken in turns, so that a slow spell of the machine hits both; the ratio is the
    # median of the pairs'.
    other = folder / "other.db"
    warm_up(args, lines, folder, env)
    pairs = []
    for _ in range(args.import_repeat):
        for path in (ours, theirs, other):
            for stale in path.parent.glob(path.name + "*"):
                stale.unlink()
        if args.against is not None:
            t_other, cpu_other = timed_with_cpu(
                [*package_at(args.against), "import", str(lines), "--db", str(other)], env
            )
            print(f"import with {args.against}: {t_other:.1f} s (CPU {cpu_other:.1f} s)")
        t_ours, cpu_ours = timed_with_cpu([*ppp, "import", str(lines), "--db", str(ours)], env)
        t_theirs, cpu_theirs = timed_with_cpu(
            [str(BIN / "sqlite-utils"), "insert", str(theirs), "runs", str(lines), "--nl"], env
        )
        pairs.append((t_ours, t_theirs))
        print(
            f"import: ppp-tui {t_ours:.1f} s ({args.runs / t_ours:,.0f} runs/s; CPU"
            f" {cpu_ours:.1f} s), sqlite-utils insert --nl {t_theirs:.1f} s (CPU"
            f" {cpu_theirs:.1f} s); ratio {t_ours / t_theirs:.2f}x"
        )
    ratios = [a / b for a, b in pairs]
    print(
        f"import ratio, median of {len(pairs)}: {statistics.median(ratios):.2f}x"
        f" (range {min(ratios):.2f}-{max(ratios):.2f}; target <= {TARGET_RATIO}x)"
    )
    if args.against is not None:
        mine, others = digests(ours), digests(other)
        differ = sorted(
            name for name in mine.keys() | others.keys() if mine.get(name) != others.get(name)
        )
        print(f"the databases, whole: {'differ in ' + ', '.join(differ) if differ else 'the same'}")
        if differ:
            raise SystemExit(1)
    db = ["--db", str(ours)]
    run_id = f"demo-{min(42, args.runs):06d}"  # numbered from 1
    few, more = (args.repeat, args.repeat) if args.repeat else (3, 5)
    t_rank = timed([*ppp, "rank", run_id, *db], env, repeat=more)
    t_regret = timed([*ppp, "regret", *db], env, repeat=few)
    t_regret_json = timed([*ppp, "regret", "--json", *db], env, repeat=few)
    t_tune = timed([*ppp, "tune", *db], env, repeat=few)
    t_help = timed([*ppp, "--help"], env, repeat=more)
    print(f"rank one run: {t_rank:.3f} s (target <= 0.3 s; `ppp-tui --help` {t_help:.3f} s)")
    print(
        f"regret over the database: {t_regret:.2f} s (target <= 1 s);"
        f" with --json (every marked run listed) {t_regret_json:.2f} s"
    )
    print(f"tune (exact, with curve and 5-fold CV): {t_tune:.2f} s (target <= 2 s)")


def package_at(folder: Path) -> list[str]:
    """`ppp-tui` run with the `ppp_tui` package in `folder` (its own code, this
    interpreter's libraries)."""
    start = f"import sys; sys.path.insert(0, {str(folder.resolve())!r});"
    return [sys.executable, "-c", f"{start} from ppp_tui.cli import main; main()"]


def digests(path: Path) -> dict[str, str]:
    """A digest of each table's rows in rowid order (key order for a table without
    rowids) with their rowids, the times of the import left out, and one of the schema;
    a virtual table's rows are its shadow tables'."""
    conn = sqlite3.connect(path)
    try:
        schema = conn.execute(
            "SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY type, name"
        ).fetchall()
        found = {"(schema)": hashlib.sha256(repr(schema).encode()).hexdigest()}
        for kind, name, _, sql in schema:
            if kind != "table" or sql.upper().startswith("CREATE VIRTUAL"):
                continue
            columns = [
                f'"{row[1]}"'
                for row in conn.execute(f'PRAGMA table_info("{name}")')
                if row[1] not in ("imported_at", "marked_at")
            ]
            plain = "WITHOUT ROWID" not in sql.upper()
            query = (
                f'SELECT rowid, {", ".join(columns)} FROM "{name}" ORDER BY rowid'
                if plain
                else f'SELECT {", ".join(columns)} FROM "{name}" ORDER BY 1, 2'
            )
            digest = hashlib.sha256()
            for row in conn.execute(query):
                digest.update(repr(row).encode())
            found[name] = digest.hexdigest()
        return found
    finally:
        conn.close()


if __name__ == "__main__":
    main()
