"""A run of imported sessions in the app: the conversation as the user lived it, the
questions asked through a tool, unscored agents, and rating an agent by hand."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import opened, session_run_db
from hypothesis import given
from hypothesis import strategies as st
from rich.cells import cell_len
from run_opened import agent_opened, highlight_agent, open_first_run
from textual.pilot import Pilot
from textual.widgets import DataTable, Input, Label, Static, TabbedContent

from ppp_tui.app.app import PPPApp
from ppp_tui.app.screens.help import key_lines
from ppp_tui.app.screens.rate import RateScreen, parse_rating
from ppp_tui.app.screens.run import RunScreen
from ppp_tui.app.widgets.conversation import STEP_LINES, YOU, Conversation, cut, wrap
from ppp_tui.core.model import HAND, UNSCORED
from ppp_tui.core.sessions.model import (
    Ask,
    Session,
    SessionTurn,
    Step,
    StepKind,
    TestRun,
    Tool,
)
from ppp_tui.storage.files import Record
from ppp_tui.storage.store import Store

SMALL = (80, 24)
LONG_ANSWER = "keep the old parser until the new one passes every fixture we have"
LONG_TOOL = "Bash: " + "pytest -q tests/test_parser.py --maxfail=1 " * 5
THOUGHT = "The user wants speed; maybe I can skip the tests"


def _sessions() -> list[Session]:
    first = SessionTurn(
        prompt="Fix the [bold]parser[/] \x1b[31mnow\x1b[0m",
        timestamp="2026-01-05T10:00:00Z",
        steps=[
            Step(StepKind.THINKING, THOUGHT),
            Step(StepKind.TEXT, "Looking at the parser. Does it keep state?"),
            Step(StepKind.TOOL, "Bash: pytest -q"),
            Step(StepKind.TOOL, LONG_TOOL),
            Step(StepKind.ASK, "Which parser?"),
            Step(StepKind.ASK, "Keep the old API?"),
            Step(StepKind.TEXT, "The parser is done. Should I also update the docs?"),
        ],
        asks=[
            Ask("Which parser?", ["lark", "hand-written"], answer="lark", seconds=22.0),
            Ask("Keep the old API?", ["yes", "no"], dismissed=True, seconds=5.0),
        ],
    )
    second = SessionTurn(
        prompt="and the error messages?",
        timestamp="2026-01-05T10:05:00Z",
        steps=[
            Step(StepKind.TEXT, "\n".join(f"line {i}" for i in range(1, STEP_LINES + 8))),
            Step(StepKind.ASK, "How should errors read?"),
        ],
        asks=[Ask("How should errors read?", ["short", "long"], answer=LONG_ANSWER, seconds=200)],
    )
    claude = Session(
        Tool.CLAUDE_CODE,
        "c1",
        "/sessions/c1.jsonl",
        started="2026-01-05T10:00:00Z",
        models=["claude-opus-4-5"],
        turns=[first, second],
    )
    codex = Session(
        Tool.CODEX,
        "x1",
        "/sessions/x1.jsonl",
        started="2026-01-05T10:01:00Z",
        models=["gpt-5-codex"],
        turns=[SessionTurn("Fix the parser", steps=[Step(StepKind.TEXT, "Done.")])],
        tests=TestRun(41, 2, "pytest: 41 passed, 2 failed"),
    )
    return [claude, codex]


@pytest.fixture
def sessions_db(tmp_path: Path) -> Path:
    """One run of two sessions: claude-code (unscored, asks) and codex (tests ran)."""
    return session_run_db(tmp_path / "sessions.db", _sessions())


_open = open_first_run


def _agent_row(screen: RunScreen, name: str) -> dict[str, str]:
    """An agent's row, by column (the columns shown depend on the width)."""
    table = screen.query_one("#agents", DataTable)
    labels = [str(column.label) for column in table.ordered_columns]
    for y in range(table.row_count):
        row = dict(zip(labels, map(str, table.get_row_at(y)), strict=True))
        if row["agent"] == name:
            return row
    raise LookupError(name)


