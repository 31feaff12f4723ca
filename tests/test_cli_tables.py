"""The command line's tables: whole in a pipe, sized to the terminal on one."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from ppp_tui.cli import cli, tables
from ppp_tui.cli.tables import Column, fit, table_lines


def _columns() -> list[Column]:
    return [
        Column("id", ["session-d5ea38829bd9", "demo-000001"], least=12, cut_last=True),
        Column("task type", ["code_generation", "general"], drop=1),
        Column("agents", ["3", "2"], right=True, drop=2),
        Column("selected", ["claude-code/claude-sonnet-4-5", "cursor"], least=8),
        Column("regret", ["0.000", "—"], right=True),
    ]


def test_a_pipe_gets_every_column_whole() -> None:
    lines = table_lines(_columns(), None)
    assert lines[0].split() == ["id", "task", "type", "agents", "selected", "regret"]
    assert "claude-code/claude-sonnet-4-5" in lines[1]


def test_a_narrow_terminal_drops_columns_in_order_then_cuts_names() -> None:
    assert [c.header for c in fit(_columns(), 70)] == ["id", "agents", "selected", "regret"]
    lines = table_lines(_columns(), 50)
    assert all(len(line) <= 50 for line in lines)
    assert lines[0].split() == ["id", "selected", "regret"]
    # The id stays whole while a name can give way; the cut shows.
    assert lines[1].startswith("session-d5ea38829bd9 claude-code/claude-")
    assert lines[1].split()[1].endswith("…")
    # Past every cut, the table is as narrow as it gets (never an empty column).
    assert all(len(line) <= 12 + 1 + 8 + 1 + 6 for line in table_lines(_columns(), 10))


def test_runs_and_rank_fit_80_columns_on_a_terminal(
    demo_db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tables, "terminal_width", lambda: 80)
    runner = CliRunner()
    listed = runner.invoke(cli, ["runs", "--db", str(demo_db)])
    assert listed.exit_code == 0, listed.output
    lines = listed.stdout.splitlines()
    assert max(map(len, lines)) <= 80
    assert lines[0].split()[0] == "id" and lines[0].split()[-3:] == [
        "selected",
        "preferred",
        "regret",
    ]
    ranked = runner.invoke(cli, ["rank", "demo-000001", "--db", str(demo_db)])
    assert max(map(len, ranked.stdout.splitlines()[1:])) <= 80
    monkeypatch.setattr(tables, "terminal_width", lambda: None)
    whole = runner.invoke(cli, ["runs", "--db", str(demo_db)]).stdout.splitlines()
    assert "task type" in whole[0] and max(map(len, whole)) > 80
