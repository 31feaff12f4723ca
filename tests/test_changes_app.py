"""A run's Changes tab in the app: its agents' changed files side by side and the diffs
of the file and agent under the cursor (app/widgets/changes.py, diff_view.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from helpers import HOSTILE_LINE, HOSTILE_PATH, UNSAFE, changes_db, opened
from rich.cells import cell_len
from rich.segment import Segment
from run_opened import open_first_run
from textual.pilot import Pilot
from textual.widgets import Static, Tab, TabbedContent
from transcripts import TASK

from ppp_tui.app.app import PPPApp
from ppp_tui.app.screens.help import key_lines
from ppp_tui.app.screens.run import RunScreen
from ppp_tui.app.widgets.changes import ChangesPanel
from ppp_tui.app.widgets.diff_view import DiffView, lexer_for
from ppp_tui.app.widgets.files_table import PATH_CELLS, FilesTable
from ppp_tui.core.sessions.changes import EditKind, FileChange, Piece, diff_edit
from ppp_tui.core.sessions.grouping import agent_names, session_run
from ppp_tui.core.sessions.model import Session, SessionTurn, Step, StepKind, Tool
from ppp_tui.safe_text import literal
from ppp_tui.storage.files import ParsedRecord
from ppp_tui.storage.store import Store

M = "\u2212"  # the minus sign before the lines removed


@pytest.fixture
def edits_db(tmp_path: Path) -> Path:
    return changes_db(tmp_path / "changes.db")


async def _changes(
    db: Path, tmp_path: Path, pilot: Pilot[None], app: PPPApp
) -> tuple[RunScreen, ChangesPanel]:
    """Open the only run and its Changes tab, with the files table focused."""
    screen = await open_first_run(app, pilot)
    screen.query_one("#detail", TabbedContent).active = "tab-changes"
    await pilot.pause()
    screen.query_one(FilesTable).focus()
    await pilot.pause()
    return screen, screen.query_one(ChangesPanel)


def _table(panel: ChangesPanel) -> list[list[str]]:
    return panel.query_one(FilesTable).plain()


def _diff(panel: ChangesPanel) -> list[str]:
    return [row.strip() for row in panel.query_one(DiffView).plain()]


def _heading(panel: ChangesPanel) -> str:
    return str(panel.query_one("#change-heading", Static).render())


async def test_each_agents_changed_files_are_side_by_side(edits_db: Path, tmp_path: Path) -> None:
    async with opened(edits_db, tmp_path, (120, 40)) as (app, pilot):
        screen, panel = await _changes(edits_db, tmp_path, pilot, app)
        tabs = [str(tab.label) for tab in screen.query("#detail Tab").results(Tab)]
        assert tabs[:2] == ["Conversation", "Changes"]
        # A row per file by path, a column per agent: gemini-cli changed nothing, codex
        # left app/cli.py alone and claude-code the notes.
        assert _table(panel) == [
            ["file", "claude-code", "codex", "gemini-cli"],
            ["app/cli.py", f"+6 {M}0", "—", "—"],
            ["app/export.py", f"+4 {M}2", f"+3 {M}1", "—"],
            [literal(HOSTILE_PATH, True), "—", f"+1 {M}0", "—"],
        ]
        # On the path: every agent's edits of the file, in the run's order.
        assert _heading(panel).startswith(f"app/cli.py · 1 agent, claude-code +6 {M}0")
        assert _diff(panel) == [
            "# claude-code, turn 1",
            "--- a/app/cli.py",
            "+++ b/app/cli.py",
            "@@ -0,0 +1,6 @@",
            "+import click",
            "+",
            "+",
            "+@click.command()",
            "+def main():",
            "+    pass",
        ]


async def test_the_cursor_picks_the_file_and_the_agent(edits_db: Path, tmp_path: Path) -> None:
    async with opened(edits_db, tmp_path, (120, 40)) as (app, pilot):
        _, panel = await _changes(edits_db, tmp_path, pilot, app)
        await pilot.press("down")  # app/export.py, every agent
        diff = _diff(panel)
        assert [row for row in diff if row.startswith("#")] == [
            "# claude-code, turn 1",
            "# claude-code, turn 2",
            "# codex, turn 1",
        ]
        assert _heading(panel).startswith(
            f"app/export.py · 2 agents, claude-code +4 {M}2, codex +3 {M}1"
        )
        await pilot.press("right", "right")  # codex's edit alone
        assert panel.shown == ("codex", "app/export.py")
        assert _heading(panel).startswith(f"app/export.py · codex: 1 edit +3 {M}1")
        assert _diff(panel)[:4] == [
            "# codex, turn 1",
            "--- a/app/export.py",
            "+++ b/app/export.py",
            "@@ -1,5 +1,7 @@",
        ]
        assert "+        return json.dumps(rows)" in _diff(panel)
        await pilot.press("up")  # a file codex did not touch
        assert _heading(panel).startswith("app/cli.py · codex: not changed")
        assert _diff(panel) == ["codex did not change app/cli.py."]
        await pilot.press("right")  # gemini-cli: no edits at all
        assert _diff(panel) == ["gemini-cli did not change app/cli.py."]


async def test_a_click_on_a_cell_shows_that_agents_diffs(edits_db: Path, tmp_path: Path) -> None:
    async with opened(edits_db, tmp_path, (120, 40)) as (app, pilot):
        _, panel = await _changes(edits_db, tmp_path, pilot, app)
        table = panel.query_one(FilesTable)
        # In claude-code's column, on app/export.py's row (the header is the first).
        await pilot.click(table, offset=(table.starts[1] + 1, 2))
        await pilot.pause()
        assert panel.shown == ("claude-code", "app/export.py")
        assert [row for row in _diff(panel) if row.startswith("#")] == [
            "# claude-code, turn 1",
            "# claude-code, turn 2",
        ]


async def test_the_diff_scrolls_with_the_keys_and_the_panel_zooms(
    edits_db: Path, tmp_path: Path
) -> None:
    async with opened(edits_db, tmp_path, (80, 24)) as (app, pilot):
        screen, panel = await _changes(edits_db, tmp_path, pilot, app)
        await pilot.press("down")
        view = panel.query_one(DiffView)
        assert view.size.height < len(view.rows)  # more than fits at 80x24
        await pilot.press("tab")
        assert screen.focused is view
        await pilot.press("down", "down")
        assert view.scroll_offset.y == 2
        await pilot.press("end")
        assert view.scroll_offset.y == len(view.rows) - view.size.height
        await pilot.press("z")
        assert screen.maximized is panel
        assert _heading(panel).endswith("z: back")
        await pilot.press("z")
        assert screen.maximized is None
        await pilot.press("z", "escape")  # escape leaves the zoom, not the run
        assert screen.maximized is None and app.screen is screen
        assert _heading(panel).endswith("z: zoom")


async def test_files_sit_above_the_diff_at_80_columns_and_beside_it_when_wide(
    edits_db: Path, tmp_path: Path
) -> None:
    # The table is 71 cells wide with its scroll bar: beside the diff at 200 columns; at
    # 120 it would not fit half the width, and sits above.
    for size, wide, height in (((80, 24), False, 3), ((120, 40), False, 4), ((200, 50), True, 0)):
        app = PPPApp(edits_db, tmp_path / "config.toml")
        async with app.run_test(size=size) as pilot:
            _, panel = await _changes(edits_db, tmp_path, pilot, app)
            files = panel.query_one(FilesTable).region
            diff = panel.query_one(DiffView).region
            assert panel.has_class("-wide") is wide
            if wide:
                assert files.right <= diff.x and files.y == panel.region.y
                assert files.height == panel.region.height  # a long list has room
                assert files.width == panel.query_one(FilesTable).virtual_size.width + 2
            else:
                assert files.bottom < diff.y and diff.width == panel.region.width
                # The header and the files, at most half the tab: at 80x24 two files
                # show (the third scrolls), at 120x40 all three.
                assert files.height == height
            assert diff.height >= 2


async def test_hostile_paths_and_diff_text_are_shown_literally(
    edits_db: Path, tmp_path: Path
) -> None:
    async with opened(edits_db, tmp_path, (120, 40)) as (app, pilot):
        _, panel = await _changes(edits_db, tmp_path, pilot, app)
        await pilot.press("down", "down")  # the hostile path, every agent
        path = literal(HOSTILE_PATH, True)
        assert _heading(panel).startswith(f"{path} · 1 agent, codex +1 {M}0")
        assert f"+{literal(HOSTILE_LINE)}" in _diff(panel)
        assert f"--- a/{path}" in _diff(panel)
        # What reaches the screen: stand-ins for the controls, markup as brackets.
        await pilot.pause()
        view = panel.query_one(DiffView)
        drawn = [
            "".join(segment.text for segment in view.render_line(y))
            for y in range(view.size.height)
        ]
        table = panel.query_one(FilesTable)
        cells = ["".join(s.text for s in table.render_line(y)) for y in range(table.size.height)]
        shown = [*drawn, *cells, _heading(panel)]
        assert not any(UNSAFE.search(line) for line in shown)
        assert any("[red]boom[/red] ␛[2J␛]0;title␇ <U+202E>evil" in line for line in drawn)
        assert any("[b]evil[/b]␛]52;c;aGk=␇.md" in line for line in shown)
        assert table.plain()[3][0] == path


def _one_session_db(path: Path, tool: Tool, turn: SessionTurn, run_id: str) -> Path:
    """A database of one run: one session of `tool` in /w, of the one `turn`."""
    session = Session(tool, "s1", "/s/s1.jsonl", "2026-01-05T10:00:00Z", "/w")
    session.turns.append(turn)
    run = session_run([session], run_id, agent_names([session]), "key", None)
    with Store.open(path, create=True) as store:
        store.import_records([ParsedRecord("test", None, "$", None, parsed=run)])
    return path


def _big_db(path: Path, edits: int) -> Path:
    """One claude-code session editing one file `edits` times, each edit a few rows."""
    text = "".join(f"x_{n} = {n}\n" for n in range(40))
    turn = SessionTurn(TASK, "2026-01-05T10:00:00Z", [Step(StepKind.TEXT, "Done.")])
    for k in range(edits):
        new = text.replace(f"x_{k % 40} = ", f"x_{k % 40} = {k} + ", 1)
        made = diff_edit("/w/big.py", [Piece(text, new, 1, 1)])
        assert made is not None
        turn.edits.append(made)
        text = new
    return _one_session_db(path, Tool.CLAUDE_CODE, turn, "session-big")


async def test_only_the_rows_on_screen_are_drawn(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = _big_db(tmp_path / "big.db", 2000)
    coloured: list[int] = []
    segments = DiffView._segments

    def counting(view: DiffView, index: int) -> list[Segment]:
        if index not in view._drawn:
            coloured.append(index)
        return segments(view, index)

    monkeypatch.setattr(DiffView, "_segments", counting)
    async with opened(db, tmp_path, (100, 40)) as (app, pilot):
        _, panel = await _changes(db, tmp_path, pilot, app)
        view = panel.query_one(DiffView)
        assert len(view.rows) > 20_000  # 2,000 edits of about 11 rows each
        height = view.size.height
        assert 0 < len(coloured) <= height
        assert set(coloured) <= set(range(height))
        coloured.clear()
        view.scroll_end(animate=False, immediate=True)
        await pilot.pause()
        assert 0 < len(coloured) <= height
        assert min(coloured) >= len(view.rows) - height


async def test_code_is_coloured_by_its_language(edits_db: Path, tmp_path: Path) -> None:
    assert lexer_for("app/export.py") is not None and lexer_for("a/b.py") is lexer_for("x.py")
    assert lexer_for("notes/plain.unknown-extension") is None
    async with opened(edits_db, tmp_path, (120, 40)) as (app, pilot):
        _, panel = await _changes(edits_db, tmp_path, pilot, app)
        await pilot.press("down")
        view = panel.query_one(DiffView)
        texts = [row.text for row in view.rows]
        added = view._segments(texts.index("+def export(rows, as_json=False):"))
        removed = view._segments(texts.index("-def export(rows):"))
        context = view._segments(texts.index(" import json"))
        # The keyword and the name in their own colours, on the row's tint.
        colours: dict[str, Any] = {s.text: s.style.color for s in added if s.style}
        assert colours["def"] != colours["export"]
        tints = {s.style.bgcolor for s in added if s.style}
        assert len(tints) == 1 and tints != {s.style.bgcolor for s in removed if s.style}
        assert tints != {s.style.bgcolor for s in context if s.style}
        # The signs in the diff's colours.
        assert added[1].text == "+" and removed[1].text == "-"
        assert added[1].style is not None and removed[1].style is not None
        assert added[1].style.color != removed[1].style.color


async def test_a_run_without_edits_has_no_changes_tab(tmp_path: Path) -> None:
    session = Session(Tool.CODEX, "x1", "/s/x1.jsonl", "2026-01-05T10:00:00Z", "/w")
    session.turns.append(SessionTurn(TASK, None, [Step(StepKind.TEXT, "Nothing to change.")]))
    run = session_run([session], "session-none", agent_names([session]), "key", None)
    db = tmp_path / "none.db"
    with Store.open(db, create=True) as store:
        store.import_records([ParsedRecord("test", None, "$", None, parsed=run)])
    async with opened(db, tmp_path, (80, 24)) as (app, pilot):
        await pilot.pause()
        await pilot.press("enter")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, RunScreen)
        assert not screen.query("#tab-changes") and not screen.query(ChangesPanel)
        await pilot.press("z")  # no zoom to be had
        assert screen.maximized is None


async def test_the_help_lists_the_zoom_key(edits_db: Path, tmp_path: Path) -> None:
    async with opened(edits_db, tmp_path, (80, 24)) as (app, pilot):
        await pilot.pause()
        lines = list(key_lines(app))
        part = [title for keys, title in lines if not keys]
        run = lines[
            lines.index(("", "A run")) + 1 : lines.index(("", part[part.index("A run") + 1]))
        ]
        assert any(keys == "z" and "Changes tab" in text for keys, text in run)


def _many_files_db(path: Path, files: int) -> Path:
    """One codex session writing `files` new files (one edit each)."""
    turn = SessionTurn(TASK, "2026-01-05T10:00:00Z", [Step(StepKind.TEXT, "Done.")])
    for k in range(files):
        made = diff_edit(f"/w/pkg/module_{k:05d}.py", [Piece("", f"x = {k}\n")], EditKind.CREATE)
        assert made is not None
        turn.edits.append(made)
    return _one_session_db(path, Tool.CODEX, turn, "session-many")


async def test_a_long_list_of_files_is_drawn_row_by_row(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = _many_files_db(tmp_path / "many.db", 3000)
    drawn: list[int] = []
    cells = FilesTable._cells

    def counting(table: FilesTable, row: int) -> list[list[tuple[str, str]]]:
        drawn.append(row)
        return cells(table, row)

    monkeypatch.setattr(FilesTable, "_cells", counting)
    async with opened(db, tmp_path, (80, 24)) as (app, pilot):
        _, panel = await _changes(db, tmp_path, pilot, app)
        table = panel.query_one(FilesTable)
        rows = table.size.height - 1  # under the header
        assert len(table.paths) == 3000 and rows >= 1
        assert drawn and set(drawn) <= set(range(rows))  # the first screenful only
        drawn.clear()
        await pilot.press("end")  # the last file, in sight, its diff shown
        await pilot.pause()
        assert panel.shown == ("\x00all", "pkg/module_02999.py")
        assert table.scroll_offset.y == 3000 - rows
        assert drawn and set(drawn) <= set(range(3000 - rows, 3000))
        assert _diff(panel)[-1] == "+x = 2999"
        await pilot.press("pageup")
        assert table.row == 3000 - 1 - max(table.size.height - 2, 1)
        await pilot.press("home")
        assert (table.row, table.scroll_offset.y) == (0, 0)
        await pilot.press("z", *["down"] * 12)  # the whole screen: more rows in sight
        await pilot.press("z")  # and back: the cursor's row stays in sight
        await pilot.pause()
        top = int(table.scroll_offset.y)
        assert table.row == 12 and top <= 12 < top + table.size.height - 1


def test_a_long_path_is_cut_to_its_column_and_an_agents_counts_fit_theirs() -> None:
    long = "src/" + "deep/" * 30 + "module.py"
    changes = {
        ("codex", long): FileChange(long, 1234, 5),
        ("codex", "a.py"): FileChange("a.py", 1, 0),
    }
    table = FilesTable(["codex", "claude-code"], ["a.py", long], changes)
    assert table.widths == [PATH_CELLS, len(f"+1234 {M}5"), len("claude-code")]
    header, short, cut = table.plain()
    assert header == ["file", "codex", "claude-code"]
    assert short == ["a.py", f"+1 {M}0", "—"]
    assert cut[0] == long[: PATH_CELLS - 1] + "…" and cut[1:] == [f"+1234 {M}5", "—"]


async def test_a_long_line_of_tabs_and_wide_characters_scrolls_into_sight(
    tmp_path: Path,
) -> None:
    line = "\t\tname = '" + "漢字" * 40 + "'  # end"
    made = diff_edit("/w/wide.py", [Piece("", line + "\n")], EditKind.CREATE)
    assert made is not None
    turn = SessionTurn(TASK, "2026-01-05T10:00:00Z", [Step(StepKind.TEXT, "Done.")], edits=[made])
    session = Session(Tool.CODEX, "x1", "/s/x1.jsonl", "2026-01-05T10:00:00Z", "/w", turns=[turn])
    run = session_run([session], "session-wide", agent_names([session]), "key", None)
    db = tmp_path / "wide.db"
    with Store.open(db, create=True) as store:
        store.import_records([ParsedRecord("test", None, "$", None, parsed=run)])
    async with opened(db, tmp_path, (80, 24)) as (app, pilot):
        _, panel = await _changes(db, tmp_path, pilot, app)
        view = panel.query_one(DiffView)
        shown = view.plain()[-1]
        assert shown == " +" + " " * 8 + "name = '" + "漢字" * 40 + "'  # end"
        assert view.virtual_size.width >= cell_len(shown)
        assert len(view.rows) <= view.size.height  # every row in sight
        view.scroll_to(x=view.max_scroll_x, animate=False, immediate=True)
        await pilot.pause()
        drawn = ["".join(s.text for s in view.render_line(y)).rstrip() for y in range(5)]
        assert any(row.endswith("'  # end") for row in drawn)
