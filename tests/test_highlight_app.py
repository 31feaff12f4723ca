"""The highlight follows its item when a table's rows re-order: a run's agents under new
weights or a rating, the leaderboard under new marks, the runs list sorted by regret,
the stages' optima; and the helper they share (`table_rows.refill`)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

from helpers import computed, opened
from rich.text import Text
from textual import on
from textual.app import App, ComposeResult
from textual.pilot import Pilot
from textual.widgets import DataTable, Input, Static

from ppp_tui.app.app import PPPApp
from ppp_tui.app.screens.leaderboard import LeaderboardScreen
from ppp_tui.app.screens.rate import RateScreen
from ppp_tui.app.screens.run import RunScreen
from ppp_tui.app.screens.runs import RunsScreen
from ppp_tui.app.screens.tuning import TuningScreen
from ppp_tui.app.widgets.table_rows import cursor_key, refill
from ppp_tui.core.model import Run
from ppp_tui.core.preferences import paper_penalties
from ppp_tui.core.scoring import rank_run, violation_penalty
from ppp_tui.core.settings import Weights
from ppp_tui.storage.store import Store

SIZE = (140, 45)
STEPS = 6  # `]` presses a flip is looked for within


def _run_whose_first_place_flips(app: PPPApp, db: Path) -> str:
    """A run of three agents or more whose first agent loses first place within STEPS
    steps of `]` (technical +0.05 each, the pair form), and is not the one marked."""
    workspace = app.workspace
    assert workspace is not None
    settings = workspace.settings
    with Store.open(db) as store:
        for info in workspace.infos:
            if info.agents < 3:
                continue
            run = store.get_run(info.id)
            weights = settings.weights_for(run.stage)
            first = rank_run(run, settings).best_agent
            if first == info.preferred or not weights.is_pair:
                continue
            for k in range(1, STEPS + 1):
                stepped = Weights.from_technical(round(weights.technical + 0.05 * k, 2))
                if rank_run(run, settings.with_weights(stepped, run.stage)).best_agent != first:
                    return run.id
    raise AssertionError("no run of the demo changes its first agent with `]`")


async def _open(app: PPPApp, pilot: Pilot[None], run_id: str) -> RunScreen:
    app.open_run(run_id)
    await pilot.pause()
    screen = app.screen
    assert isinstance(screen, RunScreen) and screen.run.id == run_id
    return screen


def _order(screen: RunScreen) -> list[str]:
    assert screen.ranking is not None
    return [agent.name for agent in screen.ranking.agents]


def _highlighted(screen: RunScreen) -> tuple[int, str]:
    """The agents table's cursor row, and the agent it shows."""
    table = screen.query_one("#agents", DataTable)
    return table.cursor_row, str(table.get_row_at(table.cursor_row)[1])


def _assert_detail_shows(screen: RunScreen, run: Run, name: str) -> None:
    """The tabs below the agents show `name`'s output and questions."""
    agent = run.agent(name)
    assert agent is not None and agent.output
    assert str(screen.query_one("#output", Static).render()) == agent.output
    asked = [] if agent.trajectory is None else [q.text for q in agent.trajectory.questions]
    questions = screen.query_one("#questions", DataTable)
    assert [str(questions.get_row_at(y)[-1]) for y in range(questions.row_count)] == asked


async def _prefer(app: PPPApp, pilot: Pilot[None], db: Path, run_id: str) -> str | None:
    """Press `p`; the agent the store's newest mark of the run names."""
    await pilot.press("p")
    await pilot.pause()
    with Store.open(db) as store:
        return [m.agent for m in store.marks(run_id) if m.source == "app"][-1]


async def test_the_highlight_follows_its_agent_when_a_weight_step_reorders(
    db: Path, tmp_path: Path
) -> None:
    async with opened(db, tmp_path, SIZE) as (app, pilot):
        run_id = _run_whose_first_place_flips(app, db)
        screen = await _open(app, pilot, run_id)
        first = _order(screen)[0]
        assert _highlighted(screen) == (0, first)
        _assert_detail_shows(screen, screen.run, first)
        for _ in range(STEPS):
            await pilot.press("right_square_bracket")
            await pilot.pause()
            if _order(screen)[0] != first:
                break
        order = _order(screen)
        assert order[0] != first, "the steps changed the first agent"
        # The cursor moved with the agent to its new row; the detail still shows it.
        assert _highlighted(screen) == (order.index(first), first)
        _assert_detail_shows(screen, screen.run, first)
        assert await _prefer(app, pilot, db, run_id) == first
        assert app.workspace is not None
        assert app.workspace.infos[app.workspace.index[run_id]].preferred == first


