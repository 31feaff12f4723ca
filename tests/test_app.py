"""The terminal app driven as a person would: Pilot presses keys and clicks."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import HeldLoad, opened
from textual.widgets import OptionList, Select, Static

from ppp_tui.app.app import PPPApp
from ppp_tui.app.screens.help import HelpScreen, bindings_of
from ppp_tui.app.screens.quit import QuitScreen
from ppp_tui.app.screens.run import RunScreen
from ppp_tui.app.screens.runs import RunsScreen
from ppp_tui.app.screens.tuning import TuningScreen
from ppp_tui.app.text import stage_order
from ppp_tui.app.widgets.runs_table import RunsTable
from ppp_tui.app.widgets.slider import WeightSlider
from ppp_tui.storage.config import load_settings
from ppp_tui.storage.files import Record
from ppp_tui.storage.store import Store

SIZE = (140, 45)


async def _loaded(app: PPPApp, pilot) -> None:  # type: ignore[no-untyped-def]
    await app.load_done.wait()
    await pilot.pause()


async def _runs_screen(app: PPPApp, pilot) -> RunsScreen:  # type: ignore[no-untyped-def]
    """The runs screen, once every run is loaded."""
    await _loaded(app, pilot)
    screen = app.screen
    assert isinstance(screen, RunsScreen)
    return screen


async def test_runs_screen_lists_every_run_with_selected_agent(db: Path, tmp_path: Path) -> None:
    async with opened(db, tmp_path, SIZE) as (app, _pilot):
        table = app.screen.query_one(RunsTable)
        assert len(table.order) == 300
        assert table.rows.infos[0].id == "demo-000001"
        # The selected column is the rank-1 agent under the configured weights.
        with Store.open(db) as store:
            from ppp_tui.core.scoring import rank_run
            from ppp_tui.core.settings import Settings

            run = store.get_run("demo-000001")
        assert table.rows.selected[0] == rank_run(run, Settings()).best_agent


async def test_sort_filter_and_search(db: Path, tmp_path: Path) -> None:
    async with opened(db, tmp_path, SIZE) as (app, pilot):
        screen = await _runs_screen(app, pilot)
        table = screen.table
        table.sort_by("agents", descending=True)
        counts = [table.rows.infos[i].agents for i in table.order]
        assert counts == sorted(counts, reverse=True)
        await pilot.press("slash", *"SPEC-KIT-01", "enter")
        await app.workers.wait_for_complete()  # the search runs in a worker
        await pilot.pause()
        shown = [table.rows.infos[i] for i in table.order]
        assert shown and all("spec-kit-01" in (i.spec_id or "").lower() for i in shown)
        await pilot.press("escape")
        assert len(table.order) == 300


async def test_the_stage_menu_filters_runs_by_stage(db: Path, tmp_path: Path) -> None:
    async with opened(db, tmp_path, SIZE) as (app, pilot):
        screen = await _runs_screen(app, pilot)
        table = screen.table
        assert app.workspace is not None
        stages = stage_order(i.stage for i in app.workspace.infos)  # pipeline order
        await pilot.click("#stage-filter")
        await pilot.pause()
        listed = screen.query_one("#stage-filter SelectOverlay", OptionList)
        assert [str(listed.get_option_at_index(k).prompt) for k in range(1, len(stages) + 1)] == (
            stages
        )
        await pilot.press("down", "down", "enter")  # "All stages", then the first stage
        await pilot.pause()
        shown = {table.rows.infos[i].stage for i in table.order}
        assert shown == {stages[0]} and 0 < len(table.order) < 300
        assert f"{len(table.order)} of 300 runs" in str(screen.query_one("#runs-status").render())
        # With a search too, both apply.
        await pilot.press("slash", *"SPEC-KIT-01", "enter")
        await app.workers.wait_for_complete()
        await pilot.pause()
        both = [table.rows.infos[i] for i in table.order]
        assert both and all(
            i.stage == stages[0] and "spec-kit-01" in (i.spec_id or "").lower() for i in both
        )
        screen.query_one("#stage-filter", Select).clear()
        await pilot.press("escape")
        await pilot.pause()
        assert len(table.order) == 300


async def test_the_stage_menu_comes_with_the_runs(
    db: Path, tmp_path: Path, held_load: HeldLoad
) -> None:
    async with held_load.opened(db, tmp_path / "config.toml", SIZE) as (app, pilot):
        # While the first page shows, its place says why there is no menu yet.
        assert not app.screen.query("#stage-filter")
        assert "loading" in str(app.screen.query_one("#stage-filter-slot").render())
        held_load.set()
        screen = await _runs_screen(app, pilot)
        assert not screen.query("#stage-filter-slot")
        assert app.workspace is not None
        stages = stage_order(i.stage for i in app.workspace.infos)
        menu = screen.query_one("#stage-filter", Select)
        # and "All stages", and "(no stage)" (the demo has runs without one)
        assert menu.query_one(OptionList).option_count == len(stages) + 2
        # Its place in the row, before the search box, and the keys' focus order.
        row = list(screen.query_one("#runs-tools").children)
        assert [w.id for w in row] == ["stage-filter", "search"]


async def test_enter_opens_a_run_and_escape_goes_back(db: Path, tmp_path: Path) -> None:
    async with opened(db, tmp_path, SIZE) as (app, pilot):
        await pilot.press("down", "enter")
        await pilot.pause()
        assert isinstance(app.screen, RunScreen)
        assert app.screen.run.id == "demo-000299"  # the second newest
        await pilot.press("escape")
        assert isinstance(app.screen, RunsScreen)


async def test_slider_keys_rerank_and_update_figures(db: Path, tmp_path: Path) -> None:
    async with opened(db, tmp_path, SIZE) as (app, pilot):
        await pilot.press("enter")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, RunScreen)
        slider = screen.query_one(WeightSlider)
        slider.focus()
        await pilot.press("left", "left", "left")
        await pilot.pause()
        assert slider.value == pytest.approx(0.67)
        assert app.workspace is not None
        assert app.workspace.settings.weights_for(screen.run.stage).technical == pytest.approx(0.67)
        assert screen.ranking is not None
        assert screen.ranking.weights.technical == pytest.approx(0.67)
        assert app.step_latencies, "each step is measured"
        await pilot.press("right_square_bracket")
        await pilot.pause()
        assert slider.value == pytest.approx(0.72)


async def test_dragging_the_slider_with_the_mouse(db: Path, tmp_path: Path) -> None:
    async with opened(db, tmp_path, SIZE) as (app, pilot):
        await pilot.press("enter")
        await pilot.pause()
        slider = app.screen.query_one(WeightSlider)
        await pilot.click(WeightSlider, offset=(0, 0))
        await pilot.pause()
        assert slider.value == 0.0
        await pilot.click(WeightSlider, offset=(slider.size.width - 1, 0))
        await pilot.pause()
        assert slider.value == 1.0


async def test_p_marks_the_preferred_agent_with_history(db: Path, tmp_path: Path) -> None:
    async with opened(db, tmp_path, SIZE) as (app, pilot):
        assert app.workspace is not None
        before = app.workspace.figures().marked_runs
        await pilot.press("enter")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, RunScreen)
        run_id = screen.run.id
        await pilot.press("down", "p")
        await pilot.pause()
        assert screen.ranking is not None
        chosen = screen.ranking.agents[1].name
        info = app.workspace.infos[app.workspace.index[run_id]]
        assert info.preferred == chosen
        was_marked = screen.run.preferred_agent is not None
        assert app.workspace.figures().marked_runs == before + (0 if was_marked else 1)
        await pilot.press("p")  # again on the same agent: the mark is cleared
        await pilot.pause()
    with Store.open(db) as store:
        history = [m.agent for m in store.marks(run_id) if m.source == "app"]
    assert history == [chosen, None]


async def test_ctrl_s_saves_and_unsaved_changes_ask_before_quitting(
    db: Path, tmp_path: Path
) -> None:
    config = tmp_path / "config.toml"
    config.write_text("# my settings\n[ppp.weights]\ntechnical = 0.7\ninteraction = 0.3\n")
    async with opened(db, config, SIZE) as (app, pilot):
        await pilot.press("right_square_bracket")
        await pilot.pause()
        assert app.workspace is not None and app.workspace.dirty
        await pilot.press("q")
        await pilot.pause()
        assert isinstance(app.screen, QuitScreen)
        await pilot.click("#cancel")
        await pilot.pause()
        assert not isinstance(app.screen, QuitScreen)
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert not app.workspace.dirty
    assert load_settings(config).weights.technical == pytest.approx(0.75)
    assert config.read_text().startswith("# my settings\n")


async def test_invalid_config_uses_defaults_and_refuses_to_save(db: Path, tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    broken = "[ppp.weights]\ntechnical = 0.5\ninteraction = 0.6\n"
    config.write_text(broken)
    async with opened(db, config, SIZE) as (app, pilot):
        assert app.workspace is not None
        assert app.workspace.settings.weights.technical == 0.7
        assert "must sum to 1.0" in (app.workspace.config_error or "")
        await pilot.press("right_square_bracket", "ctrl+s")
        await pilot.pause()
    assert config.read_text() == broken


async def test_a_config_fixed_while_the_app_runs_takes_the_next_save(
    db: Path, tmp_path: Path
) -> None:
    config = tmp_path / "config.toml"
    config.write_text("[ppp.weights]\ntechnical = 0.5\ninteraction = 0.6\n")
    async with opened(db, config, SIZE) as (app, pilot):
        assert app.workspace is not None and app.workspace.config_error
        await pilot.press("right_square_bracket", "ctrl+s")  # 0.75: refused, file invalid
        await pilot.pause()
        assert app.workspace.dirty
        config.write_text("# fixed\n[ppp.weights]\ntechnical = 0.5\ninteraction = 0.5\n")
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert not app.workspace.dirty and app.workspace.config_error is None
    assert config.read_text() == "# fixed\n[ppp.weights]\ntechnical = 0.75\ninteraction = 0.25\n"


async def test_missing_database_shows_a_message(tmp_path: Path) -> None:
    async with opened(tmp_path / "nothing.db", tmp_path, SIZE) as (app, _pilot):
        message = app.screen.query_one("#runs-message")
        assert "no database here" in str(message.render())
        # No runs, no stages: the menu's place no longer says they are loading.
        assert "loading" not in str(app.screen.query_one("#stage-filter-slot").render())
    assert not (tmp_path / "nothing.db").exists()


async def test_help_screen(db: Path, tmp_path: Path) -> None:
    async with opened(db, tmp_path, SIZE) as (app, pilot):
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        await pilot.press("escape")
        assert not isinstance(app.screen, HelpScreen)


async def test_the_help_is_built_from_the_bindings(db: Path, tmp_path: Path) -> None:
    async with opened(db, tmp_path, SIZE) as (app, pilot):
        await pilot.press("question_mark")
        await pilot.pause()
        shown = str(app.screen.query_one("#help-keys", Static).content).splitlines()
        # Each binding's key as the footer shows it, and its description, under the heading
        # of the screen that binds it.
        for heading, owner, binding_id in (
            ("Everywhere", PPPApp, "app.save"),
            ("The runs list", RunsTable, "runs.open"),
            ("A run", RunScreen, "run.prefer"),
            ("The tuning panel", TuningScreen, "tuning.use"),
        ):
            binding = next(b for b in bindings_of(owner) if b.id == binding_id)
            assert binding.tooltip
            key = app.get_key_display(binding)
            # The first line of that key under the heading (another part may bind it too).
            start = shown.index(heading)
            line = next(
                i for i, text in enumerate(shown) if i > start and text.startswith(f"  {key} ")
            )
            # The description, with the lines it wraps onto.
            words = shown[line].split()[1:]
            for more in shown[line + 1 :]:
                if not more.startswith(" " * 16):
                    break
                words += more.split()
            assert " ".join(words) == binding.tooltip
            above = [text for text in shown[:line] if text and not text.startswith(" ")]
            assert above[-1] == heading
        assert any(text.startswith("  ^s            Save the weights") for text in shown)
        assert any(text.startswith("  p             Mark the highlighted agent") for text in shown)


async def test_markup_and_escape_sequences_in_agent_text_stay_literal(tmp_path: Path) -> None:
    db = tmp_path / "evil.db"
    raw = {
        "id": "evil",
        "task": "[bold red]Owned[/] \x1b[31mred\x1b[0m",
        "agents": [
            {
                "name": "[blink]agent[/blink]",
                "technical_score": 0.9,
                "output": "\x1b]0;title\x07 [link=http://x]click[/link]",
                "trajectory": {"questions": [{"text": "[b]Which[/b] one?", "effort": "low"}]},
            }
        ],
    }
    with Store.open(db, create=True) as store:
        store.import_records([Record("t", None, "$", json.loads(json.dumps(raw)))])
    async with opened(db, tmp_path, SIZE) as (app, pilot):
        await pilot.press("enter")
        await pilot.pause()
        header = str(app.screen.query_one("#run-header").render())
        assert "[bold red]Owned[/]" in header
        assert "\x1b" not in header and "␛[31m" in header
        agents = app.screen.query_one("#agents")
        assert "[blink]agent[/blink]" in str(agents.get_row_at(0)[1])  # type: ignore[attr-defined]


async def test_the_first_page_shows_while_the_rest_loads(
    db: Path, tmp_path: Path, held_load: HeldLoad
) -> None:
    async with held_load.opened(db, tmp_path / "config.toml", SIZE) as (app, pilot):
        table = app.screen.query_one(RunsTable)
        # The newest 50 runs, with the agent each selects, before the whole load.
        assert len(table.order) == 50 and not app.load_done.is_set()
        shown = [info.id for info in table.rows.infos]
        assert shown == [f"demo-{n:06d}" for n in range(300, 250, -1)]
        assert all(table.rows.selected)
        status = str(app.screen.query_one("#runs-status").render())
        assert "first 50 of 300 runs" in status
        held_load.set()
        await _loaded(app, pilot)
        assert len(table.order) == 300
        # In the same order once every run is there, the cursor where it was.
        assert [table.rows.infos[int(i)].id for i in table.order[:50]] == shown
        assert table.current_run() == "demo-000300"
        first = [table.rows.selected[int(i)] for i in table.order[:50]]
    # The preview's picks are the whole load's.
    assert list(first) == list(_selected_from_preview(db, 50))


def _selected_from_preview(db: Path, count: int) -> list[str]:
    from ppp_tui.app.first_page import first_page
    from ppp_tui.core.settings import Settings

    with Store.open(db) as store:
        preview = first_page(store, Settings(), count)
        assert preview is not None
        return list(preview[0].selected)


async def test_a_spec_kit_run_shows_its_consensus_and_failed_agents(tmp_path: Path) -> None:
    db = tmp_path / "spec-kit.db"
    raw = {
        "id": "sk",
        "stage": "tasks",
        "consensus": {
            "status": "degraded",
            "verdict": "degraded",
            "artifacts_count": 2,
            "synthesis": "# Tasks\n\n[bold]T1[/bold] agreed",
        },
        "agents": [
            # The failed agent has the better interaction: it still ranks last.
            {"name": "gemini", "technical_score": 0.9, "failure": "empty output", "trajectory": {}},
            {
                "name": "claude",
                "technical_score": 0.1,
                "trajectory": {"questions": [{"text": "Which one?", "effort": "high"}]},
            },
        ],
    }
    with Store.open(db, create=True) as store:
        store.import_records([Record("t", None, "$", raw)])
    async with opened(db, tmp_path, SIZE) as (app, pilot):
        assert app.screen.query_one(RunsTable).rows.selected[0] == "claude"
        await pilot.press("enter")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, RunScreen)
        header = str(screen.query_one("#run-header").render())
        assert "status degraded · verdict degraded · 2 artifacts · failed: gemini" in header
        agents = screen.query_one("#agents")
        last = agents.get_row_at(1)  # type: ignore[attr-defined]
        assert str(last[1]) == "gemini" and "failed: empty output" in str(last[9])
        consensus = str(screen.query_one("#consensus").render())
        assert "[bold]T1[/bold] agreed" in consensus and "artifacts count: 2" in consensus
        await pilot.press("down", "p")  # a failed agent cannot be the preferred one
        await pilot.pause()
    with Store.open(db) as store:
        assert store.marks("sk") == []


async def test_the_quit_question_names_the_file_saving_writes(db: Path, tmp_path: Path) -> None:
    from textual.widgets import Label

    config = tmp_path / "demo.config.toml"  # the demo's own, as `browse --demo` opens it
    async with opened(db, config, (80, 24)) as (app, pilot):
        await pilot.press("right_square_bracket", "q")
        await pilot.pause()
        assert isinstance(app.screen, QuitScreen)
        question = str(app.screen.query_one(Label).render())
        assert question.endswith("Save them to demo.config.toml?")
