"""The runs list's date and task columns, driven with Pilot: what each width shows, and
sorting by date with the stage menu and the search."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from helpers import UNSAFE, HeldLoad, opened
from textual.pilot import Pilot
from textual.widgets import Select

from ppp_tui.app.app import PPPApp
from ppp_tui.app.screens.runs import RunsScreen
from ppp_tui.app.widgets.runs_table import RunsTable
from ppp_tui.storage.files import Record
from ppp_tui.storage.store import Store

TASK = "[b]Fix[/] the flaky\n\n   upload test \x1b[31min storage\x1b[0m"
# Id order is not time order: the sort has something to do.
RUNS: list[tuple[str, str | None, str, str]] = [  # id, created_at, stage, task
    ("a-offset", "2026-11-26T15:00:00+02:00", "plan", "Rename the config loader"),  # 13:00Z
    ("b-undated", None, "plan", "Document the retry policy"),
    ("c-new", "2026-11-26T14:03:59Z", "implement", TASK),
    ("d-unreadable", "yesterday", "plan", "Add rate limiting to search"),
    ("e-old", "2025-01-02T08:00:00Z", "plan", "add a flaky-test report"),
    ("session-052858cd73fb", "2026-11-27", "implement", "Move config to tomllib"),
]
NEWEST_FIRST = ["session-052858cd73fb", "c-new", "a-offset", "e-old", "b-undated", "d-unreadable"]
OLDEST_FIRST = ["e-old", "a-offset", "c-new", "session-052858cd73fb", "b-undated", "d-unreadable"]


def _run(run_id: str, created_at: str | None, stage: str, task: str) -> dict[str, Any]:
    return {
        "id": run_id,
        "created_at": created_at,
        "stage": stage,
        "task": task,
        "agents": [
            {"name": "claude-code", "technical_score": 0.8},
            {"name": "codex", "technical_score": 0.7},
        ],
    }


@pytest.fixture
def dated_db(tmp_path: Path) -> Path:
    db = tmp_path / "dated.db"
    with Store.open(db, create=True) as store:
        store.import_records(Record("t", None, "$", _run(*run)) for run in RUNS)
    return db


async def _table(app: PPPApp, pilot: Pilot[None]) -> RunsTable:
    await app.load_done.wait()
    await pilot.pause()
    screen = app.screen
    assert isinstance(screen, RunsScreen)
    return screen.table


def _shown(table: RunsTable) -> list[str]:
    return [table.rows.infos[int(i)].id for i in table.order]


def _lines(table: RunsTable) -> dict[str, str]:
    """Each shown run's line as drawn, by run id."""
    return {
        run_id: table.render_line(y + 1).text.rstrip() for y, run_id in enumerate(_shown(table))
    }


async def test_80_columns_show_each_runs_date_and_the_start_of_its_task(
    dated_db: Path, tmp_path: Path
) -> None:
    async with opened(dated_db, tmp_path, (80, 24)) as (app, pilot):
        table = await _table(app, pilot)
        header = table.render_line(0).text
        assert header.split() == [
            "run", "date▼", "stage", "ag…", "task", "selected", "preferred", "regret"
        ]  # fmt: skip
        lines = _lines(table)
        # The task on one line, its markup as written, cut with "…" to what is left.
        assert lines["c-new"] == ("c-new       2026-11-26 implement   2 [b]Fix[/] t… claude-co…")
        # The date alone; as written when it is not a time, "—" when there is none.
        assert lines["a-offset"].startswith("a-offset    2026-11-26 plan")
        assert lines["d-unreadable"].startswith("d-un…adable yesterday  plan")
        assert lines["b-undated"].startswith("b-undated   —          plan")
        # A long id keeps its kind and the end of its hash.
        assert lines["session-052858cd73fb"].startswith("sess…cd73fb 2026-11-27 implement")
        assert table.virtual_size.width <= table.size.width


async def test_wider_terminals_show_the_time_and_more_of_the_task(
    dated_db: Path, tmp_path: Path
) -> None:
    shown: dict[int, dict[str, str]] = {}
    for width, height in ((120, 40), (200, 50)):
        async with opened(dated_db, tmp_path, (width, height)) as (app, pilot):
            shown[width] = _lines(await _table(app, pilot))
            assert not UNSAFE.findall(app.export_screenshot())
    at_120, at_200 = shown[120], shown[200]
    # As recorded: 15:00 at +02:00 stays 15:00 (the day the dashboard counts it on).
    assert at_120["a-offset"].startswith("a-offset         2026-11-26 15:00 plan")
    assert " 2026-11-26 14:03 " in at_120["c-new"]
    assert " 2026-11-27       " in at_120["session-052858cd73fb"]  # a date alone
    assert " [b]Fix[/] the flaky upload te… claude-code" in at_120["c-new"]
    # At 200 columns the whole task shows, on one line, the escape sequence made visible.
    assert "[b]Fix[/] the flaky upload test ␛[31min storage␛[0m " in at_200["c-new"]
    assert "session-052858cd73fb " in at_200["session-052858cd73fb"]


