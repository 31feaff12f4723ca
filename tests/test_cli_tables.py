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


def test_short_cells_come_before_any_cut() -> None:
    columns = [
        Column("id", ["session-d5ea38829bd9"], least=12, cut_last=True),
        Column("date", ["2026-11-26 14:03"], short=["2026-11-26"]),
        Column("task", ["Add rate limiting to the public search endpoint"], least=12),
    ]
    # Whole where it fits.
    assert table_lines([*columns], 90)[1].split()[:3] == [
        "session-d5ea38829bd9",
        "2026-11-26",
        "14:03",
    ]
    lines = table_lines(columns, 60)
    assert lines[1] == "session-d5ea38829bd9 2026-11-26 Add rate limiting to the pu…"


def test_runs_shows_each_runs_date_and_task_from_80_columns(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ppp_tui.storage.files import Record
    from ppp_tui.storage.store import Store

    db = tmp_path / "runs.db"
    agents = [
        {"name": "claude-code", "technical_score": 0.8},
        {"name": "codex", "technical_score": 0.7},
    ]
    runs = [
        (
            "session-052858cd73fb",
            "2026-11-26T14:03:59Z",
            "Fix the [b]flaky[/]\n\n  upload\x1b[2J test",
        ),
        ("session-1a2b3c4d5e6f", None, "Rename the loader"),
        ("session-9f8e7d6c5b4a", "2026-11-25T09:00:00+02:00", "Add rate limiting"),
    ]
    with Store.open(db, create=True) as store:
        store.import_records(
            Record("t", None, "$", {"id": i, "created_at": t, "task": task, "agents": agents})
            for i, t, task in runs
        )
    monkeypatch.setattr(tables, "terminal_width", lambda: 80)
    lines = CliRunner().invoke(cli, ["runs", "--db", str(db)]).stdout.splitlines()
    assert lines[0].split() == ["id", "date", "task", "selected", "preferred", "regret"]
    # Oldest first, the run without a time last; the date alone, the task on one line.
    assert lines[1].startswith("session-9f8e7d6c5b4a 2026-11-25 Add rate limiting")
    assert lines[2].startswith("session-052858cd73fb 2026-11-26 Fix the [b]flaky[/… claude")
    assert lines[3].startswith("session-1a2b3c4d5e6f —          Rename the loader")
    assert max(map(len, lines)) <= 80
    monkeypatch.setattr(tables, "terminal_width", lambda: None)
    whole = CliRunner().invoke(cli, ["runs", "--db", str(db)]).stdout.splitlines()
    assert whole[2].startswith("session-052858cd73fb 2026-11-26 14:03 ")
    assert " Fix the [b]flaky[/] upload␛[2J test claude-code " in whole[2]
    assert "2026-11-25 09:00" in whole[1]


def test_late_columns_go_only_when_cutting_the_others_is_not_enough() -> None:
    def columns() -> list[Column]:
        return [
            Column("id", ["session-d5ea38829bd9"], least=12, cut_last=True),
            Column("date", ["2026-11-26"], drop=1, drop_late=True),
            Column(
                "task",
                ["Add rate limiting to the search endpoint"],
                least=12,
                drop=2,
                drop_late=True,
            ),
            Column("selected", ["claude-code/opus"], least=8),
        ]

    assert [c.header for c in fit(columns(), 90)] == ["id", "date", "task", "selected"]
    # Cut, both stay.
    assert [(c.header, c.width) for c in fit(columns(), 60)] == [
        ("id", 20), ("date", 10), ("task", 13), ("selected", 14)
    ]  # fmt: skip
    # Too narrow for both cut: the date goes first, then the task; the id stays whole.
    assert [c.header for c in fit(columns(), 45)] == ["id", "task", "selected"]
    assert [(c.header, c.width) for c in fit(columns(), 35)] == [("id", 20), ("selected", 14)]
