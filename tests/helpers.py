"""Helpers shared by several test modules (fixtures stay in conftest.py)."""

from __future__ import annotations

import difflib
import json
import os
import re
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from pathlib import Path

    from click.testing import Result
    from judge_server import Server
    from textual.pilot import Pilot

    from ppp_tui.app.app import PPPApp
    from ppp_tui.app.screens.recomputing import RecomputingScreen
    from ppp_tui.core.sessions.model import Session
    from ppp_tui.storage.location import ServerURL


# The keys of each agent in `rank --json` and `show --json` (docs/json.md).
AGENT_KEYS = frozenset(
    [
        "name",
        "rank",
        "technical",
        "technical_source",
        "r_proact",
        "r_pers",
        "interaction",
        "final",
        "has_trajectory",
        "questions",
        "violations",
        "failed",
        "failure",
    ]
)

# The keys of `rank --json` (with --flips, also "flips" and "regions").
RANK_KEYS = frozenset(
    [
        "run_id",
        "stage",
        "weights",
        "ppp_enabled",
        "best_agent",
        "confidence",
        "margin",
        "agents",
        "consensus",
    ]
)


def table_columns(conn: sqlite3.Connection) -> list[tuple[str, list[str]]]:
    """Each table of the SQLite database `conn`, by name, with the names of its columns."""
    names = conn.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
    return [
        (name, [row[1] for row in conn.execute(f'PRAGMA table_info("{name}")')])
        for (name,) in names.fetchall()
    ]


def table_rows(path: Path, leave_out: tuple[str, ...] = ()) -> dict[str, list[tuple[Any, ...]]]:
    """Every table's rows of the database at `path`, sorted by all their columns,
    without the times of import and marking (which differ from one run to the next);
    tables whose names end with one of `leave_out` are left out."""
    conn = sqlite3.connect(path)
    try:
        tables = {}
        for name, every_column in table_columns(conn):
            if leave_out and name.endswith(leave_out):
                continue
            columns = [
                column for column in every_column if column not in ("imported_at", "marked_at")
            ]
            # Every column sorts: ids too, so each row keeps the one it was given.
            order = ", ".join(map(str, range(1, len(columns) + 1)))
            tables[name] = conn.execute(
                f"SELECT {', '.join(columns)} FROM {name} ORDER BY {order}"
            ).fetchall()
        return tables
    finally:
        conn.close()


SHAPE = re.compile(r"<!-- shape: (\S+) -->\n```json\n(.*?)\n```", re.DOTALL)


def documented_shapes() -> dict[str, Any]:
    """The `--json` documents docs/json.md shows, by the name in their shape marker."""
    text = (Path(__file__).resolve().parent.parent / "docs" / "json.md").read_text("utf-8")
    shapes = {name: json.loads(body) for name, body in SHAPE.findall(text)}
    assert shapes, "docs/json.md has no <!-- shape: NAME --> blocks"
    return shapes


@asynccontextmanager
async def opened(
    db: Path | ServerURL, where: Path, size: tuple[int, int], notifications: bool = False
) -> AsyncIterator[tuple[PPPApp, Pilot[None]]]:
    """The app on `db` at `size`, every run loaded; `where` is its config.toml, or the
    folder that holds it."""
    from ppp_tui.app.app import PPPApp

    config = where if where.suffix == ".toml" else where / "config.toml"
    app = PPPApp(db, config)
    async with app.run_test(size=size, notifications=notifications) as pilot:
        await app.load_done.wait()
        await pilot.pause()
        yield app, pilot


ScreenT = TypeVar("ScreenT", bound="RecomputingScreen[Any, Any]")


async def computed(app: PPPApp, pilot: Pilot[None], kind: type[ScreenT]) -> ScreenT:
    """The screen on top, of `kind`, once the figures it computes are shown (at most 20 s)."""
    screen = app.screen
    assert isinstance(screen, kind), f"{type(screen).__name__} is on top, not {kind.__name__}"
    await pilot.pause()
    for _ in range(1000):
        if not screen.computing:
            break
        await app.workers.wait_for_complete()
        await pilot.pause(0.02)
    assert not screen.computing, f"{kind.__name__} still computing after 20 s"
    await pilot.pause()
    return screen


