"""A team store given wrong, odd or hostile things: no password, a role that may only
read, a database of another program's, host names no resolver takes, passwords a URL
splits. Each is one line (exit 1, no traceback, nothing a terminal acts on, never the
password), and nothing is lost."""

from __future__ import annotations

import json
import secrets
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers import one_line_error, run_cli, run_ok

from ppp_tui.storage import postgres_schema
from ppp_tui.storage.location import parse_server_url

psycopg = pytest.importorskip("psycopg", reason="the postgres extra (psycopg) is not installed")


def _parts(url: str) -> tuple[str, str, str, str]:
    """(user, password, host:port, database) of a test server's URL."""
    rest = url.split("://", 1)[1]
    userinfo, _, where = rest.partition("@")
    user, _, password = userinfo.partition(":")
    host_port, _, database = where.partition("/")
    return user, password, host_port, database


@pytest.fixture
def store(pg_url: str) -> str:
    """A small team store (the demo's runs)."""
    run_ok("demo", "--runs", "20", "--db", pg_url)
    return pg_url


@pytest.fixture
def reader(store: str, pg_cluster: str) -> Iterator[str]:
    """The URL of `store` for a role that may read it and write nothing."""
    role, password = f"reader_{secrets.token_hex(4)}", secrets.token_hex(8)
    _, _, host_port, database = _parts(store)
    with psycopg.connect(pg_cluster, autocommit=True) as admin:
        admin.execute(f"CREATE ROLE {role} LOGIN PASSWORD '{password}'")
    with psycopg.connect(store, autocommit=True) as owner:
        owner.execute(f"GRANT USAGE ON SCHEMA public TO {role}")
        owner.execute(f"GRANT SELECT ON ALL TABLES IN SCHEMA public TO {role}")
    try:
        yield f"postgresql://{role}:{password}@{host_port}/{database}"
    finally:
        with psycopg.connect(store, autocommit=True) as owner:
            owner.execute(f"DROP OWNED BY {role}")
        with psycopg.connect(pg_cluster, autocommit=True) as admin:
            admin.execute(f"DROP ROLE {role}")


def _marks(url: str) -> list[tuple[object, ...]]:
    with psycopg.connect(url) as conn:
        rows: list[tuple[object, ...]] = conn.execute(
            "SELECT run_id, reviewer, agent FROM preferred_marks ORDER BY run_id, reviewer"
        ).fetchall()
    return rows


def test_no_password_given_says_where_one_goes(
    pg_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    user, _, host_port, database = _parts(pg_url)
    monkeypatch.delenv("PGPASSWORD", raising=False)
    monkeypatch.setenv("PGPASSFILE", str(tmp_path / "no-pgpass"))
    url = f"postgresql://{user}@{host_port}/{database}"
    line = one_line_error(run_cli("runs", "--db", url))
    assert line == (
        f"Error: {parse_server_url(url)}: the server asks user {user} for a password and"
        " none was given (put it in ~/.pgpass, mode 600, or $PGPASSWORD)"
    )


def test_a_role_that_may_only_read_is_told_so_and_writes_nothing(
    store: str, reader: str, tmp_path: Path
) -> None:
    assert run_cli("runs", "--db", reader).exit_code == 0  # reading is allowed
    before = _marks(store)
    run_id = "demo-000002"
    shown = run_cli("show", run_id, "--db", reader, "--json").stdout
    agent = str(json.loads(shown)["agents"][0]["name"])
    line = one_line_error(run_cli("prefer", run_id, agent, "--reviewer", "eve", "--db", reader))
    role, password, _, _ = _parts(reader)
    assert line == (
        f"Error: {parse_server_url(reader)}: user {role} may not do this here (permission"
        " denied for table preferred_marks); the database's owner can grant it (GRANT)"
    )
    assert password not in line
    assert _marks(store) == before


def test_another_program_s_database_is_named_so_by_a_command_that_reads(pg_url: str) -> None:
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("CREATE TABLE customers (id integer PRIMARY KEY, name text)")
        conn.execute("INSERT INTO customers VALUES (1, 'Ada')")
    line = one_line_error(run_cli("runs", "--db", pg_url))
    assert line == (
        f"Error: {parse_server_url(pg_url)}: not a ppp-tui database (it has other tables:"
        " customers)"
    )
    with psycopg.connect(pg_url) as conn:
        assert postgres_schema.tables(conn) == {"customers"}
        assert conn.execute("SELECT name FROM customers").fetchall() == [("Ada",)]


def test_a_host_name_no_resolver_takes_is_an_unknown_host(pg_url: str) -> None:
    user, password, _, database = _parts(pg_url)
    url = f"postgresql://{user}:{password}@{'h' * 300}/{database}"
    line = one_line_error(run_cli("runs", "--db", url))
    assert line == (
        f"Error: PostgreSQL host {'h' * 40}… (300 characters), port 5432, database"
        f" {database}: unknown host (not a usable host name)"
    )


def test_markup_and_escapes_in_the_url_reach_no_terminal(pg_url: str) -> None:
    user, password, _, _ = _parts(pg_url)
    url = f"postgresql://{user}:{password}@no-such-host.invalid/\x1b]0;owned\x07[b]db[/b]"
    line = one_line_error(run_cli("runs", "--db", url + "?connect_timeout=3"))
    assert line.endswith(": unknown host")
    assert "[b]db[/b]" in line and password not in line
