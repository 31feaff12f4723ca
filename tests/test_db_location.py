"""--db and $PPP_TUI_DB given a URL: never a file path; a PostgreSQL server's URL named
by its host, port and database, never the password; and every command with --db either
works on a server or reads no database."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from helpers import one_line_error, run_cli

from ppp_tui.storage.database import StoreError
from ppp_tui.storage.location import is_server_url, looks_like_url, parse_server_url

EXAMPLES = Path(__file__).resolve().parent.parent / "examples" / "runs.jsonl"
PASSWORD = "s3cret-pw-never-shown"
URL = f"postgresql://alice:{PASSWORD}@db.example.com:6543/team?sslmode=require"
NAMED = "PostgreSQL host db.example.com, port 6543, database team"


@pytest.fixture
def empty_cwd(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A working folder to check that nothing is created in it."""
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.mark.parametrize("given", ["--db", "$PPP_TUI_DB"])
def test_a_server_url_is_never_taken_for_a_file(
    given: str, empty_cwd: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every command that reads a database works on a server (test_server_commands.py);
    one that asked for a file's path all the same would be refused in one line, never
    given a `postgresql:` folder."""
    from ppp_tui.storage.config import db_path

    if given == "--db":
        with pytest.raises(StoreError) as refused:
            db_path(URL)
    else:
        monkeypatch.setenv("PPP_TUI_DB", URL)
        with pytest.raises(StoreError) as refused:
            db_path()
    assert str(refused.value) == (
        f"{NAMED} ({given}): this command does not work on a PostgreSQL team"
        " store yet; use a SQLite database file"
    )
    assert PASSWORD not in str(refused.value)
    assert list(empty_cwd.iterdir()) == []


def test_other_schemes_are_not_paths_either(empty_cwd: Path) -> None:
    line = one_line_error(run_cli("runs", "--db", "mysql://root:hunter22@h/d"))
    assert "hunter22" not in line
    assert line == (
        "Error: mysql://: not a kind of database ppp-tui can use"
        " (a SQLite file's path, or a postgresql:// URL)"
    )
    assert list(empty_cwd.iterdir()) == []


def test_a_command_reading_no_database_ignores_db(empty_cwd: Path) -> None:
    result = run_cli("score", str(EXAMPLES), "--db", URL)
    assert result.exit_code == 0, result.output
    assert "agent_b" in result.output
    result = run_cli("config", "validate", "--db", URL)
    assert result.exit_code == 0, result.output


def test_a_path_that_merely_mentions_a_scheme_is_still_a_path(tmp_path: Path) -> None:
    # Only `scheme://` at the start makes a URL: a folder named like one is a path.
    folder = tmp_path / "postgresql:"
    folder.mkdir()
    db = folder / "runs.db"
    result = run_cli("import", str(EXAMPLES), "--db", str(db))
    assert result.exit_code == 0, result.output
    assert db.exists()
    assert not looks_like_url(str(db))


@pytest.mark.parametrize(
    ("url", "host", "port", "database", "user"),
    [
        ("postgresql://alice:pw@db:5433/team", "db", "5433", "team", "alice"),
        ("postgres://bob@db/team", "db", "5432", "team", "bob"),
        ("postgresql://al%40ice@[::1]:7000/my%20db", "::1", "7000", "my db", "al@ice"),
        ("postgresql://h1:1,h2:2/d", "h1", "1", "d", "env-user"),
        ("postgresql:///d?host=/run/pg&port=6000", "/run/pg", "6000", "d", "env-user"),
        ("postgresql://h/?dbname=x&user=u", "h", "5432", "x", "u"),
        ("postgresql://carol@h", "h", "5432", "carol", "carol"),
        ("postgresql://", "env-host", "6001", "env-db", "env-user"),
    ],
)
def test_a_server_url_names_libpq_s_host_port_and_database(
    url: str, host: str, port: str, database: str, user: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PGUSER", "env-user")
    if url == "postgresql://":
        monkeypatch.setenv("PGHOST", "env-host")
        monkeypatch.setenv("PGPORT", "6001")
        monkeypatch.setenv("PGDATABASE", "env-db")
    else:
        for name in ("PGHOST", "PGPORT", "PGDATABASE"):
            monkeypatch.delenv(name, raising=False)
    server = parse_server_url(url)
    assert (server.host, server.port, server.database, server.user) == (
        host,
        port,
        database,
        user,
    )
    assert server.url == url  # what connecting takes, password and all
    assert "pw" not in str(server)


@pytest.mark.parametrize(
    "url",
    [
        "postgresql://u@h:99999/d",
        "postgresql://u@h:0/d",
        "postgresql://u@h:abc/d",
        "postgresql://u@h/d?port=70000",
        "postgresql://u@h:٥٤٣٢/d",  # digits, but not ASCII ones
    ],
)
def test_a_port_out_of_range_is_named_as_such(url: str) -> None:
    result = run_cli("runs", "--db", url)
    assert result.exit_code == 1
    line = one_line_error(result)
    assert line.startswith("Error: PostgreSQL host h, port ")
    assert line.endswith(", database d: the port must be a number from 1 to 65535")


def test_libpq_defaults_without_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("PGHOST", "PGPORT", "PGDATABASE", "PGUSER"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("USER", "dana")
    monkeypatch.setenv("LOGNAME", "dana")
    server = parse_server_url("postgresql://")
    assert (server.host, server.port, server.database) == ("localhost", "5432", "dana")


@pytest.mark.parametrize(
    ("value", "url", "server"),
    [
        ("postgresql://h/d", True, True),
        ("POSTGRES://h/d", True, True),
        ("sqlite:///x.db", True, False),
        ("postgresql:/h/d", False, False),
        ("postgresql:", False, False),
        ("runs.db", False, False),
        ("./postgresql://x", False, False),
        (os.path.join("C:", "x.db"), False, False),
    ],
)
def test_what_counts_as_a_url(value: str, url: bool, server: bool) -> None:
    assert looks_like_url(value) is url
    assert is_server_url(value) is server
    if url and not server:
        with pytest.raises(StoreError, match="not a kind of database"):
            parse_server_url(value)


def test_every_command_with_db_is_covered() -> None:
    """Each command taking --db either works on a server (test_server_commands.py) or
    reads no database."""
    import click

    from ppp_tui.cli import cli
    from ppp_tui.cli.common import SERVER_COMMANDS

    def walk(group: click.Group, prefix: str) -> list[str]:
        found = []
        context = click.Context(group)
        for name in group.list_commands(context):
            command = group.get_command(context, name)
            assert command is not None
            if isinstance(command, click.Group):
                found += walk(command, f"{prefix}{name} ")
            elif any("--db" in option.opts for option in command.params):
                found.append(f"{prefix}{name}")
        return found

    reads_none = {"score", "classify", "config init", "config validate"}
    # import: between a ppp-tui database and a store (test_team_import.py)
    assert set(walk(cli, "")) == SERVER_COMMANDS | reads_none | {"import"}


@pytest.mark.parametrize(
    "url",
    [
        "postgresql://ppp:[b]pa/ss[/b]word@localhost/ppp",  # a `/` in the password
        "postgresql://ppp:pa@ss-word@localhost/ppp",  # an `@` in it
        "postgresql://[b]x[/b]:pass-word@[red]host/ppp",
    ],
)
def test_a_password_a_url_would_split_is_refused_without_it(url: str) -> None:
    line = one_line_error(run_cli("runs", "--db", url))
    assert line == (
        "Error: a postgresql:// URL with `/` or `@` in its user or password, or `@` in its"
        " database: write them as %2F and %40 (or keep the password in ~/.pgpass)"
    )


@pytest.mark.parametrize(
    ("url", "named"),
    [
        # Everything before the first `@` is the user's, `?` included, as libpq reads it.
        ("postgresql://u:se?cret-word@h/d", "PostgreSQL host h, port 5432, database d"),
        ("postgresql://u:p%40ss-word@h/d", "PostgreSQL host h, port 5432, database d"),
    ],
)
def test_a_password_with_odd_characters_is_in_no_field(url: str, named: str) -> None:
    assert str(parse_server_url(url)) == named


def test_a_url_libpq_cannot_read_is_named_without_its_password() -> None:
    pytest.importorskip("psycopg", reason="the postgres extra (psycopg) is not installed")
    line = one_line_error(run_cli("runs", "--db", "postgresql://u:sec%zzret-word@h/d"))
    assert line == (
        "Error: PostgreSQL host h, port 5432, database d: not a usable URL (invalid"
        ' percent-encoded token: "***")'
    )


def test_a_long_database_name_is_cut_short_in_the_line() -> None:
    server = parse_server_url(f"postgresql://u:{PASSWORD}@h/{'d' * 5000}")
    assert str(server) == f"PostgreSQL host h, port 5432, database {'d' * 40}… (5,000 characters)"
    assert server.database == "d" * 5000  # what connecting takes
