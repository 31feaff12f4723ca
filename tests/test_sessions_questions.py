"""Which of an agent's text counts as questions to the user, in each agent's own format.

A question counts when the agent hands control back for the answer: in the text that
ends its turn (no tool call or ask follows before the user's next prompt), and when it
does not answer the question itself. Each transcript here is written the way its agent
writes it: Claude Code's one message spread over lines sharing `message.id`, Codex's
agent message followed by a function call, Gemini CLI's message holding its text and
its tool calls.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ppp_tui.core.extraction import extract_questions
from ppp_tui.core.model import AskedWith, Question
from ppp_tui.core.sessions.agents import session_agent
from ppp_tui.core.sessions.model import Session, SessionWarnings
from ppp_tui.storage.sessions.claude_code import read_claude_code
from ppp_tui.storage.sessions.codex import read_codex
from ppp_tui.storage.sessions.gemini_cli import read_gemini_cli

WORKING = "Let me check how the branch builds trees - does it keep the files or replace them?"
CLOSING = "The cache now expires after ten minutes. Should I add a metric for the hit rate?"


def _lines(path: Path, records: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def _questions(session: Session) -> list[Question]:
    trajectory = session_agent(session, "agent", "Cache the search results").trajectory
    assert trajectory is not None
    return list(trajectory.questions)


def _texts(session: Session) -> list[tuple[str, str]]:
    return [(q.text, q.asked_with.value) for q in _questions(session)]


# -- Claude Code ------------------------------------------------------------------------


def _claude_line(
    kind: str, uuid: str, parent: str | None, message: dict[str, Any]
) -> dict[str, Any]:
    return {
        "parentUuid": parent,
        "isSidechain": False,
        "type": kind,
        "message": message,
        "uuid": uuid,
        "timestamp": f"2026-03-02T10:00:{len(uuid):02d}.000Z",
        "sessionId": "5a1e0c2d-8b3f-4e6a-9d7c-0f1e2d3c4b5a",
        "cwd": "/home/dev/shop",
        "version": "2.1.30",
    }


def _assistant(uuid: str, parent: str, mid: str, block: dict[str, Any]) -> dict[str, Any]:
    message = {"id": mid, "type": "message", "role": "assistant", "model": "claude-opus-4-5"}
    return _claude_line("assistant", uuid, parent, message | {"content": [block]})


def _user(uuid: str, parent: str | None, content: Any) -> dict[str, Any]:
    return _claude_line("user", uuid, parent, {"role": "user", "content": content})


def _claude_session(tmp_path: Path) -> Session:
    ask = {
        "type": "tool_use",
        "id": "toolu_ask",
        "name": "AskUserQuestion",
        "input": {
            "questions": [
                {
                    "question": "Which store should hold the cache?",
                    "header": "Store",
                    "options": [{"label": "Redis", "description": ""}, {"label": "Memory"}],
                    "multiSelect": False,
                }
            ]
        },
    }
    answered = {
        "type": "tool_result",
        "tool_use_id": "toolu_ask",
        "content": 'User has answered your questions: "Which store should hold the cache?"='
        '"Redis". You can now continue with the user\'s answers in mind.',
    }
    records = [
        _user("u1", None, "Cache the search results"),
        # One message over three lines sharing its id: text, then a Read call.
        _assistant("a1", "u1", "msg_1", {"type": "thinking", "thinking": "Is it safe?"}),
        _assistant("a2", "a1", "msg_1", {"type": "text", "text": WORKING}),
        _assistant(
            "a3",
            "a2",
            "msg_1",
            {"type": "tool_use", "id": "toolu_1", "name": "Read", "input": {"file_path": "a.py"}},
        ),
        _user("u2", "a3", [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "x"}]),
        # The question written out, then asked through the tool: asked once, by the tool.
        _assistant(
            "a4", "u2", "msg_2", {"type": "text", "text": "Which store should hold the cache?"}
        ),
        _assistant("a5", "a4", "msg_2", ask),
        _user("u3", "a5", [answered]),
        _assistant("a6", "u3", "msg_3", {"type": "text", "text": CLOSING}),
        _user("u4", "a6", "No, that's all."),
        _assistant("a7", "u4", "msg_4", {"type": "text", "text": "Done. Anything else?"}),
    ]
    path = _lines(tmp_path / "5a1e0c2d-8b3f-4e6a-9d7c-0f1e2d3c4b5a.jsonl", records)
    return read_claude_code(str(path), SessionWarnings())


def test_claude_code_only_the_text_that_ends_a_turn_asks(tmp_path: Path) -> None:
    assert _texts(_claude_session(tmp_path)) == [
        ("Which store should hold the cache?", "tool"),
        ("Should I add a metric for the hit rate?", "text"),
        ("Anything else?", "text"),
    ]


def test_a_sub_agents_text_is_never_a_question_to_the_user(tmp_path: Path) -> None:
    session = _claude_session(tmp_path)
    session.subagent = True
    assert [q.asked_with for q in _questions(session)] == [AskedWith.TOOL]


# -- Codex CLI --------------------------------------------------------------------------


def _codex(kind: str, payload: dict[str, Any], second: int) -> dict[str, Any]:
    return {"timestamp": f"2026-03-02T10:00:{second:02d}.000Z", "type": kind, "payload": payload}


def _codex_message(role: str, text: str, second: int) -> dict[str, Any]:
    part = "input_text" if role == "user" else "output_text"
    payload = {"type": "message", "role": role, "content": [{"type": part, "text": text}]}
    return _codex("response_item", payload, second)


def test_codex_a_message_followed_by_a_call_asks_nothing(tmp_path: Path) -> None:
    meta = {"id": "0199a0b1-c2d3-7e4f-8a9b-0c1d2e3f4a5b", "cwd": "/w", "cli_version": "0.46.0"}
    shell = {
        "type": "function_call",
        "name": "shell",
        "arguments": json.dumps({"command": ["rg", "-n", "cache"]}),
        "call_id": "call_1",
    }
    output = {"type": "function_call_output", "call_id": "call_1", "output": "app.py:3"}
    path = _lines(
        tmp_path / "rollout-2026-03-02T10-00-00-0199a0b1-c2d3-7e4f-8a9b-0c1d2e3f4a5b.jsonl",
        [
            _codex("session_meta", meta, 0),
            _codex_message("user", "Cache the search results", 1),
            _codex("event_msg", {"type": "agent_message", "message": WORKING}, 2),
            _codex_message("assistant", WORKING, 2),
            _codex("response_item", shell, 3),
            _codex("response_item", output, 4),
            _codex("event_msg", {"type": "agent_message", "message": CLOSING}, 5),
            _codex_message("assistant", CLOSING, 5),
        ],
    )
    session = read_codex(str(path), SessionWarnings())
    assert _texts(session) == [("Should I add a metric for the hit rate?", "text")]


# -- Gemini CLI -------------------------------------------------------------------------


def test_gemini_cli_a_message_with_tool_calls_asks_nothing_in_its_text(tmp_path: Path) -> None:
    header = {
        "sessionId": "0f0e0d0c-0b0a-4909-8807-060504030201",
        "projectHash": "9f8e7d6c5b4a39281706f5e4d3c2b1a0",
        "startTime": "2026-06-02T08:00:00.000Z",
        "lastUpdated": "2026-06-02T08:00:00.000Z",
        "kind": "main",
    }

    def message(mid: str, kind: str, content: str, **extra: Any) -> dict[str, Any]:
        base = {"id": mid, "timestamp": "2026-06-02T08:00:05.000Z", "type": kind}
        return base | {"content": content} | extra

    call = {"id": "c1", "name": "read_file", "args": {"file_path": "app.py"}, "status": "success"}
    path = _lines(
        tmp_path / "session-2026-06-02T08-00-0f0e0d0c.jsonl",
        [
            header,
            message("u1", "user", "Cache the search results"),
            message("g1", "gemini", WORKING, toolCalls=[call], model="gemini-2.5-pro"),
            message("g2", "gemini", CLOSING, model="gemini-2.5-pro"),
        ],
    )
    session = read_gemini_cli(str(path), SessionWarnings())
    assert _texts(session) == [("Should I add a metric for the hit rate?", "text")]


# -- what the closing text holds that is no question to the user -------------------------


def test_a_heading_the_text_goes_on_to_answer_is_no_question() -> None:
    text = '## Is This Actually a "Safety Mechanism"?\n\nNot quite: it only keeps the log.'
    assert extract_questions(text) == []
    # A heading that asks you is a question, and so is one the text ends on.
    assert extract_questions("### Which one do you prefer?\n\nBoth work.") == [
        "Which one do you prefer?"
    ]
    assert extract_questions("Done.\n\n## Next steps?") == ["Next steps?"]


def test_a_bold_title_answered_on_the_next_line_is_no_question() -> None:
    assert extract_questions("**Is this a problem?**\n\nIn most cases, no.") == []
    assert extract_questions("**Is this a problem?**\nIn most cases, no.") == []
    # At the end, or over a list of options, a bold question is asked.
    assert extract_questions("All done.\n\n**Shall I merge it?**") == ["**Shall I merge it?**"]
    assert extract_questions("**Which store?**\n- Redis\n- Memory") == ["**Which store?**"]


def test_a_list_of_considerations_asks_nothing() -> None:
    text = (
        "Why it is not implemented, I'm not sure - it might be:\n"
        "1. Complexity: partial commits are rare\n"
        "2. Edge cases: What if someone edited the changes before committing?\n"
        "3. Just not thought of yet\n\n"
        "Want me to look into what it would take?"
    )
    assert extract_questions(text) == ["Want me to look into what it would take?"]
    review = "### Architecture issues\n- **Two constructors**: `New()` + `NewHosted()` - why?"
    assert extract_questions(review) == []


def test_a_list_of_questions_for_you_is_asked() -> None:
    text = (
        "Open questions for you to weigh in on:\n"
        "1. Embedded files vs inline strings?\n"
        "2. Migration for existing repos?\n\n"
        "Want to discuss these, or should I start?"
    )
    assert extract_questions(text) == [
        "Embedded files vs inline strings?",
        "Migration for existing repos?",
        "Want to discuss these, or should I start?",
    ]
    # An item that asks you counts whatever introduces it.
    assert extract_questions("Notes:\n- Should I keep the old flag?") == [
        "Should I keep the old flag?"
    ]


def test_options_that_finish_a_question_are_one_question() -> None:
    text = (
        "Would you like me to:\n"
        "1. **Revise the plan** with the feedback?\n"
        "2. **Extract just the MVP**?\n"
        "3. Ship it disabled by default"
    )
    assert extract_questions(text) == [
        "Would you like me to: Revise the plan with the feedback? / Extract just the MVP?"
        " / Ship it disabled by default"
    ]


def test_a_question_the_agent_answers_itself_is_no_question() -> None:
    assert extract_questions("Is the version set by `go mod init`? Yes. It seeds it.") == []
    assert extract_questions("Why? Because the lock is per process.") == []
    # A recommendation after a question does not answer it.
    assert extract_questions("Should we pin versions? I lean yes.") == ["Should we pin versions?"]
    assert extract_questions("Shall I go on? No changes are made until you say.") == [
        "Shall I go on?"
    ]


def test_the_final_reply_is_the_text_the_session_ended_on(tmp_path: Path) -> None:
    from ppp_tui.core.sessions.agents import final_reply
    from ppp_tui.core.sessions.model import SessionTurn, Step, StepKind

    session = _claude_session(tmp_path)
    agent = session_agent(session, "agent", None)
    assert agent.output == "Done. Anything else?" == final_reply(session)
    # Cut short while a tool ran: the reply the turn before ended on.
    session.turns.append(
        SessionTurn(
            "Add the metric", steps=[Step(StepKind.TEXT, "On it."), Step(StepKind.TOOL, "x")]
        )
    )
    assert final_reply(session) == "Done. Anything else?"
    session.turns = []
    assert final_reply(session) == "" and session_agent(session, "a", None).output is None
