"""`ppp-tui import` of every form (JSON, JSON Lines, standard input, spec-kit's
database, UserVille rollouts, agents' sessions) straight into a PostgreSQL team store:
the same tables, lines and errors as into a SQLite file, again adding nothing, a grown
session updating its run in place, a bad run writing nothing, and imports at once
losing nothing."""

from __future__ import annotations

import json
import sqlite3
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
from helpers import dump, one_line_error, run_cli
from transcripts import claude_lines, write_lines

import ppp_tui.storage.sessions.importing  # noqa: F401  (its clock frozen with the others')
from ppp_tui.storage import database, rows  # noqa: F401
from ppp_tui.storage.demo import generate
from ppp_tui.storage.files import read_records
from ppp_tui.storage.location import parse_server_url

pytest.importorskip("psycopg", reason="the postgres extra (psycopg) is not installed")

import psycopg

from ppp_tui.storage.store_server import ServerStore

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
SESSIONS = ROOT / "tests" / "data" / "sessions"
STAMP = "2026-01-02T03:04:05Z"


@pytest.fixture(autouse=True)
def frozen_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every time an import or a mark writes is the same, so two stores compare whole."""
    for module in list(sys.modules.values()):
        found = getattr(module, "now", None)
        if getattr(module, "__name__", "").startswith("ppp_tui.") and _is_clock(found):
            monkeypatch.setattr(module, "now", lambda: STAMP)
    monkeypatch.setenv("PPP_TUI_REVIEWER", "ana")


def _is_clock(found: object) -> bool:
    """database.now, bound under its name in a module that imported it."""
    return callable(found) and (
        getattr(found, "__module__", None),
        getattr(found, "__qualname__", None),
    ) == (database.__name__, "now")


@pytest.fixture(scope="module")
def many_runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """JSON Lines enough for the import's parse workers (importer._FORK_MIN)."""
    path = tmp_path_factory.mktemp("lines") / "many.jsonl"
    with path.open("w", encoding="utf-8") as out:
        for run in generate(1300, seed=3):
            out.write(json.dumps(run) + "\n")
    return path


def _both(pg_url: str, db: Path, *args: str, stdin: str | None = None) -> list[str]:
    """`import ARGS` into the store and into the file: the same exit and lines (the
    store named where the file is), given back."""
    name = str(parse_server_url(pg_url))
    outputs = []
    for target, shown in ((pg_url, name), (str(db), str(db))):
        from click.testing import CliRunner

        from ppp_tui.cli import cli

        result = CliRunner().invoke(cli, ["import", *args, "--db", target], input=stdin)
        assert "Traceback" not in result.output
        outputs.append((result.exit_code, result.stdout.replace(shown, "DB"), result.stderr))
    assert outputs[0] == outputs[1]
    return [outputs[0][1], outputs[0][2]]


def _same(pg_url: str, db: Path) -> dict[str, list[tuple[Any, ...]]]:
    with psycopg.connect(pg_url) as conn:
        held = dump(conn)
    assert held == dump(sqlite3.connect(db))
    assert all(json.dumps(STAMP) in row for row in held["runs"])  # the clock was frozen
    return held


