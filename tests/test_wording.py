"""Counts read as English does: singular for one, everywhere."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from ppp_tui.cli import cli
from ppp_tui.core.wording import counted


def test_one_is_singular_and_others_plural_with_thousands_separated() -> None:
    assert counted(1, "run") == "1 run"
    assert counted(0, "run") == "0 runs"
    assert counted(1204, "marked run") == "1,204 marked runs"
    assert counted(2, "body", "bodies") == "2 bodies"


def test_a_single_marked_run_is_one_marked_run(tmp_path: Path) -> None:
    run = {
        "id": "only",
        "task": "Add rate limiting",
        "preferred_agent": "a",
        "agents": [{"name": "a", "technical_score": 0.9}, {"name": "b", "technical_score": 0.5}],
    }
    source = tmp_path / "runs.jsonl"
    source.write_text(json.dumps(run) + "\n")
    db = str(tmp_path / "one.db")
    assert CliRunner().invoke(cli, ["import", str(source), "--db", db]).exit_code == 0
    board = CliRunner().invoke(cli, ["leaderboard", "--db", db])
    assert board.output.startswith("1 marked run (1 pairwise win)"), board.output
    regret = CliRunner().invoke(cli, ["tune", "--db", db])
    assert "1 marked run;" in regret.output and "1 marked runs" not in regret.output