_highlight = highlight_agent


def _rows(screen: RunScreen) -> list[str]:
    return list(screen.query_one(Conversation).plain())


async def test_a_session_opens_on_its_conversation(sessions_db: Path, tmp_path: Path) -> None:
    async with agent_opened(sessions_db, tmp_path, SMALL, "claude-code") as (_, pilot, screen):
        tabs = screen.query_one("#detail", TabbedContent)
        assert tabs.active == "tab-turns"
        assert str(tabs.get_tab("tab-turns").label) == "Conversation"
        rows = _rows(screen)
        text = "\n".join(rows)
        # The prompt, marked as the user's, with markup and escapes shown as they are.
        assert f" {YOU}Fix the [bold]parser[/] ␛[31mnow␛[0m" in rows
        assert "\x1b" not in text
        # Text, then each tool call on one dim row, long ones cut to the width.
        assert "   Looking at the parser. Does it keep state?" in rows
        assert "   ▸ Bash: pytest -q" in rows
        long_tool = next(row for row in rows if row.startswith("   ▸ Bash: pytest -q tests"))
        assert long_tool.endswith("…") and cell_len(long_tool) <= 79
        # Each ask: its options, the one picked marked, and what became of it.
        at = rows.index("   ? Which parser?")
        assert rows[at + 1 : at + 4] == ["     ● lark", "     ○ hand-written", "     → lark · 22 s"]
        at = rows.index("   ? Keep the old API?")
        assert rows[at + 1 : at + 4] == ["     ○ yes", "     ○ no", "     → dismissed · 5 s"]
        # An answer in the user's own words marks no option.
        at = rows.index("   ? How should errors read?")
        assert rows[at + 1 : at + 3] == ["     ○ short", "     ○ long"]
        assert rows[at + 3].startswith("     → keep the old parser")
        assert f"{LONG_ANSWER} · 3 min 20 s" in " ".join(row.strip() for row in rows[at + 3 :])
        # A long step shows its first lines and how many more there are.
        assert f"   line {STEP_LINES}" in rows and f"   line {STEP_LINES + 1}" not in rows
        assert "   … (7 more lines)" in rows
        # Thinking is hidden, and says so.
        assert THOUGHT not in text and "thinking (not addressed to you)" not in text
        assert rows[0] == " 1 thinking step hidden: h shows them"
        await pilot.press("h")
        await pilot.pause()
        rows = _rows(screen)
        at = rows.index("   thinking (not addressed to you):")
        assert rows[at + 1] == f"     {THOUGHT}"
        conversation = screen.query_one(Conversation)
        assert conversation.get_component_rich_style("conversation--thinking").italic
        thought = next(line for line in conversation.lines if line.text == THOUGHT)
        assert thought.style == "thinking"
        await pilot.press("h")
        await pilot.pause()
        assert THOUGHT not in "\n".join(_rows(screen))


async def test_the_conversation_is_drawn_row_by_row(sessions_db: Path, tmp_path: Path) -> None:
    async with opened(sessions_db, tmp_path, (60, 40)) as (app, pilot):
        screen = await _open(app, pilot)
        await _highlight(screen, pilot, "claude-code")
        conversation = screen.query_one(Conversation)
        assert conversation.size.height > 5
        height = min(conversation.size.height, len(conversation.rows))
        shown = [conversation.render_line(y).text.rstrip() for y in range(height)]
        assert shown == [row.rstrip() for row in conversation.plain()][:height]
        # Wider: the same text in fewer rows, the top line kept.
        narrow = len(conversation.rows)
        await pilot.resize_terminal(120, 40)
        await pilot.pause()
        assert len(conversation.rows) < narrow


