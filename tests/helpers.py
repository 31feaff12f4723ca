"""Helpers shared by several test modules (fixtures stay in conftest.py)."""

from __future__ import annotations

import json
import re
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from click.testing import Result
    from textual.pilot import Pilot

    from ppp_tui.app.app import PPPApp


class HeldLoad(threading.Event):
    """Set it to let the app's whole-database load go on."""

    async def first_screen(self, app: PPPApp, pilot: Pilot[None]) -> None:
        """Wait for the app's first screen: the first page of runs, the load held."""
        while app.first_screen_seconds is None:
            await pilot.pause()


def run_cli(*args: str, env: dict[str, str] | None = None) -> Result:
    """`ppp-tui ARGS` through click's runner: never a traceback, and an unexpected
    exception raised as itself."""
    from click.testing import CliRunner

    from ppp_tui.cli import cli

    result = CliRunner().invoke(cli, list(args), env=env)
    assert "Traceback" not in result.output
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result


# -- hostile text ------------------------------------------------------------------

HOSTILE = {
    "osc52": "\x1b]52;c;SGVsbG8=\x07",
    "osc2": "\x1b]2;pwned\x07",
    "clear": "\x1b[2J",
    "csi8": "\x9b2J",
    "bidi": "\u202egnp.exe",
    "newline": "fake\nrow",
    "close": "[/]",
    "red": "[red]x[/red]",
    "bold": "[/bold]",
}
# What no terminal output may hold: C0 but tab and newline, DEL, C1, bidi controls.
UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def hostile_runs() -> list[dict[str, Any]]:
    """One run per hostile text, in every field a command may print."""
    runs = []
    for key, text in HOSTILE.items():
        runs.append(
            {
                "id": f"run-{key}{text}",
                "spec_id": f"spec{text}",
                "stage": f"st{text}",
                "task": f"task {text}",
                "created_at": "2025-11-16T10:00:00Z",
                "preferences": ["json", f"pref{text}"],
                "preferred_agent": f"b{text}",
                "agents": [
                    {
                        "name": f"a{text}",
                        "model": f"m{text}",
                        "technical_score": 0.8,
                        "trajectory": {
                            "turns": [{"prompt": f"p{text}", "response": f"r{text}?"}],
                            "questions": [{"text": f"Which {text}?", "turn": 1}],
                            "violations": [{"preference": f"pref{text}", "turn": 1}],
                        },
                    },
                    {"name": f"b{text}", "technical_score": 0.7, "output": f"out{text}"},
                ],
            }
        )
    return runs


def toml_key(key: str) -> str:
    """`key` as a quoted config.toml key."""
    return json.dumps(key)  # a TOML basic string: JSON's escapes are TOML's


# -- session transcripts -----------------------------------------------------------

ESC = "\x1b"
SESSION_START = "2026-03-02T10:00:00.000Z"


def invoke(*args: str, input: str | bytes | None = None) -> Result:
    """`ppp-tui ARGS` through click's runner, whatever it raises (`clean_exit` checks)."""
    from click.testing import CliRunner

    from ppp_tui.cli import cli

    return CliRunner().invoke(cli, list(args), input=input)


def clean_exit(result: Result, code: int) -> None:
    """The command ended as it meant to: no traceback, no raw escape."""
    assert result.exit_code == code, (result.exit_code, result.output)
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(
        result.exception
    )
    assert "Traceback" not in result.output
    assert ESC not in result.output


def jsonl(path: Path, *objects: Any, prefix: bytes = b"", end: bytes = b"\n") -> Path:
    """A JSON Lines file (ASCII JSON: a lone surrogate stays a `\\ud800` escape)."""
    body = end.join(json.dumps(obj).encode() for obj in objects) + end
    path.write_bytes(prefix + body)
    return path


def claude_lines(
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


def codex_lines(
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
