"""Session import against what a user's disk can hold: every problem is one line (an
error naming the file, or a warning naming file and line), never a traceback or a raw
escape sequence, and a failed import changes nothing in the database.

Each test is one finding of a hostile-input pass: byte order marks, lone surrogates
(in JSON held in a string too), numbers too long for a float or for Python, file names
of no encoding, lines longer than the sniff, FIFOs and pipes, files and folders that
cannot be read, database errors mid-write, odd --window values, odd shapes where a type
or an answer should be, empty Gemini chats, answers before their questions. The last
tests throw arbitrary JSON at the readers and control characters into every field.
"""

from __future__ import annotations

import json
import os
import sqlite3
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from helpers import ESC, clean_exit, invoke
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from transcripts import (
    SESSION_START,
    ask_claude_lines,
    ask_codex_lines,
    gemini_ask_output,
    gemini_lines,
    jsonl,
)

from ppp_tui.core.sessions.grouping import within
from ppp_tui.core.sessions.model import Session, SessionError, SessionWarnings, Tool
from ppp_tui.storage.sessions import discover
from ppp_tui.storage.sessions.claude_code import read_claude_code
from ppp_tui.storage.sessions.codex import read_codex
from ppp_tui.storage.sessions.discover import recognise, recognise_file, walk
from ppp_tui.storage.sessions.gemini_cli import read_gemini_cli

Reader = Callable[[str, SessionWarnings], Session]


def _read(reader: Reader, path: Path) -> tuple[Session, list[str]]:
    warnings = SessionWarnings()
    return reader(str(path), warnings), warnings.lines


def _show(db: Path) -> list[dict[str, Any]]:
    """`show --json` of every run in the database, by id."""
    with sqlite3.connect(db) as conn:
        ids = [row[0] for row in conn.execute("SELECT id FROM runs ORDER BY id")]
    documents = []
    for rid in ids:
        result = invoke("show", rid, "--json", "--db", str(db))
        clean_exit(result, 0)
        documents.append(json.loads(result.stdout))
    return documents


def _tool_questions(document: dict[str, Any]) -> list[dict[str, Any]]:
    return [q for a in document["agents"] for q in a["questions"] if q["asked_with"] == "tool"]


# -- bytes ------------------------------------------------------------------------------


def test_a_byte_order_mark_loses_no_line(tmp_path: Path) -> None:
    # Before: the BOM made line 1 (the prompt) "not JSON, skipped": a run with no task.
    claude = jsonl(tmp_path / "c.jsonl", *ask_claude_lines(), prefix=b"\xef\xbb\xbf", end=b"\r\n")
    session, warnings = _read(read_claude_code, claude)
    assert (warnings, session.first_prompt()) == ([], "Fix the bug")
    codex = jsonl(tmp_path / "x.jsonl", *ask_codex_lines(), prefix=b"\xef\xbb\xbf")
    session, warnings = _read(read_codex, codex)
    assert (warnings, session.id, session.first_prompt()) == ([], "c1", "Fix the bug")


def test_lone_surrogate_escapes_are_replacement_characters(tmp_path: Path) -> None:
    # Before: "\ud800" in a prompt or id was a UnicodeEncodeError traceback (hashing the
    # task, writing the row); in Gemini's model, start time or folder too.
    bad = "\ud800"
    jsonl(
        tmp_path / "c.jsonl",
        *ask_claude_lines(session=f"s{bad}", prompt=f"P{bad}", model=f"m{bad}"),
    )
    jsonl(tmp_path / "x.jsonl", *ask_codex_lines(session=f"c{bad}", prompt=f"Q{bad}"))
    gemini = gemini_lines(header={"startTime": f"2026{bad}", "directories": [f"/w{bad}"]})
    gemini[2]["model"] = f"g{bad}"
    jsonl(tmp_path / "g.jsonl", *gemini)
    db = tmp_path / "db" / "runs.db"
    result = invoke("import", str(tmp_path), "--db", str(db), "--one-run-per-session")
    clean_exit(result, 0)
    assert result.stdout.startswith("imported 3 sessions")
    seen = {
        (d["task"], tuple(d["agents"][0]["sessions"]), tuple(d["agents"][0]["models"]))
        for d in _show(db)
    }
    assert seen == {
        ("P\ufffd", ("s\ufffd",), ("m\ufffd",)),
        ("Q\ufffd", ("c\ufffd",), ("gpt-5.5",)),
        ("Fix the bug", ("g1",), ("g\ufffd",)),
    }


