"""Following session files as they grow (storage/sessions/following.py): what a file
read a piece at a time gives is what it gives read whole, only what was appended is
read again, a line still being written waits until it is whole, and a file replaced or
cut back is read from its start.

The transcripts are written line by line as each agent writes its own (helpers).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from transcripts import ask_claude_lines, ask_codex_lines, claude_lines, codex_lines, gemini_lines

from ppp_tui.core.model import Agent
from ppp_tui.core.sessions.agents import session_agent
from ppp_tui.core.sessions.model import Session, SessionWarnings, Tool
from ppp_tui.storage.sessions.following import Following
from ppp_tui.storage.sessions.importing import SessionReport, reader_for


def _encoded(lines: list[dict[str, Any]]) -> bytes:
    return b"".join(json.dumps(line).encode() + b"\n" for line in lines)


def _whole(tool: Tool, path: Path) -> Agent:
    return session_agent(reader_for(tool)(str(path), SessionWarnings(), None), "a", None)


def _read(following: Following, path: Path) -> list[Session]:
    report = SessionReport()
    sessions = following.read([str(path)], report)
    assert not report.errors
    return sessions


def _claude() -> list[dict[str, Any]]:
    """A session with an ask answered, a test run and a closing question."""
    lines = claude_lines("s1", "/nowhere/repo", "claude-opus-4-5")
    lines[-1]["message"]["content"][0]["text"] = "Done. Should I update the README too?"
    return lines


@pytest.mark.parametrize(
    ("tool", "lines"),
    [
        (Tool.CLAUDE_CODE, _claude()),
        (Tool.CODEX, codex_lines("c1", "/nowhere/repo") + ask_codex_lines("c1")[2:]),
    ],
    ids=["claude-code", "codex"],
)
def test_a_file_read_piece_by_piece_gives_what_it_gives_read_whole(
    tmp_path: Path, tool: Tool, lines: list[dict[str, Any]]
) -> None:
    data = _encoded(lines)
    path = tmp_path / "session.jsonl"
    path.write_bytes(b"")
    following = Following()
    seen = []
    # Pieces that end anywhere: inside a line, on its newline, several lines at once.
    cuts = sorted({*range(0, len(data), 97), *(i + 1 for i, b in enumerate(data) if b == 10)})
    for start, end in zip(cuts, [*cuts[1:], len(data)], strict=True):
        with path.open("ab") as handle:
            handle.write(data[start:end])
        for session in _read(following, path):
            seen.append(session.size)
            # Never a line cut short: what was read ends on a newline.
            assert data[session.size - 1 : session.size] == b"\n"
    assert seen[-1] == len(data)
    assert seen == sorted(set(seen))  # each read only when a whole line came
    final = following.read([str(path)], SessionReport())
    assert final == []  # nothing new: nothing handed out again
    item = following.files[str(path)]
    assert item.session is not None
    assert session_agent(item.session, "a", None) == _whole(tool, path)


def test_only_what_was_appended_is_read_again(tmp_path: Path) -> None:
    lines = _claude()
    path = tmp_path / "s1.jsonl"
    path.write_bytes(_encoded(lines[:3]))
    following = Following()
    (first,) = _read(following, path)
    assert first.first_prompt().startswith("Add a --json flag")
    # The start of the file overwritten in place (same file, same size): a reader that
    # went back to it would lose the prompt; one that reads what was appended does not.
    size = path.stat().st_size
    with path.open("r+b") as handle:
        handle.write(b" " * 200)
    assert path.stat().st_size == size
    with path.open("ab") as handle:
        handle.write(_encoded(lines[3:]))
    (grown,) = _read(following, path)
    assert grown.first_prompt().startswith("Add a --json flag")
    assert len(grown.turns[0].steps) == 3  # ask, Bash, closing text
    assert grown.tests is not None and grown.tests.passed == 12


def test_a_line_being_written_is_read_once_it_is_whole(tmp_path: Path) -> None:
    lines = ask_claude_lines()
    data = _encoded(lines)
    last = data[:-1].rfind(b"\n") + 1  # where the answer's line starts
    path = tmp_path / "s1.jsonl"
    path.write_bytes(data[: last + 40])
    following = Following()
    (asked,) = _read(following, path)
    assert asked.turns[0].asks[0].answer is None  # the answer's line is not whole yet
    assert asked.size == last
    with path.open("ab") as handle:
        handle.write(data[last + 40 : -1])  # all but its newline
    assert _read(following, path) == []
    with path.open("ab") as handle:
        handle.write(b"\n")
    (answered,) = _read(following, path)
    assert answered.turns[0].asks[0].answer == "A"
    assert answered.size == len(data)


def test_a_file_cut_back_or_replaced_is_read_from_its_start(tmp_path: Path) -> None:
    path = tmp_path / "s1.jsonl"
    path.write_bytes(_encoded(_claude()))
    following = Following()
    (whole,) = _read(following, path)
    assert len(whole.turns[0].steps) == 3
    path.write_bytes(_encoded(ask_claude_lines(session="s1", prompt="Another task")))
    (again,) = _read(following, path)
    assert again.first_prompt() == "Another task"
    replacement = tmp_path / "new.jsonl"
    replacement.write_bytes(_encoded(_claude()))
    replacement.replace(path)  # a new file under the name, longer than what was read
    (replaced,) = _read(following, path)
    assert replaced.first_prompt().startswith("Add a --json flag")


def test_gemini_records_are_read_whole_again(tmp_path: Path) -> None:
    lines = gemini_lines()
    path = tmp_path / "session-g1.jsonl"
    path.write_bytes(_encoded(lines))
    following = Following()
    (first,) = _read(following, path)
    assert len(first.turns) == 1
    assert _read(following, path) == []  # unchanged: not read
    more = [
        *lines,
        {"id": "u2", "type": "user", "timestamp": "2026-03-02T10:05:00.000Z",
         "content": [{"text": "Now add tests"}]},
        {"id": "m2", "type": "gemini", "timestamp": "2026-03-02T10:06:00.000Z",
         "content": "Added them. Shall I run the whole suite?", "model": "gemini-3-pro"},
    ]  # fmt: skip
    path.write_bytes(_encoded(more))
    (second,) = _read(following, path)
    assert [turn.prompt for turn in second.turns] == ["Fix the bug", "Now add tests"]
    assert session_agent(second, "a", None) == _whole(Tool.GEMINI_CLI, path)


def test_handed_out_sessions_are_copies(tmp_path: Path) -> None:
    """Merging a sub-agent into its parent changes the parent's lists: what the reader
    holds stays as read."""
    path = tmp_path / "s1.jsonl"
    path.write_bytes(_encoded(_claude()))
    following = Following()
    (session,) = _read(following, path)
    session.turns[0].steps.clear()
    session.models.append("other")
    held = following.files[str(path)].session
    assert held is not None
    assert len(held.turns[0].steps) == 3
    assert held.models == ["claude-opus-4-5"]


def test_what_is_no_transcript_is_said_once_and_a_gone_file_forgotten(tmp_path: Path) -> None:
    notes = tmp_path / "notes.json"
    notes.write_text('{"hello": 1}\n', encoding="utf-8")
    following = Following()
    report = SessionReport()
    assert following.read([str(notes)], report) == []
    assert following.read([str(notes)], report) == []
    assert report.warnings == [f"{notes}: not a session transcript (skipped)"]
    path = tmp_path / "s1.jsonl"
    path.write_bytes(_encoded(_claude()))
    assert len(_read(following, path)) == 1
    path.unlink()
    assert _read(following, path) == []
    assert str(path) not in following.files
