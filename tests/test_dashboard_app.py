"""The dashboard (`d`) driven with Pilot: what it shows is what `Dashboard.load` computes."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any, cast

import pytest
from helpers import HeldLoad, computed, opened
from rich.style import Style
from rich.text import Text
from textual.color import Color
from textual.widgets import DataTable, Select, Static

from ppp_tui.analysis.dashboard import Dashboard, PickChanges
from ppp_tui.app.app import PPPApp
from ppp_tui.app.screens.dashboard import CHANGED_PICKS_SHOWN, DashboardScreen
from ppp_tui.app.screens.help import HelpScreen
from ppp_tui.app.screens.run import RunScreen
from ppp_tui.app.screens.runs import RunsScreen
from ppp_tui.app.widgets.dashboard import Chart

SIZE = (140, 45)


async def _dashboard(app: PPPApp, pilot: Any) -> DashboardScreen:
    """The dashboard on screen, once its figures are shown."""
    screen = await computed(app, pilot, DashboardScreen)
    assert screen.dashboard is not None
    return screen


def _expected(app: PPPApp, stage: str | None = None) -> Dashboard:
    workspace = app.workspace
    assert workspace is not None
    return Dashboard.load(workspace.store, workspace.settings, stage)


def _same(shown: Dashboard, expected: Dashboard) -> bool:
    """The same figures (PickChanges holds arrays, which == compares element-wise)."""
    unset = cast(PickChanges, None)
    return shown.pick_changes.rows() == expected.pick_changes.rows() and replace(
        shown, pick_changes=unset
    ) == replace(expected, pick_changes=unset)


def _cells(table: DataTable[Any]) -> list[list[str]]:
    return [[str(value) for value in table.get_row_at(i)] for i in range(table.row_count)]


def _text(app: PPPApp, selector: str) -> str:
    return str(app.screen.query_one(selector).render())


async def test_d_shows_the_computed_figures(db: Path, tmp_path: Path) -> None:
    async with opened(db, tmp_path, SIZE) as (app, pilot):
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
            f"{total.changed_picks:,} ({total.changed_picks / total.runs:.1%})",
            f"{total.ppp_off_agreement:.1%}",
        ]
        # The changed picks, in order, with both picks.
        changes = _cells(screen.query_one("#pick-changes", DataTable))
        first = expected.pick_changes.rows(1)[0]
        assert len(changes) == min(len(expected.pick_changes), CHANGED_PICKS_SHOWN)
        assert changes[0][:4] == [first.run_id, first.stage or "—", first.ppp_on, first.ppp_off]
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
    async with opened(db, tmp_path, SIZE) as (app, pilot):
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
        assert {row[1] for row in _cells(screen.query_one("#pick-changes", DataTable))} == {
            "implement"
        }
        assert "stage implement" in _text(app, "#dashboard-status")
        screen.query_one("#dashboard-stage", Select).clear()
        await _dashboard(app, pilot)
        assert screen.dashboard is not None and screen.dashboard.stage is None


async def test_the_runs_screen_s_stage_filter_is_the_starting_one(db: Path, tmp_path: Path) -> None:
    async with opened(db, tmp_path, SIZE) as (app, pilot):
        await pilot.pause()
        app.screen.query_one("#stage-filter", Select).value = "validate"
        await pilot.press("d")
        screen = await _dashboard(app, pilot)
        assert screen.stage == "validate"
        assert screen.query_one("#dashboard-stage", Select).value == "validate"
        assert screen.dashboard is not None and screen.dashboard.stage == "validate"


async def test_marking_a_run_from_the_changed_picks_list_changes_agreement(
    db: Path, tmp_path: Path
) -> None:
    async with opened(db, tmp_path, SIZE) as (app, pilot):
        await pilot.press("d")
        screen = await _dashboard(app, pilot)
        before = screen.dashboard
        assert before is not None
        # An unmarked run whose pick changes: open it, mark its selected (rank 1) agent,
        # come back.
        row = next(
            i for i, change in enumerate(before.pick_changes.rows(50)) if change.preferred is None
        )
        change = before.pick_changes.rows(row + 1)[row]
        table = screen.query_one("#pick-changes", DataTable)
        table.focus()
        table.move_cursor(row=row)
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, RunScreen) and app.screen.run.id == change.run_id
        await pilot.press("p")
        await pilot.pause()
        # d from the run goes back to the open dashboard, not a second one on top.
        await pilot.press("d")
        await _dashboard(app, pilot)
        assert cast(object, app.screen) is screen  # the isinstance above narrowed app.screen
        assert sum(isinstance(s, DashboardScreen) for s in app.screen_stack) == 1
        after = screen.dashboard
        assert after is not None and _same(after, _expected(app))
        assert after.total.marked_runs == before.total.marked_runs + 1
        marked = before.total.marked_runs
        agreeing = round(before.total.agreement * marked) + 1  # type: ignore[operator]
        assert after.total.agreement == pytest.approx(agreeing / (marked + 1))
        assert next(
            f for f in after.pick_changes.rows() if f.run_id == change.run_id
        ).preferred == (change.ppp_on)
        agreement = f"{after.total.agreement:.1%}"
        assert _cells(screen.query_one("#stages", DataTable))[-1][3] == agreement


async def test_weights_recompute_the_figures(db: Path, tmp_path: Path) -> None:
    async with opened(db, tmp_path, SIZE) as (app, pilot):
        await pilot.press("d")
        screen = await _dashboard(app, pilot)
        table = screen.query_one("#pick-changes", DataTable)
        table.move_cursor(row=3)
        await pilot.pause()
        run_id = table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value
        await pilot.press("left_square_bracket")  # technical 0.65: from anywhere
        await _dashboard(app, pilot)
        # The run under the cursor stays under it (if its pick still changes).
        if run_id in table.rows:
            assert table.cursor_row == table.get_row_index(cast(str, run_id))
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
    async with held_load.opened(db, tmp_path / "config.toml", SIZE) as (app, pilot):
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
    async with opened(db, tmp_path, SIZE) as (app, pilot):
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        keys = str(app.screen.query_one("#help-keys", Static).content)
        assert "  d             Dashboard: interaction over time" in keys


def _chart_colours(chart: Chart) -> set[str]:
    """The foreground colours a plotext chart draws with, as lower-case hex."""
    text = chart.render()
    assert isinstance(text, Text)
    return {
        span.style.color.triplet.hex
        for span in text.spans
        if isinstance(span.style, Style) and span.style.color and span.style.color.triplet
    }


async def test_chart_and_cell_colours_follow_the_theme(db: Path, tmp_path: Path) -> None:
    async with opened(db, tmp_path, SIZE) as (app, pilot):
        await pilot.press("d")
        screen = await _dashboard(app, pilot)
        chart = screen.query_one("#violations", Chart)
        table = screen.query_one("#pick-changes", DataTable)
        dashboard = screen.dashboard
        assert dashboard is not None
        # A run whose mark is the PPP-on pick: its "preferred" cell has the success colour.
        row = next(
            i
            for i, change in enumerate(dashboard.pick_changes.rows(CHANGED_PICKS_SHOWN))
            if change.preferred is not None and change.preferred == change.ppp_on
        )

        def shown() -> tuple[set[str], str]:
            preferred = table.get_row_at(row)[4]
            assert isinstance(preferred, Text)
            return _chart_colours(chart), str(preferred.style)

        def theme(name: str) -> tuple[str, str]:
            return Color.parse(app.theme_variables[name]).hex.lower(), Color.parse(
                app.theme_variables["success"]
            ).hex

        app.theme = "textual-dark"
        await pilot.pause()
        error, success = theme("error")
        bars, cell = shown()
        assert error in bars and cell == success
        app.theme = "gruvbox"
        await pilot.pause()
        new_error, new_success = theme("error")
        assert (new_error, new_success) != (error, success)
        bars, cell = shown()
        assert new_error in bars and error not in bars
        assert cell == new_success


async def test_without_a_database_every_panel_of_the_dashboard_is_a_titled_box(
    tmp_path: Path,
) -> None:
    # Before: the by-stage table, with no columns yet, was a stray untitled sliver beside
    # "Early stop".
    app = PPPApp(tmp_path / "missing.db", tmp_path / "config.toml")
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        await pilot.press("d")
        await pilot.pause(0.3)
        screen = app.screen
        assert isinstance(screen, DashboardScreen)
        stages = screen.query_one("#stages", DataTable)
        assert stages.border_title is not None and str(stages.border_title).startswith("By stage")
        assert stages.outer_size.width >= 44