def test_a_file_name_of_no_encoding_names_its_session(tmp_path: Path) -> None:
    # Before: the name's byte 0xff (a surrogate escape) as the session id: a traceback.
    lines = ask_claude_lines()
    for line in lines:
        del line["sessionId"]
    folder = tmp_path / "in"
    folder.mkdir()
    jsonl(Path(os.fsdecode(bytes(folder) + b"/bad\xff\x1b[31m.jsonl")), *lines)
    db = tmp_path / "runs.db"
    clean_exit(invoke("import", str(folder), "--db", str(db)), 0)
    assert [d["agents"][0]["sessions"] for d in _show(db)] == [["bad\ufffd\x1b[31m"]]


def test_deep_json_of_no_encoding_is_one_line(tmp_path: Path) -> None:
    # Before: a RecursionError traceback (the fallback decode caught only ValueError).
    deep = b"[" * 100_000 + b"]" * 100_000
    chat = tmp_path / "chat.json"
    chat.write_bytes(b'[{"role": "user", "parts": [{"text": "hi \xff"}]}, ' + deep + b"]")
    header = tmp_path / "header.jsonl"
    header.write_bytes(b'{"sessionId": "g", "projectHash": "p", "x": "\xff", "y": ' + deep + b"}\n")
    db = tmp_path / "runs.db"
    for path in (chat, header):
        result = invoke("import", str(path), "--db", str(db))
        clean_exit(result, 1)
        assert result.stderr == f"error: {path}: not UTF-8 JSON, no Gemini CLI chat\n"
    assert not db.exists()


def test_numbers_too_long_for_a_float_or_for_python_are_answers_or_none(
    tmp_path: Path,
) -> None:
    # Before: an answer of 309 digits or more raised OverflowError (a traceback, the
    # whole import gone); a line holding an integer of more than 4,300 digits was "not
    # JSON" and lost whole (here the prompt: a run with no task).
    long, huger = "9" * 400, "9" * 5000
    folder = tmp_path / "in"
    folder.mkdir()
    jsonl(folder / "a.jsonl", *ask_claude_lines(session="n1", answers={"Which one?": int(long)}))
    jsonl(folder / "b.jsonl", *ask_claude_lines(session="n2", answers={"Which one?": [int(long)]}))
    out = gemini_ask_output(f'{{"answers": {{"0": {long}}}}}')
    jsonl(folder / "c.jsonl", *gemini_lines(session="n3", result=[out]))
    out = gemini_ask_output(f'{{"answers": {{"0": {huger}}}}}')
    jsonl(folder / "d.jsonl", *gemini_lines(session="n4", result=[out]))
    lines = ask_claude_lines(session="n5", prompt="Long number")
    lines[0]["tokens"] = 0
    text = "".join(json.dumps(line) + "\n" for line in lines)
    (folder / "e.jsonl").write_text(text.replace('"tokens": 0', f'"tokens": {huger}'))
    bad = folder / "f.jsonl"
    lines = ask_claude_lines(session="n6")
    jsonl(bad, *lines)
    bad.write_text(f'{{"n": {huger}, oops}}\n' + bad.read_text())  # past the digits, no JSON
    db = tmp_path / "runs.db"
    result = invoke("import", str(folder), "--db", str(db), "--one-run-per-session")
    clean_exit(result, 0)
    assert result.stderr == f"warning: {bad}:1: not JSON, skipped\n"
    answers = {d["agents"][0]["sessions"][0]: _tool_questions(d)[0]["answer"] for d in _show(db)}
    assert answers == {"n1": long, "n2": long, "n3": long, "n4": None, "n5": "A", "n6": "A"}
    assert {d["task"] for d in _show(db)} >= {"Long number"}


