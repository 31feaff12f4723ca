"""A team store's full-text search answers as a SQLite file's: words split and folded as
FTS5 splits them, the same runs for every query and hostile text, in the same order;
the index kept as rows are written, and made for a store that predates it."""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pg_server
import pytest
from demo_files import demo_file

from ppp_tui.storage import (
    postgres,
    postgres_schema,
    search_server,
    search_server_schema,
    search_words,
    store_server,
    transfer,
)
from ppp_tui.storage.database import StoreError
from ppp_tui.storage.location import parse_server_url
from ppp_tui.storage.schema import SCHEMA_VERSION
from ppp_tui.storage.search import Cancelled
from ppp_tui.storage.store import Store
from ppp_tui.storage.store_server import ServerStore

pytest.importorskip("psycopg", reason="the postgres extra (psycopg) is not installed")

import psycopg

# Queries a user types: words of the tasks, outputs and questions, run and spec ids
# (split at their dashes), prefixes, several words, words most runs hold.
QUERIES = [
    "inventory",
    "inventory service",
    "admin dash",
    "demo-00004",
    "demo-000042",
    "SPEC-KIT-002",
    "readme",
    "crash upload",
    "should",
    "core/config.rs",
    "summary 5",
    "release 5.1.0",
    "risks",
    "fix the crash",
    "owners prop",
    "email",
    "draft pr",
    "uploads the admin",
    "sess",
    "checklist ",
    "the",
    "a",
]
# Text no query may break: tsquery's operators and quoting, SQL's, NUL, escapes, markup.
HOSTILE = [
    "'",
    "''",
    "'; DROP TABLE runs; --",
    "inventory & !service",
    "a | b",
    "!",
    "(inventory",
    "service)",
    "inventory:*",
    ":*",
    "*",
    "<->",
    "inventory <-> service",
    "\\",
    "\\'",
    "\x00",
    "inv\x00entory",
    '"inventory service"',
    "%",
    "_",
    "[b]inventory[/b]",
    "\x1b[31minventory",
    "x" * 3000,
    "é" * 1100,
    "&&",
    "inventory &&",
]


def _words_by_fts5(text: str) -> list[str]:
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE VIRTUAL TABLE t USING fts5(x)")
    conn.execute("CREATE VIRTUAL TABLE v USING fts5vocab(t, instance)")
    conn.execute("INSERT INTO t (x) VALUES (?)", [text])
    found = [str(row[0]) for row in conn.execute("SELECT term FROM v ORDER BY offset")]
    conn.close()
    return found


def test_the_tables_are_what_sqlite_s_tokenizer_does() -> None:
    separators, folds = search_words.derive(1, 0xFFFF)
    recorded = [
        code
        for first, last in search_words.SEPARATORS
        for code in range(first, last + 1)
        if code <= 0xFFFF
    ]
    assert separators == recorded
    assert {code: to for code, to in folds.items() if code > 127} == {
        code: to for code, to in search_words.FOLDS.items() if code <= 0xFFFF
    }
    assert {code: to for code, to in folds.items() if code <= 127} == {
        code: chr(code).lower() for code in range(ord("A"), ord("Z") + 1)
    }


TEXTS = [
    "Fix demo-000042 in snake_case_name (see core/config.rs:12)!",
    "Café NAÏVE ÉCOLE Straße ǅemo Ωmega Дом",
    "emoji 🎉 between—dashes… and “quotes” 3.14 1e5 user@example.com https://x.io/a?b=c",
    "日本語のテキスト mixed中文 and tabs\tnew\nlines",
    "don't won\u2019t it's [b]markup[/b] \x1b[1mbold\x1b[0m a&b|c!d<->e:*f\\g",
    "combining e\u0301 and a\u0308 marks, ﬁ ligature",
]


@pytest.fixture(scope="module")
def pg_conn(pg_cluster: str) -> Iterator[Any]:
    with pg_server.new_database(pg_cluster, "ppp_test_words") as url:
        server = parse_server_url(url)
        with postgres.connect(server, autocommit=True) as conn:
            postgres_schema.prepare(conn, server)
            yield conn


