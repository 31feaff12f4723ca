"""Agents' session transcripts for tests, written line by line as each agent writes
them: Claude Code, Codex CLI and Gemini CLI, whole sessions and small ones with one ask
each (hostile input goes into these)."""

from __future__ import annotations

import difflib
import json
from pathlib import Path
from typing import Any

# -- agents' session transcripts, written line by line as each agent writes them ------

TASK = "Add a --json flag to the export command."


def claude_lines(
    session: str,
    cwd: str,
    model: str,
    start: str = "2026-03-02T10:00",
    prompt: str = TASK,
    tests: str = "===== 12 passed, 1 failed in 0.40s =====",
) -> list[dict[str, Any]]:
    """A short Claude Code session: the prompt, an AskUserQuestion answered after 20 s,
    a Bash tool running pytest, and the closing text (one message written as several
    lines, as Claude Code does)."""
    base = {"sessionId": session, "cwd": cwd, "version": "2.1.30", "gitBranch": "main"}
    ask = {
        "questions": [
            {
                "question": "Should --json print one document or JSON Lines?",
                "header": "Output",
                "options": [
                    {"label": "One document", "description": "A single JSON array"},
                    {"label": "JSON Lines", "description": "One object per line"},
                ],
                "multiSelect": False,
            }
        ]
    }
    return [
        {
            **base,
            "type": "user",
            "uuid": f"{session}-u1",
            "parentUuid": None,
            "timestamp": f"{start}:00.000Z",
            "message": {"role": "user", "content": prompt},
        },
        {
            **base,
            "type": "assistant",
            "uuid": f"{session}-a1",
            "timestamp": f"{start}:05.000Z",
            "message": {
                "id": f"msg_{session}_1",
                "role": "assistant",
                "model": model,
                "content": [
                    {
                        "type": "tool_use",
                        "id": f"toolu_{session}_q",
                        "name": "AskUserQuestion",
                        "input": ask,
                    }
                ],
            },
        },
        {
            **base,
            "type": "user",
            "uuid": f"{session}-u2",
            "timestamp": f"{start}:25.000Z",
            "message": {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": f"toolu_{session}_q",
                        "content": 'User has answered your questions: "Should --json print one'
                        ' document or JSON Lines?"="JSON Lines". You can now continue with'
                        " the user's answers in mind.",
                    }
                ],
            },
            "toolUseResult": {
                "questions": ask["questions"],
                "answers": {"Should --json print one document or JSON Lines?": "JSON Lines"},
            },
        },
        {
            **base,
            "type": "assistant",
            "uuid": f"{session}-a2",
            "timestamp": f"{start}:30.000Z",
            "message": {
                "id": f"msg_{session}_2",
                "role": "assistant",
                "model": model,
                "content": [
                    {
                        "type": "tool_use",
                        "id": f"toolu_{session}_b",
                        "name": "Bash",
                        "input": {"command": "pytest -q", "description": "Run the tests"},
                    }
                ],
            },
        },
        {
            **base,
            "type": "user",
            "uuid": f"{session}-u3",
            "timestamp": f"{start}:40.000Z",
            "message": {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": f"toolu_{session}_b", "content": tests}
                ],
            },
        },
        {
            **base,
            "type": "assistant",
            "uuid": f"{session}-a3",
            "timestamp": f"{start}:45.000Z",
            "message": {
                "id": f"msg_{session}_3",
                "role": "assistant",
                "model": model,
                "content": [{"type": "text", "text": "Done: --json writes JSON Lines."}],
            },
        },
    ]


# -- session transcripts ------------------------------------------------------------


def write_lines(path: Path, lines: list[dict[str, Any]]) -> Path:
    """A JSON Lines transcript at `path` (its folders made)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def codex_lines(
    session: str,
    cwd: str,
    start: str = "2026-03-02T10:01",
    prompt: str = TASK,
    model: str = "gpt-5.1-codex",
) -> list[dict[str, Any]]:
    """A short Codex CLI rollout: its header, the turn's context, the prompt (written
    twice, as an event and as a message, as Codex does) and the closing text."""
    message = {"type": "message", "role": "user"}
    return [
        {
            "timestamp": f"{start}:00Z",
            "type": "session_meta",
            "payload": {
                "id": session,
                "timestamp": f"{start}:00Z",
                "cwd": cwd,
                "originator": "codex_cli_rs",
                "cli_version": "0.60.0",
            },
        },
        {
            "timestamp": f"{start}:01Z",
            "type": "turn_context",
            "payload": {"cwd": cwd, "model": model},
        },
        {
            "timestamp": f"{start}:02Z",
            "type": "response_item",
            "payload": {**message, "content": [{"type": "input_text", "text": prompt}]},
        },
        {
            "timestamp": f"{start}:02Z",
            "type": "event_msg",
            "payload": {"type": "user_message", "message": prompt},
        },
        {
            "timestamp": f"{start}:30Z",
            "type": "response_item",
            "payload": {
                "type": "message",
                "role": "assistant",
                "content": [{"type": "output_text", "text": "Done: --json prints one document."}],
            },
        },
    ]


def structured_patch(old: str, new: str) -> list[dict[str, Any]]:
    """A structuredPatch as Claude Code writes it: jsdiff's hunks, 3 lines of context."""
    hunks: list[dict[str, Any]] = []
    rows = list(difflib.unified_diff(old.splitlines(), new.splitlines(), lineterm="", n=3))[2:]
    for row in rows:
        if row.startswith("@@"):
            parts = row.split()
            old_start, *old_len = parts[1][1:].split(",")
            new_start, *new_len = parts[2][1:].split(",")
            hunks.append(
                {
                    "oldStart": int(old_start),
                    "oldLines": int(old_len[0]) if old_len else 1,
                    "newStart": int(new_start),
                    "newLines": int(new_len[0]) if new_len else 1,
                    "lines": [],
                }
            )
        else:
            hunks[-1]["lines"].append(row)
    return hunks


