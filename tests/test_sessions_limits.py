"""Session import within its bounds (docs/input-limits.md): what one line and one session
may cost, each bound lowered here so that the files stay small; and an import that read
a session earlier never replaces the later read another import stored meanwhile.

Each bound is a finding of a fault pass: a 3 GB line ended in MemoryError and took the
whole folder's import with it; 50 MB of "Should I? " held 2 GB while its questions were
extracted; an import that read a growing session, then wrote after another, put back the
older, shorter read.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from helpers import clean_exit, invoke
from transcripts import SESSION_START, ask_claude_lines, ask_codex_lines, gemini_lines, jsonl

from ppp_tui.core.model import Agent, Trajectory
from ppp_tui.core.sessions import agents
from ppp_tui.storage.sessions import claude_code, common, gemini_cli, importing
from ppp_tui.storage.sessions.importing import SessionFile, SessionReport
from ppp_tui.storage.store import Store


def _claude_text(uuid: str, text: str) -> dict[str, Any]:
    """A Claude Code line of the agent's text."""
    message = {"id": f"m-{uuid}", "role": "assistant", "content": [{"type": "text", "text": text}]}
    base = {"sessionId": "s1", "cwd": "/nowhere/repo", "timestamp": SESSION_START}
    return {**base, "type": "assistant", "uuid": uuid, "message": message}


def _claude_prompt(uuid: str, text: str) -> dict[str, Any]:
    message = {"role": "user", "content": text}
    base = {"sessionId": "s1", "cwd": "/nowhere/repo", "timestamp": SESSION_START}
    return {**base, "type": "user", "uuid": uuid, "message": message}


def _codex_text(text: str) -> dict[str, Any]:
    payload = {"type": "agent_message", "message": text}
    return {"timestamp": SESSION_START, "type": "event_msg", "payload": payload}


def _gemini_text(mid: str, text: str) -> dict[str, Any]:
    return {"id": mid, "type": "gemini", "timestamp": SESSION_START, "content": text}


def _agents(db: Path) -> dict[str, Agent]:
    """Every agent in the database, by the session it was read from."""
    with Store.open(db) as store:
        runs = [store.get_run(info.id) for info in store.run_infos()]
    return {agent.sessions[0]: agent for run in runs for agent in run.agents}


def _trajectory(agent: Agent) -> Trajectory:
    assert agent.trajectory is not None
    return agent.trajectory


def _steps(agent: Agent) -> list[tuple[str, str]]:
    return [step for turn in _trajectory(agent).turns for step in turn.steps]


# -- one line ---------------------------------------------------------------------------


def test_a_line_longer_than_the_bound_is_passed_over_and_the_rest_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Before: a 3 GB line was read whole: MemoryError, and no file of the folder imported.
    monkeypatch.setattr(common, "MAX_LINE", 4096)
    monkeypatch.setattr(common, "_SKIP", 1000)  # passed over in pieces
    long = "x" * 20_000
    folder = tmp_path / "in"
    folder.mkdir()
    claude = ask_claude_lines()
    claude.insert(1, _claude_text("long", long))
    codex = ask_codex_lines()
    codex.insert(3, _codex_text(long))
    gemini = gemini_lines()
    gemini.insert(2, _gemini_text("long", long))
    paths = [
        jsonl(folder / "a.jsonl", *claude),
        jsonl(folder / "b.jsonl", *codex),
        jsonl(folder / "c.jsonl", *gemini),
    ]
    db = tmp_path / "runs.db"
    result = invoke("import", str(folder), "--db", str(db), "--one-run-per-session")
    clean_exit(result, 0)
    assert result.stderr.splitlines() == [
        f"warning: {paths[0]}:2: longer than 4,096 bytes, skipped",
        f"warning: {paths[1]}:4: longer than 4,096 bytes, skipped",
        f"warning: {paths[2]}:3: longer than 4,096 bytes, skipped",
    ]
    agents = _agents(db)
    for session in ("s1", "c1", "g1"):  # the lines after the long one are read
        agent = agents[session]
        assert [(q.text, q.answer) for q in _trajectory(agent).questions] == [
            ("Which one?" if session == "s1" else "Which?", "A")
        ]
        assert not any(long in text for _, text in _steps(agent))
    # Every byte of the files counts as read: importing again finds them unchanged.
    again = invoke("import", str(folder), "--db", str(db), "--one-run-per-session")
    clean_exit(again, 0)
    assert "0 new runs; 3 unchanged" in again.stdout