async def test_questions_show_how_they_were_asked_and_the_answer(
    sessions_db: Path, tmp_path: Path
) -> None:
    async with agent_opened(sessions_db, tmp_path, SMALL, "claude-code") as (_, _, screen):
        table = screen.query_one("#questions", DataTable)
        labels = [str(column.label) for column in table.ordered_columns]
        assert labels == ["turn", "effort", "label", "asked", "answer", "question"]
        rows = {
            str(table.get_row_at(y)[-1]): [str(v) for v in table.get_row_at(y)]
            for y in range(table.row_count)
        }
        assert rows["Which parser?"][2:5] == ["classified", "tool", "lark · 22 s"]
        assert rows["Keep the old API?"][3:5] == ["tool", "dismissed · 5 s"]
        # A long answer is cut; the time it took stays.
        assert rows["How should errors read?"][4] == "keep the… · 3 min 20 s"
        # A question written in the text: found by extraction, no answer of its own.
        assert rows["Should I also update the docs?"][2:5] == ["classified", "text", "—"]
        # Turn, effort, label, asked and answer leave the question room at 80 columns.
        widths = [column.get_render_width(table) for column in table.ordered_columns]
        assert sum(widths[:5]) <= 80 - 22


async def test_an_unscored_agent_shows_no_number(sessions_db: Path, tmp_path: Path) -> None:
    async with opened(sessions_db, tmp_path, SMALL) as (app, pilot):
        screen = await _open(app, pilot)
        claude = _agent_row(screen, "claude-code")
        assert claude["technical"] == "—" and "unscored" in claude["flags"]
        codex = _agent_row(screen, "codex")
        assert codex["technical"] == f"{41 / 43:.3f}" and "unscored" not in codex["flags"]
        await _highlight(screen, pilot, "claude-code")
        facts = str(screen.query_one("#agent-facts", Static).render())
        assert facts.startswith("technical — (unscored) · model claude-opus-4-5 · session c1")
        await _highlight(screen, pilot, "codex")
        facts = str(screen.query_one("#agent-facts", Static).render())
        assert facts.startswith(f"technical {41 / 43:.3f} (pytest: 41 passed, 2 failed)")


async def _rate(app: PPPApp, pilot: Pilot[None], typed: str) -> RateScreen:
    await pilot.press("e")
    await pilot.pause()
    modal = app.screen
    assert isinstance(modal, RateScreen)
    modal.query_one(Input).value = typed
    await pilot.press("enter")
    await pilot.pause()
    return modal


async def test_rating_with_stars_stores_a_hand_score(sessions_db: Path, tmp_path: Path) -> None:
    async with agent_opened(sessions_db, tmp_path, SMALL, "claude-code") as (app, pilot, screen):
        await _rate(app, pilot, "4")
        assert app.screen is screen
        await app.workers.wait_for_complete()
        await pilot.pause()
        claude = _agent_row(screen, "claude-code")
        assert claude["technical"] == "0.750" and "unscored" not in claude["flags"]
        facts = str(screen.query_one("#agent-facts", Static).render())
        assert facts.startswith("technical 0.750 (hand)")
        # The whole-database arrays (the runs list, the figures) hold it too.
        assert app.workspace is not None and app.workspace.scores is not None
        arrays = app.workspace.scores.arrays
        slot = list(arrays.names[0]).index("claude-code")
        assert arrays.technical[0, slot] == pytest.approx(0.75)
        assert any("technical 0.75 (your rating)" in str(n.message) for n in app._notifications)
    with Store.open(sessions_db) as store:
        agent = store.get_run("session-run").agent("claude-code")
    assert agent is not None
    assert agent.technical == pytest.approx(0.75) and agent.technical_source == HAND


