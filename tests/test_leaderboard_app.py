"""The leaderboard (`b`) driven with Pilot: what it shows is what `leaderboard_under`
computes, for the stage chosen and the weights being edited."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from helpers import computed, opened
from textual.widgets import DataTable, Select, Static

from ppp_tui.app.app import PPPApp
from ppp_tui.app.screens.leaderboard import LeaderboardScreen
from ppp_tui.app.screens.runs import RunsScreen
from ppp_tui.core.leaderboard import Leaderboard, leaderboard_under
from ppp_tui.storage.files import Record
from ppp_tui.storage.store import Store

EXAMPLES = Path(__file__).resolve().parent.parent / "examples" / "runs.jsonl"


async def _leaderboard(app: PPPApp, pilot: Any) -> LeaderboardScreen:
    """The leaderboard on screen, once its figures are shown."""
    screen = await computed(app, pilot, LeaderboardScreen)
    assert screen.result is not None
    return screen


def _expected(app: PPPApp, stage: str | None = None) -> Leaderboard:
    workspace = app.workspace
    assert workspace is not None and workspace.scores is not None
    arrays = workspace.scores.arrays
    if stage is not None:
        arrays = arrays.subset(arrays.stage_mask(stage))
    board = leaderboard_under(arrays, workspace.settings)
    assert board is not None
    return board


def _rows(screen: LeaderboardScreen) -> list[list[str]]:
    table = screen.query_one("#leaderboard-table", DataTable)
    return [[str(value) for value in table.get_row_at(i)] for i in range(table.row_count)]


def _shown(rows: list[list[str]], board: Leaderboard) -> None:
    """The rows are the board's agents, strongest first, with their figures."""
    assert [row[0] for row in rows] == list(board.agents)
    for i, row in enumerate(rows):
        marks, picks = board.marks, board.picks
        assert row[1].rstrip("*") == f"{marks.rating[i]:+.0f}"
        assert row[2] == f"{marks.rating_low[i]:+.0f}…{marks.rating_high[i]:+.0f}"
        assert row[3] == f"{marks.win_rate[i]:.0%}"
        assert row[4:6] == [f"{board.runs[i]:,}", f"{marks.chosen[i]:,}"]
        assert row[6].rstrip("*") == f"{picks.rating[i]:+.0f}"
        assert row[8] == f"{picks.chosen[i]:,}"


async def test_b_shows_the_fit_to_the_marks_and_to_the_picks(db: Path, tmp_path: Path) -> None:
    async with opened(db, tmp_path, (140, 45)) as (app, pilot):
        await pilot.press("b")
        screen = await _leaderboard(app, pilot)
        expected = _expected(app)
        _shown(_rows(screen), expected)
        status = str(screen.query_one("#leaderboard-status", Static).render())
        assert f"{expected.marked_runs:,} marked runs" in status
        assert "200 bootstrap resamples" in str(screen.query_one("#leaderboard-notes").render())
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, RunsScreen)


async def test_the_table_fits_80x24(db: Path, tmp_path: Path) -> None:
    async with opened(db, tmp_path, (80, 24)) as (app, pilot):
        await pilot.press("b")
        screen = await _leaderboard(app, pilot)
        table = screen.query_one("#leaderboard-table", DataTable)
        # Every column and every agent without scrolling.
        assert table.virtual_size.width <= table.scrollable_content_region.width
        assert table.row_count == len(_expected(app).agents)
        assert table.region.bottom <= 24 - 1 and table.region.right <= 80
        assert table.max_scroll_y == 0


async def test_the_stage_menu_and_the_weights_change_the_figures(db: Path, tmp_path: Path) -> None:
    async with opened(db, tmp_path, (140, 45)) as (app, pilot):
        await pilot.press("b")
        screen = await _leaderboard(app, pilot)
        screen.query_one("#leaderboard-stage", Select).value = "implement"
        await _leaderboard(app, pilot)
        implement = _expected(app, "implement")
        assert implement.marked_runs < _expected(app).marked_runs
        _shown(_rows(screen), implement)
        # Weights moved while the leaderboard is open: the picks follow, the marks stay.
        before = [row[:6] for row in _rows(screen)]
        for _ in range(6):
            await pilot.press("left_square_bracket")
        await _leaderboard(app, pilot)
        assert app.workspace is not None and app.workspace.dirty
        moved = _expected(app, "implement")
        _shown(_rows(screen), moved)
        assert [row[:6] for row in _rows(screen)] == before
        assert list(moved.picks.chosen) != list(implement.picks.chosen)


async def test_a_mark_changes_the_leaderboard(db: Path, tmp_path: Path) -> None:
    async with opened(db, tmp_path, (140, 45)) as (app, pilot):
        await pilot.press("b")
        screen = await _leaderboard(app, pilot)
        before = _expected(app)
        workspace = app.workspace
        assert workspace is not None
        unmarked = next(
            info for info in workspace.infos if info.preferred is None and info.agents > 1
        )
        with Store.open(db) as store:
            agent = store.get_run(unmarked.id).agents[0].name
        app.mark_preferred(unmarked.id, agent)
        await _leaderboard(app, pilot)
        after = _expected(app)
        assert after.marked_runs == before.marked_runs + 1
        _shown(_rows(screen), after)


async def test_without_marks_it_says_how_to_mark(tmp_path: Path) -> None:
    db = tmp_path / "unmarked.db"
    with Store.open(db, create=True) as store:
        lines = EXAMPLES.read_text(encoding="utf-8").splitlines()
        store.import_records([Record("t", None, "$", json.loads(line)) for line in lines])
    async with opened(db, tmp_path, (80, 24)) as (app, pilot):
        await pilot.press("b")
        screen = await _leaderboard(app, pilot)
        assert screen.query_one("#leaderboard-table", DataTable).row_count == 0
        assert "No marked runs here yet" in str(screen.query_one("#leaderboard-notes").render())
