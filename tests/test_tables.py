"""The schema's one description (storage/tables.py): what SQLite's migrations make
matches it column for column, and a PostgreSQL database made from it holds the same
tables, keys, indexes and triggers, forward from an empty or an older database."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path
from typing import Any

import pytest

from ppp_tui.storage import postgres, postgres_schema, schema
from ppp_tui.storage.database import StoreError
from ppp_tui.storage.location import parse_server_url
from ppp_tui.storage.store import Store
from ppp_tui.storage.tables import BLOB, COUNTERS, INTEGER, REAL, SEARCHED, TABLES, TEXT

TABLE = {table.name: table for table in TABLES}
SEARCHED_TABLES = {searched.table for searched in SEARCHED}


def test_the_description_names_every_table_of_ours() -> None:
    assert {table.name for table in TABLES} == schema.OUR_TABLES
    # A team store's own: the version, and its full-text index's totals.
    assert schema.OUR_TABLES | {"schema_version", "search_totals"} == postgres_schema.OUR_TABLES


# -- SQLite ------------------------------------------------------------------------------

_AFFINITY = {TEXT: "TEXT", INTEGER: "INTEGER", REAL: "REAL", BLOB: "BLOB"}


def _sqlite_type(declared: str) -> str:
    return "REAL" if declared.upper() in ("REAL", "FLOAT") else declared.upper()


def _sqlite_default(value: str | int | None) -> str | None:
    if value is None:
        return None
    return str(value) if isinstance(value, int) else f"'{value}'"


def test_a_new_sqlite_file_is_the_description(tmp_path: Path) -> None:
    Store.open(tmp_path / "runs.db", create=True).close()
    conn = sqlite3.connect(tmp_path / "runs.db")
    for table in TABLES:
        info = conn.execute(f"PRAGMA table_info({table.name})").fetchall()
        got = [
            (name, _sqlite_type(kind), bool(notnull), default)
            for _, name, kind, notnull, default, _ in info
        ]
        want = [
            (c.name, _AFFINITY[c.kind], c.not_null, _sqlite_default(c.default))
            for c in table.columns
        ]
        assert got == want, table.name
        key = [name for _, name, *_, pk in sorted(info, key=lambda row: row[5]) if pk]
        assert tuple(key) == table.key, table.name
        references = {
            (row[3], f"{row[2]}({row[4]})", row[6])
            for row in conn.execute(f"PRAGMA foreign_key_list({table.name})")
        }
        assert references == {
            (c.name, c.references, "CASCADE") for c in table.columns if c.references
        }, table.name
        indexes = {
            (name, bool(unique), tuple(r[2] for r in conn.execute(f"PRAGMA index_info({name})")))
            for _, name, unique, origin, _ in conn.execute(f"PRAGMA index_list({table.name})")
            if origin == "c"
        }
        assert indexes == {(i.name, i.unique, i.columns) for i in table.indexes}, table.name
    triggers = {
        row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type='trigger'")
    }
    assert {counter.name for counter in COUNTERS} <= triggers
    assert conn.execute("PRAGMA user_version").fetchone() == (schema.SCHEMA_VERSION,)
    conn.close()


# -- PostgreSQL --------------------------------------------------------------------------

_PG_TYPE = {TEXT: "text", INTEGER: "bigint", REAL: "double precision", BLOB: "bytea"}


def _open(url: str) -> Any:
    server = parse_server_url(url)
    conn = postgres.connect(server)
    postgres_schema.prepare(conn, server)
    return conn


def test_a_postgres_database_is_made_from_the_description(pg_url: str) -> None:
    with _open(pg_url) as conn:
        for table in TABLES:
            rows = conn.execute(
                "SELECT column_name, data_type, is_nullable, collation_name"
                " FROM information_schema.columns WHERE table_name = %s"
                " ORDER BY ordinal_position",
                [table.name],
            ).fetchall()
            # A table a search reads ends with its full-text index's two columns.
            search = [("search", "tsvector", "YES", None), ("search_words", "integer", "YES", None)]
            assert rows == [
                (
                    c.name,
                    _PG_TYPE[c.kind],
                    "NO" if c.not_null or c.name in table.key else "YES",
                    "C" if c.kind == TEXT else None,
                )
                for c in table.columns
            ] + (search if table.name in SEARCHED_TABLES else []), table.name
            key = conn.execute(
                "SELECT a.attname FROM pg_index i JOIN pg_attribute a"
                " ON a.attrelid = i.indrelid AND a.attnum = ANY(i.indkey)"
                " WHERE i.indrelid = %s::regclass AND i.indisprimary"
                " ORDER BY array_position(i.indkey, a.attnum)",
                [table.name],
            ).fetchall()
            assert tuple(row[0] for row in key) == table.key, table.name
            indexes = conn.execute(
                "SELECT indexname FROM pg_indexes WHERE tablename = %s"
                " AND indexname NOT LIKE '%%_pkey'",
                [table.name],
            ).fetchall()
            gin = {f"{table.name}_search"} if table.name in SEARCHED_TABLES else set()
            assert {row[0] for row in indexes} == {i.name for i in table.indexes} | gin
        version = conn.execute("SELECT version FROM schema_version").fetchone()
        assert version == (schema.SCHEMA_VERSION,)


def _run_with_agents(conn: Any) -> None:
    conn.execute(
        "INSERT INTO runs (id, task_type, agents, imported_at) VALUES ('r1', 'code', 2, 'now')"
    )
    conn.execute(
        "INSERT INTO agents (run_id, position, name, technical)"
        " VALUES ('r1', 0, 'a', 0.5), ('r1', 1, 'b', 0.7)"
    )


def test_the_triggers_count_score_changes_and_drop_stale_packs(pg_url: str) -> None:
    with _open(pg_url) as conn:
        _run_with_agents(conn)
        pack = "INSERT INTO run_scores VALUES ('r1', 'ab', '', '', '', NULL)"
        conn.execute(pack)
        changes = "SELECT n FROM score_changes"
        assert conn.execute(changes).fetchone() == (0,)
        conn.execute("UPDATE agents SET technical = 0.9 WHERE name = 'a'")
        assert conn.execute(changes).fetchone() == (1,)
        assert conn.execute("SELECT count(*) FROM run_scores").fetchone() == (0,)
        conn.execute(pack)
        conn.execute("UPDATE agents SET model = 'm'")  # not a score: no change counted
        assert conn.execute(changes).fetchone() == (1,)
        assert conn.execute("SELECT count(*) FROM run_scores").fetchone() == (0,)
        conn.execute(pack)
        conn.execute(
            "INSERT INTO agents (run_id, position, name, technical) VALUES ('r1', 2, 'c', 0)"
        )
        assert conn.execute("SELECT count(*) FROM run_scores").fetchone() == (0,)
        conn.execute(pack)
        conn.execute("DELETE FROM agents WHERE name = 'c'")
        assert conn.execute("SELECT count(*) FROM run_scores").fetchone() == (0,)
        conn.execute("DELETE FROM runs")  # the rest goes with the run
        assert conn.execute("SELECT count(*) FROM agents").fetchone() == (0,)


def test_text_orders_by_code_point_as_sqlite_does(pg_url: str) -> None:
    names = ["b", "B", "a", "_x", "Z", "é", "e", "ä", "10", "9", "日本", "😀", "a b", "ab"]
    lite = sqlite3.connect(":memory:")
    lite.execute("CREATE TABLE t (name TEXT)")
    lite.executemany("INSERT INTO t VALUES (?)", [(n,) for n in names])
    expected = [row[0] for row in lite.execute("SELECT name FROM t ORDER BY name")]
    assert expected == sorted(names)
    with _open(pg_url) as conn:
        conn.execute(
            "INSERT INTO runs (id, task_type, agents, imported_at)"
            " SELECT n, 'x', 0, 'now' FROM unnest(%s::text[]) AS n",
            [names],
        )
        rows = conn.execute("SELECT id FROM runs ORDER BY id").fetchall()
        assert [row[0] for row in rows] == expected


def test_making_it_again_changes_nothing_and_an_older_one_is_brought_forward(
    pg_url: str,
) -> None:
    with _open(pg_url) as conn:
        _run_with_agents(conn)
        conn.commit()
        # As a database a version behind would be: a column and an index missing.
        conn.execute("ALTER TABLE agents DROP COLUMN judged_model")
        conn.execute("DROP INDEX agents_scores")
        conn.execute("UPDATE schema_version SET version = version - 1")
        conn.commit()
    with _open(pg_url) as conn:
        names = {
            row[0]
            for row in conn.execute(
                "SELECT column_name FROM information_schema.columns WHERE table_name = 'agents'"
            )
        }
        assert "judged_model" in names
        assert conn.execute("SELECT to_regclass('agents_scores')").fetchone() == ("agents_scores",)
        assert conn.execute("SELECT count(*) FROM agents").fetchone() == (2,)  # data kept
        assert conn.execute("SELECT version FROM schema_version").fetchone() == (
            schema.SCHEMA_VERSION,
        )


def test_processes_opening_a_new_database_at_once_make_it_once(pg_url: str) -> None:
    errors: list[BaseException] = []

    def opener() -> None:
        try:
            _open(pg_url).close()
        except BaseException as error:
            errors.append(error)

    threads = [threading.Thread(target=opener) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []


def test_another_program_s_database_and_a_newer_one_are_refused(pg_url: str) -> None:
    server = parse_server_url(pg_url)
    with postgres.connect(server, autocommit=True) as conn:
        conn.execute("CREATE TABLE invoices (id integer)")
        with pytest.raises(StoreError) as caught:
            postgres_schema.prepare(conn, server)
        assert (
            str(caught.value) == f"{server}: not a ppp-tui database (it has other tables: invoices)"
        )
        assert postgres_schema.tables(conn) == {"invoices"}  # nothing written
        conn.execute("DROP TABLE invoices")
        postgres_schema.prepare(conn, server)
        conn.execute("UPDATE schema_version SET version = 99")
        with pytest.raises(StoreError) as caught:
            postgres_schema.prepare(conn, server)
        assert str(caught.value) == (
            f"{server}: made by a newer ppp-tui (schema 99; this version reads up to"
            f" {schema.SCHEMA_VERSION}); upgrade ppp-tui to open it"
        )
        conn.execute(f"UPDATE schema_version SET version = {schema.SCHEMA_VERSION}, server = 7")
        with pytest.raises(StoreError) as caught:
            postgres_schema.prepare(conn, server)
        assert str(caught.value) == (
            f"{server}: made by a newer ppp-tui (server revision 7; this version reads up to"
            f" {postgres_schema.SERVER_REVISION}); upgrade ppp-tui to open it"
        )
        conn.execute("UPDATE schema_version SET version = 3")
        with pytest.raises(StoreError, match="needs an upgrade"):
            postgres_schema.prepare(conn, server, upgrade=False)