class HeldLoad(threading.Event):
    """Set it to let the app's whole-database load go on."""

    async def first_screen(self, app: PPPApp, pilot: Pilot[None]) -> None:
        """Wait for the app's first screen: the first page of runs, the load held."""
        while app.first_screen_seconds is None:
            await pilot.pause()

    @asynccontextmanager
    async def opened(
        self, db: Path, config: Path, size: tuple[int, int]
    ) -> AsyncIterator[tuple[PPPApp, Pilot[None]]]:
        """The app on `db` at `size`, on its first screen (`first_screen`)."""
        from ppp_tui.app.app import PPPApp

        app = PPPApp(db, config)
        async with app.run_test(size=size) as pilot:
            await self.first_screen(app, pilot)
            yield app, pilot


def session_run_db(db: Path, sessions: list[Session]) -> Path:
    """A new database at `db` holding one run, "session-run", of `sessions`."""
    from ppp_tui.core.sessions.grouping import agent_names, session_run
    from ppp_tui.storage.files import ParsedRecord
    from ppp_tui.storage.store import Store

    run = session_run(sessions, "session-run", agent_names(sessions), "key", None)
    with Store.open(db, create=True) as store:
        store.import_records([ParsedRecord("test", None, "$", None, parsed=run)])
    return db


def run_cli(*args: str, input: str | None = None, env: dict[str, str] | None = None) -> Result:
    """`ppp-tui ARGS` (reading `input`) through click's runner: never a traceback, and an
    unexpected exception raised as itself."""
    from click.testing import CliRunner

    from ppp_tui.cli import cli

    result = CliRunner().invoke(cli, list(args), input=input, env=env)
    assert "Traceback" not in result.output
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result


def run_ok(*args: str) -> Result:
    """`run_cli(*args)`, which must succeed (its output shown where it does not)."""
    result = run_cli(*args)
    assert result.exit_code == 0, result.output
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


# -- the judge ---------------------------------------------------------------------

SECRET = "sk-test-never-shown-4f1c9a"


def write_config(path: Path, server: Server | None, **keys: Any) -> Path:
    """A config.toml whose [ppp.judge] points at `server` (none without one)."""
    lines = ["[ppp]", "enabled = true"]
    if server is not None:
        values = {
            "base_url": server.base_url,
            "model": "judge-model",
            "concurrency": 1,
            "timeout_s": 5,
            **keys,
        }
        lines.append("[ppp.judge]")
        lines += [f"{key} = {json.dumps(value)}" for key, value in values.items()]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def run_judge(
    db: Path | str, config: Path, *args: str, env: dict[str, str] | None = None
) -> Result:
    """`ppp-tui judge ARGS` on `db` (a file or a server's URL) with `config`, through
    click's runner."""
    from click.testing import CliRunner

    from ppp_tui.cli import cli

    return CliRunner().invoke(
        cli, ["judge", *args, "--db", str(db), "--config", str(config)], env=env
    )


