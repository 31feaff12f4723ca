"""The commands that work on a PostgreSQL team store give there what they give on the
SQLite file it was copied from, word for word and --json document for document; and a
store that cannot be used is one line naming host, port and database."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest
from demo_files import demo_file
from helpers import one_line_error, run_cli
from judge_server import Messages, Server, effort_by_keyword

from ppp_tui.cli.common import SERVER_COMMANDS
from ppp_tui.storage import postgres, postgres_schema, transfer
from ppp_tui.storage.location import parse_server_url
from ppp_tui.storage.store import Store

pytest.importorskip("psycopg", reason="the postgres extra (psycopg) is not installed")

import psycopg

SESSION_RUN = "sess"  # the start of the demo's runs read from sessions (edits of files)

# Each command with its arguments, as text and as --json, for one reviewer and for all.
COMMANDS = [
    ("runs",),
    ("runs", "--stage", "plan"),
    # Full-text search: the same runs in the same order (bm25 as SQLite computes it).
    ("runs", "--search", "inventory service"),
    ("runs", "--search", "demo-00002"),
    ("runs", "--search", "the"),
    ("runs", "--search", "crash upl"),
    ("runs", "--search", "'; DROP TABLE runs; --"),
    ("show", "demo-000002"),
    ("show", SESSION_RUN),
    ("show", "demo-00000"),  # ambiguous: the same error
    ("rank", "demo-000002"),
    ("rank", "demo-000002", "--no-ppp"),
    ("regret",),
    ("regret", "--all-reviewers"),
    ("regret", "--stage", "plan", "--all-reviewers"),
    ("tune", "--all-reviewers"),
    ("tune", "--per-stage", "--all-reviewers"),
    ("leaderboard", "--all-reviewers"),
    ("agreement",),
    ("ab", "--all-reviewers"),
    ("next", "--all-reviewers"),
    ("next",),
]


@pytest.fixture(scope="module")
def stores(pg_cluster: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str]]:
    """(a SQLite demo database, a PostgreSQL store holding a copy of it)."""
    path = demo_file(tmp_path_factory, "server", 300, seed=3, sessions=True)
    name = "ppp_test_commands"
    with psycopg.connect(pg_cluster, autocommit=True) as admin:
        admin.execute(f"DROP DATABASE IF EXISTS {name}")
        admin.execute(f"CREATE DATABASE {name}")
    url = f"{pg_cluster.rsplit('/', 1)[0]}/{name}"
    server = parse_server_url(url)
    with postgres.connect(server) as conn, Store.open(path) as store:
        postgres_schema.prepare(conn, server)
        transfer.copy_runs(transfer.SQLiteEnd(store.conn), transfer.PostgresEnd(conn))
        conn.commit()
    yield str(path), url
    with psycopg.connect(pg_cluster, autocommit=True) as admin:
        admin.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


@pytest.mark.parametrize("args", COMMANDS, ids=" ".join)
@pytest.mark.parametrize("as_json", [False, True], ids=["text", "json"])
def test_a_command_answers_the_same_on_both_engines(
    stores: tuple[str, str], args: tuple[str, ...], as_json: bool
) -> None:
    sqlite, server = stores
    extra = ("--json",) if as_json else ()
    on_file = run_cli(*args, *extra, "--db", sqlite)
    on_server = run_cli(*args, *extra, "--db", server)
    assert on_file.exit_code == on_server.exit_code, on_server.output
    assert on_file.stderr == on_server.stderr
    if as_json and on_file.exit_code == 0:
        assert json.loads(on_server.stdout) == json.loads(on_file.stdout)
    assert on_server.stdout == on_file.stdout


def test_the_environment_variable_names_a_server_too(
    stores: tuple[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    sqlite, server = stores
    on_file = run_cli("runs", "--json", "--db", sqlite)
    on_server = run_cli("runs", "--json", env={"PPP_TUI_DB": server})
    assert on_server.exit_code == 0, on_server.output
    assert on_server.stdout == on_file.stdout


def _password(url: str) -> str:
    return url.split("://", 1)[1].split("@", 1)[0].split(":", 1)[1]


def test_a_wrong_password_is_one_line(stores: tuple[str, str]) -> None:
    _, server = stores
    wrong = server.replace(_password(server), "not-the-password")
    line = one_line_error(run_cli("runs", "--db", wrong))
    named = parse_server_url(server)
    assert line == f"Error: {named}: the server refused the user or password"
    assert "not-the-password" not in line


def test_a_missing_database_and_an_empty_one(stores: tuple[str, str], pg_url: str) -> None:
    _, server = stores
    missing = server.rsplit("/", 1)[0] + "/nothing_here"
    line = one_line_error(run_cli("regret", "--db", missing))
    assert line == (
        f"Error: {parse_server_url(missing)}: no such database on the server;"
        " create it first (createdb, or CREATE DATABASE)"
    )
    # An empty database is not made into a store by a command that only reads.
    line = one_line_error(run_cli("runs", "--db", pg_url))
    assert line == (
        f"Error: {parse_server_url(pg_url)}: no ppp-tui store here yet; import runs into"
        " it first (`ppp-tui import FILE --db URL`)"
    )
    with psycopg.connect(pg_url) as conn:
        assert postgres_schema.tables(conn) == set()


def test_a_server_that_cannot_be_reached(stores: tuple[str, str], tmp_path: Path) -> None:
    _, server = stores
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    head, tail = server.rsplit("@", 1)
    elsewhere = f"{head}@127.0.0.1:{port}/{tail.split('/', 1)[1]}"
    line = one_line_error(run_cli("leaderboard", "--db", elsewhere))
    assert line == (
        f"Error: {parse_server_url(elsewhere)}: cannot reach the server (connection refused)"
    )
    assert _password(server) not in line


# Commands that write, in turn, each answering the same on both engines and leaving
# both stores holding the same rows.
WRITES = [
    ("prefer", "demo-000003", "codex"),
    ("prefer", "demo-000003", "--clear"),
    ("prefer", "demo-000004", "codex", "--reviewer", "ana"),
    ("prefer", "demo-000004", "nobody"),
    ("technical", "SCORES"),
    ("reviewers", "--rename", "ana", "bea"),
    ("reviewers", "--json"),
    ("runs", "--json"),
    ("regret", "--json", "--all-reviewers"),
    ("export", "--format", "json"),
    ("report", "demo-000004"),
    ("diff", "session-d5ea38829bd9"),
    # Runs read from sessions grouped and ungrouped, their marks following the agents.
    ("prefer", "session-d5ea38829bd9", "codex"),
    ("prefer", "session-8a38b629b27c", "claude-code", "--reviewer", "bea"),
    ("group", "session-d5ea38829bd9", "session-8a38b629b27c"),
    ("ungroup", "session-df98ad9baa9e"),
    ("group", "session-58285abeddf3", "session-594bd9510292", "--name", "team-run"),
    ("group", "team-run", "demo-000002"),  # refused: not read from sessions
    ("ungroup", "session-8c3994a89eb7"),  # refused: one session
    ("show", "team-run", "--json"),
    # The judge (a fake endpoint), its cache read on the second pass.
    ("judge", "--dry-run", "--json", "--limit", "40", "CONFIG"),
    ("judge", "--limit", "40", "CONFIG"),
    ("judge", "--run", "session-33015631ecdd", "--technical", "--json", "CONFIG"),
    ("judge", "--run", "session-8c3994a89eb7", "--technical", "CONFIG"),
    ("judge", "--limit", "40", "CONFIG"),
    ("judge", "--evaluate", "--limit", "5", "CONFIG"),
    ("judge", "--evaluate", "--limit", "5", "--json", "CONFIG"),
    ("regret", "--json", "--all-reviewers"),
]


def _judged(messages: Messages) -> str:
    """An effort by keyword, or a technical score."""
    if "Classify the effort" in messages[-1]["content"]:
        return effort_by_keyword(messages)
    return "Score: 0.65"


@pytest.mark.usefixtures("fast_retries")
def test_writes_leave_both_engines_the_same(
    stores: tuple[str, str],
    pg_url: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    server: Server,
) -> None:
    from helpers import dump, write_config

    from ppp_tui.storage import judgments, store_marks

    # Marks and judgments are dated: both engines' commands run at the same moment.
    monkeypatch.setattr(store_marks, "now", lambda: "2026-11-28T12:00:00Z")
    monkeypatch.setattr(judgments, "now", lambda: "2026-11-28T12:00:00Z")
    config = write_config(tmp_path / "config.toml", server)
    server.answer = _judged

    sqlite = tmp_path / "runs.db"
    sqlite.write_bytes(Path(stores[0]).read_bytes())
    assert run_cli("import", str(sqlite), "--db", pg_url).exit_code == 0
    scores = tmp_path / "scores.json"
    scores.write_text('[{"run_id": "demo-000005", "agent": "claude-code", "technical": 0.42}]')
    given = {"SCORES": (str(scores),), "CONFIG": ("--config", str(config))}
    failed = []
    for args in WRITES:
        args = tuple(word for arg in args for word in given.get(arg, (arg,)))
        on_file = run_cli(*args, "--db", str(sqlite))
        on_server = run_cli(*args, "--db", pg_url)
        assert (on_file.exit_code, on_file.stderr) == (on_server.exit_code, on_server.stderr), args
        assert on_server.stdout == on_file.stdout, args
        if on_file.exit_code:
            failed.append(args[:2])
    # Only the refusals failed; every other write did what it says on both.
    assert failed == [
        ("prefer", "demo-000004"),
        ("group", "team-run"),
        ("ungroup", "session-8c3994a89eb7"),
    ]
    import sqlite3

    with psycopg.connect(pg_url) as conn:
        on_server_rows = dump(conn)
        claims = conn.execute("SELECT count(*) FROM judge_claims").fetchone()
    on_file_rows = dump(sqlite3.connect(sqlite))
    assert on_server_rows == on_file_rows
    assert claims == (0,)
    # The judge and the grouping wrote what they say.
    assert len(on_file_rows["judgments"]) > 40
    judged = [row for row in on_file_rows["trajectory_questions"] if '"judged"' in row]
    assert judged and any('"judged"' in row for row in on_file_rows["agents"])
    assert sum(row[0].startswith('["team-run", ') for row in on_file_rows["agents"]) == 2


def test_demo_and_config_show_name_the_store(pg_url: str, tmp_path: Path) -> None:
    sqlite = str(tmp_path / "demo.db")
    name = str(parse_server_url(pg_url))
    for args in (
        ("demo", "--runs", "300", "--seed", "2"),
        ("demo", "--runs", "300", "--seed", "2"),  # refused: it holds runs
        ("demo", "--runs", "200", "--seed", "4", "--replace"),
    ):
        on_file = run_cli(*args, "--db", sqlite)
        on_server = run_cli(*args, "--db", pg_url)
        assert on_server.exit_code == on_file.exit_code, on_server.output
        assert on_server.output == on_file.output.replace(sqlite, name)
    for read in (("runs", "--json"), ("regret", "--json", "--all-reviewers")):
        assert run_cli(*read, "--db", pg_url).stdout == run_cli(*read, "--db", sqlite).stdout
    on_file = json.loads(run_cli("config", "show", "--json", "--db", sqlite).stdout)
    on_server = json.loads(run_cli("config", "show", "--json", "--db", pg_url).stdout)
    assert on_server == {**on_file, "db": name}
    assert _password(pg_url) not in name


def test_every_command_that_works_on_a_server_is_compared() -> None:
    compared = {args[0] for args in (*COMMANDS, *WRITES)} | {"demo", "config show"}
    # The app (browse, and serve, which serves it): test_server_app.py compares it.
    assert compared | {"browse", "serve"} == SERVER_COMMANDS
