"""The terminal app on a PostgreSQL team store: the same runs, figures and marks as on
the SQLite file it was copied from; marks and hand ratings written to the server;
another process's marks shown while it is open; search as you type; a server that
goes away told in one line."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner
from helpers import opened
from textual.pilot import Pilot
from textual.widgets import Input, Static

from ppp_tui.app import app as app_module
from ppp_tui.app.app import PPPApp
from ppp_tui.app.screens.run import RunScreen
from ppp_tui.app.screens.runs import RunsScreen
from ppp_tui.cli import cli
from ppp_tui.core.model import HAND
from ppp_tui.storage import postgres, postgres_schema, transfer
from ppp_tui.storage.location import ServerURL, parse_server_url
from ppp_tui.storage.store import Store
from ppp_tui.storage.store_server import ServerStore

psycopg = pytest.importorskip("psycopg", reason="the postgres extra (psycopg) is not installed")

SIZE = (120, 40)


@pytest.fixture(autouse=True)
def quick_looks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(app_module, "WATCH_INTERVAL_S", 0.1)


@pytest.fixture
def both(db: Path, pg_url: str) -> Iterator[tuple[Path, ServerURL]]:
    """(a SQLite demo database, a team store holding a copy of it)."""
    server = parse_server_url(pg_url)
    with postgres.connect(server) as conn, Store.open(db) as store:
        postgres_schema.prepare(conn, server)
        transfer.copy_runs(transfer.SQLiteEnd(store.conn), transfer.PostgresEnd(conn))
        conn.commit()
    yield db, server


@pytest.fixture
def empty_cwd(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A working folder to check that nothing is created in it."""
    folder = tmp_path / "cwd"
    folder.mkdir()
    monkeypatch.chdir(folder)
    return folder


async def _until(pilot: Pilot[None], done: Callable[[], bool], seconds: float = 5.0) -> None:
    deadline = time.monotonic() + seconds
    while not done():
        assert time.monotonic() < deadline, "not within the time allowed"
        await pilot.pause(0.05)


def _runs_shown(app: PPPApp) -> tuple[list[str], str]:
    screen = app.screen
    assert isinstance(screen, RunsScreen)
    rows = screen.table.rows
    shown = [
        f"{info.id} {info.stage} {info.preferred} {rows.infos[i].preferred}"
        for i, info in ((n, rows.infos[n]) for n in screen.table.order)
    ]
    return shown, str(screen.query_one("#runs-status").render())


async def test_the_app_shows_what_the_file_shows(
    both: tuple[Path, ServerURL], tmp_path: Path
) -> None:
    file, server = both
    async with opened(file, tmp_path, SIZE) as (app, _):
        on_file = _runs_shown(app)
        header = app.sub_title
    async with opened(server, tmp_path, SIZE) as (app, _):
        on_server = _runs_shown(app)
        assert app.sub_title == header.replace(str(file), str(server))
    assert on_server == on_file
    assert len(on_file[0]) == 300 and "agreement" in on_file[1]


async def test_a_mark_and_a_rating_are_written_to_the_server(
    both: tuple[Path, ServerURL], tmp_path: Path
) -> None:
    from ppp_tui.app.screens.rate import RateScreen

    _, server = both
    async with opened(server, tmp_path, SIZE) as (app, pilot):
        await pilot.press("enter")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, RunScreen) and screen.ranking is not None
        if screen._highlighted_name() == screen._preferred():
            await pilot.press("down")
        chosen = screen._highlighted_name()
        assert chosen is not None and chosen != screen._preferred()
        await pilot.press("p")
        await _until(pilot, lambda: screen._preferred() == chosen)
        await app.workers.wait_for_complete()
        await pilot.press("e")
        await pilot.pause()
        modal = app.screen
        assert isinstance(modal, RateScreen)
        modal.query_one(Input).value = "4"
        await pilot.press("enter")
        await app.workers.wait_for_complete()
        await pilot.pause()
        rated = screen._highlighted_name()
        assert rated is not None
        run_id = screen.run.id
        facts = str(screen.query_one("#agent-facts", Static).render())
        assert facts.startswith("technical 0.750 (hand)")
    with ServerStore.connect(server) as store:
        assert store.preferred_agents()[run_id] == chosen
        assert [m.agent for m in store.marks(run_id) if m.source == "app"][-1] == chosen
        agent = store.get_run(run_id).agent(rated)
    assert agent is not None
    assert agent.technical == pytest.approx(0.75) and agent.technical_source == HAND


