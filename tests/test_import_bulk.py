"""A first import's fast path: a new database bulk loaded with its full-text index made as
the runs go in, rows written without the NULLs they end with, the parse workers'
messages packed with marshal, JSON Lines told from a document in place; each held to
the plain path's result."""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from helpers import table_rows
from hypothesis import given, settings
from hypothesis import strategies as st

from ppp_tui.core.model import (
    Agent,
    AskedWith,
    Effort,
    Question,
    Run,
    Source,
    Trajectory,
    Turn,
)
from ppp_tui.storage import files, importer, packs, rows, search
from ppp_tui.storage.files import ParsedRecord, read_records
from ppp_tui.storage.store import Store
from ppp_tui.storage.swap import import_new

# Where a new database and an import into an existing one may differ: the full-text
# index's own pieces (made in steps or at once, they hold the same words) and the times
# of the import itself.
_LEFT_OUT = ("_fts", "_fts_data", "_fts_idx")


def _schema(path: Path) -> list[tuple[Any, ...]]:
    conn = sqlite3.connect(path)
    try:
        return conn.execute(
            "SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY type, name"
        ).fetchall()
    finally:
        conn.close()


@pytest.fixture
def lines(tmp_path: Path) -> Path:
    from ppp_tui.storage.demo import generate

    text = [json.dumps(run) for run in generate(1800, seed=7)]
    text += text[5:15]  # already there: skipped
    text.insert(900, "{not json")
    source = tmp_path / "runs.jsonl"
    source.write_text("\n".join(text) + "\n", encoding="utf-8")
    return source


