"""Session import against what a user's disk can hold: every problem is one line (an
error naming the file, or a warning naming file and line), never a traceback or a raw
escape sequence, and a failed import changes nothing in the database.

Each test is one finding of a hostile-input pass: byte order marks, lone surrogates,
file names of no encoding, lines longer than the sniff, FIFOs and pipes, files and
folders that cannot be read, database errors mid-write, odd --window values, odd
shapes where a type or an answer should be, empty Gemini chats, answers before their
questions. The last tests throw arbitrary JSON at the readers and control characters
into every field.
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
from click.testing import CliRunner, Result
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ppp_tui.cli import cli
from ppp_tui.core.sessions.grouping import within
from ppp_tui.core.sessions.model import Session, SessionError, SessionWarnings, Tool
from ppp_tui.storage.sessions import discover
from ppp_tui.storage.sessions.claude_code import read_claude_code
from ppp_tui.storage.sessions.codex import read_codex
from ppp_tui.storage.sessions.discover import recognise, recognise_file, walk
from ppp_tui.storage.sessions.gemini_cli import read_gemini_cli

Reader = Callable[[str, SessionWarnings], Session]
START = "2026-03-02T10:00:00.000Z"
ESC = "\x1b"


def _run(*args: str, input: str | bytes | None = None) -> Result:
    return CliRunner().invoke(cli, list(args), input=input)


def _clean_exit(result: Result, code: int) -> None:
    """The command ended as it meant to: no traceback, no raw escape."""
    assert result.exit_code == code, (result.exit_code, result.output)
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(
        result.exception
    )
    assert "Traceback" not in result.output
    assert ESC not in result.output


def _lines(path: Path, *objects: Any, prefix: bytes = b"", end: bytes = b"\n") -> Path:
    """A JSON Lines file (ASCII JSON: a lone surrogate stays a `\\ud800` escape)."""
    body = end.join(json.dumps(obj).encode() for obj in objects) + end
    path.write_bytes(prefix + body)
    return path


def _claude(
    session: object = "s1",
    prompt: str = "Fix the bug",
    model: str = "claude-opus-4-5",
    cwd: str = "/nowhere/repo",
    answers: object = None,
    asked: str = START,
    answered: str = "2026-03-02T10:00:20.000Z",
) -> list[dict[str, Any]]:
    """A Claude Code session: a prompt, an AskUserQuestion and its answer."""
    base = {"sessionId": session, "cwd": cwd, "version": "2.1.30"}
    ask = {
        "questions": [
            {"question": "Which one?", "options": [{"label": "A"}, {"label": "B"}]},
        ]
    }
    return [
        {
            **base,
            "type": "user",
            "uuid": "u1",
            "timestamp": START,
            "message": {"role": "user", "content": prompt},
        },
        {
            **base,
            "type": "assistant",
            "uuid": "a1",
            "timestamp": asked,
            "message": {
                "id": "m1",
                "role": "assistant",
                "model": model,
                "content": [
                    {"type": "tool_use", "id": "t1", "name": "AskUserQuestion", "input": ask}
                ],
            },
        },
        {
            **base,
            "type": "user",
            "uuid": "u2",
            "timestamp": answered,
            "message": {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "ok"}],
            },
            "toolUseResult": {"answers": {"Which one?": "A"} if answers is None else answers},
        },
    ]


def _codex(
    session: str = "c1",
    prompt: str = "Fix the bug",
    instructions: str = "",
    answered: str = "2026-03-02T10:01:00.000Z",
) -> list[dict[str, Any]]:
    """A Codex rollout: its meta, a prompt, a request_user_input call and its output."""
    args = {"questions": [{"id": "q1", "question": "Which?", "options": [{"label": "A"}]}]}
    meta: dict[str, Any] = {"id": session, "timestamp": START, "cwd": "/nowhere/repo"}
    if instructions:
        meta["base_instructions"] = {"text": instructions}
    output = {"answers": {"q1": {"answers": ["A"]}}}
    return [
        {"timestamp": START, "type": "session_meta", "payload": meta},
        {"timestamp": START, "type": "turn_context", "payload": {"model": "gpt-5.5"}},
        {
            "timestamp": START,
            "type": "event_msg",
            "payload": {"type": "user_message", "message": prompt},
        },
        {
            "timestamp": START,
            "type": "response_item",
            "payload": {
                "type": "function_call",
                "name": "request_user_input",
                "arguments": json.dumps(args),
                "call_id": "call1",
            },
        },
        {
            "timestamp": answered,
            "type": "response_item",
            "payload": {
                "type": "function_call_output",
                "call_id": "call1",
                "output": json.dumps(output),
            },
        },
    ]


def _gemini(
    session: object = "g1", header: dict[str, Any] | None = None, **call: Any
) -> list[dict[str, Any]]:
    """A Gemini CLI JSONL recording: its header, a prompt and an ask_user call."""
    record = {
        "id": "c1",
        "name": "ask_user",
        "args": {"questions": [{"question": "Which?", "options": [{"label": "A"}]}]},
        "result": [_ask_output({"answers": {"0": "A"}})],
        "status": "success",
        "timestamp": "2026-03-02T10:00:30.000Z",
    }
    record.update(call)
    return [
        {"sessionId": session, "projectHash": "p", "startTime": START, **(header or {})},
        {"id": "u1", "type": "user", "timestamp": START, "content": [{"text": "Fix the bug"}]},
        {
            "id": "m1",
            "type": "gemini",
            "timestamp": START,
            "content": "Let me ask.",
            "model": "gemini-3-pro",
            "toolCalls": [record],
        },
    ]


def _ask_output(output: object) -> dict[str, Any]:
    response = {"output": output if isinstance(output, str) else json.dumps(output)}
    return {"functionResponse": {"id": "c1", "name": "ask_user", "response": response}}


def _read(reader: Reader, path: Path) -> tuple[Session, list[str]]:
    warnings = SessionWarnings()
    return reader(str(path), warnings), warnings.lines


def _show(db: Path) -> list[dict[str, Any]]:
    """`show --json` of every run in the database, by id."""
    with sqlite3.connect(db) as conn:
        ids = [row[0] for row in conn.execute("SELECT id FROM runs ORDER BY id")]
    documents = []
    for rid in ids:
        result = _run("show", rid, "--json", "--db", str(db))
        _clean_exit(result, 0)
        documents.append(json.loads(result.stdout))
    return documents


def _tool_questions(document: dict[str, Any]) -> list[dict[str, Any]]:
    return [q for a in document["agents"] for q in a["questions"] if q["asked_with"] == "tool"]


# -- bytes ------------------------------------------------------------------------------


def test_a_byte_order_mark_loses_no_line(tmp_path: Path) -> None:
    # Before: the BOM made line 1 (the prompt) "not JSON, skipped": a run with no task.
    claude = _lines(tmp_path / "c.jsonl", *_claude(), prefix=b"\xef\xbb\xbf", end=b"\r\n")
    session, warnings = _read(read_claude_code, claude)
    assert (warnings, session.first_prompt()) == ([], "Fix the bug")
    codex = _lines(tmp_path / "x.jsonl", *_codex(), prefix=b"\xef\xbb\xbf")
    session, warnings = _read(read_codex, codex)
    assert (warnings, session.id, session.first_prompt()) == ([], "c1", "Fix the bug")


def test_lone_surrogate_escapes_are_replacement_characters(tmp_path: Path) -> None:
    # Before: "\ud800" in a prompt or id was a UnicodeEncodeError traceback (hashing the
    # task, writing the row); in Gemini's model, start time or folder too.
    bad = "\ud800"
    _lines(tmp_path / "c.jsonl", *_claude(session=f"s{bad}", prompt=f"P{bad}", model=f"m{bad}"))
    _lines(tmp_path / "x.jsonl", *_codex(session=f"c{bad}", prompt=f"Q{bad}"))
    gemini = _gemini(header={"startTime": f"2026{bad}", "directories": [f"/w{bad}"]})
    gemini[2]["model"] = f"g{bad}"
    _lines(tmp_path / "g.jsonl", *gemini)
    db = tmp_path / "db" / "runs.db"
    result = _run("import", str(tmp_path), "--db", str(db), "--one-run-per-session")
    _clean_exit(result, 0)
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
    lines = _claude()
    for line in lines:
        del line["sessionId"]
    folder = tmp_path / "in"
    folder.mkdir()
    _lines(Path(os.fsdecode(bytes(folder) + b"/bad\xff\x1b[31m.jsonl")), *lines)
    db = tmp_path / "runs.db"
    _clean_exit(_run("import", str(folder), "--db", str(db)), 0)
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
        result = _run("import", str(path), "--db", str(db))
        _clean_exit(result, 1)
        assert result.stderr == f"error: {path}: not UTF-8 JSON, no Gemini CLI chat\n"
    assert not db.exists()


# -- recognising ----------------------------------------------------------------------------


def test_a_first_line_longer_than_the_sniff_is_still_recognised(tmp_path: Path) -> None:
    # Before: a pasted log in the first prompt, or Codex's long base instructions, left
    # no whole line in the 64 KB read: "not a session transcript", then the run-file
    # importer's "$: agents is required".
    long = "x" * (discover._SNIFF_BYTES * 2)
    claude = _lines(tmp_path / "c.jsonl", *_claude(prompt=f"Here is the log:\n{long}"))
    codex = _lines(tmp_path / "x.jsonl", *_codex(instructions=long))
    assert (recognise_file(str(claude)), recognise_file(str(codex))) == (
        Tool.CLAUDE_CODE,
        Tool.CODEX,
    )
    db = tmp_path / "db" / "runs.db"
    result = _run("import", str(claude), str(codex), "--db", str(db))
    _clean_exit(result, 0)
    assert result.stdout.startswith("imported 2 sessions")


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
    _lines(folder / "a.jsonl", *_claude())
    fifo = folder / "fifo.jsonl"
    os.mkfifo(fifo)
    held = os.open(fifo, os.O_RDWR | os.O_NONBLOCK)
    try:
        os.write(held, b"not a transcript\n")
        assert list(walk(folder)) == [folder / "a.jsonl"]
        result = _run("import", str(folder), "--db", str(tmp_path / "runs.db"))
    finally:
        os.close(held)
    _clean_exit(result, 0)
    assert result.stderr == ""


def test_a_pipe_named_on_the_command_line_is_not_drained(tmp_path: Path) -> None:
    # Before: `ppp-tui import <(cat runs.jsonl)`: recognising read the pipe, and the
    # run-file import found it empty ("no runs in it").
    runs = [{"id": f"r{i}", "agents": [{"name": "a", "technical_score": 0.5}]} for i in range(3)]
    read, write = os.pipe()
    try:
        os.write(write, "".join(json.dumps(run) + "\n" for run in runs).encode())
        os.close(write)
        result = _run("import", f"/dev/fd/{read}", "--db", str(tmp_path / "runs.db"))
    finally:
        os.close(read)
    _clean_exit(result, 0)
    assert result.stdout.startswith("imported 3 runs")


def test_what_a_folder_cannot_read_is_said_so(tmp_path: Path) -> None:
    # Before: "not a session transcript (skipped)" for a file that cannot be opened.
    folder = tmp_path / "in"
    folder.mkdir()
    _lines(folder / "a.jsonl", *_claude())
    (folder / "gone.jsonl").symlink_to(tmp_path / "nowhere")
    (folder / "loop.jsonl").symlink_to(folder / "loop.jsonl")
    result = _run("import", str(folder), "--db", str(tmp_path / "runs.db"))
    _clean_exit(result, 0)
    assert result.stderr.splitlines() == [
        f"warning: {folder}/gone.jsonl: cannot be read (No such file or directory)",
        f"warning: {folder}/loop.jsonl: cannot be read (Too many levels of symbolic links)",
    ]


def test_a_folder_that_cannot_be_listed_is_a_warning(tmp_path: Path) -> None:
    # Before: os.walk passed over it without a word.
    folder = tmp_path / "in"
    locked = folder / "locked"
    locked.mkdir(parents=True)
    _lines(folder / "a.jsonl", *_claude())
    locked.chmod(0)
    try:
        if os.access(locked, os.R_OK):
            pytest.skip("this user reads every folder (root)")
        result = _run("import", str(folder), "--db", str(tmp_path / "runs.db"))
    finally:
        locked.chmod(stat.S_IRWXU)
    _clean_exit(result, 0)
    assert result.stderr == f"warning: {locked}: cannot be read (Permission denied)\n"


def test_a_file_gone_between_the_walk_and_the_read_is_a_warning(tmp_path: Path) -> None:
    from ppp_tui.storage.sessions.importing import SessionReport, find_files, read_files

    folder = tmp_path / "in"
    folder.mkdir()
    gone = _lines(folder / "a.jsonl", *_claude())
    report = SessionReport()
    found, _ = find_files([str(folder)], "auto", report)
    gone.unlink()
    assert read_files(found, report, None) == []
    assert report.warnings == [f"{gone}: cannot be read (No such file or directory)"]


def test_standard_input_with_a_session_format_is_one_line(tmp_path: Path) -> None:
    # Before: "-: cannot be read (No such file or directory)".
    result = _run("import", "-", "--format", "claude-code", "--db", str(tmp_path / "r.db"))
    _clean_exit(result, 1)
    assert result.stderr == "error: -: sessions are read from their files, not standard input\n"


# -- the database ---------------------------------------------------------------------------


def test_a_database_error_while_writing_is_one_line_and_changes_nothing(tmp_path: Path) -> None:
    # Before: a read-only database, a full disk or (here) a trigger of an outside edit
    # raised sqlite3's error as a traceback from the session write.
    db = tmp_path / "runs.db"
    _clean_exit(_run("import", str(_lines(tmp_path / "a.jsonl", *_claude())), "--db", str(db)), 0)
    with sqlite3.connect(db) as conn:
        conn.execute(
            "CREATE TRIGGER no_more BEFORE INSERT ON runs WHEN (SELECT count(*) FROM runs) >= 2"
            " BEGIN SELECT RAISE(ABORT, 'disk says no'); END"
        )
        before = conn.execute("SELECT id, revision FROM runs").fetchall()
    second = _lines(tmp_path / "b.jsonl", *_claude(session="s2", prompt="Another task"))
    third = _lines(tmp_path / "c.jsonl", *_claude(session="s3", prompt="A third task"))
    result = _run("import", str(second), str(third), "--db", str(db))
    _clean_exit(result, 1)
    assert result.stderr == f"Error: {db}: database error: disk says no\n"
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT id, revision FROM runs").fetchall() == before
        assert conn.execute("SELECT count(*) FROM agents").fetchone() == (1,)


# -- options --------------------------------------------------------------------------------


def test_a_window_of_any_size_groups_and_nan_is_refused(tmp_path: Path) -> None:
    # Before: --window inf or 1e308 overflowed timedelta, nan raised ValueError: tracebacks.
    first = _lines(tmp_path / "a.jsonl", *_claude(session="w1"))
    second = _lines(tmp_path / "b.jsonl", *_claude(session="w2"))
    for hours in ("inf", "1e308"):
        db = tmp_path / f"{hours}.db"
        result = _run("import", str(first), str(second), "--window", hours, "--db", str(db))
        _clean_exit(result, 0)
        assert "imported 2 sessions" in result.stdout and "1 new run;" in result.stdout
    result = _run("import", str(first), "--window", "nan", "--db", str(tmp_path / "n.db"))
    _clean_exit(result, 2)
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
    header = _lines(folder / "h.jsonl", {"sessionId": "e1", "projectHash": "p"})
    record = folder / "r.json"
    record.write_text(json.dumps({"sessionId": "e2", "projectHash": "p", "messages": []}))
    db = tmp_path / "runs.db"
    # The files are sound, with nothing typed in them yet: read, said, and no run made.
    result = _run("import", str(header), "--db", str(db))
    _clean_exit(result, 0)
    assert result.stderr == f"warning: {header}: nothing typed in this session yet (skipped)\n"
    result = _run("import", str(folder), "--db", str(db))
    _clean_exit(result, 0)
    assert result.stderr.splitlines() == [
        f"warning: {header}: nothing typed in this session yet (skipped)",
        f"warning: {record}: nothing typed in this session yet (skipped)",
    ]
    assert "imported 0 sessions" in result.stdout
    assert not db.exists()


def test_a_gemini_header_of_the_wrong_shape_is_one_line(tmp_path: Path) -> None:
    # Before: the error and a second warning calling the header "neither a message...".
    for session in (12345, {"a": 1}):
        path = _lines(tmp_path / "g.jsonl", *_gemini(session=session))
        result = _run("import", str(path), "--db", str(tmp_path / "runs.db"))
        _clean_exit(result, 1)
        assert result.stderr == (
            f"error: {path}: no Gemini CLI chat (no header line with sessionId and projectHash)\n"
        )


def test_gemini_answers_stay_with_their_questions(tmp_path: Path) -> None:
    # Before: an odd entry in the questions shifted the index answers are keyed by:
    # "Real?" took the answer of question 0.
    questions = [None, "odd", {"question": "Real?", "options": [{"label": "B"}]}]
    output = _ask_output({"answers": {"0": "A", "2": "B"}})
    path = _lines(tmp_path / "g.jsonl", *_gemini(args={"questions": questions}, result=[output]))
    session, _ = _read(read_gemini_cli, path)
    assert [(ask.text, ask.answer) for ask in session.turns[0].asks] == [("Real?", "B")]


def test_odd_answer_values_are_no_answer(tmp_path: Path) -> None:
    # Before: Python's repr of an object ("{'x': [1, None]}"), "nan", "True" stored as
    # what the user answered.
    claude = []
    for value, name in (({"x": [1, None]}, "a"), (True, "b"), (float("nan"), "c")):
        path = _lines(tmp_path / f"{name}.jsonl", *_claude(answers={"Which one?": value}))
        claude.append(_read(read_claude_code, path)[0].turns[0].asks[0].answer)
    mixed = _lines(tmp_path / "d.jsonl", *_claude(answers={"Which one?": ["A", 2, None, {}]}))
    assert [*claude, _read(read_claude_code, mixed)[0].turns[0].asks[0].answer] == [
        None,
        None,
        None,
        "A, 2",
    ]
    output = _ask_output('{"answers": {"0": NaN}}')
    gemini = _lines(tmp_path / "g.jsonl", *_gemini(result=[output]))
    assert _read(read_gemini_cli, gemini)[0].turns[0].asks[0].answer is None


def test_an_answer_before_its_question_took_no_time(tmp_path: Path) -> None:
    # Before: clocks that disagree gave "A · -3600 s".
    claude = _lines(tmp_path / "c.jsonl", *_claude(answered="2026-03-02T09:00:00.000Z"))
    codex = _lines(tmp_path / "x.jsonl", *_codex(answered="2026-03-02T09:00:00.000Z"))
    for reader, path in ((read_claude_code, claude), (read_codex, codex)):
        ask = _read(reader, path)[0].turns[0].asks[0]
        assert (ask.answer, ask.seconds) == ("A", None)


# -- everything at once ---------------------------------------------------------------------


def test_control_characters_and_markup_are_shown_never_sent(tmp_path: Path) -> None:
    """A guard (these were already safe): escapes, bidi overrides, markup and newlines in
    every field a session gives, and in --run and --stage, reach no terminal raw."""
    evil = f"{ESC}[31mred{ESC}]0;title\x07[bold]b[/bold]\nnl\u202erlo\u2066\x9b2J\x00\x7f"
    lines = _claude(session=f"s{evil}", prompt=f"p{evil}", model=f"m{evil}", cwd=f"/{evil}")
    lines[1]["message"]["content"][0]["input"]["questions"][0]["question"] = f"q{evil}?"
    lines[2]["toolUseResult"] = {"answers": {f"q{evil}?": f"a{evil}"}}
    path = _lines(tmp_path / "e.jsonl", *lines)
    db = tmp_path / "runs.db"
    name = evil.replace("\x00", "")
    result = _run("import", str(path), "--run", f"r{name}", "--stage", name, "--db", str(db))
    _clean_exit(result, 0)
    for args in (
        ("show", f"r{name}"),
        ("show", f"r{name}", "--json"),
        ("runs",),
        ("rank", f"r{name}"),
    ):
        result = _run(*args, "--db", str(db))
        _clean_exit(result, 0)
        assert "\u202e" not in result.output and "\x9b" not in result.output
    shown = _run("show", f"r{name}", "--db", str(db)).stdout
    assert "[bold]b[/bold]" in shown and "a␛[31mred" in shown
    result = _run("show", f"x{name}", "--db", str(db))
    _clean_exit(result, 1)
    assert result.stderr.count("\n") == 1


_KEYS: list[str] = ["type", "message", "content", "sessionId", "id", "payload", "timestamp"]
_KEYS += ["role", "questions", "answers", "toolCalls", "args", "result", "output", "$set"]
_JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats()
    | st.sampled_from(["", "user", "assistant", "gemini", "\ud800", START, "ask_user"]),
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
