"""A run's screen, key by key: ctrl+c, tab, the keys that cannot act and say why, a
long step opened whole, and marking run after run."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import opened, session_run_db
from run_opened import agent_opened, highlight_agent, open_first_run
from textual.selection import Selection
from textual.strip import Strip
from textual.widgets import DataTable, Label, Static

from ppp_tui.app.app import PPPApp
from ppp_tui.app.screens.next_runs import next_marks, next_request
from ppp_tui.app.screens.quit import QuitScreen
from ppp_tui.app.screens.run import RunScreen
from ppp_tui.app.screens.runs import RunsScreen
from ppp_tui.app.screens.whole_text import WholeTextScreen
from ppp_tui.app.widgets.conversation import Conversation
from ppp_tui.app.widgets.fitted_table import Column, shown_columns
from ppp_tui.app.widgets.run_texts import AGENT_COLUMNS
from ppp_tui.app.widgets.table_rows import cursor_key
from ppp_tui.core.sessions.model import Ask, Session, SessionTurn, Step, StepKind, Tool
from ppp_tui.storage.files import Record
from ppp_tui.storage.store import Store

SMALL = (80, 24)
SIZE = (140, 45)
THOUGHT = "Maybe the tests can wait"
LONG_TEXT = "\n".join(f"step line {i} [bold]x[/] \x1b[31mred" for i in range(1, 31))
LONG_TOOL = "Bash: cat <<EOF > notes.txt\n" + "a note\n" * 5 + "EOF"
LONG_ANSWER = "keep the old parser until the new one passes every fixture we have"


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
                steps=[
                    Step(StepKind.THINKING, THOUGHT),
                    Step(StepKind.TEXT, "Done."),
                    Step(StepKind.TEXT, LONG_TEXT),
                    Step(StepKind.TOOL, LONG_TOOL),
                    Step(StepKind.ASK, "How should errors read?"),
                ],
                asks=[Ask("How should errors read?", ["short", "long"], answer=LONG_ANSWER)],
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
    return session_run_db(tmp_path / "sessions.db", _sessions())


_open = open_first_run
_highlight = highlight_agent


def _told(app: PPPApp) -> list[str]:
    return [str(n.message) for n in app._notifications]


# -- ctrl+c ----------------------------------------------------------------------------


async def test_ctrl_c_quits_as_q_does_and_asks_about_unsaved_weights(
    db: Path, tmp_path: Path
) -> None:
    async with opened(db, tmp_path, SMALL) as (app, pilot):
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
    async with opened(db, tmp_path, SMALL) as (app, pilot):
        await _open(app, pilot)
        await pilot.press("ctrl+c")
        await pilot.pause()
        assert app._exit  # the app is ending


async def test_ctrl_c_with_text_selected_copies_it_and_stays(db: Path, tmp_path: Path) -> None:
    async with opened(db, tmp_path, SMALL) as (app, pilot):
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
    async with opened(sessions_db, tmp_path, SMALL) as (app, pilot):
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
    async with opened(db, tmp_path, SMALL) as (app, pilot):
        screen = await _open(app, pilot)
        await pilot.press("tab")
        assert screen.focused is screen.query_one("#questions", DataTable)


# -- keys that cannot act say why ------------------------------------------------------


async def test_h_says_when_an_agent_recorded_no_thinking(sessions_db: Path, tmp_path: Path) -> None:
    async with opened(sessions_db, tmp_path, SMALL) as (app, pilot):
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
    async with opened(db, tmp_path, SMALL) as (app, pilot):
        await _open(app, pilot)
        await pilot.press("h")
        await pilot.pause()
        assert _told(app) == ["No conversation in this run: only a session's turns hold thinking."]


async def test_a_step_key_on_a_locked_weight_says_it_is_locked(db: Path, tmp_path: Path) -> None:
    async with opened(db, tmp_path, SIZE) as (app, pilot):
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
    async with opened(db, tmp_path, SIZE) as (app, pilot):
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


# -- numbers shown whole ---------------------------------------------------------------


def _labels(table: DataTable[object]) -> list[str]:
    return [str(column.label) for column in table.ordered_columns]


def _cut_numbers(table: DataTable[object], numeric: set[str]) -> list[str]:
    """The columns of numbers that end beyond the table's width."""
    room, x, cut = table.scrollable_content_region.width, 0, []
    for column in table.ordered_columns:
        x += column.get_render_width(table)
        if x > room and str(column.label) in numeric:
            cut.append(str(column.label))
    return cut


