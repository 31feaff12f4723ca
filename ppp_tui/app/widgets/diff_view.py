"""Agents' diffs of a file, drawn one screen row at a time, with the file's syntax
coloured and the diff's added and removed lines tinted.

A session may hold thousands of edits: the rows are the diffs' lines split once (no
styling), and a row is coloured when it scrolls into sight. Syntax comes from the
Pygments lexer of the file's name, line by line (a string or comment that spans lines is
coloured by each line's own tokens); a file Pygments does not know keeps the diff's
colours alone. Every line is shown through `safe_text` first: a control character or an
escape sequence in a diff is a visible stand-in, never sent to the terminal.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import PurePosixPath

from pygments.lexer import Lexer
from pygments.lexers import get_all_lexers, get_lexer_by_name
from pygments.token import _TokenType
from pygments.util import ClassNotFound
from rich.cells import cell_len
from rich.segment import Segment
from rich.style import Style
from rich.syntax import Syntax, SyntaxTheme
from textual import events
from textual.geometry import Size
from textual.scroll_view import ScrollView
from textual.strip import Strip

from ...core.model import Edit
from ..text import literal

LINE_CHARS = 2000  # a longer line (a minified file, an encoded blob) is cut
TAB_SIZE = 4
MARGIN = 1  # cells left of every row
CACHED_ROWS = 512  # rows kept drawn: scrolling back and forth colours nothing again
# What each row is; its component class is "diff-view--KIND".
AGENT, FILE, HUNK, ADDED, REMOVED, CONTEXT, NOTE = (
    "agent",
    "file",
    "hunk",
    "added",
    "removed",
    "context",
    "note",
)
CODE = frozenset({ADDED, REMOVED, CONTEXT})  # rows holding a line of the file
_GLOB = re.compile(r"[*?\[]")  # a file pattern's wildcards


@dataclass(frozen=True, slots=True)
class Row:
    """One row of the view: what it is, its raw text (data: made safe when drawn), and
    the file whose syntax colours it."""

    kind: str
    text: str
    path: str = ""


def diff_rows(edits: Iterable[tuple[str, Edit]]) -> list[Row]:
    """The rows of agents' edits' diffs, in order: each a `# AGENT, turn N` row (as
    `ppp-tui diff` writes it), then the diff's own lines."""
    rows: list[Row] = []
    add = rows.append
    for agent, edit in edits:
        path = edit.path
        add(Row(AGENT, f"# {agent}, turn {edit.turn}"))
        lines = edit.diff.split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        headers = 0  # the `--- a/PATH` and `+++ b/PATH` lines that start a diff
        for line in lines:
            if headers < 2 and line.startswith(("--- ", "+++ ")):
                headers += 1
                add(Row(FILE, line))
                continue
            headers = 2
            first = line[:1]
            if first == "+":
                add(Row(ADDED, line, path))
            elif first == "-":
                add(Row(REMOVED, line, path))
            elif first == " ":
                add(Row(CONTEXT, line, path))
            elif line.startswith("@@"):
                add(Row(HUNK, line))
            else:
                add(Row(NOTE, line))
    return rows


def shown(text: str) -> str:
    """A raw line as the view shows it: controls as stand-ins, tabs as spaces, cut."""
    return literal(text[:LINE_CHARS]).expandtabs(TAB_SIZE)


def _text(row: Row) -> str:
    """A row's text as shown: a line of the file after its sign (tab stops count from
    the line's start, not the sign's)."""
    if row.kind in CODE:
        return row.text[:1] + shown(row.text[1:])
    return shown(row.text)


def _cells(row: Row) -> int:
    """How wide a row is shown, at most (for the horizontal scroll): most lines are
    ASCII, measured by their length and tabs without being drawn."""
    text = row.text[:LINE_CHARS]
    if text.isascii():  # a tab is at most TAB_SIZE cells; other controls' stand-ins one
        return len(text) + (TAB_SIZE - 1) * text.count("\t")
    return cell_len(_text(row))


def lexer_for(path: str) -> Lexer | None:
    """The Pygments lexer of a file's name: by its whole name (Makefile), else by its
    longest extension a lexer claims (`.d.ts` before `.ts`); None for neither."""
    name = PurePosixPath(path.replace("\\", "/")).name
    extensions, names = _lexer_names()
    alias = names.get(name)
    parts = name.split(".")
    for k in range(1, len(parts)):
        if alias is not None:
            break
        alias = extensions.get(".".join(parts[k:]))
    return _lexer(alias) if alias is not None else None


@lru_cache(maxsize=1)
def _lexer_names() -> tuple[dict[str, str], dict[str, str]]:
    """(extension: lexer alias, whole file name: lexer alias) from Pygments' list of
    lexers; the first lexer to claim one has it. Pygments' own lookup by file name
    compiles a pattern for every one of its ~1,000 file patterns (half a second) and
    scans the installed packages for plugins; this is a dictionary lookup."""
    extensions: dict[str, str] = {}
    names: dict[str, str] = {}
    for _, aliases, patterns, _ in get_all_lexers(plugins=False):
        if not aliases:
            continue
        for pattern in patterns:
            if pattern.startswith("*.") and not _GLOB.search(pattern[2:]):
                extensions.setdefault(pattern[2:], aliases[0])
            elif not _GLOB.search(pattern):
                names.setdefault(pattern, aliases[0])
    return extensions, names