def judge_process(db: Path | str, config: Path, *args: str) -> subprocess.Popen[str]:
    """`ppp-tui judge ARGS` on `db` (a file or a server's URL) in a process of its own,
    its output read as text; no proxy, no key from the caller's environment."""
    env = {k: v for k, v in os.environ.items() if "proxy" not in k.lower()}
    env.pop("OPENAI_API_KEY", None)
    return subprocess.Popen(
        [sys.executable, "-m", "ppp_tui", "judge", "--db", str(db), "--config", str(config), *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )


def judged_together(db: Path | str, config: Path, runs: int = 2) -> list[dict[str, Any]]:
    """`runs` judge processes started at once on `db` (`judge_process`, `--json`), each
    run to its successful end: their documents."""
    processes = [judge_process(db, config, "--json") for _ in range(runs)]
    documents = []
    for process in processes:
        out, err = process.communicate(timeout=120)
        assert process.returncode == 0, err
        documents.append(json.loads(out))
    return documents


def judged_while_another_asks(
    db: Path | str, config: Path, server: Server, meanwhile: Callable[[], object] = lambda: None
) -> tuple[dict[str, Any], dict[str, Any]]:
    """A judge run in a process of its own (`--json`) held by `server` once it has
    claimed its prompts and sent the first; meanwhile `meanwhile`, then a second run in
    this process. Both must succeed: their documents, the first's first."""
    server.hold = threading.Event()
    first = judge_process(db, config, "--json")
    try:
        wait_for(lambda: server.count >= 1)  # the first has claimed its prompts
        meanwhile()
        second = run_judge(db, config, "--json")
    finally:
        server.hold.set()
    out, err = first.communicate(timeout=60)
    assert first.returncode == 0, err
    assert second.exit_code == 0, second.output
    return json.loads(out), json.loads(second.stdout)


def wait_for(condition: Callable[[], object], seconds: float = 30) -> None:
    """Until `condition()` holds (failing after `seconds`)."""
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.02)


def one_line_error(result: Result) -> str:
    """The one line a command that failed wrote on standard error (exit 1, no
    traceback, nothing a terminal would act on)."""
    assert result.exit_code == 1, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert "Traceback" not in result.output
    assert not UNSAFE.search(result.stderr), result.stderr
    return lines[0]


def question_rows(db: Path) -> list[tuple[Any, ...]]:
    conn = sqlite3.connect(db)
    try:
        return conn.execute(
            "SELECT id, trajectory_id, text, effort, source, judged_model, judged_prompt"
            " FROM trajectory_questions ORDER BY id"
        ).fetchall()
    finally:
        conn.close()


def classified_count(db: Path) -> int:
    return sum(1 for row in question_rows(db) if row[4] != "label")


def check_consistent(db: Path) -> None:
    """The agents' question counts are their questions', and every pack is what the
    agents give now (rank and regret read the packs)."""
    from ppp_tui.storage import packs

    conn = sqlite3.connect(db)
    try:
        counts = conn.execute(
            "SELECT a.id, a.q_low, a.q_medium, a.q_high,"
            " (SELECT count(*) FROM trajectory_questions q WHERE q.trajectory_id = a.id"
            "  AND q.effort = 'low'),"
            " (SELECT count(*) FROM trajectory_questions q WHERE q.trajectory_id = a.id"
            "  AND q.effort = 'medium'),"
            " (SELECT count(*) FROM trajectory_questions q WHERE q.trajectory_id = a.id"
            "  AND q.effort = 'high')"
            " FROM agents a JOIN trajectories t ON t.id = a.id"
        ).fetchall()
        assert counts
        for row in counts:
            assert row[1:4] == row[4:7], row
        stored = conn.execute("SELECT * FROM run_scores ORDER BY run_id").fetchall()
        fresh = packs.from_agent_rows(
            conn.execute(f"{packs.AGENT_ROWS} ORDER BY run_id, position").fetchall()
        )
        assert stored == [tuple(pack) for pack in fresh]
        assert conn.execute("SELECT count(*) FROM runs").fetchone()[0] == len(stored)
    finally:
        conn.close()


# -- a run of sessions whose agents edited files (the app's Changes tab) --------------

CHANGES_CWD = "/home/ana/shop"
EXPORT_BEFORE = "import json\n\n\ndef export(rows):\n    return rows\n"
EXPORT_AFTER = (
    "import json\n\n\ndef export(rows, as_json=False):\n"
    "    if as_json:\n        return json.dumps(rows)\n    return rows\n"
)
# A path and a line of code with markup and escape sequences (OSC 52 sets the clipboard).
HOSTILE_PATH = "notes/[b]evil[/b]\x1b]52;c;aGk=\x07.md"
HOSTILE_LINE = "[red]boom[/red] \x1b[2J\x1b]0;title\x07 \u202eevil"


