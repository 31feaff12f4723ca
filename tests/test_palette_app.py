"""The command palette (ctrl+p) with the app's own commands, and the messages screens
send the app, driven with Pilot."""

from __future__ import annotations

import csv
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from helpers import opened
from textual.command import CommandList, CommandPalette

from ppp_tui.app.app import PPPApp
from ppp_tui.app.export import export_runs
from ppp_tui.app.messages import WeightsChanged
from ppp_tui.app.screens.dashboard import DashboardScreen
from ppp_tui.app.screens.run import RunScreen
from ppp_tui.app.screens.runs import RunsScreen
from ppp_tui.app.screens.tuning import TuningScreen
from ppp_tui.app.widgets.slider import WeightSlider
from ppp_tui.core.scoring import rank_run
from ppp_tui.core.settings import Weights, preset
from ppp_tui.storage.config import load_settings
from ppp_tui.storage.store import Store

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
    async with opened(db, tmp_path, SIZE) as (app, pilot):
        await _palette(app, pilot, "demo-000123")
        assert isinstance(app.screen, RunScreen)
        assert app.screen.run.id == "demo-000123"


async def test_the_palette_opens_the_tuning_panel_and_the_dashboard(
    db: Path, tmp_path: Path
) -> None:
    async with opened(db, tmp_path, SIZE) as (app, pilot):
        await _palette(app, pilot, "tune")
        assert isinstance(app.screen, TuningScreen)
        await pilot.press("escape")
        await _palette(app, pilot, "dashboard")
        assert isinstance(app.screen, DashboardScreen)


async def test_a_preset_from_the_palette_moves_the_global_weights(db: Path, tmp_path: Path) -> None:
    async with opened(db, tmp_path, SIZE) as (app, pilot):
        chosen = preset("interaction")
        await _palette(app, pilot, f"Preset: {chosen.label}")
        assert app.workspace is not None
        assert app.workspace.settings.weights == chosen.weights
        assert app.workspace.dirty


async def test_export_from_the_palette_writes_the_runs_on_screen(
    db: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    async with opened(db, tmp_path, SIZE) as (app, pilot):
        await pilot.pause()
        runs = app.screen
        assert isinstance(runs, RunsScreen)
        await pilot.press("slash", *"demo-00012")
        await pilot.press("enter")
        await pilot.pause()
        shown = sorted(runs.shown_run_ids() or [])  # in the search's order of relevance
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


async def test_a_screen_s_weights_changed_message_moves_its_scope_only(
    db: Path, tmp_path: Path
) -> None:
    # A screen asks the app with a message carrying the weights and the scope; the app
    # changes that scope's table and shows the result on the screen that asked.
    async with opened(db, tmp_path, SIZE) as (app, pilot):
        await pilot.pause()
        assert app.workspace is not None
        run_id = next(i.id for i in app.workspace.infos if i.stage == "plan")
        app.open_run(run_id)
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, RunScreen)
        await pilot.press("g")  # the bar shows the run's stage table
        assert screen.scope == "plan"
        before = app.workspace.settings.weights
        screen.post_message(WeightsChanged(Weights.pair(0.35, 0.65), "plan", time.perf_counter()))
        await pilot.pause()
        settings = app.workspace.settings
        assert settings.stage_weights["plan"] == Weights.pair(0.35, 0.65)
        assert settings.weights == before  # the global weights stay
        assert app.workspace.dirty
        # The run re-ranked under them, its slider shows them.
        assert screen.ranking is not None
        assert screen.ranking == rank_run(screen.run, settings)
        assert screen.query_one(WeightSlider).value == 0.35


@pytest.mark.parametrize("fmt", ["csv", "json"])
def test_the_app_s_export_is_the_cli_s_file(db: Path, tmp_path: Path, fmt: str) -> None:
    config = tmp_path / "config.toml"
    config.write_text("[ppp.weights]\ntechnical = 0.6\ninteraction = 0.4\n", encoding="utf-8")
    cli_file, app_file = tmp_path / f"cli.{fmt}", tmp_path / f"app.{fmt}"
    command = ["export", "--format", fmt, "--out", str(cli_file), "--db", str(db)]
    subprocess.run(
        [sys.executable, "-m", "ppp_tui", *command, "--config", str(config)],
        check=True,
        capture_output=True,
    )
    with Store.open(db) as store:
        rows = export_runs(store, load_settings(config), None, app_file, fmt)
    assert rows > 300
    assert app_file.read_bytes() == cli_file.read_bytes()


async def test_an_export_that_cannot_be_written_says_so(
    db: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    missing = tmp_path / "gone"
    monkeypatch.setattr(
        "ppp_tui.app.export.export_path", lambda _directory, fmt: missing / f"out.{fmt}"
    )
    async with opened(db, tmp_path, SIZE) as (app, pilot):
        await _palette(app, pilot, "Export CSV")
        await app.workers.wait_for_complete()
        await pilot.pause()
        toast = next(n for n in app._notifications if n.title == "Not exported")
        assert str(toast.message).startswith(f"{missing / 'out.csv'}: cannot write")
        assert app.exported is None
        assert not missing.exists()
