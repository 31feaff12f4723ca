"""The store's one connection shared by the app's threads: one statement at a time, a
transaction whole, and closing only once the statement under way is done (quitting while
workers read must neither crash nor report another thread's result)."""

from __future__ import annotations

import asyncio
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from helpers import HeldLoad, opened
from textual.pilot import Pilot

from ppp_tui.app import app as app_module
from ppp_tui.app.app import PPPApp
from ppp_tui.app.screens.runs import RunsScreen
from ppp_tui.app.workspace import Workspace
from ppp_tui.core.errors import PPPError
from ppp_tui.storage.store import DatabaseLocked, Store

SIZE = (140, 45)
PAUSE_S = 0.3


class Pauses:
    """A SQL function `pause()` on every store opened: it sleeps inside the statement
    (the connection busy, the GIL free) while `armed`, and records when each ended and
    when a store was closed."""

    def __init__(self) -> None:
        self.armed = threading.Event()
        self.entered = threading.Event()
        # (what, which store, when)
        self.log: list[tuple[str, int, float]] = []
        self.mutex = threading.Lock()

    def pause(self, store: int) -> int:
        if self.armed.is_set():
            self.entered.set()
            time.sleep(PAUSE_S)
            with self.mutex:
                self.log.append(("pause ended", store, time.monotonic()))
        return 0

    def closed(self, store: int) -> None:
        with self.mutex:
            self.log.append(("closed", store, time.monotonic()))

    def check_closed_after_every_pause(self) -> None:
        """Every store that paused was closed, and only after its last pause ended."""
        paused = {store for name, store, _ in self.log if name == "pause ended"}
        assert paused
        for store in paused:
            ends = [t for name, s, t in self.log if s == store and name == "pause ended"]
            closes = [t for name, s, t in self.log if s == store and name == "closed"]
            assert closes and min(closes) >= max(ends), self.log


@pytest.fixture
def pauses(monkeypatch: pytest.MonkeyPatch) -> Iterator[Pauses]:
    found = Pauses()
    init, close = Store.__init__, Store.close

    def opened(self: Store, path: Path, conn: sqlite3.Connection) -> None:
        init(self, path, conn)
        key = id(self)
        conn.create_function("pause", 0, lambda: found.pause(key))

    def closing(self: Store) -> None:
        close(self)
        found.closed(id(self))

    def paused(read: Callable[[Store], object]) -> Callable[[Store], object]:
        def wrapper(self: Store) -> object:
            self._query("SELECT pause()")
            return read(self)

        return wrapper

    monkeypatch.setattr(Store, "__init__", opened)
    monkeypatch.setattr(Store, "close", closing)
    # The look for other processes' changes and the search both start with a paused read.
    monkeypatch.setattr(Store, "data_version", paused(Store.data_version))
    monkeypatch.setattr(Store, "search_index_current", paused(Store.search_index_current))
    monkeypatch.setattr(app_module, "WATCH_INTERVAL_S", 0.1)
    yield found


def test_close_waits_for_a_statement_under_way_in_another_thread(db: Path, pauses: Pauses) -> None:
    store = Store.open(db)
    pauses.armed.set()
    got: list[object] = []
    reader = threading.Thread(target=lambda: got.append(store._query("SELECT pause()")))
    reader.start()
    assert pauses.entered.wait(5)
    store.close()
    reader.join()
    assert got == [[(0,)]]
    pauses.check_closed_after_every_pause()
    with pytest.raises(PPPError, match="closed database"):
        store.count()  # a use after closing is a clear error, not a crash
    store.close()  # twice is harmless


def test_a_read_from_another_thread_waits_for_a_transaction_to_end(db: Path) -> None:
    with Store.open(db) as store:
        run_id, before = next((r, a) for r, a in store.preferred_agents().items() if a)
        inside = threading.Event()

        def write() -> None:
            with store._transaction():
                store.conn.execute("UPDATE marks SET agent = 'x' WHERE run_id = ?", (run_id,))
                inside.set()
                time.sleep(0.2)
                store.conn.execute("UPDATE marks SET agent = ? WHERE run_id = ?", (before, run_id))

        writer = threading.Thread(target=write)
        writer.start()
        assert inside.wait(5)
        # On the same connection, a read in the middle would see the uncommitted change.
        assert store.preferred_agents()[run_id] == before
        writer.join()


