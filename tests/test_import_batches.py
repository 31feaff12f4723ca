"""A parse worker's batch sent as a small database and copied in with INSERT ... SELECT
(rows.batch_database, rows.copy_batch): held to the rows written value by value."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from helpers import table_columns

from ppp_tui.core import model
from ppp_tui.storage import importer, rows
from ppp_tui.storage.demo import generate
from ppp_tui.storage.files import ParsedRecord, read_records
from ppp_tui.storage.store import Store

_STAMP = "2026-01-02T03:04:05Z"


def _runs() -> list[model.Run]:
    """Runs filling every table and every optional column an import writes."""
    dialog = model.Question(
        "Which database?",
        model.Effort.HIGH,
        2,
        model.Source.LABEL,
        asked_with=model.AskedWith.TOOL,
        options=("sqlite", "postgres"),
        answer="sqlite",
        seconds_to_answer=4.5,
    )
    questions = (
        model.Question("Is this ok?", model.Effort.LOW, 1, model.Source.CLASSIFIER),
        dialog,
    )
    violations = (
        model.Violation("no_questions", model.Severity.WARNING, 0.25, 1),
        model.Violation("my own rule", model.Severity.ERROR, None, None, model.Source.CHECKER),
    )
    turns = (
        model.Turn("p1", "r1", 12, 300, "2026-01-01T00:00:00Z", (("tool", "ls"),)),
        model.Turn(),
    )
    edit = model.Edit(1, "app.py", 2, 1, "--- a/app.py\n+++ b/app.py\n@@ -1 +1,2 @@\n-a\n+b\n+c\n")
    return [
        model.Run(
            "full",
            (
                model.Agent(
                    "plain", 0.5, model.Trajectory(turns, questions, violations, ("x",)), "m"
                ),
                model.Agent("failed", 0.0, failure="crashed", output="trace"),
                model.Agent(
                    "session",
                    0.75,
                    models=("m1", "m2"),
                    sessions=("s-1",),
                    technical_source="pytest: 3 passed",
                    edits=(edit,),
                ),
            ),
            "spec-1",
            "plan",
            "the [b]task[/]",
            "2026-01-01T00:00:00Z",
            ("no_questions",),
            "plain",
            "session",
            (0.5, -1.0),
            json.dumps({"status": "ok"}),
        ),
        model.Run("short", (model.Agent("only", 0.25, model.Trajectory((), (questions[0],))),)),
        model.Run("marked", (model.Agent("a", 1.0), model.Agent("b", 0.0)), preferred_agent="b"),
    ]


def _tables(conn: sqlite3.Connection) -> dict[str, list[tuple[Any, ...]]]:
    tables = {}
    for (name,) in conn.execute(
        "SELECT name FROM main.sqlite_master WHERE type = 'table' AND name NOT LIKE '%fts%'"
    ):
        order = {"run_scores": "run_id", "marks": "run_id, reviewer"}.get(name, "rowid")
        tables[name] = conn.execute(f"SELECT * FROM main.{name} ORDER BY {order}").fetchall()
    return tables


def _store_with_a_run(path: Path) -> Store:
    """A store holding one run already (and its mark), so ids start past 1."""
    store = Store.open(path, create=True)
    first = model.Run("first", (model.Agent("a", 0.5), model.Agent("b", 0.5)), preferred_agent="a")
    store.import_records([ParsedRecord("<test>", None, "$", None, parsed=first)])
    return store


def test_a_batch_copied_in_writes_what_its_rows_written_one_by_one_write(
    tmp_path: Path,
) -> None:
    with _store_with_a_run(tmp_path / "values.db") as store:
        conn = store.conn
        built = rows.Rows(_STAMP, rows.next_agent(conn), "ann")
        for run in _runs():
            built.add(run)
        conn.execute("BEGIN")
        rows.write(conn, built.take())
        conn.execute("COMMIT")
        by_values = _tables(conn)
    with _store_with_a_run(tmp_path / "copied.db") as store:
        conn = store.conn
        with rows.batches_attached(conn) as schema:
            assert schema is not None
            built = rows.Rows(_STAMP, 0, "ann")  # a worker counts agents from 0
            for run in _runs():
                built.add(run)
            data = rows.batch_database(schema, built.take())
            conn.execute("BEGIN")
            rows.copy_batch(conn, data, rows.next_agent(conn))
            conn.execute("COMMIT")
        copied = _tables(conn)
        assert rows.BATCH_SCHEMA not in {row[1] for row in conn.execute("PRAGMA database_list")}
        read = store.get_run("full")
        assert read is not None
        assert read.agents[0] == _runs()[0].agents[0]  # its turns, questions, violations
    assert copied == by_values
    assert len(copied["agent_edits"]) == 1 and len(copied["trajectory_violations"]) == 2
    assert sorted(row[1] for row in copied["agents"]) == sorted(
        ["first", "first", "full", "full", "full", "short", "marked", "marked"]
    )
    # Agent ids go on from the run there before; trajectories share them.
    assert [row[0] for row in copied["agents"]] == list(range(1, 9))
    assert {row[0] for row in copied["trajectories"]} == {3, 6}


@contextmanager
def _no_batches(conn: sqlite3.Connection) -> Iterator[list[str] | None]:
    yield None


@pytest.mark.parametrize("existing", [False, True])
def test_workers_sending_databases_or_values_write_the_same(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, existing: bool
) -> None:
    """The parallel import, its batches copied in or (where a batch cannot be loaded from
    bytes) sent as values: same rows, same report, into a new or a filled database."""
    lines = [json.dumps(run) for run in generate(2200, seed=9)]
    lines += lines[5:15]  # repeats, some in another worker's batch
    lines.insert(900, "{not json")
    source = tmp_path / "runs.jsonl"
    source.write_text("\n".join(lines) + "\n")

    def run_import(path: Path) -> tuple[Any, ...]:
        store = _store_with_a_run(path) if existing else Store.open(path, create=True)
        with store:
            report = store.import_records(read_records(str(source)), skip_invalid=True)
            tables = _tables(store.conn)
            stamps = {row[0] for row in store.conn.execute("SELECT imported_at FROM runs")}
            stamps |= {row[0] for row in store.conn.execute("SELECT marked_at FROM marks")}
            attached = {row[1] for row in store.conn.execute("PRAGMA database_list")}
        for table in ("runs", "preferred_marks", "marks"):  # the import's own times out
            tables[table] = [tuple(v for v in row if v not in stamps) for row in tables[table]]
        return report.added, report.skipped, report.invalid, report.marks, tables, attached

    assert importer._can_fork()
    copied = run_import(tmp_path / "copied.db")
    monkeypatch.setattr(rows, "batches_attached", _no_batches)
    by_values = run_import(tmp_path / "values.db")
    assert copied == by_values
    assert copied[:2] == (2200, 10) and len(copied[2]) == 1
    assert "main" in copied[5] and rows.BATCH_SCHEMA not in copied[5]


def _typed_tables(data: bytes) -> dict[str, list[tuple[Any, ...]]]:
    """A batch database's rows with their rowids and each value's SQLite type."""
    conn = sqlite3.connect(":memory:")
    try:
        conn.deserialize(data)
        found = {}
        for name, columns in table_columns(conn):
            typed = ", ".join(f'"{column}", typeof("{column}")' for column in columns)
            found[name] = conn.execute(
                f'SELECT rowid, {typed} FROM "{name}" ORDER BY rowid'
            ).fetchall()
        return found
    finally:
        conn.close()


def test_a_batch_database_written_many_rows_an_insert_holds_the_rows_one_by_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Rows of every table and width (short and whole agent and question rows), more than
    one INSERT's worth and not a multiple of it: the same rows, rowids and types."""
    many = [replace(run, id=f"{run.id}-{n}") for n in range(23) for run in _runs()]
    with (
        Store.open(tmp_path / "runs.db", create=True) as store,
        rows.batches_attached(store.conn) as schema,
    ):
        assert schema is not None
        built = rows.Rows(_STAMP, 0, "ann")
        for run in many:
            built.add(run)
        tables = built.take()
    assert rows._BATCH_ROWS_PER_INSERT > 1
    assert len(tables[1]) > 3 * rows._BATCH_ROWS_PER_INSERT
    assert len(tables[1]) % rows._BATCH_ROWS_PER_INSERT
    batched = _typed_tables(rows.batch_database(schema, tables))
    monkeypatch.setattr(rows, "_BATCH_ROWS_PER_INSERT", 1)
    one_by_one = _typed_tables(rows.batch_database(schema, tables))
    assert batched == one_by_one
    assert len(batched["agents"]) == 23 * 6 and len(batched["trajectory_questions"]) == 23 * 3
    assert {row[-1] for row in batched["runs"]} == {"null"}  # revision: no session's
    assert (batched["agents"][0][12], batched["agents"][0][6]) == ("real", "integer")


def test_rows_of_another_width_fail_as_one_by_one(tmp_path: Path) -> None:
    sql = rows._INSERTS[2]  # trajectories: six columns
    good = [(n, "run", 0, 0, 0, "[]") for n in range(40)]
    errors = []
    for per in (1, 16):
        conn = sqlite3.connect(":memory:")
        conn.execute(
            "CREATE TABLE trajectories (id, run_id, turns, questions, violations, unchecked)"
        )
        with pytest.raises(sqlite3.ProgrammingError) as raised:
            rows._insert(conn, sql, [*good[:20], (99, "run"), *good[20:]], per)
        errors.append(str(raised.value))
        # As executemany: the rows before the bad one went in.
        assert conn.execute("SELECT count(*) FROM trajectories").fetchone()[0] == 20
        rows._insert(conn, sql, good, per)
        assert conn.execute("SELECT id FROM trajectories").fetchall()[20:] == [
            (n,) for n in range(40)
        ]
        conn.close()
    assert errors[0] == errors[1] and "bindings" in errors[0]