class ClaudeTranscript:
    """A Claude Code transcript, line by line, as Claude Code writes it."""

    def __init__(self, session: str = "c1", cwd: str = "/home/ana/shop") -> None:
        self.session = session
        self.base: dict[str, Any] = {
            "sessionId": session,
            "cwd": cwd,
            "version": "2.1.30",
            "gitBranch": "main",
        }
        self.lines: list[dict[str, Any]] = []
        self.n = 0

    def _line(self, kind: str, message: dict[str, Any], **extra: Any) -> None:
        self.n += 1
        self.lines.append(
            {
                **self.base,
                "type": kind,
                "uuid": f"{self.session}-{self.n}",
                "timestamp": f"2026-03-02T10:{self.n:02d}:00.000Z",
                "message": message,
                **extra,
            }
        )

    def prompt(self, text: str) -> None:
        self._line("user", {"role": "user", "content": text})

    def call(self, tool: str, args: dict[str, Any]) -> str:
        tool_id = f"toolu_{self.session}_{self.n}"
        content = [{"type": "tool_use", "id": tool_id, "name": tool, "input": args}]
        self._line(
            "assistant",
            {
                "id": f"msg_{self.n}",
                "role": "assistant",
                "model": "claude-opus-4-5",
                "content": content,
            },
        )
        return tool_id

    def result(self, tool_id: str, text: str, result: Any, error: bool = False) -> None:
        block: dict[str, Any] = {"type": "tool_result", "tool_use_id": tool_id, "content": text}
        if error:
            block["is_error"] = True
        self._line("user", {"role": "user", "content": [block]}, toolUseResult=result)

    def say(self, text: str) -> None:
        self._line(
            "assistant",
            {
                "id": f"msg_{self.n}",
                "role": "assistant",
                "model": "claude-opus-4-5",
                "content": [{"type": "text", "text": text}],
            },
        )

    def edit(self, path: str, before: str, old: str, new: str) -> None:
        args = {"file_path": path, "old_string": old, "new_string": new, "replace_all": False}
        tool_id = self.call("Edit", args)
        after = before.replace(old, new, 1)
        self.result(
            tool_id,
            f"The file {path} has been updated. Here's the result of running `cat -n`...",
            {
                "filePath": path,
                "oldString": old,
                "newString": new,
                "originalFile": before,
                "structuredPatch": structured_patch(before, after),
                "userModified": False,
                "replaceAll": False,
            },
        )


# -- small transcripts with one ask each, for hostile input ----------------------

SESSION_START = "2026-03-02T10:00:00.000Z"


def jsonl(path: Path, *objects: Any, prefix: bytes = b"", end: bytes = b"\n") -> Path:
    """A JSON Lines file (ASCII JSON: a lone surrogate stays a `\\ud800` escape)."""
    body = end.join(json.dumps(obj).encode() for obj in objects) + end
    path.write_bytes(prefix + body)
    return path


def ask_claude_lines(
    session: object = "s1",
    prompt: str = "Fix the bug",
    model: str = "claude-opus-4-5",
    cwd: str = "/nowhere/repo",
    answers: object = None,
    asked: str = SESSION_START,
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
            "timestamp": SESSION_START,
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


def ask_codex_lines(
    session: str = "c1",
    prompt: str = "Fix the bug",
    instructions: str = "",
    answered: str = "2026-03-02T10:01:00.000Z",
) -> list[dict[str, Any]]:
    """A Codex rollout: its meta, a prompt, a request_user_input call and its output."""
    args = {"questions": [{"id": "q1", "question": "Which?", "options": [{"label": "A"}]}]}
    meta: dict[str, Any] = {"id": session, "timestamp": SESSION_START, "cwd": "/nowhere/repo"}
    if instructions:
        meta["base_instructions"] = {"text": instructions}
    output = {"answers": {"q1": {"answers": ["A"]}}}
    return [
        {"timestamp": SESSION_START, "type": "session_meta", "payload": meta},
        {"timestamp": SESSION_START, "type": "turn_context", "payload": {"model": "gpt-5.5"}},
        {
            "timestamp": SESSION_START,
            "type": "event_msg",
            "payload": {"type": "user_message", "message": prompt},
        },
        {
            "timestamp": SESSION_START,
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


def gemini_lines(
    session: object = "g1", header: dict[str, Any] | None = None, **call: Any
) -> list[dict[str, Any]]:
    """A Gemini CLI JSONL recording: its header, a prompt and an ask_user call."""
    record = {
        "id": "c1",
        "name": "ask_user",
        "args": {"questions": [{"question": "Which?", "options": [{"label": "A"}]}]},
        "result": [gemini_ask_output({"answers": {"0": "A"}})],
        "status": "success",
        "timestamp": "2026-03-02T10:00:30.000Z",
    }
    record.update(call)
    return [
        {"sessionId": session, "projectHash": "p", "startTime": SESSION_START, **(header or {})},
        {
            "id": "u1",
            "type": "user",
            "timestamp": SESSION_START,
            "content": [{"text": "Fix the bug"}],
        },
        {
            "id": "m1",
            "type": "gemini",
            "timestamp": SESSION_START,
            "content": "Let me ask.",
            "model": "gemini-3-pro",
            "toolCalls": [record],
        },
    ]


def gemini_ask_output(output: object) -> dict[str, Any]:
    response = {"output": output if isinstance(output, str) else json.dumps(output)}
    return {"functionResponse": {"id": "c1", "name": "ask_user", "response": response}}