@pytest.mark.parametrize("text", TEXTS)
def test_text_is_split_and_folded_alike_by_both_engines(pg_conn: Any, text: str) -> None:
    expected = _words_by_fts5(text)
    assert search_words.words(text) == expected
    pg_conn.execute("DELETE FROM runs")
    pg_conn.execute(
        "INSERT INTO runs (id, task, task_type, agents, imported_at)"
        " VALUES ('r', %s, 'code', 0, 'now')",
        [text],
    )
    rows = pg_conn.execute(
        "SELECT found.lexeme FROM runs, unnest(runs.search) AS found,"
        " unnest(found.positions) AS at ORDER BY at"
    ).fetchall()
    assert [row[0] for row in rows] == ["r", *expected]  # the run's id, then its task
    assert pg_conn.execute("SELECT search_words FROM runs").fetchone() == (len(expected) + 1,)


@pytest.fixture(scope="module")
def stores(
    pg_cluster: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[Store, ServerStore]]:
    """(a SQLite demo database of 2000 runs, a team store holding a copy of it)."""
    path = demo_file(tmp_path_factory, "search", 2000, seed=3, sessions=True)
    with pg_server.new_database(pg_cluster, "ppp_test_search") as url:
        server = parse_server_url(url)
        with Store.open(path) as file, ServerStore.connect(server, create=True) as team:
            transfer.bring_in(file, team, [])
            yield file, team


def _kendall_tau(one: list[str], other: list[str]) -> float:
    """Kendall's tau between two orders of the same items (1: the same order)."""
    place = {item: n for n, item in enumerate(other)}
    ranks = [place[item] for item in one]
    pairs = len(ranks) * (len(ranks) - 1) // 2
    if not pairs:
        return 1.0
    discordant = sum(
        1 for i in range(len(ranks)) for j in range(i + 1, len(ranks)) if ranks[i] > ranks[j]
    )
    return 1 - 2 * discordant / pairs


def test_the_runs_found_and_their_order_agree_with_sqlite(
    stores: tuple[Store, ServerStore],
) -> None:
    file, team = stores
    same_order = 0
    for query in QUERIES:
        on_file, on_server = file.search(query), team.search(query)
        assert on_file, query  # each query finds runs
        assert set(on_server) == set(on_file), query
        assert on_server[:10] == on_file[:10], query
        assert _kendall_tau(on_file, on_server) > 0.99, query
        same_order += on_server == on_file
        assert team.search_first(query) == file.search_first(query), query
    # bm25 computed as FTS5 does gives the very same order, ties by id included.
    assert same_order == len(QUERIES)


def test_too_many_matches_come_by_group_then_id_as_on_sqlite(
    stores: tuple[Store, ServerStore], monkeypatch: pytest.MonkeyPatch
) -> None:
    file, team = stores
    monkeypatch.setattr("ppp_tui.storage.search.RANK_LIMIT", 50)
    monkeypatch.setattr(search_server, "RANK_LIMIT", 50)
    for query in ("the", "a", "inventory", "should"):
        assert team.search(query) == file.search(query), query
        first = team.search_first(query, limit=30)
        assert first == file.search_first(query, limit=30), query
        assert first[1] is False and len(first[0]) == 30


@pytest.mark.parametrize("text", HOSTILE, ids=range(len(HOSTILE)))
def test_hostile_text_is_only_words(stores: tuple[Store, ServerStore], text: str) -> None:
    file, team = stores
    assert team.search(text) == file.search(text)
    assert team.search_first(text) == file.search_first(text)


def test_a_search_no_longer_wanted_stops_and_the_store_goes_on(
    stores: tuple[Store, ServerStore],
) -> None:
    file, team = stores
    asked: list[float] = []

    def cancelled() -> bool:  # wanted when it starts, not from 20 ms on
        asked.append(time.monotonic())
        return asked[-1] - asked[0] > 0.02

    with pytest.raises(Cancelled):
        team.search("a", cancelled=cancelled)  # a whole second's search on this machine
    assert asked[-1] - asked[0] < 1.0
    with pytest.raises(Cancelled):
        team.search("a", cancelled=lambda: True)
    # The connection goes on: the next searches answer whole.
    assert team.search("inventory service", cancelled=lambda: False) == file.search(
        "inventory service"
    )
    assert team.search_first("a") == file.search_first("a")


