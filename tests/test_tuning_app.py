"""The tuning panel (`t`) and the flip strip under the slider, driven with Pilot."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import HeldLoad, computed, opened
from textual.widgets import DataTable, Select

from ppp_tui.app.app import PPPApp
from ppp_tui.app.screens.run import RunScreen
from ppp_tui.app.screens.tuning import TuningScreen
from ppp_tui.app.widgets.flip_strip import FlipStrip
from ppp_tui.app.widgets.heat_map import RegretHeatMap
from ppp_tui.app.widgets.slider import WeightSlider
from ppp_tui.app.widgets.weight_sliders import WeightSliders
from ppp_tui.app.workspace import outcome_under
from ppp_tui.core.scores import tune_scope
from ppp_tui.core.sensitivity import run_flips
from ppp_tui.core.settings import Weights

SIZE = (150, 45)


async def _tuned(app: PPPApp, pilot) -> TuningScreen:  # type: ignore[no-untyped-def]
    screen = await computed(app, pilot, TuningScreen)
    assert screen.result is not None
    return screen


async def test_t_opens_the_panel_with_the_exact_optimum(db: Path, tmp_path: Path) -> None:
    async with opened(db, tmp_path, SIZE) as (app, pilot):
        await pilot.press("t")
        screen = await _tuned(app, pilot)
        assert app.workspace is not None and app.workspace.scores is not None
        _, expected = tune_scope(app.workspace.scores, None)
        assert expected is not None and screen.result is not None
        tuning = screen.result.tuning
        assert tuning is not None
        assert tuning.technical == pytest.approx(expected.technical)
        assert tuning.ci == expected.ci
        figures = str(screen.query_one("#tuning-figures").render())
        assert f"{expected.technical:.4f}" in figures and "cross-validation" in figures
        assert (
            screen.query_one("#tuning-stages", DataTable).row_count == len(screen.result.stages) > 0
        )
        # u moves the global weight to the optimum; saving stays a separate step.
        await pilot.press("u")
        await _tuned(app, pilot)
        assert app.workspace.settings.weights.technical == pytest.approx(expected.technical)
        assert app.workspace.dirty
        assert not (tmp_path / "config.toml").exists()
        assert screen.result.current == pytest.approx(expected.technical)
        await pilot.press("escape")
        assert not isinstance(app.screen, TuningScreen)


async def test_the_panel_follows_the_scope_and_new_marks(db: Path, tmp_path: Path) -> None:
    async with opened(db, tmp_path, SIZE) as (app, pilot):
        await pilot.press("t")
        screen = await _tuned(app, pilot)
        assert screen.result is not None and screen.result.tuning is not None
        before = screen.result.tuning.marked_runs
        # A stage's own optimum, over that stage's marked runs only.
        stage = screen.result.stages[0][0]
        screen.choose_scope(stage)
        await pilot.pause()
        screen = await _tuned(app, pilot)
        assert screen.result is not None and screen.result.scope == stage
        assert screen.result.tuning is not None
        assert screen.result.tuning.marked_runs == dict(screen.result.stages)[stage].marked_runs
        # Marking one more run (here through the app, as `p` does) tunes again.
        assert app.workspace is not None
        unmarked = next(i for i in app.workspace.infos if i.preferred is None and i.stage == stage)
        run = app.workspace.store.get_run(unmarked.id)
        app.mark_preferred(unmarked.id, run.agents[0].name)
        screen = await _tuned(app, pilot)
        assert screen.result is not None and screen.result.tuning is not None
        assert screen.result.tuning.marked_runs == dict(screen.result.stages)[stage].marked_runs
        screen.choose_scope(None)
        await pilot.pause()
        screen = await _tuned(app, pilot)
        assert screen.result is not None and screen.result.tuning is not None
        assert screen.result.tuning.marked_runs >= before


async def test_the_flip_strip_shows_who_wins_where(db: Path, tmp_path: Path) -> None:
    async with opened(db, tmp_path, SIZE) as (app, pilot):
        await pilot.press("enter")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, RunScreen) and app.workspace is not None
        strip = screen.query_one(FlipStrip)
        expected = run_flips(screen.run, app.workspace.settings)
        assert strip.flips == expected
        assert strip.describe().startswith(expected[0].agent)
        # The winner under the knob is the agent ranked first.
        technical = app.workspace.settings.weights_for(screen.run.stage).technical
        winner = next(f.agent for f in expected if f.start <= technical <= f.end)
        assert screen.ranking is not None and screen.ranking.best_agent == winner
        # Across a flip point the strip's next agent takes rank 1.
        store = app.workspace.store
        settings = app.workspace.settings
        run = next(
            r
            for r in (store.get_run(i.id) for i in app.workspace.infos[:100])
            if len(run_flips(r, settings)) >= 2
        )
        await pilot.press("escape")
        app.open_run(run.id)
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, RunScreen)
        second = screen.query_one(FlipStrip).flips[1]
        middle = Weights.from_technical((second.start + second.end) / 2)
        app.change_weights(middle, screen.scope, started=0.0)
        await pilot.pause()
        assert screen.ranking is not None and screen.ranking.best_agent == second.agent


async def test_brackets_on_the_panel_move_the_global_weight(db: Path, tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    async with opened(db, config, SIZE) as (app, pilot):
        await pilot.press("t")
        screen = await _tuned(app, pilot)
        assert screen.scope is None  # global: no stage named after the menu's value
        await pilot.press("right_square_bracket")
        screen = await _tuned(app, pilot)
        assert app.workspace is not None
        assert app.workspace.settings.weights.technical == pytest.approx(0.75)
        assert app.workspace.settings.stage_weights == {}
        assert screen.result is not None and screen.result.current == pytest.approx(0.75)
        await pilot.press("ctrl+s")
        await pilot.pause()
    assert "__global__" not in config.read_text()


async def test_use_optimal_moves_the_open_runs_slider_and_saves_its_provenance(
    db: Path, tmp_path: Path
) -> None:
    config = tmp_path / "config.toml"
    async with opened(db, config, SIZE) as (app, pilot):
        await pilot.press("enter")
        await pilot.pause()
        run_screen = app.screen
        assert isinstance(run_screen, RunScreen) and run_screen.scope is None
        await pilot.press("t")
        screen = await _tuned(app, pilot)
        assert screen.result is not None and screen.result.tuning is not None
        tuning = screen.result.tuning
        await pilot.press("u")
        await _tuned(app, pilot)
        await pilot.press("escape")
        await pilot.pause()
        # Back on the run: the slider, and the ranking, follow the weight "u" set.
        assert app.screen is run_screen
        assert run_screen.query_one(WeightSlider).value == pytest.approx(tuning.technical)
        await pilot.press("ctrl+s")
        await pilot.pause()
    text = config.read_text()
    # "u" goes to the optimum over both free weights: its figures are saved with it.
    optimum = screen.result.heat.optimum if screen.result.heat else None
    assert optimum is not None
    assert f"from {tuning.marked_runs} marked runs; both free weights" in text
    assert f"{tuning.before_mean_regret:.4f} -> {optimum.mean_regret:.4f}" in text


async def test_the_panel_opened_during_the_load_tunes_once_it_ends(
    db: Path, tmp_path: Path, held_load: HeldLoad
) -> None:
    async with held_load.opened(db, tmp_path / "config.toml", SIZE) as (app, pilot):
        await pilot.press("t")
        await pilot.pause()
        opened = app.screen
        assert isinstance(opened, TuningScreen) and opened.computing
        assert "loading the database" in str(opened.query_one("#tuning-status").render())
        held_load.set()
        await app.load_done.wait()
        screen = await _tuned(app, pilot)
        assert screen.result is not None and screen.result.tuning is not None
        # The scope menu lists the stages too once the runs are there.
        assert app.workspace is not None
        stages = {i.stage for i in app.workspace.infos if i.stage}
        assert set(screen.scopes) >= {None, *stages} and len(stages) > 1
        options = screen.query_one("#tuning-scope", Select)._options
        assert {v for _, v in options if v is not Select.NULL} == set(range(len(screen.scopes)))


@pytest.mark.parametrize("size", [SIZE, (80, 24)])
async def test_the_plots_y_labels_start_one_cell_from_the_left_edge(
    db: Path, tmp_path: Path, size: tuple[int, int]
) -> None:
    """In a browser the terminal has no margin: a label in column 0 lost its first digit."""
    async with opened(db, tmp_path, size) as (app, pilot):
        await pilot.press("t")
        screen = await _tuned(app, pilot)
        await pilot.pause()
        plot = screen.query_one("#regret-plot")
        region = plot.region
        assert region.x == 1 and region.height > 0
        for y in range(region.y, region.y + region.height):
            assert screen.get_widget_at(0, y)[0] is not plot


async def test_the_heat_map_of_both_free_weights_and_use_optimal_moves_all_three(
    db: Path, tmp_path: Path
) -> None:
    """At 80x24: the heat map's pixels are mean regret at their weights, the exact
    optimum is no worse than any of them, and u moves the open run's three sliders to it."""
    async with opened(db, tmp_path, (80, 24)) as (app, pilot):
        await pilot.press("enter")
        await pilot.pause()
        run_screen = app.screen
        assert isinstance(run_screen, RunScreen)
        await pilot.press("t")
        screen = await _tuned(app, pilot)
        assert screen.result is not None and screen.result.heat is not None
        heat = screen.result.heat
        assert screen.query_one(RegretHeatMap).heat is heat
        assert app.workspace is not None and app.workspace.scores is not None
        rows, columns = len(heat.regret), len(heat.regret[0])
        lowest = min(v for row in heat.regret for v in row if v is not None)
        assert heat.optimum.mean_regret <= lowest + 1e-12
        # A pixel's value is the mean regret the app computes at its weights.
        for row, column in ((rows - 1, 0), (rows // 2, columns // 4), (rows - 1, columns - 3)):
            w_p = (column + 0.5) / columns * 2
            w_s = 2 - (row + 0.5) / rows * 2
            settings = app.workspace.settings.with_weights(Weights.from_free(w_p, w_s))
            marked = app.workspace.scores.lines.marked_only()
            expected = outcome_under(marked, settings).mean_regret
            assert heat.regret[row][column] == pytest.approx(expected, abs=1e-12)
        assert "optimum: technical" in str(screen.query_one("#tuning-heat-figures").render())
        await pilot.press("u")
        await _tuned(app, pilot)
        await pilot.press("escape")
        await pilot.pause()
        best = heat.optimum
        sliders = run_screen.query_one(WeightSliders)
        assert sliders.weights == pytest.approx(
            (
                best.technical,
                best.proactivity,
                best.personalization,
            )
        )
        assert app.workspace.settings.weights == best.weights
