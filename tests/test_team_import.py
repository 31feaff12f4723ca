"""`ppp-tui import` between a SQLite database and a PostgreSQL team store, both ways:
everything comes over, again adds nothing, later marks merge, and what cannot go into
a store is one line that writes nothing."""

from __future__ import annotations

import socket
import sqlite3
from pathlib import Path

import pytest
from demo_files import demo_file, private_copy
from helpers import dump, one_line_error, run_cli

from ppp_tui.storage.demo import write_demo
from ppp_tui.storage.location import parse_server_url

pytest.importorskip("psycopg", reason="the postgres extra (psycopg) is not installed")

import psycopg

EXAMPLES = Path(__file__).resolve().parent.parent / "examples" / "runs.jsonl"


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return demo_file(tmp_path_factory, "team", 150, seed=7, sessions=True)


@pytest.fixture
def old_db(demo: Path, tmp_path: Path) -> Path:
    return private_copy(demo, tmp_path / "old.db")


def test_moving_in_and_taking_a_copy_back(old_db: Path, pg_url: str, tmp_path: Path) -> None:
    server = parse_server_url(pg_url)
    runs = len(dump(sqlite3.connect(old_db))["runs"])
    result = run_cli("import", str(old_db), "--db", pg_url)
    assert result.exit_code == 0, result.output
    assert result.stdout == f"{old_db}: {runs} runs copied with their marks into {server}\n"
    with psycopg.connect(pg_url) as conn:
        assert dump(conn) == dump(sqlite3.connect(old_db))
    again = run_cli("import", str(old_db), "--db", pg_url)
    assert again.stdout == (
        f"{old_db}: 0 runs copied with their marks into {server};"
        f" {runs} already there, 0 marks merged into them\n"
    )
    copy = tmp_path / "train.db"
    back = run_cli("import", pg_url, "--db", str(copy))
    assert back.exit_code == 0, back.output
    assert back.stdout == f"{server}: {runs} runs copied with their marks into {copy}\n"
    assert dump(sqlite3.connect(copy)) == dump(sqlite3.connect(old_db))
    assert run_cli("import", pg_url, "--db", str(copy)).stdout.startswith(f"{server}: 0 runs")


def analyzed(url: str) -> dict[str, bool]:
    """Per table of the store, whether the planner's statistics were gathered."""
    with psycopg.connect(url) as conn:
        rows = conn.execute(
            "SELECT relname, last_analyze IS NOT NULL OR last_autoanalyze IS NOT NULL"
            " FROM pg_stat_user_tables"
        ).fetchall()
    return {name: done for name, done in rows}


def test_a_store_filled_at_once_has_its_planner_statistics(
    old_db: Path, pg_url: str, tmp_path: Path
) -> None:
    # A few runs first, then the rest: the second import is most of the store.
    few = tmp_path / "few.db"
    write_demo(few, 3, seed=1)
    assert run_cli("import", str(few), "--db", pg_url).exit_code == 0
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("SELECT pg_stat_reset()")  # what the first import gathered is gone
    assert not any(analyzed(pg_url).values())
    assert run_cli("import", str(old_db), "--db", pg_url).exit_code == 0
    done = analyzed(pg_url)
    assert done["runs"] and done["agents"] and done["trajectory_turns"]
    # A run or two more into a large store leaves it to autovacuum.
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("SELECT pg_stat_reset()")
    more = tmp_path / "more.db"
    write_demo(more, 2, seed=2)
    with sqlite3.connect(more) as conn:
        conn.execute("UPDATE runs SET id = 'more-' || id")
    assert run_cli("import", str(more), "--db", pg_url).exit_code == 0
    assert not analyzed(pg_url)["runs"]


def test_marks_made_on_the_train_go_back_to_the_store(
    old_db: Path, pg_url: str, tmp_path: Path
) -> None:
    assert run_cli("import", str(old_db), "--db", pg_url).exit_code == 0
    copy = tmp_path / "train.db"
    assert run_cli("import", pg_url, "--db", str(copy)).exit_code == 0
    run_id = run_cli("runs", "--json", "--db", str(copy)).stdout.split('"id": "')[1].split('"')[0]
    agent = run_cli("show", run_id, "--json", "--db", str(copy)).stdout.split('"name": "')[1]
    agent = agent.split('"')[0]
    assert run_cli("prefer", run_id, agent, "--db", str(copy)).exit_code == 0
    result = run_cli("import", str(copy), "--db", pg_url)
    assert "1 mark merged into them" in result.stdout
    for args in (("show", run_id, "--json"), ("regret", "--json", "--all-reviewers")):
        assert run_cli(*args, "--db", pg_url).stdout == run_cli(*args, "--db", str(copy)).stdout
    with psycopg.connect(pg_url) as conn:
        assert dump(conn) == dump(sqlite3.connect(copy))


def test_a_database_with_other_files_is_refused_and_writes_nothing(
    old_db: Path, pg_url: str
) -> None:
    result = run_cli("import", str(old_db), str(EXAMPLES), "--db", pg_url)
    assert result.exit_code == 2  # a usage error, as with a SQLite file
    assert result.stderr.splitlines()[-1] == (
        "Error: other ppp-tui databases are imported in a command of their own"
    )
    with psycopg.connect(pg_url) as conn:  # nothing was made
        assert conn.execute(
            "SELECT count(*) FROM pg_tables WHERE schemaname = 'public'"
        ).fetchone() == (0,)


def test_a_copy_from_a_server_out_of_reach_makes_no_file(pg_url: str, tmp_path: Path) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    head, tail = pg_url.rsplit("@", 1)
    elsewhere = f"{head}@127.0.0.1:{port}/{tail.split('/', 1)[1]}"
    line = one_line_error(run_cli("import", elsewhere, "--db", str(tmp_path / "copy.db")))
    assert line.endswith(": cannot reach the server (connection refused)")
    assert list(tmp_path.iterdir()) == []