async def test_another_process_mark_shows_within_seconds(
    both: tuple[Path, ServerURL], tmp_path: Path
) -> None:
    _, server = both
    async with opened(server, tmp_path, SIZE) as (app, pilot):
        workspace = app.workspace
        assert workspace is not None
        info = next(i for i in workspace.infos if i.preferred is None)
        with ServerStore.connect(server) as store:
            agent = store.get_run(info.id).agents[-1].name
        marked = workspace.figures().marked_runs
        result = CliRunner().invoke(
            cli,
            ["prefer", info.id, agent, "--db", server.url, "--config", str(tmp_path / "c.toml")],
        )
        assert result.exit_code == 0, result.output
        started = time.monotonic()
        await _until(pilot, lambda: workspace.infos[workspace.index[info.id]].preferred == agent)
        assert time.monotonic() - started < 2
        assert workspace.figures().marked_runs == marked + 1


async def test_search_as_you_type_finds_what_the_file_finds(
    both: tuple[Path, ServerURL], tmp_path: Path
) -> None:
    file, server = both
    with Store.open(file) as store:
        task = next(i.task for i in store.run_infos() if i.task)
    word = max(task.split(), key=len).strip("`.,:()")
    found: dict[str, list[str]] = {}
    for where in (file, server):
        async with opened(where, tmp_path, SIZE) as (app, pilot):
            screen = app.screen
            assert isinstance(screen, RunsScreen)
            await pilot.press("slash", *word, "space", *word[:3])
            await app.workers.wait_for_complete()
            await pilot.pause()
            found[str(where)] = [screen.table.rows.infos[i].id for i in screen.table.order]
    # The same runs in the same order: the most relevant first, as the file ranks them.
    assert found[str(file)] and found[str(server)] == found[str(file)]


@pytest.fixture
def admin(pg_cluster: str) -> Iterator[Any]:
    """A superuser's connection to the test server (autocommit)."""
    with psycopg.connect(pg_cluster, autocommit=True) as conn:
        yield conn


def _reachable(admin: Any, server: ServerURL, reachable: bool) -> None:
    """The store's database takes new connections again, or no longer does and the ones
    it has are ended: to the app, the server is gone."""
    admin.execute(f"ALTER DATABASE {server.database} ALLOW_CONNECTIONS {str(reachable).lower()}")
    if not reachable:
        admin.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s",
            [server.database],
        )


async def test_a_server_gone_is_one_line_and_the_app_goes_on(
    both: tuple[Path, ServerURL], tmp_path: Path, admin: Any
) -> None:
    _, server = both
    async with opened(server, tmp_path, SIZE, notifications=True) as (app, pilot):
        _reachable(admin, server, False)

        def told() -> list[str]:
            return [n.message for n in app._notifications if "database" in n.title]

        await _until(pilot, lambda: bool(told()))
        await pilot.pause(0.5)  # several looks more: still one line
        assert len(told()) == 1
        assert str(server) in told()[0] and "\n" not in told()[0]
        assert server.url not in told()[0]
        assert app.is_running
        _reachable(admin, server, True)
        await pilot.press("enter")  # back: the app reads again
        await pilot.pause()
        assert isinstance(app.screen, RunScreen)


async def test_a_mark_made_while_the_server_is_gone_says_it_is_not_saved(
    both: tuple[Path, ServerURL], tmp_path: Path, admin: Any
) -> None:
    _, server = both
    async with opened(server, tmp_path, SIZE, notifications=True) as (app, pilot):
        await pilot.press("enter")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, RunScreen)
        if screen._highlighted_name() == screen._preferred():
            await pilot.press("down")
        before = screen._preferred()
        _reachable(admin, server, False)
        await pilot.press("p")

        def told() -> list[str]:
            return [n.message for n in app._notifications if n.title == "Mark not saved"]

        await _until(pilot, lambda: bool(told()))
        assert str(server) in told()[0] and "\n" not in told()[0]
        assert server.url not in told()[0]
        assert screen._preferred() == before
        _reachable(admin, server, True)
        run_id = screen.run.id
    with ServerStore.connect(server) as store:
        assert store.preferred_agents().get(run_id) == before


def test_browse_on_a_server_out_of_reach_is_one_line(empty_cwd: Path) -> None:
    from helpers import one_line_error, run_cli

    url = "postgresql://ppp:pw-never-shown@127.0.0.1:9/team"
    for args in (("browse",), ("serve",)):
        line = one_line_error(run_cli(*args, "--db", url))
        assert line == (
            f"Error: {parse_server_url(url)}: cannot reach the server (connection refused)"
        )
    assert list(empty_cwd.iterdir()) == []