async def test_the_highlight_follows_its_agent_after_a_rating(db: Path, tmp_path: Path) -> None:
    async with opened(db, tmp_path, SIZE) as (app, pilot):
        run_id = _run_whose_first_place_flips(app, db)
        screen = await _open(app, pilot, run_id)
        first = _order(screen)[0]
        await pilot.press("e")
        await pilot.pause()
        modal = app.screen
        assert isinstance(modal, RateScreen) and modal.agent == first
        modal.query_one(Input).value = "0"  # the lowest technical score: it falls
        await pilot.press("enter")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert app.screen is screen
        order = _order(screen)
        assert order[0] != first, "the rating moved the agent down"
        assert _highlighted(screen) == (order.index(first), first)
        _assert_detail_shows(screen, screen.run, first)
        assert await _prefer(app, pilot, db, run_id) == first


def _violation_the_paper_penalties_change(app: PPPApp, db: Path) -> tuple[str, str, str]:
    """A run, an agent and its violation's penalty as the Paper preset makes it, where
    that differs from the penalty under the configured settings."""
    workspace = app.workspace
    assert workspace is not None
    settings = workspace.settings
    paper = replace(settings, penalties=paper_penalties())
    with Store.open(db) as store:
        for info in workspace.infos:
            for agent in store.get_run(info.id).agents:
                violations = [] if agent.trajectory is None else agent.trajectory.violations
                if len(violations) == 1:
                    now = violation_penalty(violations[0], paper)
                    if now != violation_penalty(violations[0], settings):
                        return info.id, agent.name, f"{now:.3f}"
    raise AssertionError("no violation of the demo costs another penalty in Paper")


async def test_the_detail_shows_the_penalties_a_preset_brings(db: Path, tmp_path: Path) -> None:
    async with opened(db, tmp_path, SIZE) as (app, pilot):
        run_id, name, paper = _violation_the_paper_penalties_change(app, db)
        screen = await _open(app, pilot, run_id)
        table = screen.query_one("#agents", DataTable)
        table.move_cursor(row=_order(screen).index(name))
        await pilot.pause()
        violations = screen.query_one("#violations", DataTable)
        assert str(violations.get_row_at(0)[3]) != paper
        app.apply_preset("paper", None)
        await app.workers.wait_for_complete()  # the arrays are read again
        await pilot.pause()
        assert cursor_key(table) == name
        assert str(violations.get_row_at(0)[3]) == paper


async def _leaderboard(app: PPPApp, pilot: Pilot[None]) -> LeaderboardScreen:
    screen = await computed(app, pilot, LeaderboardScreen)
    assert screen.result is not None and screen.result.board is not None
    return screen


async def test_the_leaderboard_keeps_its_agent_highlighted_when_marks_reorder(
    db: Path, tmp_path: Path
) -> None:
    async with opened(db, tmp_path, SIZE) as (app, pilot):
        await pilot.press("b")
        screen = await _leaderboard(app, pilot)
        table = screen.query_one("#leaderboard-table", DataTable)
        assert screen.result is not None and screen.result.board is not None
        top = screen.result.board.agents[0]
        assert cursor_key(table) == top and table.cursor_row == 0
        # Every run the top agent was preferred in is marked for another of its agents:
        # it has never won, so it falls.
        workspace = app.workspace
        assert workspace is not None
        with Store.open(db) as store:
            for info in [i for i in workspace.infos if i.preferred == top]:
                others = [a.name for a in store.get_run(info.id).agents if a.name != top]
                app.mark_preferred(info.id, others[0])
        screen = await _leaderboard(app, pilot)
        assert screen.result is not None and screen.result.board is not None
        agents = screen.result.board.agents
        assert agents[0] != top
        assert cursor_key(table) == top
        assert table.cursor_row == agents.index(top) > 0