def test_a_column_of_numbers_that_cannot_show_whole_is_left_out() -> None:
    columns = [Column("name"), Column("score", numeric=True), Column("note"), Column("n", True)]
    rows = [("alpha", "0.125", "fine", "7")]
    # name 7 + score 7 + note 6 + n 3 cells (padding included)
    assert shown_columns(columns, rows, 23) == [0, 1, 2, 3]
    assert shown_columns(columns, rows, 22) == [0, 1, 2]
    assert shown_columns(columns, rows, 13) == [0, 2]  # the text stays, cut or scrolled to
    assert shown_columns(columns, rows, 0) == [0, 2]


async def test_the_agents_gap_shows_whole_or_not_at_all(db: Path, tmp_path: Path) -> None:
    numeric = {column.label for column in AGENT_COLUMNS if column.numeric}
    async with opened(db, tmp_path, (200, 50)) as (app, pilot):
        screen = await _open(app, pilot)
        table = screen.query_one("#agents", DataTable)
        assert "gap" in _labels(table) and AGENT_COLUMNS[-1].label in _labels(table)
        assert not _cut_numbers(table, numeric)
        table.move_cursor(row=1)
        await pilot.pause()
        highlighted = cursor_key(table)
        await pilot.resize_terminal(80, 24)
        await pilot.pause()
        # The gap fits while the mark column is narrow ("selected") ...
        assert "gap" in _labels(table) and not _cut_numbers(table, numeric)
        table.move_cursor(row=0)
        await pilot.press("p")  # ... and not once it reads "★ selected"
        await pilot.pause()
        table.move_cursor(row=1)
        await pilot.pause()
        labels = _labels(table)
        assert "★ selected" in [str(value) for value in table.get_row_at(0)]
        assert "gap" not in labels and AGENT_COLUMNS[-1].label not in labels
        assert labels[:8] == [column.label for column in AGENT_COLUMNS[:8]]
        assert not _cut_numbers(table, numeric)
        assert cursor_key(table) == highlighted  # the same agent stays highlighted
        await pilot.resize_terminal(200, 50)
        await pilot.pause()
        assert "gap" in _labels(table) and cursor_key(table) == highlighted


async def test_the_tuning_panels_stage_figures_show_whole(db: Path, tmp_path: Path) -> None:
    from ppp_tui.app.screens.tuning import STAGE_COLUMNS, TuningScreen

    numeric = {column.label for column in STAGE_COLUMNS if column.numeric}
    async with opened(db, tmp_path, SMALL) as (app, pilot):
        await pilot.press("t")
        screen = app.screen
        assert isinstance(screen, TuningScreen)
        while screen.computing or screen.result is None:
            await app.workers.wait_for_complete()
            await pilot.pause(0.02)
        await pilot.pause()
        table = screen.query_one("#tuning-stages", DataTable)
        assert table.row_count and "agreement" not in _labels(table)
        assert not _cut_numbers(table, numeric)
        await pilot.resize_terminal(200, 50)
        await pilot.pause()
        assert "agreement" in _labels(table) and not _cut_numbers(table, numeric)


# -- marking run after run -------------------------------------------------------------


async def test_n_opens_the_next_run_to_mark_in_place_of_this_one(db: Path, tmp_path: Path) -> None:
    async with opened(db, tmp_path, SMALL) as (app, pilot):
        first = await _open(app, pilot)
        depth = len(app.screen_stack)
        assert app.workspace is not None
        request = next_request(app.workspace, None)
        assert request is not None
        expected = [s.run_id for s in next_marks(request).suggestions if s.run_id != first.run.id]
        assert len(expected) >= 2
        await pilot.press("n")
        await app.workers.wait_for_complete()
        await pilot.pause()
        second = app.screen
        assert isinstance(second, RunScreen) and second.run.id == expected[0]
        assert len(app.screen_stack) == depth  # in place: escape goes back to the list
        # Marked, it is no longer to mark: n goes on to the next.
        await pilot.press("p")
        await pilot.pause()
        await pilot.press("n")
        await app.workers.wait_for_complete()
        await pilot.pause()
        third = app.screen
        assert isinstance(third, RunScreen)
        assert third.run.id not in (first.run.id, second.run.id)
        await pilot.press("escape")
        assert isinstance(app.screen, RunsScreen)


async def test_n_says_when_no_run_is_left_to_mark(tmp_path: Path) -> None:
    db = tmp_path / "marked.db"
    runs = [
        {
            "id": f"run-{i}",
            "preferences": [],
            "preferred_agent": "a",
            "agents": [
                {"name": "a", "technical_score": 0.8, "trajectory": {"turns": []}},
                {"name": "b", "technical_score": 0.7, "trajectory": {"turns": []}},
            ],
        }
        for i in range(2)
    ]
    with Store.open(db, create=True) as store:
        store.import_records([Record("t", None, "$", raw) for raw in runs])
    async with opened(db, tmp_path, SMALL) as (app, pilot):
        screen = await _open(app, pilot)
        await pilot.press("n")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert app.screen is screen
        assert _told(app) == ["No unmarked runs: every run is marked."]