def test_a_first_import_makes_the_database_an_import_into_an_empty_one_makes(
    tmp_path: Path, lines: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The index takes rows in several times (every 500 runs) while workers parse.
    monkeypatch.setattr(rows, "INDEX_EVERY", 500)
    new, plain = tmp_path / "new.db", tmp_path / "plain.db"
    report = import_new(new, read_records(str(lines)), skip_invalid=True)
    with Store.open(plain, create=True) as store:
        other = store.import_records(read_records(str(lines)), skip_invalid=True)
    assert search.update_index(plain, 5.0)  # what `ppp-tui import` does after it
    assert (report.added, report.skipped, report.invalid) == (
        other.added,
        other.skipped,
        other.invalid,
    )
    assert report.added == 1800 and report.skipped == 10 and len(report.invalid) == 1
    assert table_rows(new, _LEFT_OUT) == table_rows(plain, _LEFT_OUT)
    assert _schema(new) == _schema(plain)  # every index and trigger back, the same
    conn = sqlite3.connect(new)
    try:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        assert conn.execute("PRAGMA foreign_key_check").fetchall() == []
        for table in ("runs", "agents", "trajectory_questions"):
            conn.execute(f"INSERT INTO {table}_fts({table}_fts) VALUES ('integrity-check')")
        assert search.is_current(conn)  # the first search has nothing to build
    finally:
        conn.close()
    assert not Path(f"{new}-wal").exists() or Path(f"{new}-wal").stat().st_size == 0
    with Store.open(new) as store, Store.open(plain) as theirs:
        some = store.run_infos()[123]
        assert some.task is not None
        for text in (some.task, some.id, "rate limit", "r"):
            assert store.search(text, build=False) == theirs.search(text, build=False)
        assert some.id in store.search(some.task, build=False)
        # The insert trigger is back: an agent added outside an import drops the pack.
        store.conn.execute(
            "INSERT INTO agents (run_id, position, name, technical) VALUES (?, 9, 'late', 0.5)",
            (some.id,),
        )
        assert not store.conn.execute(
            "SELECT 1 FROM run_scores WHERE run_id = ?", (some.id,)
        ).fetchone()


def test_an_import_keeps_a_current_index_current_and_leaves_a_missing_one_missing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(rows, "INDEX_EVERY", 2)

    def runs(*tasks: str) -> list[ParsedRecord]:
        return [
            ParsedRecord(
                "<test>",
                None,
                "$",
                None,
                parsed=Run(f"run-{task}", (Agent("a", 0.5, output=f"{task} output"),), task=task),
            )
            for task in tasks
        ]

    with Store.open(tmp_path / "indexed.db", create=True) as store:
        store.import_records(runs("zeppelin"))
        assert store.search("zeppelin") == ["run-zeppelin"]  # builds the index
        store.import_records(runs("walrus", "marmot", "otter"))
        # Taken in every 2 runs and at the end: current with no search.
        assert store.search_index_current()
        assert store.search("otter", build=False) == ["run-otter"]
        assert store.search("marmot output", build=False) == ["run-marmot"]
    with Store.open(tmp_path / "plain.db", create=True) as store:
        store.import_records(runs("walrus", "marmot", "otter"))
        assert not search.has_index(store.conn)  # its first search builds it


def _question(text: str, turn: int, **dialog: Any) -> Question:
    return Question(text, Effort.MEDIUM, turn, Source.LABEL, **dialog)


def test_rows_ending_in_nulls_and_whole_rows_mix_in_one_batch_in_their_order(
    store_path: Path,
) -> None:
    """Agents given with their run and questions asked in the text are written without
    their NULL columns; in a batch that also holds whole rows they are made whole."""
    dialog = _question(
        "Which database?",
        2,
        asked_with=AskedWith.TOOL,
        options=("sqlite", "postgres"),
        answer="sqlite",
        dismissed=False,
        seconds_to_answer=4.5,
    )
    questions = (_question("Is this ok?", 1), dialog, _question("And tests?", 3))
    mixed = Run(
        "mixed",
        (
            Agent("plain", 0.5, Trajectory((Turn("p", "r"),), questions), output="out"),
            Agent("failed", 0.0, failure="crashed", output="trace"),
            Agent("session", 0.75, models=("m1", "m2"), sessions=("s-1",)),
        ),
        task="the task",
    )
    short = Run("short", (Agent("only", 0.25, Trajectory((), (_question("Why?", 1),))),))
    with Store.open(store_path, create=True) as store:
        store.import_records(
            ParsedRecord("<test>", None, "$", None, parsed=run) for run in (mixed, short)
        )
        assert store.get_run("mixed") == mixed
        assert store.get_run("short") == short
        found = store.conn.execute(
            "SELECT text, asked_with, options, answer, dismissed, seconds_to_answer"
            " FROM trajectory_questions ORDER BY id"
        ).fetchall()
    assert found == [
        ("Is this ok?", None, None, None, None, None),
        ("Which database?", "tool", '["sqlite", "postgres"]', "sqlite", 0, 4.5),
        ("And tests?", None, None, None, None, None),
        ("Why?", None, None, None, None, None),
    ]


@pytest.fixture
def store_path(tmp_path: Path) -> Path:
    return tmp_path / "runs.db"


def test_a_batch_of_short_rows_alone_uses_the_short_statement() -> None:
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE TABLE t (a, b, c, d)")
    sql = "INSERT INTO t (a, b, c, d) VALUES (?,?,?,?)"
    statement, written = rows._widths(sql, [(1, 2), (3, 4)], 2)
    assert statement == "INSERT INTO t (a, b) VALUES (?,?)" and written == [(1, 2), (3, 4)]
    statement, written = rows._widths(sql, [(1, 2), (3, 4, 5, 6)], 2)
    assert statement == sql and written == [(1, 2, None, None), (3, 4, 5, 6)]
    conn.executemany(statement, written)
    assert conn.execute("SELECT * FROM t").fetchall() == [(1, 2, None, None), (3, 4, 5, 6)]


class _Name(str):
    """A str subclass: marshal refuses it, pickle keeps it."""


@pytest.mark.parametrize(
    ("message", "kind"),
    [
        (("rows", ([("r", 1.5, None, b"\x00\x01")],), 3, {"pref"}), b"m"),
        (("rows", ([(_Name("r"),)],)), b"p"),
        (("error", ValueError("bad line")), b"p"),
    ],
)
def test_a_worker_message_arrives_as_it_was_sent(message: tuple[Any, ...], kind: bytes) -> None:
    read_fd, write_fd = os.pipe()
    try:
        with open(write_fd, "wb", closefd=False) as pipe:
            importer._send(pipe, message)
        head = os.read(read_fd, 1)
        assert head == kind
        rest = importer._read_exactly(read_fd, 8)
        data = importer._read_exactly(read_fd, int.from_bytes(rest, "little"))
        os.write(write_fd, head + rest + data)
        received = importer._read_message(read_fd)
    finally:
        os.close(read_fd)
        os.close(write_fd)
    if isinstance(message[1], Exception):
        assert type(received[1]) is ValueError and str(received[1]) == "bad line"
    else:
        assert received == message
        assert [type(v) for v in received[1][0][0]] == [type(v) for v in message[1][0][0]]


def test_a_bulk_load_gives_back_a_database_that_can_be_sealed(store_path: Path) -> None:
    with Store.open(store_path, create=True) as store:
        with store.bulk_load():
            report = store.import_records(
                [ParsedRecord("<test>", None, "$", None, parsed=Run("r", (Agent("a", 1.0),)))]
            )
            # The import leaves the trigger to the bulk load, which lifted it; no foreign
            # key is checked meanwhile.
            assert not _has_trigger(store.conn)
            assert store.conn.execute("PRAGMA foreign_keys").fetchone()[0] == 0
        # Back in WAL mode, the WAL can be folded in at once (swap.seal).
        assert store.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()[0] == 0
        assert store.conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert report.added == 1 and _has_trigger(store.conn)
        assert store.conn.execute("PRAGMA foreign_keys").fetchone()[0] == 1


def _has_trigger(conn: sqlite3.Connection) -> bool:
    found = conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'trigger' AND name = ?",
        (packs.INSERT_TRIGGER_NAME,),
    ).fetchone()
    return found is not None


def _looks_like_lines_plainly(text: str) -> bool:
    """The plain twin of files._looks_like_lines: the text stripped and cut in two."""
    stripped = text.lstrip()
    if not stripped.startswith("{"):
        return False
    first, _, rest = stripped.partition("\n")
    if not rest.strip():
        return False
    try:
        return isinstance(json.loads(first), dict)
    except (ValueError, RecursionError):
        return False