def changes_db(path: Path) -> Path:
    """A database of one run of three sessions: claude-code edits app/export.py twice
    (in two turns) and writes app/cli.py; codex edits app/export.py once and the hostile
    path; gemini-cli edits nothing."""
    from ppp_tui.core.sessions.changes import EditKind, Piece, SessionEdit, diff_edit
    from ppp_tui.core.sessions.grouping import agent_names, session_run
    from ppp_tui.core.sessions.model import Session, SessionTurn, Step, StepKind, Tool
    from ppp_tui.storage.files import ParsedRecord
    from ppp_tui.storage.store import Store

    def edit(name: str, old: str, new: str, kind: EditKind = EditKind.UPDATE) -> SessionEdit:
        made = diff_edit(f"{CHANGES_CWD}/{name}", [Piece(old, new, 1, 1)], kind)
        assert made is not None
        return made

    halfway = EXPORT_AFTER.replace("        return json.dumps(rows)\n", "        pass\n")
    cli_text = "import click\n\n\n@click.command()\ndef main():\n    pass\n"

    def turn(prompt: str, minute: int, *edits: SessionEdit) -> SessionTurn:
        return SessionTurn(
            prompt=prompt,
            timestamp=f"2026-01-05T10:0{minute}:00Z",
            steps=[Step(StepKind.TEXT, "Done.")],
            edits=list(edits),
        )

    def session(tool: Tool, sid: str, started: str, *turns: SessionTurn) -> Session:
        return Session(
            tool, sid, f"/sessions/{sid}.jsonl", started=started, cwd=CHANGES_CWD, turns=list(turns)
        )

    sessions = [
        session(
            Tool.CLAUDE_CODE,
            "c1",
            "2026-01-05T10:00:00Z",
            turn(
                TASK,
                0,
                edit("app/export.py", EXPORT_BEFORE, halfway),
                edit("app/cli.py", "", cli_text, EditKind.CREATE),
            ),
            turn("and the JSON itself?", 2, edit("app/export.py", halfway, EXPORT_AFTER)),
        ),
        session(
            Tool.CODEX,
            "x1",
            "2026-01-05T10:01:00Z",
            turn(
                TASK,
                1,
                edit("app/export.py", EXPORT_BEFORE, EXPORT_AFTER),
                edit(HOSTILE_PATH, "# Notes\n", f"# Notes\n{HOSTILE_LINE}\n"),
            ),
        ),
        session(Tool.GEMINI_CLI, "g1", "2026-01-05T10:02:00Z", turn(TASK, 3)),
    ]
    run = session_run(sessions, "session-changes", agent_names(sessions), "key", None)
    with Store.open(path, create=True) as store:
        store.import_records([ParsedRecord("test", None, "$", None, parsed=run)])
    return path


# -- stores of either engine ----------------------------------------------------


def _agent_keys(conn: Any) -> dict[int, tuple[str, str]]:
    return {row[0]: (row[1], row[2]) for row in conn.execute("SELECT id, run_id, name FROM agents")}


def dump(conn: Any) -> dict[str, list[tuple[Any, ...]]]:
    """Every table's rows of a SQLite or PostgreSQL connection, agent ids as (run id,
    agent name) and the ids a copy's target gives left out, sorted: equal for two stores
    holding the same runs."""
    from ppp_tui.storage import transfer
    from ppp_tui.storage.tables import TABLES

    agents = _agent_keys(conn)
    tables: dict[str, list[tuple[Any, ...]]] = {}
    for table in TABLES:
        if table.name in ("judge_claims", "score_changes"):
            continue
        names = list(table.column_names)
        rows = conn.execute(f"SELECT {', '.join(names)} FROM {table.name}").fetchall()
        kept = []
        for row in rows:
            values = dict(zip(names, row, strict=True))
            if table.name in transfer._OWN_IDS:
                del values["id"]
            column = transfer._AGENT_ID.get(table.name)
            if column is not None:
                values[column] = agents[values[column]]
            kept.append(tuple(json.dumps(v, default=bytes.hex) for v in values.values()))
        tables[table.name] = sorted(kept)
    return tables