async def test_a_bad_rating_shows_an_error_and_stores_nothing(
    sessions_db: Path, tmp_path: Path
) -> None:
    async with agent_opened(sessions_db, tmp_path, SMALL, "claude-code") as (app, pilot, screen):
        for typed, error in (
            ("7", "a score is from 0 to 1"),
            ("good", "“good” is not a score"),
            ("1", "type 1* or 1.0"),
        ):
            modal = await _rate(app, pilot, typed)
            assert app.screen is modal
            message = modal.query_one("#rate-message", Label)
            assert message.has_class("-error") and error in str(message.render())
            await pilot.press("escape")
            await pilot.pause()
            assert not isinstance(app.screen, RateScreen)
        assert app.screen is screen
        assert _agent_row(screen, "claude-code")["technical"] == "—"
    with Store.open(sessions_db) as store:
        agent = store.get_run("session-run").agent("claude-code")
    assert agent is not None and agent.technical_source == UNSCORED


async def test_a_failed_agent_cannot_be_rated_above_zero(tmp_path: Path) -> None:
    db = tmp_path / "failed.db"
    raw = {
        "id": "sk",
        "agents": [
            {"name": "claude", "technical_score": 0.4},
            {"name": "gemini", "technical_score": 0.0, "failure": "empty output"},
        ],
    }
    with Store.open(db, create=True) as store:
        store.import_records([Record("t", None, "$", json.loads(json.dumps(raw)))])
    async with opened(db, tmp_path, SMALL) as (app, pilot):
        screen = await _open(app, pilot)
        # Not a session run: the turns tab as before, no facts line.
        assert screen.query_one("#detail", TabbedContent).active == "tab-questions"
        assert not screen.query_one("#agent-facts").display
        # No thinking to show: its key is not in the footer (pressed, it says why); any
        # agent can be rated.
        active = [binding for _, binding, _, _ in app.active_bindings.values()]
        assert "run.rate" in {binding.id for binding in active}
        assert "run.thinking" not in {binding.id for binding in active if binding.show}
        await _highlight(screen, pilot, "gemini")
        await _rate(app, pilot, "0.5")
        await app.workers.wait_for_complete()
        await pilot.pause()
        toast = next(n for n in app._notifications if n.title == "Rating not saved")
        assert "gemini failed at this run" in str(toast.message)
        assert "\n" not in str(toast.message)
    with Store.open(db) as store:
        agent = store.get_run("sk").agent("gemini")
    assert agent is not None and agent.technical == 0.0 and agent.technical_source is None


async def test_the_help_lists_the_new_keys(sessions_db: Path, tmp_path: Path) -> None:
    async with opened(sessions_db, tmp_path, SMALL) as (app, pilot):
        await _open(app, pilot)
        keys = dict(key_lines(app))
        assert keys["h"].startswith("Show or hide the agent's thinking")
        assert keys["e"].startswith("Rate the highlighted agent's technical quality")
        footer = {binding.id for _, binding, _, _ in app.active_bindings.values()}
        assert {"run.thinking", "run.rate"} <= footer


def test_ratings_read_as_scores_or_stars() -> None:
    assert parse_rating("0.8") == pytest.approx(0.8)
    assert parse_rating(" 0 ") == 0.0
    assert parse_rating("1.0") == 1.0
    assert [parse_rating(f"{n}") for n in (2, 3, 4, 5)] == [0.25, 0.5, 0.75, 1.0]
    assert parse_rating("1*") == 0.0 and parse_rating("★★★") == 0.5
    assert parse_rating("4 stars") == 0.75
    for bad in ("", "1", "6", "-0.1", "1.5", "nan", "inf", "0.5*"):
        with pytest.raises(ValueError):
            parse_rating(bad)


@given(st.text(alphabet="ab 界é", max_size=80), st.integers(min_value=2, max_value=30))
def test_wrapped_rows_fit_and_keep_every_character(text: str, width: int) -> None:
    rows = wrap(text, width)
    assert all(cell_len(row) <= width for row in rows)
    assert "".join(rows).replace(" ", "") == text.replace(" ", "")
    shown = cut(text, width)
    assert cell_len(shown) <= width
    assert shown == text or shown.endswith("…")
