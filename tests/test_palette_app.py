"""The command palette (ctrl+p) with the app's own commands, driven with Pilot."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import pytest
from textual.command import CommandList, CommandPalette

from ppp_tui.app.app import PPPApp
from ppp_tui.app.dashboard_screen import DashboardScreen
from ppp_tui.app.run_screen import RunScreen
from ppp_tui.app.runs_screen import RunsScreen
from ppp_tui.app.tuning_screen import TuningScreen
from ppp_tui.core.settings import preset

SIZE = (120, 36)


async def _palette(app: PPPApp, pilot: Any, query: str) -> None:
    """Open the palette, type `query`, and run the first command it offers."""
    await app.load_done.wait()
    await pilot.pause()
    await pilot.press("ctrl+p")
    await pilot.pause()
    assert isinstance(app.screen, CommandPalette)
    await pilot.press(*query)
    # The palette gathers its hits in the background.
    for _ in range(100):
        await pilot.pause(0.02)
        if app.screen.query_one(CommandList).option_count:
            break
    await pilot.pause(0.3)
    # The first enter highlights the first hit, the next runs it.
    for _ in range(4):
        await pilot.press("enter")
        await pilot.pause(0.1)
        if not isinstance(app.screen, CommandPalette):
            break
    await pilot.pause()


async def test_typing_a_run_id_in_the_palette_opens_that_run(db: Path, tmp_path: Path) -> None:
    app = PPPApp(db, tmp_path / "config.toml")
    async with app.run_test(size=SIZE) as pilot:
        await _palette(app, pilot, "demo-000123")
        assert isinstance(app.screen, RunScreen)
        assert app.screen.run.id == "demo-000123"


async def test_the_palette_opens_the_tuning_panel_and_the_dashboard(
    db: Path, tmp_path: Path
) -> None:
    app = PPPApp(db, tmp_path / "config.toml")
    async with app.run_test(size=SIZE) as pilot:
        await _palette(app, pilot, "tune")
        assert isinstance(app.screen, TuningScreen)
        await pilot.press("escape")
        await _palette(app, pilot, "dashboard")
        assert isinstance(app.screen, DashboardScreen)


async def test_a_preset_from_the_palette_moves_the_global_weights(db: Path, tmp_path: Path) -> None:
    app = PPPApp(db, tmp_path / "config.toml")
    async with app.run_test(size=SIZE) as pilot:
        chosen = preset("interaction")
        await _palette(app, pilot, f"Preset: {chosen.label}")
        assert app.workspace is not None
        assert app.workspace.settings.weights == chosen.weights
        assert app.workspace.dirty


async def test_export_from_the_palette_writes_the_runs_on_screen(
    db: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    app = PPPApp(db, tmp_path / "config.toml")
    async with app.run_test(size=SIZE) as pilot:
        await app.load_done.wait()
        await pilot.pause()
        runs = app.screen
        assert isinstance(runs, RunsScreen)
        await pilot.press("slash", *"demo-00012")
        await pilot.press("enter")
        await pilot.pause()
        shown = runs.shown_run_ids()
        assert shown == [f"demo-00012{i}" for i in range(10)]
        await _palette(app, pilot, "Export CSV")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert app.exported is not None and app.exported.parent == tmp_path
        with app.exported.open(encoding="utf-8") as stream:
            rows = list(csv.DictReader(stream))
        assert sorted({row["run_id"] for row in rows}) == shown
        assert {row["selected"] for row in rows} == {"true", "false"}
        # A run's screen exports that run, as JSON too.
        app.open_run("demo-000007")
        await pilot.pause()
        await _palette(app, pilot, "Export JSON")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert app.exported.suffix == ".json"
        document = json.loads(app.exported.read_text(encoding="utf-8"))
        assert {row["run_id"] for row in document} == {"demo-000007"}