def test_a_statement_running_is_cancelled_on_the_server(stores: tuple[Store, ServerStore]) -> None:
    _, team = stores
    started = time.monotonic()
    late = store_server._cancelling(team.pg.raw, lambda: time.monotonic() - started > 0.05)
    with pytest.raises(psycopg.errors.QueryCanceled), late:
        team.pg.raw.execute("SELECT pg_sleep(5)")
    assert time.monotonic() - started < 2
    assert team.pg.raw.execute("SELECT 1").fetchone() == (1,)


def test_the_query_is_built_from_words_never_parsed() -> None:
    words = search_server.words_of("it's demo-0000")
    assert words is not None
    assert words.tsquery() == "('it' <-> 's') & ('demo' <-> '0000':*)"
    assert search_server.words_of("finished ") == search_server.Words((("finished",),), False)
    assert search_server.words_of("a && b") is None  # `&&` holds no word: nothing matches
    assert search_server.words_of(" \x00 ") is None


def _totals(conn: Any) -> list[tuple[str, int, int]]:
    rows = conn.execute("SELECT name, rows, words FROM search_totals ORDER BY name").fetchall()
    return [(str(r[0]), int(r[1]), int(r[2])) for r in rows]


def _counted(conn: Any) -> list[tuple[str, int, int]]:
    return [
        (
            table,
            *conn.execute(
                f"SELECT count(*), coalesce(sum(search_words), 0) FROM {table}"
            ).fetchone(),
        )
        for table in sorted(("runs", "agents", "trajectory_questions"))
    ]


def test_writes_keep_the_index_and_its_totals(db: Path, pg_url: str) -> None:
    server = parse_server_url(pg_url)
    with Store.open(db) as file, ServerStore.connect(server, create=True) as team:
        transfer.bring_in(file, team, [])
        conn = team.pg.raw
        assert _totals(conn) == _counted(conn)
        run = team.search("demo-000007")[0]
        conn.execute("UPDATE runs SET task = 'Tune the xylophone' WHERE id = %s", [run])
        assert team.search("xylophone") == [run]
        conn.execute("DELETE FROM runs WHERE id IN ('demo-000001', 'demo-000002')")
        assert _totals(conn) == _counted(conn)
        assert team.search("demo-000001") == []


def test_a_store_made_before_the_index_gets_it_on_open(db: Path, pg_url: str) -> None:
    server = parse_server_url(pg_url)
    # What the version before the index made: the same schema, without it.
    made_before = [
        statement
        for statement in postgres_schema.statements()
        if statement not in search_server_schema.statements() and " server integer" not in statement
    ]
    with postgres.connect(server) as conn, Store.open(db) as file:
        for statement in made_before:
            conn.execute(statement)
        conn.execute("INSERT INTO schema_version (id, version) VALUES (1, %s)", [SCHEMA_VERSION])
        transfer.copy_runs(transfer.SQLiteEnd(file.conn), transfer.PostgresEnd(conn))
        conn.commit()
        packs = conn.execute("SELECT count(*) FROM run_scores").fetchone()
        assert packs == (300,)
        with pytest.raises(StoreError, match="needs an upgrade"):
            postgres_schema.prepare(conn, server, upgrade=False)
        conn.rollback()
        with ServerStore.connect(server) as team:
            for query in ("inventory service", "demo-00002", "the"):
                assert team.search(query) == file.search(query)
            raw = team.pg.raw
            assert _totals(raw) == _counted(raw)
            assert raw.execute("SELECT server FROM schema_version").fetchone() == (
                postgres_schema.SERVER_REVISION,
            )
            # Filling the index changed no agent: every run keeps its pack.
            assert raw.execute("SELECT count(*) FROM run_scores").fetchone() == packs
