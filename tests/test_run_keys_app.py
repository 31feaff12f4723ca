"""A run's screen, key by key: ctrl+c, tab, the keys that cannot act and say why, a
long step opened whole, and marking run after run."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.pilot import Pilot
from textual.selection import Selection
from textual.widgets import DataTable, Static

from ppp_tui.app.app import PPPApp
from ppp_tui.app.screens.quit import QuitScreen
from ppp_tui.app.screens.run import RunScreen
from ppp_tui.app.widgets.conversation import Conversation
from ppp_tui.core.sessions.grouping import agent_names, session_run
from ppp_tui.core.sessions.model import Session, SessionTurn, Step, StepKind, Tool
from ppp_tui.storage.files import ParsedRecord
from ppp_tui.storage.store import Store

SMALL = (80, 24)
SIZE = (140, 45)
THOUGHT = "Maybe the tests can wait"


def _sessions() -> list[Session]:
    claude = Session(
        Tool.CLAUDE_CODE,
        "c1",
        "/sessions/c1.jsonl",
        started="2026-01-05T10:00:00Z",
        turns=[
            SessionTurn(
                "Fix the parser",
                timestamp="2026-01-05T10:00:00Z",
                steps=[Step(StepKind.THINKING, THOUGHT), Step(StepKind.TEXT, "Done.")],
            )
        ],
    )
    codex = Session(
        Tool.CODEX,
        "x1",
        "/sessions/x1.jsonl",
        started="2026-01-05T10:01:00Z",
        turns=[SessionTurn("Fix the parser", steps=[Step(StepKind.TEXT, "Done too.")])],
    )
    return [claude, codex]


@pytest.fixture
def sessions_db(tmp_path: Path) -> Path:
    """One run of two sessions: claude-code thought aloud, codex recorded no thinking."""
    sessions = _sessions()
    run = session_run(sessions, "session-run", agent_names(sessions), "key", None)
    db = tmp_path / "sessions.db"
    with Store.open(db, create=True) as store:
        store.import_records([ParsedRecord("test", None, "$", None, parsed=run)])
    return db


async def _open(app: PPPApp, pilot: Pilot[None]) -> RunScreen:
    await app.load_done.wait()
    await pilot.pause()
    await pilot.press("enter")
    await pilot.pause()
    screen = app.screen
    assert isinstance(screen, RunScreen)
    return screen


async def _highlight(screen: RunScreen, pilot: Pilot[None], name: str) -> None:
    table = screen.query_one("#agents", DataTable)
    table.focus()
    names = [str(table.get_row_at(y)[1]) for y in range(table.row_count)]
    table.move_cursor(row=names.index(name))
    await pilot.pause()


def _told(app: PPPApp) -> list[str]:
    return [str(n.message) for n in app._notifications]


# -- ctrl+c ----------------------------------------------------------------------------


async def test_ctrl_c_quits_as_q_does_and_asks_about_unsaved_weights(
    db: Path, tmp_path: Path
) -> None:
    app = PPPApp(db, tmp_path / "config.toml")
    async with app.run_test(size=SMALL) as pilot:
        await _open(app, pilot)
        await pilot.press("right_square_bracket")
        await pilot.pause()
        assert app.workspace is not None and app.workspace.dirty
        await pilot.press("ctrl+c")
        await pilot.pause()
        assert isinstance(app.screen, QuitScreen)
        await pilot.click("#cancel")
        await pilot.pause()
        assert isinstance(app.screen, RunScreen)


async def test_ctrl_c_with_nothing_unsaved_quits(db: Path, tmp_path: Path) -> None:
    app = PPPApp(db, tmp_path / "config.toml")
    async with app.run_test(size=SMALL) as pilot:
        await _open(app, pilot)
        await pilot.press("ctrl+c")
        await pilot.pause()
        assert app._exit  # the app is ending


async def test_ctrl_c_with_text_selected_copies_it_and_stays(db: Path, tmp_path: Path) -> None:
    app = PPPApp(db, tmp_path / "config.toml")
    async with app.run_test(size=SMALL) as pilot:
        screen = await _open(app, pilot)
        header = screen.query_one("#run-header", Static)
        screen.selections = {header: Selection(None, None)}
        await pilot.press("ctrl+c")
        await pilot.pause()
        assert app.clipboard.startswith(screen.run.id)
        assert not app._exit and app.screen is screen


# -- tab -------------------------------------------------------------------------------


async def test_tab_goes_from_the_agents_to_the_conversation_in_one_press(
    sessions_db: Path, tmp_path: Path
) -> None:
    app = PPPApp(sessions_db, tmp_path / "config.toml")
    async with app.run_test(size=SMALL) as pilot:
        screen = await _open(app, pilot)
        assert screen.focused is screen.query_one("#agents", DataTable)
        await pilot.press("tab")
        assert isinstance(screen.focused, Conversation)
        # The tab bar comes next, and shift+tab walks back the same way.
        await pilot.press("tab")
        assert type(screen.focused).__name__ == "ContentTabs"
        await pilot.press("shift+tab", "shift+tab")
        assert screen.focused is screen.query_one("#agents", DataTable)


async def test_tab_reaches_the_questions_of_a_run_without_sessions(
    db: Path, tmp_path: Path
) -> None:
    app = PPPApp(db, tmp_path / "config.toml")
    async with app.run_test(size=SMALL) as pilot:
        screen = await _open(app, pilot)
        await pilot.press("tab")
        assert screen.focused is screen.query_one("#questions", DataTable)


# -- keys that cannot act say why ------------------------------------------------------


async def test_h_says_when_an_agent_recorded_no_thinking(sessions_db: Path, tmp_path: Path) -> None:
    app = PPPApp(sessions_db, tmp_path / "config.toml")
    async with app.run_test(size=SMALL) as pilot:
        screen = await _open(app, pilot)
        await _highlight(screen, pilot, "codex")
        await pilot.press("h")
        await pilot.pause()
        assert _told(app) == ["No thinking in codex's turns: its tool recorded none."]
        await _highlight(screen, pilot, "claude-code")
        await pilot.press("h")
        await pilot.pause()
        assert THOUGHT in "\n".join(screen.query_one(Conversation).plain())


async def test_h_on_a_run_without_sessions_says_why_it_does_nothing(
    db: Path, tmp_path: Path
) -> None:
    app = PPPApp(db, tmp_path / "config.toml")
    async with app.run_test(size=SMALL) as pilot:
        await _open(app, pilot)
        await pilot.press("h")
        await pilot.pause()
        assert _told(app) == ["No conversation in this run: only a session's turns hold thinking."]


async def test_a_step_key_on_a_locked_weight_says_it_is_locked(db: Path, tmp_path: Path) -> None:
    app = PPPApp(db, tmp_path / "config.toml")
    async with app.run_test(size=SIZE) as pilot:
        screen = await _open(app, pilot)
        await pilot.press("l")  # technical locked
        await pilot.pause()
        app.clear_notifications()
        before = screen.three_weights()
        await pilot.press("right_square_bracket")
        await pilot.pause()
        assert screen.three_weights() == before
        assert _told(app) == ["technical is locked (l cycles the lock)"]


async def test_a_step_the_lock_leaves_no_room_for_says_so(db: Path, tmp_path: Path) -> None:
    app = PPPApp(db, tmp_path / "config.toml")
    async with app.run_test(size=SIZE) as pilot:
        screen = await _open(app, pilot)
        await pilot.press("l", "l", "l")  # personalization locked
        await pilot.pause()
        app.clear_notifications()
        # Technical takes what proactivity gives up, and no more.
        for _ in range(10):
            await pilot.press("right_square_bracket")
            await pilot.pause()
        technical, proactivity, personalization = screen.three_weights()
        assert proactivity == 0.0 and personalization == pytest.approx(0.3)
        assert technical == pytest.approx(0.85)
        assert _told(app) == [
            "technical can go no further that way while personalization is locked"
            " (l cycles the lock)"
        ]