def test_a_json_chat_larger_than_the_bound_is_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A Gemini CLI conversation record is one JSON document, parsed whole.
    monkeypatch.setattr(gemini_cli, "MAX_DOCUMENT", 2000)
    monkeypatch.setattr(gemini_cli, "MAX_LINE", 1000)
    folder = tmp_path / "in"
    folder.mkdir()
    record = {
        "sessionId": "g2",
        "projectHash": "p",
        "messages": [
            {"id": "u1", "type": "user", "timestamp": SESSION_START, "content": "Fix it"},
            _gemini_text("m1", "Done. " * 500),
        ],
    }
    big = folder / "big.json"
    big.write_text(json.dumps(record, indent=2))
    # A JSON Lines chat whose header is longer than a line may be is read as a document.
    header = folder / "header.jsonl"
    lines = gemini_lines(session="g3", header={"summary": "s" * 3000})
    jsonl(header, *lines)
    good = jsonl(folder / "good.jsonl", *ask_claude_lines())
    db = tmp_path / "runs.db"
    result = invoke("import", str(big), "--db", str(db))
    clean_exit(result, 1)
    refused = "a JSON chat of more than 2,000 bytes, more than ppp-tui reads at once; not read"
    assert result.stderr == f"error: {big}: {refused}\n"
    assert not db.exists()
    result = invoke("import", str(folder), "--db", str(db))
    clean_exit(result, 0)
    assert result.stderr.splitlines() == [
        f"warning: {big}: {refused}",
        f"warning: {header}: {refused}",
    ]
    assert list(_agents(db)) == ["s1"]
    assert good.exists()


# -- one text ---------------------------------------------------------------------------


def test_a_text_longer_than_the_bound_keeps_its_two_ends(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(common, "MAX_TEXT", 1000)
    prompt = "Start here. " + "p" * 3000 + " The end?"
    output = "o" * 5000 + "\n===== 3 passed, 1 failed in 0.12s =====\n"
    bash = {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "pytest"}}
    call = _claude_text("a1", "")
    call["message"]["content"] = [bash]
    result_line = _claude_prompt("r1", "")
    result_line["message"]["content"] = [
        {"type": "tool_result", "tool_use_id": "t1", "content": output}
    ]
    path = jsonl(tmp_path / "s.jsonl", _claude_prompt("u1", prompt), call, result_line)
    db = tmp_path / "runs.db"
    result = invoke("import", str(path), "--db", str(db))
    clean_exit(result, 0)
    assert result.stderr == f"warning: {path}: 1 text longer than 1,000 bytes cut to its two ends\n"
    agent = _agents(db)["s1"]
    left_out = len(prompt) - 1000
    kept = f"{prompt[:500]}\n[… {left_out:,} characters not kept …]\n{prompt[-500:]}"
    assert _trajectory(agent).turns[0].prompt == kept
    # The end of a long output is kept: its test summary still scores the agent.
    assert agent.technical == 0.75


# -- one session ------------------------------------------------------------------------