def test_a_test_count_too_long_to_read_is_no_test_run(tmp_path: Path) -> None:
    # Before: "=== 999...9 passed in 0.1s ===" with more than 4,300 digits raised
    # ValueError from int(): a traceback, the whole import gone.
    lines = ask_claude_lines()[:1]
    for n, digits in ((1, 5001), (2, 400)):
        bash = {"type": "tool_use", "id": f"t{n}", "name": "Bash", "input": {"command": "pytest"}}
        summary = f"===== {'9' * digits} passed in 0.12s ====="
        output = {"type": "tool_result", "tool_use_id": f"t{n}", "content": summary}
        base = {"sessionId": f"big{n}", "cwd": "/nowhere/repo", "timestamp": SESSION_START}
        message = {"id": f"m{n}", "role": "assistant", "content": [bash]}
        jsonl(
            tmp_path / f"{n}.jsonl",
            {**lines[0], "sessionId": f"big{n}"},
            {**base, "type": "assistant", "uuid": f"a{n}", "message": message},
            {
                **base,
                "type": "user",
                "uuid": f"r{n}",
                "message": {"role": "user", "content": [output]},
            },
        )
    db = tmp_path / "db" / "runs.db"
    result = invoke("import", str(tmp_path), "--db", str(db), "--one-run-per-session")
    clean_exit(result, 0)
    scores = {d["agents"][0]["sessions"][0]: d["agents"][0]["technical"] for d in _show(db)}
    assert scores == {"big1": None, "big2": 1.0}


def test_a_lone_surrogate_in_json_a_codex_string_holds_is_text(tmp_path: Path) -> None:
    # Before: "\ud800" escaped inside request_user_input's arguments or output (JSON
    # held in a string) came out of the second parse as a lone surrogate: a
    # UnicodeEncodeError traceback at the insert.
    lines = ask_codex_lines()
    args = {"questions": [{"id": "q1", "question": "Which\ud800?", "options": ["A\ud800"]}]}
    lines[3]["payload"]["arguments"] = json.dumps(args)
    lines[4]["payload"]["output"] = json.dumps({"answers": {"q1": {"answers": ["A\ud800"]}}})
    db = tmp_path / "runs.db"
    clean_exit(invoke("import", str(jsonl(tmp_path / "x.jsonl", *lines)), "--db", str(db)), 0)
    [question] = _tool_questions(_show(db)[0])
    assert (question["text"], question["options"], question["answer"]) == (
        "Which\ufffd?",
        ["A\ufffd"],
        "A\ufffd",
    )


# -- recognising ----------------------------------------------------------------------------


def test_a_first_line_longer_than_the_sniff_is_still_recognised(tmp_path: Path) -> None:
    # Before: a pasted log in the first prompt, or Codex's long base instructions, left
    # no whole line in the 64 KB read: "not a session transcript", then the run-file
    # importer's "$: agents is required".
    long = "x" * (discover._SNIFF_BYTES * 2)
    claude = jsonl(tmp_path / "c.jsonl", *ask_claude_lines(prompt=f"Here is the log:\n{long}"))
    codex = jsonl(tmp_path / "x.jsonl", *ask_codex_lines(instructions=long))
    assert (recognise_file(str(claude)), recognise_file(str(codex))) == (
        Tool.CLAUDE_CODE,
        Tool.CODEX,
    )
    db = tmp_path / "db" / "runs.db"
    result = invoke("import", str(claude), str(codex), "--db", str(db))
    clean_exit(result, 0)
    assert result.stdout.startswith("imported 2 sessions")


