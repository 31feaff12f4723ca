"""The dashboard (`d`) driven with Pilot: what it shows is what `Dashboard.load` computes."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from conftest import HeldLoad
from textual.widgets import DataTable, Select

from ppp_tui.analysis.dashboard import Dashboard
from ppp_tui.app.app import PPPApp
from ppp_tui.app.dashboard_screen import FLIPS_SHOWN, DashboardScreen
from ppp_tui.app.help_screen import HelpScreen
from ppp_tui.app.run_screen import RunScreen
from ppp_tui.app.runs_screen import RunsScreen

SIZE = (140, 45)


async def _dashboard(app: PPPApp, pilot: Any) -> DashboardScreen:
    """The dashboard on screen, once its figures are shown."""
    screen = app.screen
    assert isinstance(screen, DashboardScreen)
    for _ in range(200):
        await pilot.pause(0.02)
        if not screen.computing:
            break
    await app.workers.wait_for_complete()
    await pilot.pause()
    assert not screen.computing and screen.dashboard is not None
    return screen


def _expected(app: PPPApp, stage: str | None = None) -> Dashboard:
    workspace = app.workspace
    assert workspace is not None
    return Dashboard.load(workspace.store, workspace.settings, stage)


def _same(shown: Dashboard, expected: Dashboard) -> bool:
    """The same figures (Flips holds arrays, which == compares element-wise)."""
    return shown.flips.rows() == expected.flips.rows() and replace(shown, flips=None) == replace(
        expected, flips=None
    )


def _cells(table: DataTable[Any]) -> list[list[str]]:
    return [[str(value) for value in table.get_row_at(i)] for i in range(table.row_count)]


def _text(app: PPPApp, selector: str) -> str:
    return str(app.screen.query_one(selector).render())


async def test_d_shows_the_computed_figures(db: Path, tmp_path: Path) -> None:
    app = PPPApp(db, tmp_path / "config.toml")
    async with app.run_test(size=SIZE) as pilot:
        await app.load_done.wait()
        await pilot.press("d")
        screen = await _dashboard(app, pilot)
        expected = _expected(app)
        shown = screen.dashboard
        assert shown is not None and _same(shown, expected)
        # The stage table: one row per stage and the total, as computed.
        rows = _cells(screen.query_one("#stages", DataTable))
        assert [row[0] for row in rows] == [f.label for f in expected.stages] + ["all stages"]
        total = expected.total
        assert rows[-1][1:] == [
            f"{total.runs:,}",
            f"{total.marked_runs:,}",
            f"{total.agreement:.1%}",
            f"{total.mean_regret:.4f}",
            f"{total.flipped:,} ({total.flipped / total.runs:.1%})",
            f"{total.ppp_off_agreement:.1%}",
        ]
        # The flipped runs, in order, with both picks.
        flips = _cells(screen.query_one("#flips", DataTable))
        first = expected.flips.rows(1)[0]
        assert len(flips) == min(len(expected.flips), FLIPS_SHOWN)
        assert flips[0][:4] == [first.run_id, first.stage or "—", first.ppp_on, first.ppp_off]
        stop = expected.early_stop
        assert f"saved {stop.saved:,} iterations" in _text(app, "#early-stop")
        assert f"{stop.stopped:,} would stop early" in _text(app, "#early-stop")
        # The charts: the most violated preference first, the sources with their totals.
        violations = _text(app, "#violations")
        assert expected.preferences[0].preference in violations
        assert violations.index(expected.preferences[0].preference) < violations.index(
            expected.preferences[1].preference
        )
        effort = _text(app, "#effort")
        assert f"labelled {expected.effort[0].total:,}" in effort
        timeline = _text(app, "#timeline")
        assert expected.timeline.periods[0].label in timeline
        assert f"per {expected.timeline.unit}" in str(screen.query_one("#timeline").border_title)
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, RunsScreen)


async def test_the_stage_filter_changes_every_figure(db: Path, tmp_path: Path) -> None:
    app = PPPApp(db, tmp_path / "config.toml")
    async with app.run_test(size=SIZE) as pilot:
        await app.load_done.wait()
        await pilot.press("d")
        screen = await _dashboard(app, pilot)
        everything = screen.dashboard
        screen.query_one("#dashboard-stage", Select).value = "implement"
        await _dashboard(app, pilot)
        shown = screen.dashboard
        assert shown is not None and everything is not None
        assert shown.stage == "implement" and _same(shown, _expected(app, "implement"))
        assert shown.runs < everything.runs
        assert [row[0] for row in _cells(screen.query_one("#stages", DataTable))] == ["implement"]
        assert {row[1] for row in _cells(screen.query_one("#flips", DataTable))} == {"implement"}
        assert "stage implement" in _text(app, "#dashboard-status")
        screen.query_one("#dashboard-stage", Select).clear()
        await _dashboard(app, pilot)
        assert screen.dashboard is not None and screen.dashboard.stage is None


async def test_the_runs_screen_s_stage_filter_is_the_starting_one(db: Path, tmp_path: Path) -> None:
    app = PPPApp(db, tmp_path / "config.toml")
    async with app.run_test(size=SIZE) as pilot:
        await app.load_done.wait()
        await pilot.pause()
        app.screen.query_one("#stage-filter", Select).value = "validate"
        await pilot.press("d")
        screen = await _dashboard(app, pilot)
        assert screen.stage == "validate"
        assert screen.query_one("#dashboard-stage", Select).value == "validate"
        assert screen.dashboard is not None and screen.dashboard.stage == "validate"


async def test_marking_a_run_from_the_flip_list_changes_agreement(db: Path, tmp_path: Path) -> None:
    app = PPPApp(db, tmp_path / "config.toml")
    async with app.run_test(size=SIZE) as pilot:
        await app.load_done.wait()
        await pilot.press("d")
        screen = await _dashboard(app, pilot)
        before = screen.dashboard
        assert before is not None
        # An unmarked flipped run: open it, mark its selected (rank 1) agent, come back.
        row = next(i for i, flip in enumerate(before.flips.rows(50)) if flip.preferred is None)
        flip = before.flips.rows(row + 1)[row]
        table = screen.query_one("#flips", DataTable)
        table.focus()
        table.move_cursor(row=row)
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, RunScreen) and app.screen.run.id == flip.run_id
        await pilot.press("p")
        await pilot.pause()
        # d from the run goes back to the open dashboard, not a second one on top.
        await pilot.press("d")
        await _dashboard(app, pilot)
        assert app.screen is screen
        assert sum(isinstance(s, DashboardScreen) for s in app.screen_stack) == 1
        after = screen.dashboard
        assert after is not None and _same(after, _expected(app))
        assert after.total.marked_runs == before.total.marked_runs + 1
        marked = before.total.marked_runs
        agreeing = round(before.total.agreement * marked) + 1  # type: ignore[operator]
        assert after.total.agreement == pytest.approx(agreeing / (marked + 1))
        assert next(f for f in after.flips.rows() if f.run_id == flip.run_id).preferred == (
            flip.ppp_on
        )
        agreement = f"{after.total.agreement:.1%}"
        assert _cells(screen.query_one("#stages", DataTable))[-1][3] == agreement


async def test_weights_recompute_the_figures(db: Path, tmp_path: Path) -> None:
    app = PPPApp(db, tmp_path / "config.toml")
    async with app.run_test(size=SIZE) as pilot:
        await app.load_done.wait()
        await pilot.press("d")
        screen = await _dashboard(app, pilot)
        table = screen.query_one("#flips", DataTable)
        table.move_cursor(row=3)
        await pilot.pause()
        run_id = table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value
        await pilot.press("left_square_bracket")  # technical 0.65: from anywhere
        await _dashboard(app, pilot)
        # The run under the cursor stays under it (if it still flips).
        if run_id in table.rows:
            assert table.cursor_row == table.get_row_index(run_id)
        await pilot.press(*["left_square_bracket"] * 5)  # 0.40
        await _dashboard(app, pilot)
        assert app.workspace is not None
        assert app.workspace.settings.weights.technical == pytest.approx(0.4)
        shown = screen.dashboard
        assert shown is not None and _same(shown, _expected(app))
        assert "0.40/0.60" in _text(app, "#dashboard-status")
        # Same-stage changes keep the figures on screen while they are recomputed.
        assert not screen.query_one("#stages").loading


async def test_d_while_the_database_loads_waits_for_it(
    db: Path, tmp_path: Path, held_load: HeldLoad
) -> None:
    app = PPPApp(db, tmp_path / "config.toml")
    async with app.run_test(size=SIZE) as pilot:
        await held_load.first_screen(app, pilot)
        await pilot.press("d")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, DashboardScreen)
        assert screen.computing and "loading the database" in _text(app, "#dashboard-status")
        held_load.set()
        await app.load_done.wait()
        await _dashboard(app, pilot)
        assert screen.dashboard is not None and screen.dashboard.runs == 300


async def test_help_lists_the_dashboard_key(db: Path, tmp_path: Path) -> None:
    app = PPPApp(db, tmp_path / "config.toml")
    async with app.run_test(size=SIZE) as pilot:
        await app.load_done.wait()
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        assert "d           dashboard" in HelpScreen.TEXT