def test_every_form_gives_the_same_tables_and_again_adds_nothing(
    pg_url: str, tmp_path: Path, many_runs: Path
) -> None:
    db = tmp_path / "file.db"
    one = json.loads((EXAMPLES / "runs.jsonl").read_text().splitlines()[0])
    piped = dict(one, id="piped-run", preferred_agent=one["agents"][0]["name"])
    forms: list[tuple[tuple[str, ...], str | None]] = [
        ((str(EXAMPLES / "runs.jsonl"),), None),
        (("-",), json.dumps([piped])),
        ((str(EXAMPLES / "spec-kit-consensus.db"),), None),
        (("--format", "userville", str(EXAMPLES / "userville-rollouts.jsonl")), None),
        ((str(many_runs),), None),
        ((str(SESSIONS / "claude-code"), str(SESSIONS / "codex")), None),
        ((str(SESSIONS / "gemini-cli"),), None),
    ]
    first = [_both(pg_url, db, *args, stdin=stdin)[0] for args, stdin in forms]
    assert first[0] == "imported 3 runs into DB\n"
    assert first[1] == "imported 1 run into DB; 1 preferred mark\n"
    assert first[4].startswith("imported 1300 runs into DB; ")
    assert "7 new runs" in first[5]
    held = _same(pg_url, db)
    assert len(held["runs"]) == 3 + 1 + 13 + 2 + 1300 + 7 + 3
    assert len(held["marks"]) > 500  # the demo's marks, each its reviewer's current one
    again = [_both(pg_url, db, *args, stdin=stdin)[0] for args, stdin in forms]
    assert again[0] == "imported 0 runs into DB; 3 already present\n"
    assert again[4] == "imported 0 runs into DB; 1300 already present\n"
    assert "0 new runs; 7 unchanged" in again[5]
    assert _same(pg_url, db) == held
    # The identity of agents goes on after the ids given: a new agent gets a free one.
    with psycopg.connect(pg_url) as conn:
        (largest,) = conn.execute("SELECT max(id) FROM agents").fetchone() or (0,)
        (following,) = conn.execute(
            "SELECT nextval(pg_get_serial_sequence('agents', 'id'))"
        ).fetchone() or (0,)
    assert following == largest + 1


def test_a_grown_session_updates_its_run_in_place(pg_url: str, tmp_path: Path) -> None:
    db = tmp_path / "file.db"
    session = write_lines(tmp_path / "s" / "s1.jsonl", claude_lines("s1", "/w", "claude-opus-4-5"))
    other = write_lines(tmp_path / "s" / "s2.jsonl", claude_lines("s2", "/w", "claude-sonnet-4-5"))
    out = _both(pg_url, db, str(session), str(other))[0]
    assert "2 sessions" in out and "1 new run" in out
    rid = out.split("new     ")[1].split()[0]
    agent = "claude-code/claude-opus-4-5"
    ratings = tmp_path / "rating.csv"
    ratings.write_text(f"run_id,agent,technical\n{rid},{agent},0.4\n", encoding="utf-8")
    for target in (pg_url, str(db)):
        assert run_cli("prefer", rid, agent, "--db", target).exit_code == 0
        assert run_cli("technical", str(ratings), "--db", target).exit_code == 0
    follow_up = claude_lines("s1", "/w", "claude-opus-4-5", "2026-03-02T11:00", "Now a README.")
    for line in follow_up:
        line["uuid"] = f"{line['uuid']}-2"
        if line["type"] == "assistant":
            line["message"] = dict(line["message"], id=line["message"]["id"] + "-2")
    with session.open("a", encoding="utf-8") as handle:
        handle.writelines(json.dumps(line) + "\n" for line in follow_up)
    grown = _both(pg_url, db, str(session), str(other))[0]
    assert "0 new runs; 1 updated; 1 unchanged" not in grown  # one run: updated
    assert "0 new runs; 1 updated" in grown
    held = _same(pg_url, db)
    turns = [row for row in held["trajectory_turns"] if json.loads(row[0]) == [rid, agent]]
    assert len(turns) == 2  # the first prompt and the one added
    # The mark and the rating by hand outlive the update, on both.
    assert [json.loads(v) for v in held["marks"][0][:3]] == [rid, "ana", agent]
    rated = [row for row in held["agents"] if json.loads(row[0]) == [rid, agent]]
    assert "0.4" in rated[0] and '"hand"' in rated[0]