# -- a long step opened whole ----------------------------------------------------------


def _whole_rows(app: PPPApp) -> list[str]:
    screen = app.screen
    assert isinstance(screen, WholeTextScreen)
    return [row.strip() for row in screen.query_one(Conversation).plain()]


async def test_o_opens_the_first_cut_step_on_screen_whole(
    sessions_db: Path, tmp_path: Path
) -> None:
    async with agent_opened(sessions_db, tmp_path, SIZE, "claude-code") as (app, pilot, screen):
        rows = list(screen.query_one(Conversation).plain())
        assert "… (10 more lines)" in "\n".join(rows)  # shown cut
        await pilot.press("tab", "o")
        await pilot.pause()
        shown = _whole_rows(app)
        # Every line, as the data holds it: markup stays brackets, ESC is shown as ␛.
        assert shown == [f"step line {i} [bold]x[/] ␛[31mred" for i in range(1, 31)]
        title = str(app.screen.query_one("#whole-title", Label).render())
        assert title.startswith("turn 1 · the agent's text · 30 lines")
        await pilot.press("escape")
        assert app.screen is screen


async def test_a_click_opens_the_step_clicked_a_tool_call_folded_to_one_row(
    sessions_db: Path, tmp_path: Path
) -> None:
    async with agent_opened(sessions_db, tmp_path, SIZE, "claude-code") as (app, pilot, screen):
        conversation = screen.query_one(Conversation)
        y = next(i for i, row in enumerate(conversation.plain()) if "▸ Bash: cat" in row)
        await pilot.click(Conversation, offset=(10, y - int(conversation.scroll_offset.y)))
        await pilot.pause()
        assert _whole_rows(app) == LONG_TOOL.split("\n")


async def test_o_says_when_nothing_on_screen_is_cut(sessions_db: Path, tmp_path: Path) -> None:
    async with opened(sessions_db, tmp_path, SIZE) as (app, pilot):
        screen = await _open(app, pilot)
        await _highlight(screen, pilot, "codex")
        await pilot.press("tab", "o")
        await pilot.pause()
        assert app.screen is screen
        assert _told(app) == ["Every step on screen shows whole: nothing to open."]


async def test_a_megabyte_step_opens_drawing_only_the_rows_on_screen(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    text = "\n".join(f"{i} 漢字のテキスト wörds " * 40 for i in range(1200))  # about 1 MB
    session = Session(
        Tool.CLAUDE_CODE,
        "big",
        "/sessions/big.jsonl",
        turns=[SessionTurn("Read the log", steps=[Step(StepKind.TEXT, text)])],
    )
    db = session_run_db(tmp_path / "big.db", [session])
    drawn: list[int] = []
    render_line = Conversation.render_line

    def counted(self: Conversation, y: int) -> Strip:
        drawn.append(y)
        return render_line(self, y)

    monkeypatch.setattr(Conversation, "render_line", counted)
    async with opened(db, tmp_path, SMALL) as (app, pilot):
        await _open(app, pilot)
        await pilot.press("tab")
        await pilot.pause()
        drawn.clear()
        await pilot.press("o")
        await pilot.pause()
        view = app.screen.query_one(Conversation)
        assert len(view.rows) > 1200 * 4  # each line wrapped over several rows
        assert 0 < len(drawn) <= 4 * SMALL[1]  # a few frames of the rows on screen
        await pilot.press("end")
        await pilot.pause()
        bottom = view.render_line(view.size.height - 1).text.strip()
        assert bottom and bottom == view.rows[-1][1].strip()
        assert "".join(row for _, row, _ in view.rows[-12:]).startswith("1199 漢字")


# -- the answers take the width there is -----------------------------------------------


async def test_answers_take_the_width_of_the_screen(sessions_db: Path, tmp_path: Path) -> None:
    async with agent_opened(sessions_db, tmp_path, SMALL, "claude-code") as (_, pilot, screen):
        table = screen.query_one("#questions", DataTable)

        def answer() -> str:
            column = [str(c.label) for c in table.ordered_columns].index("answer")
            row = next(table.get_row_at(y) for y in range(table.row_count))
            return str(row[column])

        assert answer().startswith("keep the…")  # 80 columns: the question needs room
        await pilot.resize_terminal(150, 40)
        await pilot.pause()
        assert answer().startswith("keep the old parser until the new one")
        await pilot.resize_terminal(200, 50)
        await pilot.pause()
        assert answer().startswith(LONG_ANSWER)
