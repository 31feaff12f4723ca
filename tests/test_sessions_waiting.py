"""Agents waiting for the user (core/sessions/waiting.py): a dialog of the ask tool with
no answer yet, or a turn that ends on a question to the user with no reply; the same
answer from the rule on a run read whole and from the database's query, and in
`show --json` and `runs --json`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from helpers import run_cli
from transcripts import (
    ask_claude_lines,
    ask_codex_lines,
    claude_lines,
    gemini_ask_output,
    gemini_lines,
    write_lines,
)

from ppp_tui.core.sessions.waiting import agent_waiting, waiting
from ppp_tui.storage.store import Store


def test_the_rule() -> None:
    # An open dialog waits; one answered or dismissed does not.
    assert waiting("ask", [("tool", None, False)])
    assert not waiting("ask", [("tool", "A", False)])
    assert not waiting("ask", [("tool", None, True)])
    # Only the last of a call's questions decides (they are answered together).
    assert waiting("ask", [("tool", "A", False), ("tool", None, False)])
    # An ask followed by more steps: the agent went on.
    assert not waiting("tool", [("tool", None, False)])
    # A question in the closing text waits, whatever step came last in it.
    assert waiting("text", [("text", None, False)])
    assert waiting("thinking", [("tool", "A", False), ("text", None, False)])
    assert not waiting("text", [])
    assert not waiting(None, [])


def _closing(session: str, text: str) -> list[dict[str, Any]]:
    lines = claude_lines(session, "/nowhere/repo", "claude-opus-4-5", prompt=f"Task {session}")
    lines[-1]["message"]["content"][0]["text"] = text
    return lines


def _dismissed() -> list[dict[str, Any]]:
    lines = ask_claude_lines(session="s4", prompt="Dismissed task")
    lines[-1]["message"]["content"][0].update(
        {"is_error": True, "content": "The user doesn't want to proceed with this tool use."}
    )
    lines[-1]["toolUseResult"] = "User rejected tool use"
    return lines


# (file, its lines, waits): each agent's ask tool open and answered, and closing texts.
SESSIONS: list[tuple[str, list[dict[str, Any]], bool]] = [
    ("claude-open.jsonl", ask_claude_lines(session="s1", prompt="Open task")[:2], True),
    ("claude-answered.jsonl", ask_claude_lines(session="s2", prompt="Answered task"), False),
    ("claude-dismissed.jsonl", _dismissed(), False),
    ("codex-open.jsonl", ask_codex_lines("c1", prompt="Codex open")[:-1], True),
    ("codex-answered.jsonl", ask_codex_lines("c2", prompt="Codex answered"), False),
    (
        "gemini-open.jsonl",
        gemini_lines("g1", status="executing", result=[gemini_ask_output({})]),
        True,
    ),
    ("gemini-answered.jsonl", gemini_lines("g2"), False),
    ("claude-question.jsonl", _closing("s8", "Done. Should I also update the README?"), True),
    ("claude-statement.jsonl", _closing("s9", "Done: --json writes JSON Lines."), False),
]


@pytest.fixture
def imported(tmp_path: Path) -> tuple[Path, dict[str, bool]]:
    """Every session of SESSIONS imported, a run each; (database, waits by session)."""
    folder = tmp_path / "sessions"
    for name, lines, _ in SESSIONS:
        write_lines(folder / name, lines)
    db = tmp_path / "runs.db"
    result = run_cli("import", str(folder), "--one-run-per-session", "--db", str(db))
    assert result.exit_code == 0, result.output
    by_session = {}
    with Store.open(db) as store:
        waiting_agents = store.waiting_agents()
        for info in store.run_infos():
            (agent,) = store.get_run(info.id).agents
            assert info.waiting == agent_waiting(agent)  # the query and the rule agree
            assert waiting_agents.get(info.id, set()) == ({agent.name} if info.waiting else set())
            by_session[agent.sessions[0]] = info.waiting
            # Read for the runs named alone (the app's first page): the same.
            assert store.waiting_agents([info.id]) == (
                {info.id: {agent.name}} if info.waiting else {}
            )
    return db, by_session


def test_what_waits_for_the_user(imported: tuple[Path, dict[str, bool]]) -> None:
    _, by_session = imported
    assert by_session == {
        "s1": True,  # Claude Code's AskUserQuestion, no answer yet
        "s2": False,
        "s4": False,  # dismissed
        "c1": True,  # Codex's request_user_input, no output yet
        "c2": False,
        "g1": True,  # Gemini CLI's ask_user still running
        "g2": False,
        "s8": True,  # the turn ends on a question to the user
        "s9": False,
    }


def test_show_json_runs_json_and_the_tables(imported: tuple[Path, dict[str, bool]]) -> None:
    db, by_session = imported
    rows = json.loads(run_cli("runs", "--json", "--db", str(db)).output)
    assert sum(row["waiting_for_user"] for row in rows) == 4
    for row in rows:
        document = json.loads(run_cli("show", row["id"], "--json", "--db", str(db)).output)
        (agent,) = document["agents"]
        assert agent["waiting_for_user"] is by_session[agent["sessions"][0]]
        assert row["waiting_for_user"] is agent["waiting_for_user"]
        shown = run_cli("show", row["id"], "--db", str(db)).output
        assert ("⚑ waiting for you" in shown) is row["waiting_for_user"]
    table = run_cli("runs", "--db", str(db), env={"COLUMNS": "200"}).output
    marked = [line for line in table.splitlines() if "⚑ " in line]
    assert sorted(line.split()[0] for line in marked) == sorted(
        row["id"] for row in rows if row["waiting_for_user"]
    )


def test_runs_not_read_from_sessions_never_wait(tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    run = {
        "run_id": "r1",
        "task": "Fix it",
        "agents": [
            {
                "name": "a",
                "technical_score": 0.5,
                "trajectory": {"turns": [{"prompt": "Fix it", "response": "Which file?"}]},
            }
        ],
    }
    path = tmp_path / "runs.jsonl"
    path.write_text(json.dumps(run) + "\n", encoding="utf-8")
    assert run_cli("import", str(path), "--db", str(db)).exit_code == 0
    with Store.open(db) as store:
        assert store.waiting_agents() == {}
        (info,) = store.run_infos()
        (agent,) = store.get_run(info.id).agents
        assert agent.trajectory is not None and agent.trajectory.questions
        assert not agent_waiting(agent)
    (row,) = json.loads(run_cli("runs", "--json", "--db", str(db)).output)
    assert row["waiting_for_user"] is False
