"""The app while other processes use its database: it shows their marks and imports, and
its own marks wait for their locks."""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from click.testing import CliRunner
from helpers import opened
from textual.pilot import Pilot
from textual.widgets import DataTable

from ppp_tui.app import app as app_module
from ppp_tui.app.app import PPPApp
from ppp_tui.app.screens.run import RunScreen
from ppp_tui.app.screens.runs import RunsScreen
from ppp_tui.app.workspace import Workspace
from ppp_tui.cli import cli
from ppp_tui.core.scores import Scores
from ppp_tui.storage.store import RunInfo, Store

SIZE = (140, 45)


@pytest.fixture(autouse=True)
def quick_looks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(app_module, "WATCH_INTERVAL_S", 0.1)


def _ppp(db: Path, tmp_path: Path, *args: str) -> None:
    """`ppp-tui ARGS` on the app's database, as from another shell."""
    result = CliRunner().invoke(
        cli, [*args, "--db", str(db), "--config", str(tmp_path / "config.toml")]
    )
    assert result.exit_code == 0, result.output


async def _until(pilot: Pilot[None], done: Callable[[], bool], seconds: float = 5.0) -> None:
    deadline = time.monotonic() + seconds
    while not done():
        assert time.monotonic() < deadline, "not within the time allowed"
        await pilot.pause(0.05)


async def _loaded_runs(app: PPPApp, pilot: Pilot[None]) -> RunsScreen:
    await app.load_done.wait()
    await pilot.pause()
    screen = app.screen
    assert isinstance(screen, RunsScreen)
    return screen


@contextmanager
def _write_lock(db: Path, seconds: float) -> Iterator[threading.Thread]:
    """Another process's write transaction on `db`, held for `seconds` (from now)."""
    other = sqlite3.connect(db, isolation_level=None, check_same_thread=False)
    other.execute("BEGIN IMMEDIATE")

    def release() -> None:
        time.sleep(seconds)
        other.execute("COMMIT")
        other.close()

    holder = threading.Thread(target=release)
    holder.start()
    try:
        yield holder
    finally:
        holder.join()


@pytest.fixture
def full_reads(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Counts the app's reads of the whole database (the load included)."""
    reads: list[int] = []
    read = Workspace.read

    def counted(self: Workspace) -> tuple[list[RunInfo], Scores]:
        reads.append(1)
        return read(self)

    monkeypatch.setattr(Workspace, "read", counted)
    return reads


async def test_a_mark_from_the_command_line_shows_and_the_cursor_stays(
    db: Path, tmp_path: Path, full_reads: list[int]
) -> None:
    async with opened(db, tmp_path, SIZE) as (app, pilot):
        screen = await _loaded_runs(app, pilot)
        workspace = app.workspace
        assert workspace is not None
        assert len(full_reads) == 1
        await pilot.press("down", "down", "down")
        cursor_run = screen.table.current_run()
        assert cursor_run is not None
        info = next(i for i in workspace.infos if i.preferred is None and i.id != cursor_run)
        with Store.open(db) as store:
            agent = store.get_run(info.id).agents[-1].name
        marked_before = workspace.figures().marked_runs
        _ppp(db, tmp_path, "prefer", info.id, agent)
        await _until(pilot, lambda: workspace.infos[workspace.index[info.id]].preferred == agent)
        await pilot.pause()
        row = screen.table.rows.infos[workspace.index[info.id]]
        assert row.preferred == agent
        assert workspace.figures().marked_runs == marked_before + 1
        status = str(screen.query_one("#runs-status").render())
        assert f"over {marked_before + 1:,} marked" in status
        assert screen.table.current_run() == cursor_run and screen.table.cursor == 3
        assert len(full_reads) == 1  # a mark is read as a mark, not with everything again


async def test_a_run_imported_from_outside_appears_under_the_search(
    db: Path, tmp_path: Path, full_reads: list[int]
) -> None:
    run = {
        "id": "zz-from-the-shell",
        "stage": "newstage",
        "agents": [
            {"name": "left", "technical_score": 0.9},
            {"name": "right", "technical_score": 0.4},
        ],
    }
    file = tmp_path / "new.json"
    file.write_text(json.dumps(run))
    async with opened(db, tmp_path, SIZE) as (app, pilot):
        screen = await _loaded_runs(app, pilot)
        await pilot.press("slash", *"zz-from")
        await pilot.pause()
        assert len(screen.table.order) == 0
        _ppp(db, tmp_path, "import", str(file))
        await _until(pilot, lambda: len(screen.table.order) == 1)
        assert screen.table.current_run() == "zz-from-the-shell"
        assert app.workspace is not None and len(app.workspace.infos) == 301
        await pilot.pause()
        assert "1 of 301 runs" in str(screen.query_one("#runs-status").render())
        assert "newstage" in screen._stages[0]  # the stage menu offers the new stage
        assert len(full_reads) == 2


async def test_a_look_that_read_before_the_app_s_own_mark_is_read_again(
    db: Path, tmp_path: Path
) -> None:
    async with opened(db, tmp_path, SIZE) as (app, pilot):
        await _loaded_runs(app, pilot)
        workspace = app.workspace
        assert workspace is not None
        first, second = workspace.infos[0], workspace.infos[1]
        with Store.open(db) as store:
            names = [a.name for a in store.get_run(first.id).agents]
            other = [a.name for a in store.get_run(second.id).agents]
        theirs = next(n for n in other if n != second.preferred)
        mine = next(n for n in names if n != first.preferred)
        # A look reads the marks (another process marked the second run) ...
        _ppp(db, tmp_path, "prefer", second.id, theirs)
        seen = Store.open(db)
        stale = workspace.mark_changes(seen.preferred_agents())
        seen.close()
        # ... then this app marks the first run before the look's result is shown.
        app._checking = True
        looked_from = app._own_marks
        app.mark_preferred(first.id, mine)
        app._marked_outside(looked_from, 12345, [*stale, (0, first.preferred)])
        assert workspace.infos[0].preferred == mine  # not undone by the stale reading
        await _until(pilot, lambda: workspace.infos[1].preferred == theirs)
        assert workspace.infos[0].preferred == mine


async def test_a_run_screen_shows_a_mark_made_outside(db: Path, tmp_path: Path) -> None:
    async with opened(db, tmp_path, SIZE) as (app, pilot):
        await _loaded_runs(app, pilot)
        await pilot.press("enter")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, RunScreen) and screen.ranking is not None
        last = screen.ranking.agents[-1].name
        _ppp(db, tmp_path, "prefer", screen.run.id, last)
        await _until(pilot, lambda: screen._preferred() == last)
        await pilot.pause()
        assert app.screen is screen
        row = screen.query_one("#agents", DataTable).get_row(last)
        assert any("★ preferred" in str(cell) for cell in row)


