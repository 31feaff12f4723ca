"""What a new user trips over in the app: quit paths, the tuning panel's scope, an empty
database, switching scope, presets, keys typed fast after `/`, and every screen at 80x24."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import computed, opened
from textual import events
from textual.widget import Widget
from textual.widgets import DataTable, Input, Label, Select, Static

from ppp_tui.app.app import PPPApp
from ppp_tui.app.screens.dashboard import DashboardScreen
from ppp_tui.app.screens.help import HelpScreen
from ppp_tui.app.screens.quit import QuitScreen
from ppp_tui.app.screens.run import RunScreen
from ppp_tui.app.screens.runs import RunsScreen
from ppp_tui.app.screens.tuning import TuningScreen
from ppp_tui.app.widgets.slider import WeightSlider
from ppp_tui.app.widgets.weights_bar import WeightsBar
from ppp_tui.core.preferences import paper_penalties
from ppp_tui.core.settings import STAGE_TUNED, Weights
from ppp_tui.storage.config import load_settings
from ppp_tui.storage.store import Store

SIZE = (140, 45)
# Far from the plan runs' optimum, so tuning moves it.
PLAN_TABLE = "[ppp.weights.plan]\ntechnical = 0.05\ninteraction = 0.95\n"


async def _loaded(app: PPPApp, pilot) -> None:  # type: ignore[no-untyped-def]
    await app.load_done.wait()
    await pilot.pause()


async def _open_run(app: PPPApp, pilot, stage: str | None, marked: bool = True) -> RunScreen:  # type: ignore[no-untyped-def]
    assert app.workspace is not None
    run_id = next(
        i.id
        for i in app.workspace.infos
        if i.stage == stage and (i.preferred is not None) == marked
    )
    app.open_run(run_id)
    await pilot.pause()
    screen = app.screen
    assert isinstance(screen, RunScreen)
    return screen


async def _tuned(app: PPPApp, pilot) -> TuningScreen:  # type: ignore[no-untyped-def]
    screen = await computed(app, pilot, TuningScreen)
    return screen


# -- quitting ----------------------------------------------------------------------------


@pytest.mark.parametrize("how", ["ctrl+q", "palette"])
async def test_every_quit_path_asks_when_weights_are_unsaved(
    db: Path, tmp_path: Path, how: str
) -> None:
    async with opened(db, tmp_path, SIZE) as (app, pilot):
        await pilot.press("right_square_bracket")
        await pilot.pause()
        assert app.workspace is not None and app.workspace.dirty
        if how == "ctrl+q":
            await pilot.press("ctrl+q")
        else:
            # The command palette's "Quit" calls the app's quit action.
            commands = {c.title: c for c in app.get_system_commands(app.screen)}
            await commands["Quit"].callback()
        await pilot.pause()
        assert isinstance(app.screen, QuitScreen)
        assert app.is_running
        # A second ctrl+q while asking does not stack a second question.
        await pilot.press("ctrl+q")
        await pilot.pause()
        assert len([s for s in app.screen_stack if isinstance(s, QuitScreen)]) == 1
        await pilot.click("#discard")
        await pilot.pause()
    assert not app.is_running
    assert not (tmp_path / "config.toml").exists()


async def test_ctrl_q_quits_at_once_without_changes(db: Path, tmp_path: Path) -> None:
    async with opened(db, tmp_path, SIZE) as (app, pilot):
        await pilot.press("ctrl+q")
        await pilot.pause()
    assert not app.is_running


async def test_the_help_and_the_palette_say_that_quitting_asks_first(
    db: Path, tmp_path: Path
) -> None:
    from ppp_tui.app.screens.help import key_lines

    async with opened(db, tmp_path, (80, 24)) as (app, _pilot):
        quits = [(keys, text) for keys, text in key_lines(app) if "Quit" in text]
        # One line for q and ctrl+q, and not Textual's "return to the command prompt".
        assert quits == [("q/^q", "Quit (asks first if the weights are unsaved)")]
        commands = {c.title: c.help for c in app.get_system_commands(app.screen)}
        assert commands["Quit"] == "Quit (asks first if the weights are unsaved)"


# -- the tuning panel's scope --------------------------------------------------------------


async def test_the_tuning_panel_tunes_the_stage_its_menu_shows(db: Path, tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text("[ppp.weights.plan]\ntechnical = 0.95\ninteraction = 0.05\n")
    async with opened(db, config, SIZE) as (app, pilot):
        run = await _open_run(app, pilot, "plan")
        assert run.scope == "plan"
        await pilot.press("t")
        screen = await _tuned(app, pilot)
        assert screen.scopes[screen.query_one("#tuning-scope", Select).value] == "plan"  # type: ignore[index]
        assert screen.scope == "plan"
        assert screen.result is not None and screen.result.scope == "plan"
        assert screen.result.current == pytest.approx(0.95)
        # The plan stage's optimum is elsewhere: "u" has somewhere to move.
        heat = screen.result.heat
        assert heat is not None and heat.optimum.weights != Weights.pair(0.95, 0.05)
        await pilot.press("u")
        await pilot.pause()
        assert app.workspace is not None
        assert app.workspace.settings.weights == Weights.pair(0.7, 0.3)  # the global pair stays
        # u moves the stage's three weights to the optimum over both free weights.
        assert screen.result.heat is not None
        assert app.workspace.settings.stage_weights["plan"] == screen.result.heat.optimum.weights


# -- an empty database -------------------------------------------------------------------


async def test_d_on_an_empty_database_opens_the_dashboard(tmp_path: Path) -> None:
    db = tmp_path / "empty.db"
    Store.open(db, create=True).close()
    async with opened(db, tmp_path, (80, 24)) as (app, pilot):
        await pilot.press("d")
        await pilot.pause()
        while getattr(app.screen, "computing", False):
            await pilot.pause(0.05)
        assert isinstance(app.screen, DashboardScreen)
        assert app.screen.stage is None
        await pilot.press("escape")
        assert isinstance(app.screen, RunsScreen)
    assert app.return_value is None


async def test_the_dashboard_starts_on_the_runs_lists_stage(db: Path, tmp_path: Path) -> None:
    async with opened(db, tmp_path, SIZE) as (app, pilot):
        app.screen.query_one("#stage-filter", Select).value = "tasks"
        await pilot.pause()
        await pilot.press("d")
        await pilot.pause()
        assert isinstance(app.screen, DashboardScreen)
        assert app.screen.stage == "tasks"
        assert app.screen.query_one("#dashboard-stage", Select).value == "tasks"


# -- stage menus ---------------------------------------------------------------------------


async def test_stage_menus_follow_the_pipeline_and_offer_no_stage(db: Path, tmp_path: Path) -> None:
    async with opened(db, tmp_path, SIZE) as (app, pilot):
        menu = app.screen.query_one("#stage-filter", Select)
        labels = [str(prompt) for prompt, _ in menu._options[1:]]
        assert labels == ["plan", "tasks", "implement", "validate", "audit", "unlock", "(no stage)"]
        menu.value = menu._options[-1][1]
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, RunsScreen)
        assert app.workspace is not None
        unstaged = [i.id for i in app.workspace.infos if not i.stage]
        assert len(screen.table.order) == len(unstaged) > 0


# -- switching scope, presets ----------------------------------------------------------------


async def test_g_alone_is_no_change(db: Path, tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    async with opened(db, config, SIZE) as (app, pilot):
        run = await _open_run(app, pilot, "plan")
        await pilot.press("g")
        await pilot.pause()
        assert run.scope == "plan"
        assert app.workspace is not None and not app.workspace.dirty
        assert "unsaved" not in str(run.query_one("#weights-dirty").render())
        await pilot.press("g", "ctrl+s")
        await pilot.pause()
        assert not dict(app.workspace.settings.stage_weights)
        # Moving the weight in the stage's scope is what makes its table.
        await pilot.press("g", "right_square_bracket")
        await pilot.pause()
        assert app.workspace.dirty
        assert app.workspace.settings.stage_weights["plan"].technical == pytest.approx(0.75)
        assert app.workspace.settings.weights == Weights.pair(0.7, 0.3)
    assert not config.exists() or "plan" not in config.read_text()


async def _choose_preset(app: PPPApp, pilot, key: str) -> None:  # type: ignore[no-untyped-def]
    # As if chosen from the bar's menu: the bar names the scope it shows.
    app.screen.query_one(WeightsBar).query_one(Select).value = key
    await pilot.pause()
    await app.workers.wait_for_complete()
    await pilot.pause()


async def test_a_preset_applies_to_the_scope_shown(db: Path, tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text(PLAN_TABLE)
    async with opened(db, config, SIZE) as (app, pilot):
        run = await _open_run(app, pilot, "plan")
        assert run.scope == "plan"
        await _choose_preset(app, pilot, "technical")
        assert app.workspace is not None
        assert app.workspace.settings.stage_weights["plan"] == Weights.pair(0.8, 0.2)
        assert app.workspace.settings.weights == Weights.pair(0.7, 0.3)
        # Stage defaults sets the stage's recommended table, and nothing else.
        await _choose_preset(app, pilot, "stage")
        assert dict(app.workspace.settings.stage_weights) == {"plan": STAGE_TUNED["plan"]}
        # At the global scope, a preset moves the global pair only.
        await pilot.press("g")
        await _choose_preset(app, pilot, "interaction")
        assert app.workspace.settings.weights == Weights.pair(0.6, 0.4)
        assert dict(app.workspace.settings.stage_weights) == {"plan": STAGE_TUNED["plan"]}
        # The toast names the preset as the menu does.
        assert any("Interaction 60/40" in str(n.message) for n in app._notifications)
        # Stage defaults at the global scope says why it cannot apply.
        await _choose_preset(app, pilot, "stage")
        assert app.workspace.settings.weights == Weights.pair(0.6, 0.4)
        assert any("stage's own table" in str(n.message) for n in app._notifications)


async def test_the_paper_preset_is_marked_unsaved_and_saved(db: Path, tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text("# mine\n[ppp.weights]\ntechnical = 0.7\ninteraction = 0.3\n")
    async with opened(db, config, SIZE) as (app, pilot):
        run = await _open_run(app, pilot, "plan")
        await _choose_preset(app, pilot, "paper")
        assert app.workspace is not None and app.workspace.dirty
        assert "unsaved" in str(run.query_one("#weights-dirty").render())
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert not app.workspace.dirty
    saved = load_settings(config)
    assert dict(saved.penalties) == paper_penalties()
    assert config.read_text().startswith("# mine\n")


# -- keys typed fast after `/` -----------------------------------------------------------------


async def test_keys_typed_in_one_burst_after_slash_go_to_the_search_box(
    db: Path, tmp_path: Path
) -> None:
    async with opened(db, tmp_path, (80, 24)) as (app, pilot):
        screen = app.screen
        # All six keys arrive before any is handled, as when typed fast or pasted.
        for character in "/tasks":
            app.post_message(events.Key("slash" if character == "/" else character, character))
        await pilot.pause(0.2)
        assert app.screen is screen
        assert screen.query_one("#search", Input).value == "tasks"
        # A `/` typed in the search box is text too.
        await pilot.press("slash")
        assert screen.query_one("#search", Input).value == "tasks/"


# -- every screen at 80x24 ---------------------------------------------------------------------

SMALL = (80, 24)


def _visible(widget: Widget) -> bool:
    """The whole widget is on the screen (not scrolled out, not cut at an edge)."""
    region = widget.region
    return bool(region.area) and widget.screen.region.contains_region(region)


async def _reveal(widget: Widget, pilot) -> None:  # type: ignore[no-untyped-def]
    widget.scroll_visible(animate=False, immediate=True)
    await pilot.pause()


async def test_80x24_runs_list_shows_the_columns_that_matter(db: Path, tmp_path: Path) -> None:
    async with opened(db, tmp_path, SMALL) as (app, pilot):
        screen = app.screen
        assert isinstance(screen, RunsScreen)
        table = screen.table
        header = table.render_line(0).text
        assert len(header) == table.size.width
        for label in ("run", "date", "stage", "ag…", "task", "selected", "preferred", "regret"):
            assert f" {label}" in f" {header}", label
        # The whole line fits: nothing to scroll sideways for.
        assert table.virtual_size.width <= table.size.width
        # The task has what the other columns leave: a dozen cells.
        widths = {column.key: width for column, width in table.columns}
        assert widths["task"] >= 12 and sum(widths.values()) + len(widths) - 1 == 78
        # The status line is all there (it wraps instead of being cut).
        status = screen.query_one("#runs-status")
        assert "agreement" in str(status.render()) and status.size.height == 2
        # Newest first; sorting by the narrowest column still shows its arrow.
        assert table.sort_key == "date" and " date▼ " in header
        for _ in range(2):
            await pilot.press("s")
        assert table.sort_key == "agents"
        assert " ag▲ " in table.render_line(0).text


async def test_80x24_run_screen_shows_the_pick_and_the_weights(db: Path, tmp_path: Path) -> None:
    async with opened(db, tmp_path, SMALL) as (app, pilot):
        await pilot.press("enter")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, RunScreen)
        agents = screen.query_one("#agents", DataTable)
        right = 0
        for column in agents.ordered_columns:
            right += column.get_render_width(agents)
            if str(column.label) == "mark":
                break
        # Rank, agent, final, the three scores, interaction and the mark: all in view.
        assert right <= agents.size.width
        assert agents.size.height >= 3
        bar = screen.query_one(WeightsBar)
        assert _visible(bar) and bar.has_class("-narrow")
        for selector in ("#weights-slider", "#weights-pair", "#weights-figures", "#weights-preset"):
            widget = bar.query_one(selector)
            assert _visible(widget), selector
        for selector in ("#weights-pair", "#weights-figures"):
            label = bar.query_one(selector, Label)
            assert 0 < len(str(label.content)) <= label.size.width, selector
        # The longest preset name is on one line in the menu.
        menu = bar.query_one("#weights-preset", Select)
        menu.value = "interaction"
        await pilot.pause()
        shown = menu.query_one("SelectCurrent")
        assert shown.size.height == 1


async def test_80x24_help_fits_and_scrolls(db: Path, tmp_path: Path) -> None:
    async with opened(db, tmp_path, SMALL) as (app, pilot):
        await pilot.press("question_mark")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, HelpScreen)
        body = screen.query_one("#help-body")
        keys = body.query_one("#help-keys", Static)
        shown = str(keys.content).splitlines()
        # No line wraps: each fits the box's width.
        assert max(len(line) for line in [*shown, *HelpScreen.ABOUT.splitlines()]) <= (
            keys.size.width
        )
        assert keys.size.height == len(shown)
        assert _visible(screen.query_one("#help-close"))
        assert body.max_scroll_y > 0
        await pilot.press("end")
        await pilot.pause()
        assert body.scroll_y == body.max_scroll_y


async def test_80x24_tuning_panel_scrolls_to_every_part(db: Path, tmp_path: Path) -> None:
    async with opened(db, tmp_path, SMALL) as (app, pilot):
        await pilot.press("t")
        screen = await _tuned(app, pilot)
        for selector in ("#regret-plot", "#agreement-plot"):
            plot = screen.query_one(selector)
            assert _visible(plot) and plot.size.height >= 11 and plot.size.width >= 30
        for selector in ("#tuning-figures", "#tuning-stages"):
            widget = screen.query_one(selector)
            await _reveal(widget, pilot)
            assert _visible(widget) and widget.size.width >= 70, selector
        assert "optimal" in str(screen.query_one("#tuning-figures").render())
        assert screen.query_one("#tuning-stages", DataTable).row_count > 0


async def test_80x24_dashboard_shows_every_panel(db: Path, tmp_path: Path) -> None:
    async with opened(db, tmp_path, SMALL) as (app, pilot):
        await pilot.press("d")
        screen = await computed(app, pilot, DashboardScreen)
        for selector in (
            "#timeline",
            "#violations",
            "#stages",
            "#early-stop",
            "#pick-changes",
            "#effort",
        ):
            widget = screen.query_one(selector)
            await _reveal(widget, pilot)
            assert _visible(widget), selector
            assert widget.size.width >= 60, selector
            assert widget.size.height >= 6, selector
        # The charts are drawn, not empty boxes.
        violations = screen.query_one("#violations")
        await _reveal(violations, pilot)
        assert screen.dashboard is not None
        most = screen.dashboard.preferences[0].preference
        assert most in app.export_screenshot().replace("&#160;", " ")
        assert screen.query_one("#pick-changes", DataTable).row_count > 0
        assert screen.query_one("#stages", DataTable).row_count > 0


# -- small things that looked wrong ----------------------------------------------------------


async def test_rank_flashes_and_negative_finals_keep_the_columns_width(
    db: Path, tmp_path: Path
) -> None:
    async with opened(db, tmp_path, SIZE) as (app, pilot):
        app.open_run("demo-000003")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, RunScreen)
        agents = screen.query_one("#agents", DataTable)
        slider = screen.query_one(WeightSlider)

        def widths() -> dict[str, int]:
            return {
                str(c.label): c.get_render_width(agents)
                for c in agents.ordered_columns
                if str(c.label) in ("#", "final")
            }

        slider.focus()
        await pilot.press("end")  # technical 1.0: every final is positive
        await pilot.pause()
        assert screen.ranking is not None
        assert all(a.final >= 0 for a in screen.ranking.agents)
        before = widths()
        leaders = {screen.ranking.agents[0].name}
        for _ in range(20):  # down to 0.0, through rank changes and negative finals
            await pilot.press(*["left"] * 5)
            await pilot.pause()
            leaders.add(screen.ranking.agents[0].name)
            assert widths() == before
        assert len(leaders) > 1, "the ranks changed on the way"
        assert any(a.final < 0 for a in screen.ranking.agents)
        await pilot.pause(1.2)  # the flash ends
        assert widths() == before


async def test_one_stage_table_is_singular(db: Path, tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text(PLAN_TABLE)
    async with opened(db, config, SIZE) as (app, _pilot):
        status = str(app.screen.query_one("#runs-status").render())
        assert "1 stage table " in status + " " and "1 stage tables" not in status


async def test_the_preset_menu_shows_each_name_on_one_line(db: Path, tmp_path: Path) -> None:
    async with opened(db, tmp_path, SIZE) as (app, pilot):
        await pilot.press("enter")
        await pilot.pause()
        menu = app.screen.query_one("#weights-preset", Select)
        current = menu.query_one("SelectCurrent")
        for label, key in [(str(p), v) for p, v in menu._options if isinstance(v, str)]:
            with menu.prevent(Select.Changed):
                menu.value = key
            await pilot.pause()
            inner = current.content_size.width
            assert len(label) + 2 <= inner, label  # the name and the arrow


async def test_dragging_the_slider_selects_no_text(db: Path, tmp_path: Path) -> None:
    async with opened(db, tmp_path, SIZE) as (app, pilot):
        await pilot.press("enter")
        await pilot.pause()
        slider = app.screen.query_one(WeightSlider)
        assert not slider.allow_select
        await pilot.mouse_down(WeightSlider, offset=(2, 0))
        await pilot.hover(WeightSlider, offset=(20, 0))
        await pilot.hover("#weights-figures", offset=(5, 0))
        await pilot.mouse_up("#weights-figures", offset=(5, 0))
        await pilot.pause()
        assert not app.screen.selections


async def test_80x24_dashboard_scrolls_with_the_keys(db: Path, tmp_path: Path) -> None:
    async with opened(db, tmp_path, SMALL) as (app, pilot):
        await pilot.press("d")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, DashboardScreen)
        body = screen.query_one("#dashboard-body")
        assert app.focused is body and body.max_scroll_y > 0
        await pilot.press("pagedown")
        await pilot.pause()
        assert body.scroll_y > 0
        await pilot.press("end")
        await pilot.pause()
        assert _visible(screen.query_one("#effort-panel"))
