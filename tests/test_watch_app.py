"""`browse --watch`: sessions followed while the app is open. A session that grows shows
its new turns in the open run (same agent, same scroll position), a new session joins
the runs list (same cursor), and an agent waiting for the user is marked in both."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot
from textual.widgets import DataTable
from transcripts import claude_lines

from ppp_tui.app import app as app_module
from ppp_tui.app.app import PPPApp
from ppp_tui.app.screens.run import RunScreen
from ppp_tui.app.screens.runs import RunsScreen
from ppp_tui.app.widgets.conversation import Conversation
from ppp_tui.app.widgets.runs_table import RunsTable
from ppp_tui.storage.store import Store


@pytest.fixture(autouse=True)
def quick_looks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(app_module, "WATCH_INTERVAL_S", 0.1)


async def _until(pilot: Pilot[None], done: Callable[[], bool], seconds: float = 20.0) -> None:
    deadline = time.monotonic() + seconds
    while not done():
        assert time.monotonic() < deadline, "not within the time allowed"
        await pilot.pause(0.05)


def _append(path: Path, lines: list[dict[str, Any]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a", encoding="utf-8") as handle:
        handle.write("".join(json.dumps(line) + "\n" for line in lines))


def _turn(session: str, k: int, prompt: str, reply: str) -> list[dict[str, Any]]:
    """One more turn of a Claude Code session: a prompt typed, the agent's reply."""
    base = {"sessionId": session, "cwd": "/nowhere/repo", "version": "2.1.30"}
    at = f"2026-03-02T11:{k:02d}"
    return [
        {**base, "type": "user", "uuid": f"{session}-p{k}", "timestamp": f"{at}:00.000Z",
         "message": {"role": "user", "content": prompt}},
        {**base, "type": "assistant", "uuid": f"{session}-r{k}", "timestamp": f"{at}:30.000Z",
         "message": {"id": f"msg-{session}-{k}", "role": "assistant", "model": "claude-opus-4-5",
                     "content": [{"type": "text", "text": reply}]}},
    ]  # fmt: skip


def _table(app: PPPApp) -> RunsTable:
    screen = next(s for s in app.screen_stack if isinstance(s, RunsScreen))
    return screen.table


def _runs(app: PPPApp) -> list[str]:
    table = _table(app)
    return [table.rows.infos[int(i)].id for i in table.order]


def _agent_names(screen: RunScreen) -> list[str]:
    table = screen.query_one("#agents", DataTable)
    return [str(table.get_row_at(y)[1]) for y in range(table.row_count)]


async def test_sessions_followed_in_the_app(tmp_path: Path) -> None:
    folder, db = tmp_path / "projects", tmp_path / "runs.db"
    first = folder / "p" / "s1.jsonl"
    _append(first, claude_lines("s1", "/nowhere/repo", "claude-opus-4-5"))
    for k in range(1, 13):  # a conversation longer than the screen
        _append(first, _turn("s1", k, f"Prompt {k}", f"Reply {k}.\n\nDone with step {k}."))
    Store.open(db, create=True).close()
    app = PPPApp(db, tmp_path / "config.toml", [str(folder)])
    async with app.run_test(size=(80, 24)) as pilot:
        await app.load_done.wait()
        await _until(pilot, lambda: len(_runs(app)) == 1)
        (run_id,) = _runs(app)
        assert "⚑" not in _table(app).render_line(1).text  # it ends on no question
        await pilot.press("enter")
        await _until(pilot, lambda: isinstance(app.screen, RunScreen))
        screen = app.screen
        assert isinstance(screen, RunScreen)
        conversation = screen.query_one(Conversation)
        conversation.scroll_to(y=20, animate=False, immediate=True)
        await pilot.pause()
        top = list(conversation.plain())[20]
        # The session grows: a turn that ends on a question to the user.
        _append(first, _turn("s1", 13, "Prompt 13", "Shall I also update the changelog?"))
        await _until(pilot, lambda: len(screen.run.agents[0].trajectory.turns) == 14)  # type: ignore[union-attr]
        await pilot.pause()
        assert app.screen is screen
        assert isinstance(screen, RunScreen)
        assert int(conversation.scroll_offset.y) == 20
        assert list(conversation.plain())[20] == top
        assert any("Shall I also update the changelog?" in row for row in conversation.plain())
        assert _agent_names(screen) == ["⚑ claude-code"]
        facts = str(screen.query_one("#agent-facts").render())
        assert facts.startswith("⚑ waiting for you")
        # A new session of another task joins the list; the cursor stays on its run.
        await pilot.press("escape")
        await pilot.pause()
        _append(
            folder / "q" / "s2.jsonl",
            claude_lines("s2", "/nowhere/other", "claude-opus-4-5", prompt="Another task"),
        )
        await _until(pilot, lambda: len(_runs(app)) == 2)
        table = _table(app)
        assert table.current_run() == run_id
        lines = {rid: table.render_line(y + 1).text for y, rid in enumerate(_runs(app))}
        assert "⚑ " in lines[run_id]
        assert "⚑" not in "".join(text for rid, text in lines.items() if rid != run_id)
    assert app._stop_following.is_set()
    with Store.open(db) as store:
        assert store.count() == 2