@lru_cache(maxsize=64)
def _lexer(alias: str) -> Lexer | None:
    try:
        return get_lexer_by_name(alias, stripnl=False, ensurenl=False)
    except ClassNotFound:
        return None


class DiffView(ScrollView, can_focus=True):
    """Rows of `diff_rows`, drawn row by row: up/down and page keys scroll, left/right
    scroll a long line into sight."""

    COMPONENT_CLASSES = {
        f"diff-view--{kind}" for kind in (AGENT, FILE, HUNK, ADDED, REMOVED, CONTEXT, NOTE)
    } | {"diff-view--sign-added", "diff-view--sign-removed"}

    DEFAULT_CSS = """
    DiffView {
        height: 1fr;
        overflow-x: auto;
        overflow-y: scroll;
        &:focus { background-tint: $foreground 5%; }
    }
    DiffView > .diff-view--agent { color: $warning; text-style: bold; }
    DiffView > .diff-view--file { text-style: bold; }
    DiffView > .diff-view--hunk { color: $accent; }
    DiffView > .diff-view--added { background: $success 18%; }
    DiffView > .diff-view--removed { background: $error 18%; }
    DiffView > .diff-view--sign-added { color: $success; text-style: bold; }
    DiffView > .diff-view--sign-removed { color: $error; text-style: bold; }
    DiffView > .diff-view--note { color: $text-muted; text-style: italic; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.rows: list[Row] = []
        self._drawn: dict[int, list[Segment]] = {}  # row index: its segments, unclipped
        self._syntax_theme: SyntaxTheme = Syntax.get_theme("monokai")
        self._theme_dark: bool | None = None
        self._token_styles: dict[_TokenType, Style] = {}

    def show(self, rows: Sequence[Row]) -> None:
        """Show `rows` from the top."""
        self.rows = list(rows)
        self._drawn.clear()
        longest = max(map(_cells, self.rows), default=0)
        self.virtual_size = Size(longest + MARGIN + 1, len(self.rows))
        self.scroll_to(0, 0, animate=False, immediate=True)
        self.refresh()

    def on_resize(self, event: events.Resize) -> None:
        self.refresh()

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._drawn.clear()  # the theme's colours changed

    def _token_style(self, token: _TokenType) -> Style:
        """A token's colour in the syntax theme that suits the app's theme (light or
        dark); only its colour: the row's tint stays the background."""
        style = self._token_styles.get(token)
        if style is None:
            found = self._syntax_theme.get_style_for_token(token)
            style = Style(color=found.color, bold=found.bold, italic=found.italic)
            self._token_styles[token] = style
        return style

    def _segments(self, index: int) -> list[Segment]:
        """One row's segments, coloured (kept for the next draw)."""
        dark = self.app.current_theme.dark
        if dark != self._theme_dark:
            self._syntax_theme = Syntax.get_theme("monokai" if dark else "default")
            self._theme_dark = dark
            self._token_styles.clear()
            self._drawn.clear()
        drawn = self._drawn.get(index)
        if drawn is not None:
            return drawn
        row = self.rows[index]
        style = self.rich_style + self.get_component_rich_style(f"diff-view--{row.kind}")
        segments = [Segment(" " * MARGIN, style)]
        if row.kind in CODE:
            sign_style = style
            if row.kind != CONTEXT:  # the sign's colour on the row's tint
                sign = self.get_component_rich_style(f"diff-view--sign-{row.kind}")
                sign_style += Style(color=sign.color, bold=sign.bold)
            segments.append(Segment(row.text[:1], sign_style))
            segments += self._code(row, style)
        else:
            segments.append(Segment(shown(row.text), style))
        if len(self._drawn) >= CACHED_ROWS:
            self._drawn.clear()
        self._drawn[index] = segments
        return segments

    def _code(self, row: Row, style: Style) -> list[Segment]:
        """A line of the file (after the diff's sign), its syntax coloured."""
        text = shown(row.text[1:])
        lexer = lexer_for(row.path) if row.path else None
        if lexer is None or not text.strip():
            return [Segment(text, style)]
        return [
            Segment(value, style + self._token_style(token))
            for token, value in lexer.get_tokens(text)
            if value
        ]

    def render_line(self, y: int) -> Strip:
        width = self.size.width
        base = self.rich_style
        index = int(self.scroll_offset.y) + y
        if index >= len(self.rows):
            return Strip.blank(width, base)
        segments = self._segments(index)
        fill = segments[0].style or base  # the row's tint runs to the right edge
        x = int(self.scroll_offset.x)
        strip = Strip(segments)
        return strip.crop(x, x + width).extend_cell_length(width, fill)

    def plain(self) -> list[str]:
        """Every row as the view shows its text (without colours)."""
        return [" " * MARGIN + _text(row) for row in self.rows]