def test_browse_refuses_demo_with_a_server_and_watches_only_a_server_it_reaches(
    empty_cwd: Path,
) -> None:
    from helpers import run_cli

    url = "postgresql://ppp@127.0.0.1:9/team"
    demo = run_cli("browse", "--demo", "--db", url)
    assert demo.exit_code == 2 and "--demo opens a SQLite file" in demo.stderr
    watch = run_cli("browse", "--watch", "--db", url)
    assert watch.exit_code == 1
    assert (
        watch.stderr
        == f"Error: {parse_server_url(url)}: cannot reach the server (connection refused)\n"
    )
    assert list(empty_cwd.iterdir()) == []


def test_serve_gives_the_url_to_its_sessions_out_of_their_command_line(
    both: tuple[Path, ServerURL], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import os

    from helpers import run_cli

    from ppp_tui import serving
    from ppp_tui.storage.config import DB_ENV

    _, server = both
    started: list[tuple[str, str | None]] = []

    class Started:
        def __init__(self, command: str, *args: object, **kwargs: object) -> None:
            started.append((command, os.environ.get(DB_ENV)))

        def serve(self) -> None:
            pass

    monkeypatch.setattr(serving, "GuardedServer", Started)
    # The environment names another database: --db wins, and the sessions get it.
    monkeypatch.setenv(DB_ENV, str(tmp_path / "other.db"))
    result = run_cli("serve", "--db", server.url, "--config", str(tmp_path / "c.toml"))
    assert result.exit_code == 0, result.output
    [(command, given)] = started
    assert given == server.url
    assert " browse " in command and server.url not in command and "--db" not in command
    assert f"serving {server} at http://127.0.0.1:8000/" in result.stderr


def _same(one: object, other: object) -> bool:
    """Equal, arrays element by element."""
    if isinstance(one, np.ndarray) or isinstance(other, np.ndarray):
        return bool(np.array_equal(one, other))  # type: ignore[arg-type]
    if isinstance(one, dict) and isinstance(other, dict):
        return one.keys() == other.keys() and all(_same(one[k], other[k]) for k in one)
    if isinstance(one, list | tuple) and isinstance(other, list | tuple):
        return len(one) == len(other) and all(map(_same, one, other))
    return one == other


def test_the_dashboard_figures_are_the_same_on_both_engines(
    both: tuple[Path, ServerURL],
) -> None:
    from ppp_tui.analysis.dashboard import Dashboard
    from ppp_tui.core.settings import Settings

    file, server = both
    with Store.open(file) as store:
        on_file = Dashboard.load(store, Settings())
    with ServerStore.connect(server) as store:
        on_server = Dashboard.load(store, Settings())
    assert _same(dataclasses.asdict(on_server), dataclasses.asdict(on_file))
    assert on_file.runs == 300 and on_file.violated_preferences > 0


async def test_an_empty_store_says_how_to_fill_it_with_its_url(pg_url: str, tmp_path: Path) -> None:
    """Not `ppp-tui demo`, which would make a demo file beside the user: the commands
    that fill this store."""
    server = parse_server_url(pg_url)
    with postgres.connect(server) as conn:
        postgres_schema.prepare(conn, server)
        conn.commit()
    async with opened(server, tmp_path, SIZE) as (app, pilot):
        await _until(pilot, lambda: app.workspace is not None and app.workspace.loaded)
        await pilot.pause()
        shown = str(app.screen.query_one("#runs-message").render())
    assert "This team store holds no runs yet" in shown
    assert "ppp-tui import FILE --db URL" in shown and "ppp-tui demo --db URL" in shown


async def test_sessions_followed_into_a_store_join_the_runs_list(
    pg_url: str, tmp_path: Path
) -> None:
    """`browse --watch` on a team store: the sessions there go into it, and one that
    starts while the app is open joins the list."""
    import json

    from transcripts import claude_lines

    server = parse_server_url(pg_url)
    with postgres.connect(server) as conn:
        postgres_schema.prepare(conn, server)
        conn.commit()
    folder = tmp_path / "projects"

    def write(path: Path, lines: list[dict[str, object]]) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")

    write(folder / "p" / "s1.jsonl", claude_lines("s1", "/nowhere/repo", "claude-opus-4-5"))
    app = PPPApp(server, tmp_path / "config.toml", [str(folder)])
    async with app.run_test(size=SIZE) as pilot:
        await app.load_done.wait()
        await _until(pilot, lambda: len(_runs_shown(app)[0]) == 1, seconds=20)
        write(
            folder / "q" / "s2.jsonl",
            claude_lines("s2", "/nowhere/other", "claude-opus-4-5", prompt="Another task"),
        )
        await _until(pilot, lambda: len(_runs_shown(app)[0]) == 2, seconds=20)
    assert app._stop_following.is_set()
    with ServerStore.connect(server) as store:
        assert store.count() == 2