async def test_the_list_opens_newest_first_and_the_date_header_turns_it_round(
    dated_db: Path, tmp_path: Path
) -> None:
    async with opened(dated_db, tmp_path, (120, 40)) as (app, pilot):
        table = await _table(app, pilot)
        # Newest first, by moment (13:00 UTC written as 15:00+02:00 is older than 14:03
        # UTC); the runs without a readable date last, by id.
        assert _shown(table) == NEWEST_FIRST
        assert "date▼" in table.render_line(0).text
        assert table.current_run() == NEWEST_FIRST[0]
        date_column = dict((c.key, w) for c, w in table.columns)["id"] + 1
        await pilot.click(RunsTable, offset=(date_column + 2, 0))
        assert (table.sort_key, table.sort_descending) == ("date", False)
        assert _shown(table) == OLDEST_FIRST
        assert "date▲" in table.render_line(0).text
        await pilot.click(RunsTable, offset=(date_column + 2, 0))
        assert _shown(table) == NEWEST_FIRST
        await pilot.press("S")
        assert _shown(table) == OLDEST_FIRST
        # Another column, then `s` from the run to the date: newest first again.
        await pilot.click(RunsTable, offset=(1, 0))
        assert _shown(table) == sorted(run[0] for run in RUNS)
        assert "run▲" in table.render_line(0).text
        await pilot.press("s")
        assert (table.sort_key, table.sort_descending) == ("date", True)
        assert _shown(table) == NEWEST_FIRST


async def test_a_search_lists_the_most_relevant_first_until_a_sort_is_chosen(
    dated_db: Path, tmp_path: Path
) -> None:
    async with opened(dated_db, tmp_path, (120, 40)) as (app, pilot):
        table = await _table(app, pilot)
        with Store.open(dated_db) as store:
            relevant = store.search("flaky")
        assert sorted(relevant) == ["c-new", "e-old"]
        await pilot.press("slash", *"flaky", "enter")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert _shown(table) == relevant
        assert "date▼" not in table.render_line(0).text  # the order is the search's
        # `s` sorts the matches the list's own way first: newest first.
        await pilot.press("s")
        assert _shown(table) == ["c-new", "e-old"]
        assert "date▼" in table.render_line(0).text
        await pilot.press("escape")
        await pilot.pause()
        assert _shown(table) == NEWEST_FIRST


async def test_the_date_sort_holds_through_the_stage_menu_and_the_search(
    dated_db: Path, tmp_path: Path
) -> None:
    async with opened(dated_db, tmp_path, (120, 40)) as (app, pilot):
        table = await _table(app, pilot)
        table.sort_by("date", descending=True)
        screen = app.screen
        assert isinstance(screen, RunsScreen)
        screen.query_one("#stage-filter", Select).value = "plan"
        await pilot.pause()
        assert _shown(table) == ["a-offset", "e-old", "b-undated", "d-unreadable"]
        # The search keeps the stage and the sort: its matches newest first.
        await pilot.press("slash", *"flaky", "enter")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert _shown(table) == ["e-old"]  # c-new holds "flaky" too, but is not planned
        screen.query_one("#stage-filter", Select).clear()
        await pilot.pause()
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert _shown(table) == ["c-new", "e-old"]
        await pilot.press("escape")
        await pilot.pause()
        assert _shown(table) == NEWEST_FIRST


async def test_the_task_sorts_by_its_words_whatever_their_case(
    dated_db: Path, tmp_path: Path
) -> None:
    async with opened(dated_db, tmp_path, (120, 40)) as (app, pilot):
        table = await _table(app, pilot)
        table.sort_by("task")
        tasks = [table.rows.infos[int(i)].task or "" for i in table.order]
        # In lower case: "add a flaky…" before "Add rate…"; a bracket before letters.
        assert [task.split()[:2] for task in tasks] == [
            ["[b]Fix[/]", "the"], ["add", "a"], ["Add", "rate"], ["Document", "the"],
            ["Move", "config"], ["Rename", "the"],
        ]  # fmt: skip
        assert "task▲" in table.render_line(0).text


async def test_the_first_page_shows_dates_and_tasks_before_the_rest_loads(
    db: Path, tmp_path: Path, held_load: HeldLoad
) -> None:
    async with held_load.opened(db, tmp_path / "config.toml", (120, 40)) as (app, pilot):
        screen = app.screen
        assert isinstance(screen, RunsScreen)
        first = screen.table.rows.infos[0]
        assert first.created_at and first.task
        line = screen.table.render_line(1).text
        assert f" {first.created_at[:10]} {first.created_at[11:16]} " in line
        assert first.task.split()[0] in line and not app.load_done.is_set()
        held_load.set()
        await _table(app, pilot)