def test_a_session_keeps_no_more_text_than_the_bound(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Each step counts 512 more than its text: 1,512 a step of 1,000 characters, and the
    # prompt "Fix the bug" 523; the 13th such step passes 20,000.
    monkeypatch.setattr(common, "MAX_SESSION_TEXT", 20_000)
    folder = tmp_path / "in"
    folder.mkdir()
    notes = [f"Note {n:03d} " + "n" * 991 for n in range(30)]
    claude = [_claude_prompt("u1", "Fix the bug")]
    claude += [_claude_text(f"a{n}", note) for n, note in enumerate(notes)]
    codex = ask_codex_lines()[:3] + [_codex_text(note) for note in notes]
    # Gemini CLI writes a message again as it goes: a rewrite replaces, never adds.
    gemini = gemini_lines()[:2] + [_gemini_text("m1", note) for note in notes]
    gemini += [_gemini_text(f"n{n}", note) for n, note in enumerate(notes)]
    record = {
        "sessionId": "g2",
        "projectHash": "p",
        "messages": [gemini[1], *(_gemini_text(f"n{n}", note) for n, note in enumerate(notes))],
    }
    (folder / "d.json").write_text(json.dumps(record, indent=2))
    paths = [
        jsonl(folder / "a.jsonl", *claude),
        jsonl(folder / "b.jsonl", *codex),
        jsonl(folder / "c.jsonl", *gemini),
        folder / "d.json",
    ]
    db = tmp_path / "runs.db"
    result = invoke("import", str(folder), "--db", str(db), "--one-run-per-session")
    clean_exit(result, 0)
    rest = "of text by this line; the rest of the file is not read"
    assert result.stderr.splitlines() == [
        f"warning: {paths[0]}:14: the session keeps more than 20,000 bytes {rest}",
        f"warning: {paths[1]}:16: the session keeps more than 20,000 bytes {rest}",
        # The 30 writes of m1 (lines 3 to 32) keep one step; the 12th message after passes.
        f"warning: {paths[2]}:44: the session keeps more than 20,000 bytes {rest}",
        f"warning: {paths[3]}: the session keeps more than 20,000 bytes of text by message 14;"
        " the rest of the file is not read",
    ]
    agents = _agents(db)
    for session, steps in (("s1", 13), ("c1", 13), ("g1", 13), ("g2", 13)):
        assert len(_steps(agents[session])) == steps, session


def test_questions_are_read_from_the_first_of_the_text_that_ends_turns(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Before: 50 MB of "Should I? " ending a turn held 2 GB while its five million
    # questions were found and classified.
    monkeypatch.setattr(agents, "QUESTION_TEXT", 60)
    lines = []
    for n in (1, 2, 3):
        lines.append(_claude_prompt(f"u{n}", f"Step {n}"))
        lines.append(_claude_text(f"a{n}", f"Should I go on with step {n}?"))
    path = jsonl(tmp_path / "s.jsonl", *lines)
    db = tmp_path / "runs.db"
    result = invoke("import", str(path), "--db", str(db))
    clean_exit(result, 0)
    assert result.stderr == (
        f"warning: {path}: 81 bytes of text ends the agent's turns; questions are read"
        " from its first 60 bytes\n"
    )
    questions = _trajectory(_agents(db)["s1"]).questions
    assert [q.text for q in questions] == [
        "Should I go on with step 1?",
        "Should I go on with step 2?",
    ]


def test_a_file_too_large_for_the_memory_left_is_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # On a machine with little memory left, a file within the bounds may still not fit:
    # that file is one line, the rest of the folder imports.
    real = claude_code.read_claude_code

    def short_of_memory(path: str, *args: Any) -> Any:
        if path.endswith("big.jsonl"):
            raise MemoryError
        return real(path, *args)

    monkeypatch.setattr(claude_code, "read_claude_code", short_of_memory)
    folder = tmp_path / "in"
    folder.mkdir()
    big = jsonl(folder / "big.jsonl", *ask_claude_lines(session="s2"))
    jsonl(folder / "good.jsonl", *ask_claude_lines())
    db = tmp_path / "runs.db"
    result = invoke("import", str(folder), "--db", str(db))
    clean_exit(result, 0)
    assert result.stderr == f"warning: {big}: too large for the memory left; not read\n"
    assert "imported 1 session" in result.stdout
    result = invoke("import", str(big), "--db", str(db))
    clean_exit(result, 1)
    assert result.stderr == f"error: {big}: too large for the memory left; not read\n"


# -- two imports ------------------------------------------------------------------------


def _turn(n: int) -> list[dict[str, Any]]:
    return [_claude_prompt(f"u{n}", f"Turn {n}"), _claude_text(f"a{n}", f"Done {n}.")]


def test_an_import_that_read_earlier_never_replaces_a_later_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Before: import A read the growing session, import B read it later and wrote first,
    # then A wrote its older read over B's: both said "1 updated", and turn 3 was gone
    # until the next import.
    path = tmp_path / "s.jsonl"
    db = tmp_path / "runs.db"
    first = ask_claude_lines()
    jsonl(path, *first)
    clean_exit(invoke("import", str(path), "--db", str(db)), 0)
    jsonl(path, *first, *_turn(2))
    real = importing.read_files

    def read_then_another_import(
        files: Sequence[SessionFile], report: SessionReport, progress: Any
    ) -> Any:
        sessions = real(files, report, progress)  # A has read turns 1 and 2
        monkeypatch.setattr(importing, "read_files", real)
        jsonl(path, *first, *_turn(2), *_turn(3))
        later = invoke("import", str(path), "--db", str(db))
        clean_exit(later, 0)
        assert "0 new runs; 1 updated" in later.stdout
        return sessions

    monkeypatch.setattr(importing, "read_files", read_then_another_import)
    earlier = invoke("import", str(path), "--db", str(db))
    clean_exit(earlier, 0)
    assert "0 new runs; 1 session already stored from a later read (left as stored)" in (
        earlier.stdout
    )
    turns = _trajectory(_agents(db)["s1"]).turns
    assert [turn.prompt for turn in turns] == [
        "Fix the bug",
        "Turn 2",
        "Turn 3",
    ]
    again = invoke("import", str(path), "--db", str(db))
    clean_exit(again, 0)
    assert "0 new runs; 1 unchanged" in again.stdout