def test_a_long_field_before_the_type_is_read_past(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Before: 64 KB before a Claude line's type, or before a Gemini record's project and
    # messages, and the file was "no transcript": the run-file importer's "$: agents is
    # required". The sniff reads further, up to its bound.
    lines = ask_claude_lines()
    first = {"parentUuid": None, "message": {"role": "user", "content": "y" * 100_000}}
    claude = jsonl(tmp_path / "c.jsonl", {**first, **lines[0], **first}, *lines[1:])
    record = {
        "sessionId": "g9",
        "summary": "z" * 100_000,
        "projectHash": "p",
        "messages": [
            {"id": "u1", "type": "user", "timestamp": SESSION_START, "content": "Fix it"},
            {"id": "m1", "type": "gemini", "timestamp": SESSION_START, "content": "Done."},
        ],
    }
    gemini = tmp_path / "g.json"
    gemini.write_text(json.dumps(record, indent=2))
    db = tmp_path / "db" / "runs.db"
    result = invoke("import", str(claude), str(gemini), "--db", str(db))
    clean_exit(result, 0)
    assert result.stdout.startswith("imported 2 sessions")
    monkeypatch.setattr(discover, "_SNIFF_MAX", 64 * 1024)  # the bound: no further
    assert (recognise_file(str(claude)), recognise_file(str(gemini))) == (None, None)


def test_a_type_that_is_a_list_or_an_object_is_no_type() -> None:
    # Before: `kind in frozenset` with an unhashable kind: a TypeError traceback.
    for kind in ([1], {"a": 1}):
        line = json.dumps({"type": kind, "payload": {}, "sessionId": "s", "uuid": "u"})
        assert recognise(f"{line}\n{line}\n".encode()) is None


# -- files, folders, pipes --------------------------------------------------------------------


def test_a_fifo_in_a_folder_is_passed_over(tmp_path: Path) -> None:
    # Before: recognising a FIFO opened it and waited for a writer forever. (A writer
    # is held open here, so that a regression shows as a warning, not a hang.)
    folder = tmp_path / "in"
    folder.mkdir()
    jsonl(folder / "a.jsonl", *ask_claude_lines())
    fifo = folder / "fifo.jsonl"
    os.mkfifo(fifo)
    held = os.open(fifo, os.O_RDWR | os.O_NONBLOCK)
    try:
        os.write(held, b"not a transcript\n")
        assert list(walk(folder)) == [folder / "a.jsonl"]
        result = invoke("import", str(folder), "--db", str(tmp_path / "runs.db"))
    finally:
        os.close(held)
    clean_exit(result, 0)
    assert result.stderr == ""


def test_a_pipe_named_on_the_command_line_is_not_drained(tmp_path: Path) -> None:
    # Before: `ppp-tui import <(cat runs.jsonl)`: recognising read the pipe, and the
    # run-file import found it empty ("no runs in it").
    runs = [{"id": f"r{i}", "agents": [{"name": "a", "technical_score": 0.5}]} for i in range(3)]
    read, write = os.pipe()
    try:
        os.write(write, "".join(json.dumps(run) + "\n" for run in runs).encode())
        os.close(write)
        result = invoke("import", f"/dev/fd/{read}", "--db", str(tmp_path / "runs.db"))
    finally:
        os.close(read)
    clean_exit(result, 0)
    assert result.stdout.startswith("imported 3 runs")


def test_a_named_pipe_on_the_command_line_is_one_line(tmp_path: Path) -> None:
    # Before: `ppp-tui import fifo` waited for a writer forever, without a word. (A
    # writer is held open here, so that a regression reads the pipe instead of hanging.)
    fifo = tmp_path / "fifo.jsonl"
    os.mkfifo(fifo)
    good = jsonl(tmp_path / "a.jsonl", *ask_claude_lines())
    held = os.open(fifo, os.O_RDWR | os.O_NONBLOCK)
    try:
        result = invoke("import", str(fifo), str(good), "--db", str(tmp_path / "runs.db"))
    finally:
        os.close(held)
    clean_exit(result, 1)
    assert result.stderr == (
        f"error: {fifo}: a named pipe, not a file (reading it would wait for a writer);"
        " give a file, or its content on standard input\n"
    )
    assert "imported 1 session" in result.stdout


def test_a_path_it_cannot_look_at_is_one_line(tmp_path: Path) -> None:
    # Before: a name in a folder the user may not enter (or a name too long for the
    # system) raised PermissionError (OSError) from is_dir(): a traceback, nothing
    # imported.
    good = jsonl(tmp_path / "a.jsonl", *ask_claude_lines())
    locked = tmp_path / "locked"
    locked.mkdir()
    inside = jsonl(locked / "b.jsonl", *ask_claude_lines(session="s2"))
    too_long = tmp_path / ("n" * 300) / "c.jsonl"
    locked.chmod(0)
    try:
        denied = not os.access(locked, os.X_OK)
        result = invoke(
            "import", str(inside), str(too_long), str(good), "--db", str(tmp_path / "r.db")
        )
    finally:
        locked.chmod(stat.S_IRWXU)
    clean_exit(result, 1)
    refused = [f"error: {too_long}: cannot be read (File name too long)"]
    if denied:  # root enters every folder
        refused.insert(0, f"error: {inside}: cannot be read (Permission denied)")
    assert result.stderr.splitlines() == refused
    assert f"imported {1 if denied else 2} session" in result.stdout


def test_what_a_folder_cannot_read_is_said_so(tmp_path: Path) -> None:
    # Before: "not a session transcript (skipped)" for a file that cannot be opened.
    folder = tmp_path / "in"
    folder.mkdir()
    jsonl(folder / "a.jsonl", *ask_claude_lines())
    (folder / "gone.jsonl").symlink_to(tmp_path / "nowhere")
    (folder / "loop.jsonl").symlink_to(folder / "loop.jsonl")
    result = invoke("import", str(folder), "--db", str(tmp_path / "runs.db"))
    clean_exit(result, 0)
    assert result.stderr.splitlines() == [
        f"warning: {folder}/gone.jsonl: cannot be read (No such file or directory)",
        f"warning: {folder}/loop.jsonl: cannot be read (Too many levels of symbolic links)",
    ]


def test_a_folder_that_cannot_be_listed_is_a_warning(tmp_path: Path) -> None:
    # Before: os.walk passed over it without a word.
    folder = tmp_path / "in"
    locked = folder / "locked"
    locked.mkdir(parents=True)
    jsonl(folder / "a.jsonl", *ask_claude_lines())
    locked.chmod(0)
    try:
        if os.access(locked, os.R_OK):
            pytest.skip("this user reads every folder (root)")
        result = invoke("import", str(folder), "--db", str(tmp_path / "runs.db"))
    finally:
        locked.chmod(stat.S_IRWXU)
    clean_exit(result, 0)
    assert result.stderr == f"warning: {locked}: cannot be read (Permission denied)\n"


def test_a_file_gone_between_the_walk_and_the_read_is_a_warning(tmp_path: Path) -> None:
    from ppp_tui.storage.sessions.importing import SessionReport, find_files, read_files

    folder = tmp_path / "in"
    folder.mkdir()
    gone = jsonl(folder / "a.jsonl", *ask_claude_lines())
    report = SessionReport()
    found, _ = find_files([str(folder)], "auto", report)
    gone.unlink()
    assert read_files(found, report, None) == []
    assert report.warnings == [f"{gone}: cannot be read (No such file or directory)"]


def test_standard_input_with_a_session_format_is_one_line(tmp_path: Path) -> None:
    # Before: "-: cannot be read (No such file or directory)".
    result = invoke("import", "-", "--format", "claude-code", "--db", str(tmp_path / "r.db"))
    clean_exit(result, 1)
    assert result.stderr == "error: -: sessions are read from their files, not standard input\n"


# -- the database ---------------------------------------------------------------------------


def test_a_database_error_while_writing_is_one_line_and_changes_nothing(tmp_path: Path) -> None:
    # Before: a read-only database, a full disk or (here) a trigger of an outside edit
    # raised sqlite3's error as a traceback from the session write.
    db = tmp_path / "runs.db"
    clean_exit(
        invoke("import", str(jsonl(tmp_path / "a.jsonl", *ask_claude_lines())), "--db", str(db)),
        0,
    )
    with sqlite3.connect(db) as conn:
        conn.execute(
            "CREATE TRIGGER no_more BEFORE INSERT ON runs WHEN (SELECT count(*) FROM runs) >= 2"
            " BEGIN SELECT RAISE(ABORT, 'disk says no'); END"
        )
        before = conn.execute("SELECT id, revision FROM runs").fetchall()
    second = jsonl(tmp_path / "b.jsonl", *ask_claude_lines(session="s2", prompt="Another task"))
    third = jsonl(tmp_path / "c.jsonl", *ask_claude_lines(session="s3", prompt="A third task"))
    result = invoke("import", str(second), str(third), "--db", str(db))
    clean_exit(result, 1)
    assert result.stderr == f"Error: {db}: database error: disk says no\n"
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT id, revision FROM runs").fetchall() == before
        assert conn.execute("SELECT count(*) FROM agents").fetchone() == (1,)


# -- options --------------------------------------------------------------------------------


def test_a_window_of_any_size_groups_and_nan_is_refused(tmp_path: Path) -> None:
    # Before: --window inf or 1e308 overflowed timedelta, nan raised ValueError: tracebacks.
    first = jsonl(tmp_path / "a.jsonl", *ask_claude_lines(session="w1"))
    second = jsonl(tmp_path / "b.jsonl", *ask_claude_lines(session="w2"))
    for hours in ("inf", "1e308"):
        db = tmp_path / f"{hours}.db"
        result = invoke("import", str(first), str(second), "--window", hours, "--db", str(db))
        clean_exit(result, 0)
        assert "imported 2 sessions" in result.stdout and "1 new run;" in result.stdout
    result = invoke("import", str(first), "--window", "nan", "--db", str(tmp_path / "n.db"))
    clean_exit(result, 2)
    assert result.stderr.splitlines()[-1] == (
        "Error: Invalid value for '--window': nan is not a number of hours"
    )
    assert within("0001-01-01T00:00:00+14:00", "9999-12-31T23:59:59-14:00", float("inf"))
    assert not within("2026-01-01T00:00:00Z", "2026-01-03T00:00:00Z", 24.0)


# -- what a session holds -------------------------------------------------------------------


def test_an_empty_gemini_chat_is_no_agent(tmp_path: Path) -> None:
    # Before: Gemini CLI's header-only files (one per session it starts) became agents
    # with no turn, grouped into one run of empty agents.
    folder = tmp_path / "chats"
    folder.mkdir()
    header = jsonl(folder / "h.jsonl", {"sessionId": "e1", "projectHash": "p"})
    record = folder / "r.json"
    record.write_text(json.dumps({"sessionId": "e2", "projectHash": "p", "messages": []}))
    db = tmp_path / "runs.db"
    # The files are sound, with nothing typed in them yet: read, said, and no run made.
    result = invoke("import", str(header), "--db", str(db))
    clean_exit(result, 0)
    assert result.stderr == f"warning: {header}: nothing typed in this session yet (skipped)\n"
    result = invoke("import", str(folder), "--db", str(db))
    clean_exit(result, 0)
    assert result.stderr.splitlines() == [
        f"warning: {header}: nothing typed in this session yet (skipped)",
        f"warning: {record}: nothing typed in this session yet (skipped)",
    ]
    assert "imported 0 sessions" in result.stdout
    assert not db.exists()


def test_a_gemini_header_of_the_wrong_shape_is_one_line(tmp_path: Path) -> None:
    # Before: the error and a second warning calling the header "neither a message...".
    for session in (12345, {"a": 1}):
        path = jsonl(tmp_path / "g.jsonl", *gemini_lines(session=session))
        result = invoke("import", str(path), "--db", str(tmp_path / "runs.db"))
        clean_exit(result, 1)
        assert result.stderr == (
            f"error: {path}: no Gemini CLI chat (no header line with sessionId and projectHash)\n"
        )


def test_gemini_answers_stay_with_their_questions(tmp_path: Path) -> None:
    # Before: an odd entry in the questions shifted the index answers are keyed by:
    # "Real?" took the answer of question 0.
    questions = [None, "odd", {"question": "Real?", "options": [{"label": "B"}]}]
    output = gemini_ask_output({"answers": {"0": "A", "2": "B"}})
    path = jsonl(
        tmp_path / "g.jsonl", *gemini_lines(args={"questions": questions}, result=[output])
    )
    session, _ = _read(read_gemini_cli, path)
    assert [(ask.text, ask.answer) for ask in session.turns[0].asks] == [("Real?", "B")]


def test_odd_answer_values_are_no_answer(tmp_path: Path) -> None:
    # Before: Python's repr of an object ("{'x': [1, None]}"), "nan", "True" stored as
    # what the user answered.
    claude = []
    for value, name in (({"x": [1, None]}, "a"), (True, "b"), (float("nan"), "c")):
        path = jsonl(tmp_path / f"{name}.jsonl", *ask_claude_lines(answers={"Which one?": value}))
        claude.append(_read(read_claude_code, path)[0].turns[0].asks[0].answer)
    mixed = jsonl(
        tmp_path / "d.jsonl", *ask_claude_lines(answers={"Which one?": ["A", 2, None, {}]})
    )
    assert [*claude, _read(read_claude_code, mixed)[0].turns[0].asks[0].answer] == [
        None,
        None,
        None,
        "A, 2",
    ]
    output = gemini_ask_output('{"answers": {"0": NaN}}')
    gemini = jsonl(tmp_path / "g.jsonl", *gemini_lines(result=[output]))
    assert _read(read_gemini_cli, gemini)[0].turns[0].asks[0].answer is None


def test_an_answer_before_its_question_took_no_time(tmp_path: Path) -> None:
    # Before: clocks that disagree gave "A · -3600 s".
    claude = jsonl(tmp_path / "c.jsonl", *ask_claude_lines(answered="2026-03-02T09:00:00.000Z"))
    codex = jsonl(tmp_path / "x.jsonl", *ask_codex_lines(answered="2026-03-02T09:00:00.000Z"))
    for reader, path in ((read_claude_code, claude), (read_codex, codex)):
        ask = _read(reader, path)[0].turns[0].asks[0]
        assert (ask.answer, ask.seconds) == ("A", None)


# -- everything at once ---------------------------------------------------------------------


def test_control_characters_and_markup_are_shown_never_sent(tmp_path: Path) -> None:
    """A guard (these were already safe): escapes, bidi overrides, markup and newlines in
    every field a session gives, and in --run and --stage, reach no terminal raw."""
    evil = f"{ESC}[31mred{ESC}]0;title\x07[bold]b[/bold]\nnl\u202erlo\u2066\x9b2J\x00\x7f"
    lines = ask_claude_lines(
        session=f"s{evil}", prompt=f"p{evil}", model=f"m{evil}", cwd=f"/{evil}"
    )
    lines[1]["message"]["content"][0]["input"]["questions"][0]["question"] = f"q{evil}?"
    lines[2]["toolUseResult"] = {"answers": {f"q{evil}?": f"a{evil}"}}
    path = jsonl(tmp_path / "e.jsonl", *lines)
    db = tmp_path / "runs.db"
    name = evil.replace("\x00", "")
    result = invoke("import", str(path), "--run", f"r{name}", "--stage", name, "--db", str(db))
    clean_exit(result, 0)
    for args in (
        ("show", f"r{name}"),
        ("show", f"r{name}", "--json"),
        ("runs",),
        ("rank", f"r{name}"),
    ):
        result = invoke(*args, "--db", str(db))
        clean_exit(result, 0)
        assert "\u202e" not in result.output and "\x9b" not in result.output
    shown = invoke("show", f"r{name}", "--db", str(db)).stdout
    assert "[bold]b[/bold]" in shown and "a␛[31mred" in shown
    result = invoke("show", f"x{name}", "--db", str(db))
    clean_exit(result, 1)
    assert result.stderr.count("\n") == 1


_KEYS: list[str] = ["type", "message", "content", "sessionId", "id", "payload", "timestamp"]
_KEYS += ["role", "questions", "answers", "toolCalls", "args", "result", "output", "$set"]
_JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats()
    | st.sampled_from(["", "user", "assistant", "gemini", "\ud800", SESSION_START, "ask_user"]),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(
            st.sampled_from(_KEYS),
            inner,
            max_size=5,
        )
    ),
    max_leaves=20,
)


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(lines=st.lists(_JSON, min_size=1, max_size=6))
def test_no_json_makes_a_reader_raise_anything_but_a_session_error(
    tmp_path: Path, lines: list[Any]
) -> None:
    path = tmp_path / "s.jsonl"
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n")
    recognise_file(str(path))
    for reader in (read_claude_code, read_codex, read_gemini_cli):
        try:
            session, warnings = _read(reader, path)
        except SessionError as error:
            assert "\n" not in str(error)
            continue
        assert all("\n" not in line for line in warnings)
        session.id.encode()  # text: it can be hashed and stored
        for turn in session.turns:
            turn.prompt.encode()
