"""A PostgreSQL server's connection (storage/postgres.py) against a real server: each
failure one line naming host, port and database, never the password; nothing
half-written stays."""

from __future__ import annotations

import socket
import sys
from typing import Any

import pytest

from ppp_tui.storage import postgres
from ppp_tui.storage.database import StoreError
from ppp_tui.storage.location import parse_server_url

pytest.importorskip("psycopg", reason="the postgres extra (psycopg) is not installed")

import psycopg


def _with(url: str, **parts: str) -> str:
    """`url` with its password, port or database replaced."""
    head, database = url.rsplit("/", 1)
    scheme_user, _, host_port = head.rpartition("@")
    scheme, _, userinfo = scheme_user.partition("://")
    user, _, password = userinfo.partition(":")
    host, _, port = host_port.partition(":")
    password = parts.get("password", password)
    return (
        f"{scheme}://{parts.get('user', user)}:{password}@{parts.get('host', host)}"
        f":{parts.get('port', port)}/{parts.get('database', database)}"
    )


def _password(url: str) -> str:
    return url.split("://", 1)[1].split("@", 1)[0].split(":", 1)[1]


def _refused(url: str) -> str:
    server = parse_server_url(url)
    with pytest.raises(StoreError) as caught:
        postgres.connect(server)
    line = str(caught.value)
    assert "\n" not in line
    assert line.startswith(f"PostgreSQL host {server.host}, port {server.port}, database ")
    assert _password(url) not in line
    return line


def test_a_connection_answers(pg_url: str) -> None:
    with postgres.connect(parse_server_url(pg_url)) as conn:
        assert conn.execute("SELECT current_database()").fetchone() == (pg_url.rsplit("/")[-1],)


def test_a_wrong_password_is_one_line_without_it(pg_url: str) -> None:
    url = _with(pg_url, password="wrong-password-123")
    database = pg_url.rsplit("/")[-1]
    assert _refused(url).endswith(f"database {database}: the server refused the user or password")


def test_an_unknown_user_is_refused_the_same_way(pg_url: str) -> None:
    assert _refused(_with(pg_url, user="nobody")).endswith(
        ": the server refused the user or password"
    )


def test_a_missing_database_says_to_create_it(pg_url: str) -> None:
    line = _refused(_with(pg_url, database="no_such_db"))
    assert line.endswith(
        "database no_such_db: no such database on the server;"
        " create it first (createdb, or CREATE DATABASE)"
    )


def test_a_port_nobody_listens_on_cannot_be_reached(pg_url: str) -> None:
    with socket.socket() as probe:  # a free port, closed again
        probe.bind(("127.0.0.1", 0))
        port = str(probe.getsockname()[1])
    line = _refused(_with(pg_url, port=port))
    assert line.endswith(
        f"port {port}, database {pg_url.rsplit('/')[-1]}: cannot reach"
        " the server (connection refused)"
    )


def test_an_unknown_host(pg_url: str) -> None:
    line = _refused(_with(pg_url, host="no-such-host.invalid") + "?connect_timeout=3")
    assert line.endswith(": unknown host")


def test_a_server_that_goes_away_mid_command_leaves_nothing_written(
    pg_url: str, pg_cluster: str
) -> None:
    server = parse_server_url(pg_url)
    with postgres.connect(server, autocommit=True) as setup:
        setup.execute("CREATE TABLE marks (n integer)")
    conn = postgres.connect(server)

    def write(conn: psycopg.Connection[Any]) -> None:
        conn.execute("INSERT INTO marks VALUES (1)")
        # An administrator (or a restart) ends this connection half-way through.
        with psycopg.connect(pg_url, autocommit=True) as admin:
            admin.execute("SELECT pg_terminate_backend(%s)", [conn.info.backend_pid])
        conn.execute("INSERT INTO marks VALUES (2)")

    with pytest.raises(psycopg.Error) as raised, conn.transaction():
        write(conn)
    line = str(postgres.server_error(server, raised.value))
    assert line.startswith(f"{server}: the connection to the server was lost (")
    assert line.endswith("); nothing more was written")
    assert _password(pg_url) not in line
    conn.close()
    with postgres.connect(server) as check:
        assert check.execute("SELECT count(*) FROM marks").fetchone() == (0,)


def test_without_psycopg_the_line_says_how_to_install_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "psycopg", None)
    with pytest.raises(StoreError) as caught:
        postgres.connect(parse_server_url("postgresql://u:pw@h/d"))
    assert str(caught.value) == (
        "a PostgreSQL team store needs psycopg: pip install 'ppp-tui[postgres]'"
    )