async def test_p_waits_for_another_process_s_write_and_then_saves(db: Path, tmp_path: Path) -> None:
    async with opened(db, tmp_path, SIZE) as (app, pilot):
        await _loaded_runs(app, pilot)
        workspace = app.workspace
        assert workspace is not None
        await pilot.press("enter")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, RunScreen) and screen.ranking is not None
        chosen = screen.ranking.agents[1].name
        with _write_lock(db, 0.5) as holder:
            await pilot.press("down", "p")
            await pilot.pause()
            assert holder.is_alive()  # the app is not frozen: the lock is still held
            assert workspace.infos[workspace.index[screen.run.id]].preferred != chosen
        await _until(
            pilot, lambda: workspace.infos[workspace.index[screen.run.id]].preferred == chosen
        )
    with Store.open(db) as store:
        assert [m.agent for m in store.marks(screen.run.id) if m.source == "app"] == [chosen]


async def test_a_lock_held_past_the_wait_gives_a_toast_and_the_app_goes_on(
    db: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ppp_tui.app import marking

    monkeypatch.setattr(marking, "MARK_LOCK_WAIT_S", 0.3)
    async with opened(db, tmp_path, SIZE) as (app, pilot):
        await _loaded_runs(app, pilot)
        await pilot.press("enter")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, RunScreen)
        before = screen._preferred()
        with _write_lock(db, 1.5):
            await pilot.press("down", "p")

            def failed() -> bool:
                return any(n.title == "Mark not saved" for n in app._notifications)

            await _until(pilot, failed)
        toast = next(n for n in app._notifications if n.title == "Mark not saved")
        assert "locked by another process" in toast.message and not toast.markup
        assert app.is_running and screen._preferred() == before
        await pilot.press("p")  # the lock is gone: marking works again
        await _until(pilot, lambda: screen._preferred() != before)
    with Store.open(db) as store:
        assert len([m for m in store.marks(screen.run.id) if m.source == "app"]) == 1


async def test_a_rating_from_the_command_line_reranks_the_run(
    db: Path, tmp_path: Path, full_reads: list[int]
) -> None:
    async with opened(db, tmp_path, SIZE) as (app, pilot):
        await _loaded_runs(app, pilot)
        workspace = app.workspace
        assert workspace is not None and workspace.scores is not None
        arrays = workspace.scores.arrays
        failed = arrays.failed if arrays.failed is not None else ~arrays.valid
        # A run with two working agents: the one not picked gets a perfect rating.
        row = next(i for i in range(len(arrays)) if (arrays.valid[i] & ~failed[i]).sum() >= 2)
        run_id = workspace.infos[row].id
        selected = workspace.scores.outcome.selected[row]
        other = next(
            str(name)
            for k, name in enumerate(arrays.names[row])
            if k != selected and arrays.valid[row, k] and not failed[row, k]
        )
        ratings = tmp_path / "ratings.csv"
        ratings.write_text(f"run_id,agent,technical\n{run_id},{other},1.0\n")
        _ppp(db, tmp_path, "technical", str(ratings))
        # The other agent, rated perfect by hand, is now the pick.
        await _until(pilot, lambda: len(full_reads) == 2)
        await app.workers.wait_for_complete()
        await pilot.pause()
        scores = workspace.scores
        assert scores is not None
        assert scores.arrays.names[row, scores.outcome.selected[row]] == other
