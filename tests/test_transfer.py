"""Copying runs between engines (storage/transfer.py): a SQLite database into a
PostgreSQL store and back comes out row for row the same, again adds nothing, only
adds what the target lacks, and a copy that fails leaves nothing."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from demo_files import demo_file
from helpers import dump, run_cli

from ppp_tui.storage import postgres, postgres_schema, transfer
from ppp_tui.storage.location import parse_server_url
from ppp_tui.storage.store import Store

pytest.importorskip("psycopg", reason="the postgres extra (psycopg) is not installed")

import psycopg

JUDGMENTS = [
    ("model-a", "v1", "hash1", "LOW", "low", None, "2026-03-01T10:00:00Z"),
    ("model-a", "v1", "hash2", "0.7", None, 0.7, "2026-03-01T10:00:01Z"),
]


@pytest.fixture(scope="module")
def source_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A demo database with sessions' runs (edits of files), marks of several
    reviewers with their history, and judge cache entries."""
    path = demo_file(tmp_path_factory, "transfer", 120, seed=5, sessions=True, name="source.db")
    conn = sqlite3.connect(path)
    conn.executemany("INSERT INTO judgments VALUES (?,?,?,?,?,?,?)", JUDGMENTS)
    conn.commit()
    conn.close()
    return path


@pytest.fixture
def pg(pg_url: str) -> Iterator[psycopg.Connection[Any]]:
    server = parse_server_url(pg_url)
    conn = postgres.connect(server)
    postgres_schema.prepare(conn, server)
    yield conn
    conn.close()


def _into_pg(path: Path, pg: psycopg.Connection[Any]) -> transfer.Copied:
    with Store.open(path) as store, pg.transaction():
        return transfer.copy_runs(transfer.SQLiteEnd(store.conn), transfer.PostgresEnd(pg))


def _into_sqlite(pg: psycopg.Connection[Any], path: Path) -> transfer.Copied:
    with Store.open(path, create=True) as store, store._transaction():
        copied = transfer.copy_runs(transfer.PostgresEnd(pg), transfer.SQLiteEnd(store.conn))
    pg.commit()
    return copied


def test_there_and_back_is_the_same_database(
    source_db: Path, pg: psycopg.Connection[Any], tmp_path: Path
) -> None:
    source = sqlite3.connect(source_db)
    before = dump(source)
    runs = len(before["runs"])
    assert before["agent_edits"] and before["preferred_marks"] and before["marks"]
    assert len({row[1] for row in before["marks"]}) > 1  # several reviewers
    copied = _into_pg(source_db, pg)
    assert (copied.added, copied.present, copied.judgments) == (runs, 0, 2)
    assert dump(pg) == before
    back = tmp_path / "back.db"
    copied = _into_sqlite(pg, back)
    assert (copied.added, copied.present, copied.judgments) == (runs, 0, 2)
    assert dump(sqlite3.connect(back)) == before
    # The commands read the copy as they read the original.
    for args in (
        ("runs", "--json"),
        ("regret", "--json", "--all-reviewers"),
        ("leaderboard", "--json", "--all-reviewers"),
    ):
        original = run_cli(*args, "--db", str(source_db))
        again = run_cli(*args, "--db", str(back))
        assert original.exit_code == again.exit_code == 0, again.output
        assert json.loads(original.stdout) == json.loads(again.stdout)
    source.close()


def test_copying_again_adds_nothing(source_db: Path, pg: psycopg.Connection[Any]) -> None:
    _into_pg(source_db, pg)
    first = dump(pg)
    copied = _into_pg(source_db, pg)
    assert (copied.added, copied.judgments) == (0, 0)
    assert copied.present == len(first["runs"])
    assert dump(pg) == first


def test_only_the_runs_the_target_lacks_come_over(
    source_db: Path, pg: psycopg.Connection[Any], tmp_path: Path
) -> None:
    part = tmp_path / "part.db"
    part.write_bytes(source_db.read_bytes())
    conn = sqlite3.connect(part)
    conn.execute("PRAGMA foreign_keys = ON")
    ids = [row[0] for row in conn.execute("SELECT id FROM runs ORDER BY id")]
    conn.execute("DELETE FROM runs WHERE id IN (SELECT id FROM runs ORDER BY id DESC LIMIT 40)")
    conn.commit()
    conn.close()
    assert _into_pg(part, pg).added == len(ids) - 40
    copied = _into_pg(source_db, pg)
    assert (copied.added, copied.present) == (40, len(ids) - 40)
    assert dump(pg) == dump(sqlite3.connect(source_db))
    # New agents after the copy get ids of their own.
    pg.execute(
        "INSERT INTO agents (run_id, position, name, technical) VALUES (%s, 99, 'new', 0.5)",
        [ids[0]],
    )
    pg.rollback()


def test_a_copy_that_fails_leaves_nothing(
    source_db: Path, pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    server = parse_server_url(pg_url)
    conn = postgres.connect(server)
    postgres_schema.prepare(conn, server)
    conn.commit()
    write = transfer.PostgresEnd.write

    def failing(self: transfer.PostgresEnd, table: str, columns: Any, rows: list[Any]) -> None:
        if table == "marks":  # the server goes away half-way through
            with psycopg.connect(pg_url, autocommit=True) as admin:
                admin.execute("SELECT pg_terminate_backend(%s)", [self.conn.info.backend_pid])
        write(self, table, columns, rows)

    monkeypatch.setattr(transfer.PostgresEnd, "write", failing)
    with (
        Store.open(source_db) as store,
        pytest.raises(psycopg.Error) as raised,
        conn.transaction(),
    ):
        transfer.copy_runs(transfer.SQLiteEnd(store.conn), transfer.PostgresEnd(conn))
    line = str(postgres.server_error(server, raised.value))
    assert "the connection to the server was lost" in line
    with postgres.connect(server) as check:
        assert check.execute("SELECT count(*) FROM runs").fetchone() == (0,)
        assert check.execute("SELECT count(*) FROM agents").fetchone() == (0,)
