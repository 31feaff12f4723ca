"""The store's SQLite SQL as PostgreSQL reads it (storage/postgres_sql.py): each rule,
literals left alone, and values back as sqlite3 gives them."""

from __future__ import annotations

from typing import Any

import pytest

from ppp_tui.storage import postgres, postgres_schema
from ppp_tui.storage.location import parse_server_url
from ppp_tui.storage.mark_rows import CURRENT_MARK
from ppp_tui.storage.postgres_sql import Connection, translate


@pytest.mark.parametrize(
    ("sqlite", "postgres_sql"),
    [
        ("SELECT a FROM t WHERE b = ? AND c = ?", "SELECT a FROM t WHERE b = %s AND c = %s"),
        ("SELECT ifnull(max(id), 0) FROM t", "SELECT coalesce(max(id), 0) FROM t"),
        (
            "SELECT 1 WHERE agent IS ? AND x IS NULL",
            "SELECT 1 WHERE agent IS NOT DISTINCT FROM %s AND x IS NULL",
        ),
        ("SELECT 1 WHERE agent IS NOT ?", "SELECT 1 WHERE agent IS DISTINCT FROM %s"),
        (
            "SELECT 'a ? b', \"odd?name\" FROM t WHERE x = ?",
            "SELECT 'a ? b', \"odd?name\" FROM t WHERE x = %s",
        ),
        ("SELECT x % 8, 'it''s 5%' FROM t", "SELECT x %% 8, 'it''s 5%%' FROM t"),
        (
            "SELECT id FROM runs WHERE id IN (SELECT value FROM json_each(?))",
            "SELECT id FROM runs WHERE id IN (SELECT value FROM"
            " json_array_elements_text(%s::json) AS json_each(value))",
        ),
        (
            "INSERT OR IGNORE INTO judgments (model, answer) VALUES (?, ?)",
            "INSERT INTO judgments (model, answer) VALUES (%s, %s) ON CONFLICT DO NOTHING",
        ),
        (
            CURRENT_MARK,
            "INSERT INTO marks (run_id, reviewer, agent, marked_at) VALUES (%s,%s,%s,%s)"
            " ON CONFLICT (run_id, reviewer) DO UPDATE SET agent = excluded.agent,"
            " marked_at = excluded.marked_at",
        ),
    ],
)
def test_each_rule(sqlite: str, postgres_sql: str) -> None:
    assert translate(sqlite) == postgres_sql


@pytest.fixture
def conn(pg_url: str) -> Any:
    server = parse_server_url(pg_url)
    raw = postgres.connect(server, autocommit=True)
    postgres_schema.prepare(raw, server)
    yield Connection(raw)
    raw.close()


def test_the_statements_run_and_give_sqlite_s_values(conn: Connection) -> None:
    conn.execute(
        "INSERT INTO runs (id, task_type, agents, imported_at) VALUES (?, 'x', 2, 'now')", ["r1"]
    )
    for agent, at in (("a", "t1"), ("b", "t2")):  # the second replaces the first
        conn.execute(CURRENT_MARK, ("r1", "ana", agent, at))
    assert conn.execute("SELECT agent, marked_at FROM marks").fetchall() == [("b", "t2")]
    row = conn.execute(
        "SELECT agents = 2, agents > 5, sum(agents), avg(agents), avg(agents) / 3,"
        " ifnull(NULL, ?) FROM runs GROUP BY id",
        ["none"],
    ).fetchone()
    assert row == (1, 0, 2, 2.0, pytest.approx(2 / 3), "none")
    assert [type(value) for value in row[:4]] == [int, int, int, float]
    assert conn.execute(
        "SELECT id FROM runs WHERE id IN (SELECT value FROM json_each(?))", ['["r1", "r2"]']
    ).fetchall() == [("r1",)]
    assert conn.execute("SELECT 1 FROM marks WHERE agent IS ?", [None]).fetchall() == []


def test_the_json_functions_of_the_waiting_read_become_the_schemas_own() -> None:
    sql = (
        "SELECT json_extract(t.steps, '$[#-1][0]') AS kind FROM trajectory_turns AS t"
        " WHERE json_valid(t.steps) AND note = 'json_valid(x)'"
    )
    assert translate(sql) == (
        "SELECT ppp_last_step_kind(t.steps) AS kind FROM trajectory_turns AS t"
        " WHERE ppp_json_valid(t.steps) AND note = 'json_valid(x)'"
    )
