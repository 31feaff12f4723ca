"""Grouping and ungrouping in the app: space selects runs, g groups them after asking
(with a name, or the default id), u on a run ungroups it after asking."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import opened, run_cli
from textual.pilot import Pilot
from textual.widgets import Input, Label, Static
from transcripts import TASK, claude_lines, codex_lines, write_lines

from ppp_tui.app.app import PPPApp
from ppp_tui.app.screens.help import key_lines
from ppp_tui.app.screens.regroup import GroupScreen, UngroupScreen
from ppp_tui.app.screens.run import RunScreen
from ppp_tui.app.screens.runs import RunsScreen
from ppp_tui.app.widgets.runs_table import RunsTable
from ppp_tui.core.sessions.grouping import keys_run_id
from ppp_tui.storage.store import Store

SMALL = (80, 24)
GROUPED = keys_run_id(["claude-code:s1", "codex:c1"])


@pytest.fixture
def sessions_db(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """Claude Code and Codex CLI on one task asked in other words (two runs, a mark on
    the Codex one), and a run not read from sessions; (database, run by session)."""
    claude = write_lines(tmp_path / "s1.jsonl", claude_lines("s1", "/gone/ledger", "opus"))
    codex = write_lines(
        tmp_path / "c1.jsonl", codex_lines("c1", "/gone/ledger", prompt="Please add --json.")
    )
    plain = tmp_path / "plain.jsonl"
    plain.write_text('{"id": "plain", "agents": [{"name": "a", "technical_score": 1}]}\n')
    db = tmp_path / "runs.db"
    for files in ([claude, codex], [plain]):
        assert run_cli("import", *map(str, files), "--db", str(db)).exit_code == 0
    runs = {}
    with Store.open(db) as store:
        for info in store.run_infos():
            for agent in store.get_run(info.id).agents:
                runs.update(dict.fromkeys(agent.sessions, info.id))
    assert run_cli("prefer", runs["c1"], "codex", "--db", str(db)).exit_code == 0
    return db, runs


async def _runs(app: PPPApp, pilot: Pilot[None]) -> tuple[RunsScreen, RunsTable]:
    await app.load_done.wait()
    await pilot.pause()
    screen = app.screen
    assert isinstance(screen, RunsScreen)
    return screen, screen.table


async def _choose(table: RunsTable, pilot: Pilot[None], *run_ids: str) -> None:
    for run_id in run_ids:
        assert table.show_run(run_id)
        await pilot.press("space")
    await pilot.pause()


def _top(app: PPPApp) -> object:
    """The screen on top (typed loosely: it changes under the test's feet)."""
    return app.screen


def _status(screen: RunsScreen) -> str:
    return str(screen.query_one("#runs-status", Static).render())


def _notes(app: PPPApp) -> list[str]:
    return [str(note.message) for note in app._notifications]


async def _settle(app: PPPApp, pilot: Pilot[None]) -> None:
    """Wait for the write and the reading again that follows it."""
    for _ in range(3):
        await app.workers.wait_for_complete()
        await pilot.pause()


async def test_space_selects_and_g_groups_into_the_default_id(
    sessions_db: tuple[Path, dict[str, str]], tmp_path: Path
) -> None:
    db, runs = sessions_db
    async with opened(db, tmp_path, SMALL) as (app, pilot):
        screen, table = await _runs(app, pilot)
        header = table.render_line(0).text
        assert header.startswith("run ")  # no room for marks while none is selected
        await _choose(table, pilot, runs["s1"])
        # space marks the run and goes down a row.
        assert list(table.chosen) == [runs["s1"]]
        # (At 80 columns a long id is cut in the middle: the row is found by its run.)
        place = [table.rows.infos[int(i)].id for i in table.order].index(runs["s1"])
        row = table.render_line(place + 1 - int(table.scroll_offset.y)).text
        assert row.startswith("✓ " + runs["s1"][:4])
        assert table.render_line(0).text.startswith("  run ")
        assert "1 selected (g groups them)" in _status(screen)
        # Again: deselected; escape clears every selection.
        await _choose(table, pilot, runs["s1"])
        assert not table.chosen
        await _choose(table, pilot, runs["s1"], runs["c1"])
        await pilot.press("escape")
        assert not table.chosen and "selected" not in _status(screen)

        await _choose(table, pilot, runs["s1"], runs["c1"])
        await pilot.press("g")
        await pilot.pause()
        modal = app.screen
        assert isinstance(modal, GroupScreen)
        listed = str(modal.query_one("#group-runs", Static).render())
        assert f"{runs['s1']} · 1 agent · {TASK[:20]}" in listed and runs["c1"] in listed
        assert modal.query_one(Input).placeholder == f"its id (empty: {GROUPED})"
        await pilot.press("enter")
        await _settle(app, pilot)
        assert app.screen is screen
        assert sorted(info.id for info in table.rows.infos) == sorted([GROUPED, "plain"])
        # The cursor is on the new run; nothing is selected any more.
        assert table.current_run() == GROUPED and not table.chosen
        assert any(f"grouped into {GROUPED}: 2 agents" in note for note in _notes(app))
        info = next(i for i in table.rows.infos if i.id == GROUPED)
        assert (info.agents, info.preferred) == (2, "codex")
    with Store.open(db) as store:
        assert store.current_marks(GROUPED) == {"tester": "codex"}
        assert [a.name for a in store.get_run(GROUPED).agents] == ["claude-code", "codex"]


async def test_the_grouping_box_takes_a_name_and_refuses_a_taken_one(
    sessions_db: tuple[Path, dict[str, str]], tmp_path: Path
) -> None:
    db, runs = sessions_db
    async with opened(db, tmp_path, SMALL) as (app, pilot):
        screen, table = await _runs(app, pilot)
        await _choose(table, pilot, runs["s1"], runs["c1"])
        await pilot.press("g")
        await pilot.pause()
        modal = app.screen
        assert isinstance(modal, GroupScreen)
        await pilot.press(*"plain", "enter")
        await pilot.pause()
        assert app.screen is modal
        message = str(modal.query_one("#group-message", Label).render())
        assert message == "run plain exists already: choose another name"
        # escape: nothing grouped, the selection stays.
        await pilot.press("escape")
        await pilot.pause()
        assert _top(app) is screen and len(table.chosen) == 2
        with Store.open(db) as store:
            assert store.count() == 3
        await pilot.press("g")
        await pilot.pause()
        await pilot.press(*"json-flag", "enter")
        await _settle(app, pilot)
        assert table.current_run() == "json-flag"
    with Store.open(db) as store:
        assert sorted(info.id for info in store.run_infos()) == ["json-flag", "plain"]


async def test_g_asks_for_two_runs_read_from_sessions(
    sessions_db: tuple[Path, dict[str, str]], tmp_path: Path
) -> None:
    db, runs = sessions_db
    async with opened(db, tmp_path, SMALL) as (app, pilot):
        screen, table = await _runs(app, pilot)
        await pilot.press("g")
        await pilot.pause()
        assert app.screen is screen
        assert "Select two runs or more with space; g then groups them." in _notes(app)
        await _choose(table, pilot, runs["s1"], "plain")
        await pilot.press("g")
        await pilot.pause()
        assert app.screen is screen  # refused before any box
        assert any("run 'plain' was not read from agents' sessions" in note for note in _notes(app))
    with Store.open(db) as store:
        assert store.count() == 3


async def test_u_ungroups_a_run_after_asking(
    sessions_db: tuple[Path, dict[str, str]], tmp_path: Path
) -> None:
    db, runs = sessions_db
    assert run_cli("group", runs["s1"], runs["c1"], "--db", str(db)).exit_code == 0
    async with opened(db, tmp_path, SMALL) as (app, pilot):
        screen, table = await _runs(app, pilot)
        assert table.show_run(GROUPED)
        await pilot.press("enter")
        await pilot.pause()
        run_screen = app.screen
        assert isinstance(run_screen, RunScreen)
        await pilot.press("u")
        await pilot.pause()
        modal = app.screen
        assert isinstance(modal, UngroupScreen)
        text = " ".join(str(s.render()) for s in modal.query(Static))
        assert "Each of its 2 sessions becomes a run of its own again" in text
        await pilot.press("escape")  # not now
        await pilot.pause()
        assert app.screen is run_screen
        await pilot.press("u")
        await pilot.pause()
        await pilot.click("#ungroup-yes")
        await _settle(app, pilot)
        # Back on the runs list, on the first session's run.
        assert _top(app) is screen
        assert sorted(info.id for info in table.rows.infos) == sorted(
            [runs["s1"], runs["c1"], "plain"]
        )
        assert table.current_run() == runs["s1"]
        assert any(f"{GROUPED} ungrouped into 2 runs" in note for note in _notes(app))
        # A run of one session: nothing to ungroup, and nothing asked.
        await pilot.press("enter")
        await pilot.pause()
        await pilot.press("u")
        await pilot.pause()
        assert isinstance(app.screen, RunScreen)
        assert "This run holds one session: there is nothing to ungroup." in _notes(app)
    with Store.open(db) as store:
        assert store.current_marks(runs["c1"]) == {"tester": "codex"}


async def test_the_help_lists_the_grouping_keys(
    sessions_db: tuple[Path, dict[str, str]], tmp_path: Path
) -> None:
    db, _ = sessions_db
    async with opened(db, tmp_path, SMALL) as (app, pilot):
        await _runs(app, pilot)
        lines = list(key_lines(app))
        for key, text in (
            ("space", "Select the highlighted run, or deselect it"),
            ("g", "Group the selected runs"),
            ("u", "Give each session of this run its own run again"),
        ):
            assert any(k == key and t.startswith(text) for k, t in lines), key


async def test_g_and_u_on_a_team_store_write_what_they_write_in_a_file(
    sessions_db: tuple[Path, dict[str, str]], tmp_path: Path, pg_url: str
) -> None:
    import sqlite3

    import psycopg
    from helpers import dump

    from ppp_tui.storage.location import parse_server_url

    db, runs = sessions_db
    assert run_cli("import", str(db), "--db", pg_url).exit_code == 0
    server = parse_server_url(pg_url)
    shown: dict[str, list[list[str]]] = {}
    for where in (db, server):
        async with opened(where, tmp_path, SMALL) as (app, pilot):
            screen, table = await _runs(app, pilot)
            await _choose(table, pilot, runs["s1"], runs["c1"])
            await pilot.press("g")
            await pilot.pause()
            assert isinstance(app.screen, GroupScreen)
            await pilot.press("enter")
            await _settle(app, pilot)
            assert table.current_run() == GROUPED and _top(app) is screen
            assert any(f"grouped into {GROUPED}: 2 agents" in note for note in _notes(app))
            grouped = sorted(info.id for info in table.rows.infos)
            await pilot.press("enter")
            await pilot.pause()
            assert isinstance(app.screen, RunScreen) and app.screen.run.id == GROUPED
            await pilot.press("u")
            await pilot.pause()
            assert isinstance(app.screen, UngroupScreen)
            await pilot.click("#ungroup-yes")
            await _settle(app, pilot)
            assert _top(app) is screen
            assert any(f"{GROUPED} ungrouped into 2 runs" in note for note in _notes(app))
            # And together again, under a name of the reviewer's.
            await _choose(table, pilot, runs["s1"], runs["c1"])
            await pilot.press("g")
            await pilot.pause()
            app.screen.query_one(Input).value = "ledger-json"
            await pilot.press("enter")
            await _settle(app, pilot)
            assert table.current_run() == "ledger-json"
            shown[str(where)] = [grouped, sorted(info.id for info in table.rows.infos)]
    assert (
        shown[str(server)]
        == shown[str(db)]
        == [
            sorted([GROUPED, "plain"]),
            sorted(["ledger-json", "plain"]),
        ]
    )
    with psycopg.connect(pg_url) as conn:
        assert dump(conn) == dump(sqlite3.connect(db))
    with Store.open(db) as store:
        assert store.current_marks("ledger-json") == {"tester": "codex"}
