"""Helpers shared by several test modules (fixtures stay in conftest.py)."""

from __future__ import annotations

import json
import re
import sqlite3
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from click.testing import Result
    from judge_server import Server
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


def run_judge(db: Path, config: Path, *args: str, env: dict[str, str] | None = None) -> Result:
    """`ppp-tui judge ARGS` on `db` with `config`, through click's runner."""
    from click.testing import CliRunner

    from ppp_tui.cli import cli

    return CliRunner().invoke(
        cli, ["judge", *args, "--db", str(db), "--config", str(config)], env=env
    )


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