_PIECES = ["{", "}", '{"a": 1}', "[1]", "\n", " ", "\t", "\u00a0", "\u2003", "x", '"', "\r"]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(_PIECES), max_size=12).map("".join))
def test_json_lines_are_told_from_a_document_as_the_plain_twin_tells(text: str) -> None:
    assert files._looks_like_lines(text) == _looks_like_lines_plainly(text)


@pytest.mark.parametrize(
    ("text", "lines"),
    [
        ('{"a": 1}\n{"a": 2}\n', True),
        ('  \n\u2003{"a": 1}\n  {"a": 2}', True),
        ('{"a": 1}\n \u00a0\n', False),  # only white space after the first line
        ('{"a": 1}', False),
        ('{\n  "a": 1\n}\n', False),  # pretty printed
        ('[{"a": 1}]\n', False),
    ],
)
def test_json_lines_or_a_document(text: str, lines: bool) -> None:
    assert files._looks_like_lines(text) is lines


def test_a_json_line_holding_unicode_line_separators_in_a_string_stays_one_line(
    tmp_path: Path,
) -> None:
    """U+2028, U+2029 and U+0085 may stand unescaped in a JSON string (json.dumps with
    ensure_ascii=False writes them so): each line is cut at "\\n" alone, "\\r\\n" too."""
    task = "Fix the\u2028parser\u2029now\x85please"
    first = {"id": "r-1", "task": task, "agents": [{"name": "a", "technical_score": 0.5}]}
    second = {**first, "id": "r-2", "task": "plain"}
    source = tmp_path / "runs.jsonl"
    source.write_text(
        json.dumps(first, ensure_ascii=False) + "\r\n\n" + json.dumps(second) + "\r\n",
        encoding="utf-8",
        newline="",
    )
    parsed = [(record.line, record.parse().task) for record in read_records(str(source))]
    assert parsed == [(1, task), (3, "plain")]
    with Store.open(tmp_path / "ppp.db", create=True) as store:
        report = store.import_records(read_records(str(source)))
        assert report.added == 2 and not report.invalid
        assert store.get_run("r-1").task == task


def test_marks_and_technical_score_lines_are_cut_at_newlines_alone(tmp_path: Path) -> None:
    from ppp_tui.storage.mark_files import read_marks
    from ppp_tui.storage.technical import read_scores

    odd = "run\u2028one"
    marks = tmp_path / "marks.jsonl"
    lines = [
        {"run_id": odd, "agent": "a", "reviewer": "Ada"},
        {"run_id": "r", "agent": "b", "reviewer": "Ada"},
    ]
    marks.write_text("\n".join(json.dumps(line, ensure_ascii=False) for line in lines), "utf-8")
    assert [mark.run_id for mark in read_marks(marks)] == [odd, "r"]
    scores = tmp_path / "scores.jsonl"
    rows_ = [
        {"run_id": odd, "agent": "a", "technical": 0.5},
        {"run_id": "r", "agent": "b", "technical": 1},
    ]
    scores.write_text("\n".join(json.dumps(row, ensure_ascii=False) for row in rows_), "utf-8")
    assert [score.run_id for score in read_scores(str(scores))] == [odd, "r"]


@pytest.mark.parametrize("where", ["junk", "consensus"])
def test_a_run_nested_near_the_recursion_limit_is_a_run_or_one_bad_line(
    tmp_path: Path, where: str
) -> None:
    """Nesting deep enough to end the interpreter's recursion somewhere on the way (the
    JSON decoder, the id made of the content, the consensus kept as text) is never a
    traceback: each depth is a run, or one line "nested too deeply" --skip-invalid
    skips."""
    import sys

    good = {"id": "ok", "agents": [{"name": "a", "technical_score": 1}]}
    limit = sys.getrecursionlimit()
    for depth in range(limit - 60, limit + 6, 3):
        nested = "[" * depth + "]" * depth
        if where == "junk":  # no id: the id is made of the content
            line = '{"agents": [{"name": "a", "technical_score": 1}], "junk": ' + nested + "}"
        else:
            line = (
                '{"id": "deep", "agents": [{"name": "a", "technical_score": 1}],'
                ' "consensus": {"x": ' + nested + "}}"
            )
        source = tmp_path / f"{where}-{depth}.jsonl"
        source.write_text(json.dumps(good) + "\n" + line + "\n", encoding="utf-8")
        with Store.open(tmp_path / f"{where}-{depth}.db", create=True) as store:
            report = store.import_records(read_records(str(source)), skip_invalid=True)
        assert report.added + len(report.invalid) == 2, depth
        assert all("nested too deeply" in error for error in report.invalid), report.invalid


def test_json_lines_end_at_a_newline_a_crlf_or_a_lone_cr_and_nowhere_else() -> None:
    text = '{"a": "x\u2028y"}\r\n{"b": 1}\r{"c": "\x85"}\n\n{"d": "\u2029"}'
    assert files.json_lines(text) == [
        '{"a": "x\u2028y"}',
        '{"b": 1}',
        '{"c": "\x85"}',
        "",
        '{"d": "\u2029"}',
    ]
