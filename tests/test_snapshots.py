"""Snapshot tests: the screens on a fixed demo database, compared with tests/__snapshots__.

Regenerate after an intended change of look with `pytest tests/test_snapshots.py
--snapshot-update`, and look at the report before committing the new SVGs.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from helpers import changes_db

from ppp_tui.app.app import PPPApp
from ppp_tui.app.widgets.runs_table import RunsTable
from ppp_tui.app.widgets.slider import WeightSlider

SIZE = (140, 40)


def _app(db: Path, tmp_path: Path) -> PPPApp:
    return PPPApp(db, tmp_path / "config.toml")


async def _loaded(pilot: Any) -> None:
    app = pilot.app
    await app.load_done.wait()
    app.sub_title = "demo.db"  # not the temporary folder's name
    await pilot.pause()


async def _by_id(pilot: Any) -> None:
    """Sort the runs list by run (a click on its header): the runs these shots open."""
    await pilot.click(RunsTable, offset=(1, 0))
    await pilot.press("home")


def test_runs_screen(snap_compare: Any, db: Path, tmp_path: Path) -> None:
    assert snap_compare(_app(db, tmp_path), terminal_size=SIZE, run_before=_loaded)


def test_run_screen_after_moving_the_slider(snap_compare: Any, db: Path, tmp_path: Path) -> None:
    async def open_and_slide(pilot: Any) -> None:
        await _loaded(pilot)
        await _by_id(pilot)
        await pilot.press("down", "down", "enter")
        await pilot.pause()
        pilot.app.screen.query_one(WeightSlider).focus()
        await pilot.press(*["left"] * 12)
        await pilot.pause(1.2)  # past the rank-change flash

    assert snap_compare(_app(db, tmp_path), terminal_size=SIZE, run_before=open_and_slide)


def test_run_screen_with_the_flip_map(snap_compare: Any, db: Path, tmp_path: Path) -> None:
    """At 80x24: the map tab, its legend, and the three sliders after two steps."""

    async def open_map(pilot: Any) -> None:
        await _loaded(pilot)
        await _by_id(pilot)
        await pilot.press("down", "down", "down", "enter")
        await pilot.pause()
        await pilot.press("m", "right_parenthesis", "right_parenthesis")
        await pilot.pause(1.2)  # past the rank-change flash

    assert snap_compare(_app(db, tmp_path), terminal_size=(80, 24), run_before=open_map)


def test_help_screen(snap_compare: Any, db: Path, tmp_path: Path) -> None:
    async def help_(pilot: Any) -> None:
        await _loaded(pilot)
        await pilot.press("question_mark")
        await pilot.pause()

    assert snap_compare(_app(db, tmp_path), terminal_size=SIZE, run_before=help_)


def test_run_screen_changes_tab(snap_compare: Any, tmp_path: Path) -> None:
    """At 80x24: the agents' files side by side, and claude-code's diffs of one file
    scrolled to its changed lines (coloured by the file's syntax)."""

    async def open_changes(pilot: Any) -> None:
        await _loaded(pilot)
        await pilot.press("enter")
        await pilot.pause()
        pilot.app.screen.query_one("#detail").active = "tab-changes"
        await pilot.pause()
        pilot.app.screen.query_one("#changed-files").focus()
        await pilot.press("down", "right", "tab", *["down"] * 6)
        await pilot.pause()

    db = changes_db(tmp_path / "changes.db")
    assert snap_compare(_app(db, tmp_path), terminal_size=(80, 24), run_before=open_changes)