def test_a_bad_run_writes_nothing_and_says_so_in_one_line(
    pg_url: str, tmp_path: Path, many_runs: Path
) -> None:
    db = tmp_path / "file.db"
    _both(pg_url, db, str(EXAMPLES / "runs.jsonl"))
    lines = many_runs.read_text(encoding="utf-8").splitlines()
    lines[1200] = '{"id": "broken", "agents": []}'
    bad = tmp_path / "bad.jsonl"
    bad.write_text("\n".join(lines) + "\n", encoding="utf-8")
    errors = []
    for target in (pg_url, str(db)):
        errors.append(one_line_error(run_cli("import", str(bad), "--db", target)))
    assert errors[0] == errors[1]
    assert errors[0].startswith(f"Error: {bad}:1201: ")
    assert len(_same(pg_url, db)["runs"]) == 3  # the 1200 good runs before it: none
    skipped = _both(pg_url, db, "--skip-invalid", str(bad))
    assert skipped[0].startswith("imported 1299 runs into DB; 1 invalid skipped; ")
    _same(pg_url, db)


def test_imports_at_once_from_two_places_lose_nothing(pg_url: str, many_runs: Path) -> None:
    server = parse_server_url(pg_url)
    ServerStore.connect(server, create=True).close()
    lines = many_runs.read_text(encoding="utf-8").splitlines()
    halves = [lines[:800], lines[500:]]  # 300 runs in both
    added: list[int] = []

    def bring(part: list[str], number: int) -> None:
        path = many_runs.parent / f"part{number}.jsonl"
        path.write_text("\n".join(part) + "\n", encoding="utf-8")
        with ServerStore.connect(server) as store:
            added.append(store.import_records(read_records(str(path))).added)

    workers = [threading.Thread(target=bring, args=(half, n)) for n, half in enumerate(halves)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    assert sorted(added) == [500, 800]  # the first to commit all its runs, then the rest
    with psycopg.connect(pg_url) as conn:
        assert conn.execute("SELECT count(*), count(DISTINCT id) FROM runs").fetchone() == (
            1300,
            1300,
        )
        (agents,) = conn.execute("SELECT count(DISTINCT id) FROM agents").fetchone() or (0,)
    assert agents == sum(len(json.loads(line)["agents"]) for line in lines)


def test_the_store_the_environment_names_takes_imports_and_a_nul_writes_nothing(
    pg_url: str, tmp_path: Path
) -> None:
    env = {"PPP_TUI_DB": pg_url}
    result = run_cli("import", str(EXAMPLES / "runs.jsonl"), env=env)
    assert result.stdout == f"imported 3 runs into {parse_server_url(pg_url)}\n"
    one = json.loads((EXAMPLES / "runs.jsonl").read_text().splitlines()[0])
    fine = dict(one, id="fine")
    held = dict(one, id="nul", task="a\u0000b")  # text PostgreSQL cannot hold
    lines = tmp_path / "nul.jsonl"
    lines.write_text(f"{json.dumps(fine)}\n{json.dumps(held)}\n", encoding="utf-8")
    line = one_line_error(run_cli("import", str(lines), "--skip-invalid", env=env))
    assert line.endswith("database error: PostgreSQL text fields cannot contain NUL (0x00) bytes")
    with psycopg.connect(pg_url) as conn:
        assert conn.execute("SELECT count(*) FROM runs").fetchone() == (3,)


def test_sessions_named_into_one_run_move_with_their_marks(pg_url: str, tmp_path: Path) -> None:
    db = tmp_path / "file.db"
    first = write_lines(tmp_path / "s" / "s1.jsonl", claude_lines("s1", "/a", "claude-opus-4-5"))
    other = claude_lines("s2", "/b", "claude-sonnet-4-5", prompt="Another task entirely.")
    second = write_lines(tmp_path / "s" / "s2.jsonl", other)
    out = _both(pg_url, db, str(first), str(second))[0]
    assert "2 new runs" in out
    rid = out.split("new     ")[1].split()[0]
    agent = out.split("new     ")[1].split()[1].rstrip(",")
    for target in (pg_url, str(db)):
        assert run_cli("prefer", rid, agent, "--db", target).exit_code == 0
    moved = _both(pg_url, db, "--run", "mine", str(first), str(second))[0]
    assert "1 new run" in moved and "left with no session and removed" in moved
    held = _same(pg_url, db)
    assert [json.loads(row[0]) for row in held["runs"]] == ["mine"]
    assert [json.loads(v) for v in held["marks"][0][:3]] == ["mine", "ana", agent]