async def test_the_runs_list_sorted_by_regret_keeps_its_run_under_new_weights(
    db: Path, tmp_path: Path
) -> None:
    async with opened(db, tmp_path, SIZE) as (app, pilot):
        screen = app.screen
        assert isinstance(screen, RunsScreen)
        table = screen.table
        table.sort_by("regret", descending=True)  # the cursor stays on the first run
        await pilot.press("home", "down", "down", "down", "down")
        run_id = table.current_run()
        assert run_id is not None and table.cursor == 4
        for _ in range(STEPS):
            await pilot.press("right_square_bracket")
            await pilot.pause()
            if table.cursor != 4:
                break
        # The run moved in the order (its regret changed) and the cursor with it.
        assert table.cursor != 4
        assert table.current_run() == run_id
        regrets = [float(table.rows.regret[int(i)]) for i in table.order]
        assert regrets == sorted(regrets, reverse=True)
        drawn = table.render_line(table.cursor - int(table.scroll_offset.y) + 1).text
        assert drawn.startswith(run_id)


async def test_the_stages_optima_keep_their_stage_highlighted(db: Path, tmp_path: Path) -> None:
    async with opened(db, tmp_path, (150, 45)) as (app, pilot):
        await pilot.press("t")
        screen = app.screen
        assert isinstance(screen, TuningScreen)
        table = screen.query_one("#tuning-stages", DataTable)
        while screen.computing or not table.row_count:
            await app.workers.wait_for_complete()
            await pilot.pause(0.02)
        assert table.row_count > 2
        table.focus()
        await pilot.press("down", "down")
        stage = cursor_key(table)
        assert table.cursor_row == 2 and stage is not None
        current = str(table.get_row_at(2)[2])
        await pilot.press("right_square_bracket")  # the stage's weight changes: refilled
        await pilot.pause(0.3)
        while screen.computing:
            await app.workers.wait_for_complete()
            await pilot.pause(0.02)
        assert cursor_key(table) == stage and table.cursor_row == 2
        assert str(table.get_row_at(2)[2]) != current


# -- the helper ---------------------------------------------------------------------


class Table(App[None]):
    """One table, and each row highlighted as the table reports it."""

    def __init__(self) -> None:
        super().__init__()
        self.highlighted: list[str | None] = []

    def compose(self) -> ComposeResult:
        yield DataTable(cursor_type="row")

    def on_mount(self) -> None:
        self.query_one(DataTable).add_columns("name", "score")

    @on(DataTable.RowHighlighted)
    def _highlighted(self, event: DataTable.RowHighlighted) -> None:
        self.highlighted.append(event.row_key.value)


def _rows(*names: str, score: str = "1") -> dict[str, tuple[Any, ...]]:
    return {name: (Text(name), score) for name in names}


@asynccontextmanager
async def _on_the_second_row() -> AsyncIterator[tuple[Table, DataTable[Any], Pilot[None]]]:
    """The table running with rows a and b, its cursor moved to b."""
    app = Table()
    async with app.run_test() as pilot:
        table = app.query_one(DataTable)
        refill(table, _rows("a", "b"))
        table.move_cursor(row=1)
        await pilot.pause()
        yield app, table, pilot


async def test_refill_moves_the_cursor_with_its_key_and_says_nothing() -> None:
    app = Table()
    async with app.run_test() as pilot:
        table = app.query_one(DataTable)
        refill(table, _rows("a", "b", "c"))
        await pilot.pause()
        assert app.highlighted == ["a"]  # the first fill highlights the first row
        table.move_cursor(row=1)
        await pilot.pause()
        assert app.highlighted == ["a", "b"]
        refill(table, _rows("c", "a", "b"))
        await pilot.pause()
        assert cursor_key(table) == "b" and table.cursor_row == 2
        assert app.highlighted == ["a", "b"]  # the same row: nothing to tell
        assert [str(table.get_row_at(y)[0]) for y in range(3)] == ["c", "a", "b"]


async def test_refill_in_the_same_order_writes_only_the_cells_that_changed() -> None:
    async with _on_the_second_row() as (app, table, pilot):
        name = table.get_cell("a", table.ordered_columns[0].key)
        refill(table, _rows("a", "b", score="2"))
        await pilot.pause()
        # Same keys, same order: the rows stay (the unchanged name is the same object).
        assert table.get_cell("a", table.ordered_columns[0].key) is name
        assert [table.get_row_at(y)[1] for y in range(2)] == ["2", "2"]
        assert cursor_key(table) == "b" and app.highlighted == ["a", "b"]


async def test_refill_without_the_highlighted_key_highlights_the_first_row() -> None:
    async with _on_the_second_row() as (app, table, pilot):
        refill(table, _rows("c", "d"))
        await pilot.pause()
        assert cursor_key(table) == "c" and table.cursor_row == 0
        assert app.highlighted == ["a", "b", "c"]
        refill(table, {})
        assert cursor_key(table) is None
