"""Helpers shared by several test modules (fixtures stay in conftest.py)."""

from __future__ import annotations

import json
import re
import threading
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
