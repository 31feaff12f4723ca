"""The app with a run open: its first run opened, an agent of it highlighted."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from helpers import opened

if TYPE_CHECKING:
    from textual.pilot import Pilot

    from ppp_tui.app.app import PPPApp
    from ppp_tui.app.screens.run import RunScreen


async def open_first_run(app: PPPApp, pilot: Pilot[None]) -> RunScreen:
    """The runs list's first run opened, once every run is loaded."""
    from ppp_tui.app.screens.run import RunScreen

    await app.load_done.wait()
    await pilot.pause()
    await pilot.press("enter")
    await pilot.pause()
    screen = app.screen
    assert isinstance(screen, RunScreen)
    return screen


async def highlight_agent(screen: RunScreen, pilot: Pilot[None], name: str) -> None:
    """The agents table focused, its cursor on agent `name`."""
    from textual.widgets import DataTable

    table = screen.query_one("#agents", DataTable)
    table.focus()
    names = [str(table.get_row_at(y)[1]) for y in range(table.row_count)]
    table.move_cursor(row=names.index(name))
    await pilot.pause()


@asynccontextmanager
async def agent_opened(
    db: Path, where: Path, size: tuple[int, int], name: str
) -> AsyncIterator[tuple[PPPApp, Pilot[None], RunScreen]]:
    """The app on `db` (`opened`), its first run open and agent `name` highlighted."""
    async with opened(db, where, size) as (app, pilot):
        screen = await open_first_run(app, pilot)
        await highlight_agent(screen, pilot, name)
        yield app, pilot, screen