def test_a_locked_mark_says_locked_while_another_thread_reads(db: Path) -> None:
    """A mark failing on another process's lock, while a second thread reads on the same
    connection, is reported as the lock (not as the other thread's "another row
    available")."""
    with Store.open(db) as store:
        store.set_lock_wait(0.001)
        run_id = store.run_infos()[0].id
        other = sqlite3.connect(db, isolation_level=None)
        other.execute("BEGIN IMMEDIATE")
        stop = threading.Event()
        errors: list[str] = []

        def poll() -> None:
            while not stop.is_set():
                store.data_version()
                store.preferred_agents()

        poller = threading.Thread(target=poll)
        poller.start()
        try:
            deadline = time.monotonic() + 1.5
            while time.monotonic() < deadline:
                try:
                    store.mark(run_id, None, source="app")
                except DatabaseLocked:
                    continue
                except PPPError as error:
                    errors.append(str(error))
        finally:
            stop.set()
            poller.join()
            other.execute("ROLLBACK")
            other.close()
        assert errors == []


async def _loaded(app: PPPApp, pilot: Pilot[None]) -> RunsScreen:
    await app.load_done.wait()
    await pilot.pause()
    screen = app.screen
    assert isinstance(screen, RunsScreen)
    return screen


async def test_quitting_while_a_look_and_a_search_read_closes_the_database_after_them(
    db: Path, tmp_path: Path, pauses: Pauses
) -> None:
    async with opened(db, tmp_path, SIZE) as (app, pilot):
        pauses.armed.set()
        await pilot.press("slash", "a")  # a search worker, beside the once-a-tick look
        deadline = time.monotonic() + 5
        while not pauses.entered.is_set():
            assert time.monotonic() < deadline
            await pilot.pause(0.01)
        await pilot.press("q")
    assert app._exception is None
    pauses.check_closed_after_every_pause()


async def test_many_apps_quitting_at_once_under_their_workers(
    db: Path, tmp_path: Path, pauses: Pauses
) -> None:
    """Several sessions at once, each quitting with its look and search in the database."""

    async def session(index: int) -> BaseException | None:
        app = PPPApp(db, tmp_path / f"config-{index}.toml")
        async with app.run_test(size=SIZE) as pilot:
            await _loaded(app, pilot)
            await pilot.press("slash", "a")
            await pilot.pause(0.05 * index)
            await pilot.press("q")
        return app._exception

    pauses.armed.set()  # the loads' first reads pause too
    codes = await asyncio.gather(*(session(i) for i in range(4)))
    assert codes == [None, None, None, None]
    pauses.check_closed_after_every_pause()


async def test_quitting_while_the_database_loads_closes_it_under_the_load(
    db: Path, tmp_path: Path, pauses: Pauses, held_load: HeldLoad
) -> None:
    """The first page's connection, still loading in a worker, is closed on quitting (it
    was left open, and read from after the app was gone); the load then stops quietly."""
    async with held_load.opened(db, tmp_path / "config.toml", SIZE) as (app, pilot):
        assert app.workspace is None
        await pilot.press("q")
    closed = [store for name, store, _ in pauses.log if name == "closed"]
    assert len(closed) == 1
    held_load.set()  # the load goes on, on a closed database
    await asyncio.sleep(0.3)
    assert app.workspace is None and app._exception is None


async def test_quitting_while_scores_are_read_again_stops_quietly(
    db: Path, tmp_path: Path, pauses: Pauses, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A worker reading the scores again (new penalties) when quitting closes the database
    finds it closed and stops: no crash, no error report."""
    reload = Workspace.reload_scores
    finished = threading.Event()

    def paused_reload(self: Workspace) -> None:
        try:
            self.store._query("SELECT pause()")
            reload(self)
        finally:
            finished.set()

    monkeypatch.setattr(Workspace, "reload_scores", paused_reload)
    async with opened(db, tmp_path, SIZE) as (app, pilot):
        pauses.armed.set()
        app._reload_scores()
        deadline = time.monotonic() + 5
        while not pauses.entered.is_set():
            assert time.monotonic() < deadline
            await pilot.pause(0.01)
        await pilot.press("q")
    assert finished.wait(5)
    await asyncio.sleep(0.1)
    assert app._exception is None
    pauses.check_closed_after_every_pause()
