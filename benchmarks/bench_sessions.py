"""Importing coding agents' sessions: a large transcript of each agent, and real ones.

    python benchmarks/bench_sessions.py [--mb 100] [--repeat 2] [--realdata FOLDER]

For each of Claude Code, Codex CLI and Gemini CLI, writes a transcript of about `--mb`
megabytes the way that agent writes its files (prompts, answers split over several lines,
thinking, tool calls with long outputs, questions through the ask tool, test runs), then
prints: the time `json.loads` takes over its lines (the floor), the reader alone, and
`ppp-tui import` of it as a whole process, with their ratios to the floor; and the reader
at a quarter and half the size, to show the time grows in proportion. With a folder of
real transcripts (`--realdata`), imports all of it and prints the sessions, runs and the
questions asked through each agent's tool, answered and dismissed. Everything is written
to a temporary folder that is removed at the end. A quick check that it works: --mb 0.2
--repeat 1.
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from _common import isolated_env, ppp_tui, scratch

from ppp_tui.core.sessions.model import SessionWarnings, Tool
from ppp_tui.storage.sessions.importing import reader_for

PYTEST_OUTPUT = (
    "".join(
        f"tests/test_module_{i:03d}.py::test_case_{j} PASSED\n" for i in range(40) for j in range(5)
    )
    + "===== 198 passed, 2 failed in 12.31s =====\n"
)
PROSE = (
    "I looked at the handler and the middleware that wraps it; the counters are kept per"
    " worker today, so a shared store is needed for the limit to hold across processes. "
) * 6


def _claude(turns: int) -> Iterator[dict[str, Any]]:
    sid = "b7c1d2e3-4f50-4a6b-8c7d-9e0f1a2b3c4d"
    base = {"sessionId": sid, "cwd": "/home/dev/shop-api", "version": "2.1.30", "gitBranch": "main"}
    for n in range(turns):
        t = f"2026-03-02T10:{n // 60 % 60:02d}:{n % 60:02d}"
        yield {
            **base,
            "type": "user",
            "uuid": f"u{n}",
            "timestamp": f"{t}.000Z",
            "message": {"role": "user", "content": f"Step {n}: {PROSE[:200]}"},
        }
        mid = f"msg_{n}"
        for block in (
            {"type": "thinking", "thinking": PROSE, "signature": "x" * 200},
            {"type": "text", "text": PROSE},
            {
                "type": "tool_use",
                "id": f"toolu_{n}",
                "name": "Bash",
                "input": {"command": "pytest -q", "description": "Run the tests"},
            },
        ):
            yield {
                **base,
                "type": "assistant",
                "uuid": f"a{n}-{block['type']}",
                "timestamp": f"{t}.500Z",
                "message": {
                    "id": mid,
                    "role": "assistant",
                    "model": "claude-opus-4-5",
                    "content": [block],
                    "usage": {"input_tokens": 10},
                },
            }
        yield {
            **base,
            "type": "user",
            "uuid": f"r{n}",
            "timestamp": f"{t}.900Z",
            "message": {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": f"toolu_{n}", "content": PYTEST_OUTPUT}
                ],
            },
            "toolUseResult": {"stdout": PYTEST_OUTPUT, "stderr": "", "interrupted": False},
        }
        if n % 50 == 0:
            ask = {
                "questions": [
                    {
                        "question": "Where should the counters live?",
                        "header": "Store",
                        "options": [
                            {"label": "Redis", "description": "shared"},
                            {"label": "Memory", "description": "per worker"},
                        ],
                        "multiSelect": False,
                    }
                ]
            }
            yield {
                **base,
                "type": "assistant",
                "uuid": f"q{n}",
                "timestamp": f"{t}.950Z",
                "message": {
                    "id": f"msg_q{n}",
                    "role": "assistant",
                    "model": "claude-opus-4-5",
                    "content": [
                        {
                            "type": "tool_use",
                            "id": f"toolu_q{n}",
                            "name": "AskUserQuestion",
                            "input": ask,
                        }
                    ],
                },
            }
            yield {
                **base,
                "type": "user",
                "uuid": f"qa{n}",
                "timestamp": f"{t}.990Z",
                "message": {
                    "role": "user",
                    "content": [
                        {
                            "type": "tool_result",
                            "tool_use_id": f"toolu_q{n}",
                            "content": "User has answered",
                        }
                    ],
                },
                "toolUseResult": {
                    "questions": ask["questions"],
                    "answers": {"Where should the counters live?": "Redis"},
                },
            }


def _codex(turns: int) -> Iterator[dict[str, Any]]:
    yield {
        "timestamp": "2026-03-02T10:00:00.000Z",
        "type": "session_meta",
        "payload": {
            "id": "0195e3b2-7c41-7d80-9a61-4f2c8e5d1a07",
            "timestamp": "2026-03-02T10:00:00Z",
            "cwd": "/home/dev/shop-api",
            "originator": "codex_cli_rs",
            "cli_version": "0.60.0",
            "git": {"repository_url": "git@github.com:acme/shop-api.git"},
        },
    }
    for n in range(turns):
        t = f"2026-03-02T10:{n // 60 % 60:02d}:{n % 60:02d}.000Z"
        text = f"Step {n}: {PROSE[:200]}"
        yield {"timestamp": t, "type": "turn_context", "payload": {"model": "gpt-5.1-codex"}}
        yield {
            "timestamp": t,
            "type": "event_msg",
            "payload": {"type": "user_message", "message": text},
        }
        yield {
            "timestamp": t,
            "type": "response_item",
            "payload": {
                "type": "message",
                "role": "user",
                "content": [{"type": "input_text", "text": text}],
            },
        }
        yield {
            "timestamp": t,
            "type": "response_item",
            "payload": {
                "type": "reasoning",
                "summary": [{"type": "summary_text", "text": PROSE}],
                "encrypted_content": "g" * 2000,
            },
        }
        yield {
            "timestamp": t,
            "type": "response_item",
            "payload": {
                "type": "function_call",
                "name": "shell",
                "call_id": f"call_{n}",
                "arguments": json.dumps({"command": ["bash", "-lc", "pytest -q"]}),
            },
        }
        yield {
            "timestamp": t,
            "type": "response_item",
            "payload": {
                "type": "function_call_output",
                "call_id": f"call_{n}",
                "output": json.dumps({"output": PYTEST_OUTPUT, "metadata": {"exit_code": 1}}),
            },
        }
        yield {
            "timestamp": t,
            "type": "response_item",
            "payload": {
                "type": "message",
                "role": "assistant",
                "content": [{"type": "output_text", "text": PROSE}],
            },
        }
        yield {
            "timestamp": t,
            "type": "event_msg",
            "payload": {"type": "agent_message", "message": PROSE},
        }


def _gemini(turns: int) -> Iterator[dict[str, Any]]:
    yield {
        "sessionId": "8b1d0c47-2f3e-4a5b-9c6d-7e8f9a0b1c2d",
        "projectHash": "f" * 64,
        "startTime": "2026-03-02T10:00:00.000Z",
        "lastUpdated": "2026-03-02T10:00:00.000Z",
        "kind": "main",
    }
    for n in range(turns):
        t = f"2026-03-02T10:{n // 60 % 60:02d}:{n % 60:02d}.000Z"
        yield {
            "id": f"u{n}",
            "timestamp": t,
            "type": "user",
            "content": [{"text": f"Step {n}: {PROSE[:200]}"}],
        }
        message = {
            "id": f"g{n}",
            "timestamp": t,
            "type": "gemini",
            "content": PROSE,
            "thoughts": [{"subject": "Planning", "description": PROSE, "timestamp": t}],
            "model": "gemini-2.5-pro",
            "tokens": {"input": 10, "output": 10, "total": 20},
        }
        yield message
        call = {
            "id": f"run_shell_command-{n}",
            "name": "run_shell_command",
            "args": {"command": "pytest -q"},
            "status": "success",
            "timestamp": t,
            "result": [
                {
                    "functionResponse": {
                        "id": f"run_shell_command-{n}",
                        "name": "run_shell_command",
                        "response": {"output": PYTEST_OUTPUT},
                    }
                }
            ],
        }
        yield {**message, "toolCalls": [call]}  # the same id written again: the last wins
        yield {"$set": {"lastUpdated": t}}


WRITERS: dict[Tool, Callable[[int], Iterator[dict[str, Any]]]] = {
    Tool.CLAUDE_CODE: _claude,
    Tool.CODEX: _codex,
    Tool.GEMINI_CLI: _gemini,
}


def write(tool: Tool, path: Path, megabytes: float) -> int:
    """Write a transcript of about `megabytes`; its size in bytes."""
    target = int(megabytes * (1 << 20))
    with path.open("w", encoding="utf-8") as out:
        lines = WRITERS[tool](10**9)
        while out.tell() < target:
            out.write(json.dumps(next(lines)) + "\n")
    return path.stat().st_size


def best(call: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return min(times)


def loads(path: Path) -> None:
    with path.open("rb") as handle:
        for line in handle:
            json.loads(line)


def read(tool: Tool, path: Path) -> None:
    reader_for(tool)(str(path), SessionWarnings(), None)


def import_process(path: Path, db: Path) -> float:
    db.unlink(missing_ok=True)
    start = time.perf_counter()
    subprocess.run(
        [*ppp_tui(), "import", str(path), "--db", str(db)],
        env=isolated_env(db.parent),
        check=True,
        capture_output=True,
    )
    return time.perf_counter() - start


def large(folder: Path, megabytes: float, repeat: int) -> None:
    print(f"a transcript of {megabytes:g} MB per agent (best of {repeat}):")
    print(
        f"  {'agent':<12} {'json.loads':>10} {'reader':>8} {'ratio':>6} {'import':>8}"
        f" {'ratio':>6}   reader at 1/4, 1/2, 1 of the size (s per MB)"
    )
    for tool in Tool:
        path = folder / f"{tool.value}.jsonl"
        size = write(tool, path, megabytes)
        floor = best(lambda path=path: loads(path), repeat)
        reader = best(lambda tool=tool, path=path: read(tool, path), repeat)
        whole = min(import_process(path, folder / "runs.db") for _ in range(repeat))
        per_mb = []
        for share in (0.25, 0.5):
            part = folder / f"{tool.value}-part.jsonl"
            part_size = write(tool, part, megabytes * share)
            per_mb.append(
                best(lambda tool=tool, part=part: read(tool, part), repeat)
                / (part_size / (1 << 20))
            )
            part.unlink()
        per_mb.append(reader / (size / (1 << 20)))
        print(
            f"  {tool.value:<12} {floor:>9.2f}s {reader:>7.2f}s {reader / floor:>5.1f}x"
            f" {whole:>7.2f}s {whole / floor:>5.1f}x   "
            + ", ".join(f"{x * 1000:.1f} ms" for x in per_mb)
        )
        path.unlink()


def realdata(folder: Path, root: Path) -> None:
    db = folder / "real.db"
    start = time.perf_counter()
    result = subprocess.run(
        [*ppp_tui(), "import", str(root), "--db", str(db)],
        env=isolated_env(folder),
        capture_output=True,
        text=True,
    )
    seconds = time.perf_counter() - start
    print(f"\n{root}: imported in {seconds:.2f} s (exit {result.returncode})")
    print("  " + result.stdout.strip())
    skipped = [
        line
        for line in result.stderr.splitlines()
        if "not session transcripts" in line
        or "not a session transcript" in line
        or "no conversation" in line
    ]
    for line in skipped:
        print(f"  not imported: {line.removeprefix('warning: ')}")
    with sqlite3.connect(db) as conn:
        runs, agents = conn.execute(
            "SELECT (SELECT count(*) FROM runs), (SELECT count(*) FROM agents)"
        ).fetchone()
        asked = conn.execute(
            "SELECT count(*), sum(answer IS NOT NULL), sum(dismissed),"
            " sum(seconds_to_answer IS NOT NULL) FROM trajectory_questions"
            " WHERE asked_with = 'tool'"
        ).fetchone()
        text = conn.execute(
            "SELECT count(*) FROM trajectory_questions WHERE asked_with IS NULL"
        ).fetchone()[0]
        scored = conn.execute(
            "SELECT count(*) FROM agents WHERE technical_source != 'unscored'"
        ).fetchone()[0]
    print(
        f"  {runs} runs, {agents} agents ({scored} with a test run);"
        f" {asked[0]} questions through a tool: {asked[1] or 0} answered,"
        f" {asked[2] or 0} dismissed, {asked[3] or 0} with the time taken;"
        f" {text} questions in the agents' text"
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mb", type=float, default=100.0)
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--realdata", type=Path, help="A folder of real transcripts to import.")
    args = parser.parse_args()
    if args.realdata is not None and not args.realdata.is_dir():
        parser.error(f"--realdata {args.realdata}: not a folder")
    with scratch("ppp-bench-sessions-") as folder:
        large(folder, args.mb, args.repeat)
        if args.realdata is not None:
            realdata(folder, args.realdata)
        else:
            print("\n(real transcripts: pass --realdata FOLDER)")


if __name__ == "__main__":
    main()
