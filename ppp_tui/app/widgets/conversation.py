"""A session agent's conversation as the user lived it, in a view that draws only the
rows on screen.

Each turn is the prompt the person typed, then the agent's steps in order: its text,
each tool call folded to one dim line, each question put through its ask tool with the
options (the one picked marked) and what became of it. Thinking is never addressed to
the user: it is hidden unless asked for, and marked as such when shown. A long step
shows its first lines and how many more there are; `o` (or enter, or a click) opens a
cut step whole, in a view of its own (the first cut step on screen, marked in the
margin while the conversation has the focus).

A Static lays out every line of its text, about a quarter of a millisecond a line: a
session of a few hundred turns froze the screen for seconds. Here the lines are wrapped
once per width (plain string slicing) and a row is drawn when it scrolls into sight.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterable
from dataclasses import dataclass
from operator import attrgetter, itemgetter
from typing import ClassVar

from rich.cells import cell_len
from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.binding import Binding, BindingType
from textual.content import Content
from textual.geometry import Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.strip import Strip

from ...analysis.describe import answer_text
from ...core.model import AskedWith, Question, Trajectory
from ..text import literal

STEP_LINES = 20  # a step longer than this shows its first lines, then how many more
LINE_CHARS = 2000  # a longer line (a minified file, an encoded blob) is cut
# A longer line of wide characters is wrapped by slicing: textual's wrapping took a
# second for a megabyte of it (a step opened whole).
WIDE_CHARS = 512
TAB_SIZE = 4
MARGIN = 1  # cells left of every row
THINKING = "thinking (not addressed to you):"
YOU = "you › "  # the marker of the user's prompt
# The component classes rows are drawn in ("conversation--NAME").
STYLES = (
    "heading",
    "you",
    "prompt",
    "text",
    "tool",
    "ask",
    "option",
    "chosen",
    "answer",
    "dismissed",
    "thinking",
    "note",
)
FILLED = frozenset({"you", "prompt"})  # rows whose background runs to the right edge
# What a step opened whole is, by the style of its line.
KINDS = {
    "prompt": "your prompt",
    "text": "the agent's text",
    "tool": "a tool call",
    "thinking": "the agent's thinking",
    "ask": "a question",
    "answer": "an answer",
    "dismissed": "an answer",
}
MARK = "▌"  # in the margin of the step `o` opens


@dataclass(frozen=True, slots=True)
class Line:
    """A piece of the conversation: a marker, then text, each of its lines wrapped under
    the text (or, with `wrap` False, one line cut to one row with "…"). `style` and
    `marker_style` are names from STYLES; `turn` is the turn it belongs to (1-based);
    `whole`, the text of a step shown cut (a long text, a tool call on one row)."""

    text: str
    style: str
    marker: str = ""
    marker_style: str = ""
    indent: int = 0
    wrap: bool = True
    turn: int = 0
    whole: str = ""  # the step's whole text, when what is shown may be cut (raw data)


def _block(
    text: str, style: str, marker: str = "", marker_style: str = "", indent: int = 0, turn: int = 0
) -> list[Line]:
    """A step's text: its first STEP_LINES lines (then a note of how many more), each
    line of at most LINE_CHARS characters."""
    body = text.replace("\r\n", "\n").rstrip().lstrip("\n")
    if not body:
        return []
    rows = body.split("\n", STEP_LINES)
    more = rows.pop().count("\n") + 1 if len(rows) > STEP_LINES else 0
    long = max(map(len, rows)) > LINE_CHARS
    whole = body if more or long else ""
    if long:
        rows = [
            f"{row[:LINE_CHARS]} … ({len(row) - LINE_CHARS:,} more characters)"
            if len(row) > LINE_CHARS
            else row
            for row in rows
        ]
    shown = literal("\n".join(rows)).expandtabs(TAB_SIZE)
    lines = [Line(shown, style, marker, marker_style, indent, True, turn, whole)]
    if more:
        note = f"… ({more:,} more line{'s' if more > 1 else ''})"
        lines.append(Line(note, "note", " " * cell_len(marker), "", indent, True, turn, whole))
    return lines


def chosen_options(question: Question) -> set[str]:
    """The options the user picked: the answer itself, or the labels of a multi-select
    answer (joined by ", "); none for an answer in their own words."""
    answer = question.answer
    if answer is None or question.dismissed:
        return set()
    if answer in question.options:
        return {answer}
    joined = f", {answer}, "
    return {option for option in question.options if f", {option}, " in joined}


def _ask(text: str, question: Question | None, turn: int) -> list[Line]:
    """A question put through the ask tool, its options and what became of it."""
    lines = _block(text, "ask", "? ", "ask", 2, turn)
    if question is None:
        return lines
    picked = chosen_options(question)
    for option in question.options:
        style, marker = ("chosen", "● ") if option in picked else ("option", "○ ")
        lines.append(Line(literal(option, True), style, marker, style, 4, True, turn))
    style = "answer" if question.answer is not None and not question.dismissed else "dismissed"
    return lines + _block(answer_text(question), style, "→ ", style, 4, turn)


def conversation_lines(trajectory: Trajectory, thinking: bool = False) -> list[Line]:
    """The turns as the user lived them; thinking only if `thinking`."""
    asked: dict[int, list[Question]] = {}
    for question in trajectory.questions:
        if question.asked_with is AskedWith.TOOL and question.turn is not None:
            asked.setdefault(question.turn, []).append(question)
    lines: list[Line] = []
    hidden = 0
    for number, turn in enumerate(trajectory.turns, start=1):
        if lines:
            lines.append(Line("", "text", turn=number))
        heading = " · ".join(f for f in (f"turn {number}", literal(turn.timestamp, True)) if f)
        lines.append(Line(heading, "heading", turn=number))
        lines += _block(turn.prompt, "prompt", YOU, "you", 0, number)
        # The tool-asked questions of a turn come in the order of its ask steps.
        questions = iter(asked.get(number, ()))
        for kind, text in turn.steps:
            if kind == "tool":
                shown = literal(text, True)
                lines.append(Line(shown, "tool", "▸ ", "tool", 2, False, number, text))
            elif kind == "thinking":
                if not text.strip():
                    continue
                if not thinking:
                    hidden += 1
                else:
                    lines.append(Line(THINKING, "thinking", indent=2, turn=number))
                    lines += _block(text, "thinking", indent=4, turn=number)
            elif kind == "ask":
                lines += _ask(text, next(questions, None), number)
            else:
                lines += _block(text, "text", indent=2, turn=number)
        for question in questions:  # asked without a step of their own
            lines += _ask(question.text, question, number)
    if hidden:
        steps = "step" if hidden == 1 else "steps"
        note = f"{hidden:,} thinking {steps} hidden: h shows them"
        lines[:0] = [Line(note, "note", turn=1), Line("", "text", turn=1)]
    return lines


def whole_lines(text: str) -> list[Line]:
    """A step's whole text as the view's one line, shown literally (every row of it)."""
    return [Line(literal(text.replace("\r\n", "\n")).expandtabs(TAB_SIZE), "text")]


def wrap(text: str, width: int) -> list[str]:
    """`text` in rows of at most `width` cells, broken at spaces where there are any."""
    width = max(1, width)
    wide = not text.isascii()
    if wide and len(text) <= WIDE_CHARS:  # textual's own wrapping counts cells
        return [row.plain for row in Content(text).wrap(width)] or [""]
    rows = []
    start, end = 0, len(text)
    while start < end:
        stop = _row_end(text, start, width) if wide else min(end, start + width)
        if stop >= end:
            break
        space = text.rfind(" ", start, stop + 1)
        if space <= start:  # a word longer than the row: broken where the row ends
            rows.append(text[start:stop])
            start = stop
        else:
            rows.append(text[start:space])
            start = space + 1
    rows.append(text[start:])
    return rows


def _row_end(text: str, start: int, width: int) -> int:
    """Where a row of `width` cells from `start` ends (one character at least): a
    character takes at most two cells, so each pass drops at least what is over."""
    end = min(len(text), start + width)
    while end > start + 1 and (over := cell_len(text[start:end]) - width) > 0:
        end -= max(1, (over + 1) // 2)
    return end


def cut(text: str, width: int) -> str:
    """`text` on one row of `width` cells, "…" where it is cut."""
    if text.isascii():
        return text if len(text) <= width else f"{text[: max(0, width - 1)]}…"
    if cell_len(text) <= width:
        return text
    return Content(text).truncate(max(1, width), ellipsis=True).plain


class Conversation(ScrollView, can_focus=True):
    """The lines of `conversation_lines`, wrapped to the width, drawn row by row."""

    COMPONENT_CLASSES = {f"conversation--{name}" for name in (*STYLES, "mark")}
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding(
            "o,enter",
            "open_step",
            "Open",
            tooltip="Open whole the step marked in the margin (a long text, a tool call"
            " on one row); a click opens the one clicked",
            show=False,  # at 80 columns the footer has no room left
            id="conversation.open",
        ),
    ]

    @dataclass
    class Open(Message):
        """A step to show whole: its text as the data holds it, and what it is."""

        text: str
        title: str

    DEFAULT_CSS = """
    Conversation {
        height: 1fr;
        overflow-x: hidden;
        overflow-y: scroll;
        &:focus { background-tint: $foreground 5%; }
    }
    Conversation > .conversation--heading { color: $secondary; text-style: bold; }
    Conversation > .conversation--you {
        color: $accent; text-style: bold; background: $accent 15%;
    }
    Conversation > .conversation--prompt { background: $accent 15%; }
    Conversation > .conversation--tool { color: $text-muted; }
    Conversation > .conversation--ask { color: $warning; text-style: bold; }
    Conversation > .conversation--option { color: $text-muted; }
    Conversation > .conversation--chosen { color: $success; text-style: bold; }
    Conversation > .conversation--answer { color: $success; }
    Conversation > .conversation--dismissed { color: $error; }
    Conversation > .conversation--thinking { color: $text-muted; text-style: italic; }
    Conversation > .conversation--note { color: $text-muted; text-style: italic; }
    Conversation > .conversation--mark { color: $accent; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.lines: list[Line] = []
        # Each row on screen: (its line's index, its text, whether it is the line's first)
        self.rows: list[tuple[int, str, bool]] = []
        self._width = 0  # the width the rows are wrapped to
        # The last few (lines, width, rows) wrapped: moving between agents and showing
        # thinking again wraps nothing again.
        self._wrapped: list[tuple[list[Line], int, list[tuple[int, str, bool]]]] = []
        # The step marked in the margin, and the view it was found for.
        self._marked_for: tuple[int, int, int] | None = None
        self._marked_lines: list[int] = []

    def show(self, lines: list[Line], keep_turn: bool = False) -> None:
        """Show `lines`, from the top, or with `keep_turn` from the turn at the top now:
        from the same row when the lines up to the top one are as they were (a session
        that grew has only new lines at its end)."""
        turn = self.top_turn() if keep_turn else None
        y = int(self.scroll_offset.y)
        same = (
            keep_turn
            and y < len(self.rows)
            and lines[: self.rows[y][0] + 1] == self.lines[: self.rows[y][0] + 1]
        )
        self.lines = lines
        self.rows = []
        self._width = 0
        self._layout()
        row = y if same else self._row_of(turn=turn or 0)
        self.scroll_to(y=row, animate=False, immediate=True)

    def top_turn(self) -> int | None:
        """The turn of the row at the top of the view."""
        y = int(self.scroll_offset.y)
        return self.lines[self.rows[y][0]].turn if y < len(self.rows) else None

    def _row_of(self, *, turn: int = 0, line: int | None = None) -> int:
        """The first row of a turn, or of the line of that index."""
        if line is None:
            line = bisect_left(self.lines, turn, key=attrgetter("turn"))
        return bisect_left(self.rows, line, key=itemgetter(0))

    def on_resize(self, event: events.Resize) -> None:
        self._layout()

    def _layout(self) -> None:
        """Wrap the lines to the width (a few ms for thousands of lines)."""
        width = self.scrollable_content_region.width - MARGIN
        if width <= 0 or width == self._width:
            return
        top = self.rows[int(self.scroll_offset.y)][0] if self._width and self.rows else None
        self._width = width
        lines = self.lines
        found = next((r for ls, w, r in self._wrapped if ls is lines and w == width), None)
        self.rows = self._wrap(width) if found is None else found
        if found is None:
            self._wrapped = [*self._wrapped[-3:], (lines, width, self.rows)]
        self.virtual_size = Size(width + MARGIN, len(self.rows))
        if top is not None:  # the same line at the top after a resize
            self.scroll_to(y=self._row_of(line=top), animate=False, immediate=True)
        self.refresh()

    def _wrap(self, width: int) -> list[tuple[int, str, bool]]:
        rows: list[tuple[int, str, bool]] = []
        add = rows.append
        for index, line in enumerate(self.lines):
            room = width - line.indent - cell_len(line.marker)
            if not line.wrap:
                add((index, cut(line.text, room), True))
                continue
            first = True
            for text in line.text.split("\n"):
                if len(text) <= room and (text.isascii() or cell_len(text) <= room):
                    add((index, text, first))  # most lines: no wrapping
                else:
                    for part in wrap(text, room):
                        add((index, part, first))
                        first = False
                first = False
        return rows

    def _style(self, name: str) -> Style:
        if not name:
            return Style()
        return self.get_component_rich_style(f"conversation--{name}")

    def render_line(self, y: int) -> Strip:
        width = self.size.width
        base = self.rich_style
        position = int(self.scroll_offset.y) + y
        if position >= len(self.rows):
            return Strip.blank(width, base)
        index, text, first = self.rows[position]
        line = self.lines[index]
        style = base + self._style(line.style)
        # A prompt's rows are filled to the edge; other rows only where there is text.
        fill = style if line.style in FILLED else base
        marker = (
            Segment(line.marker, base + self._style(line.marker_style))
            if first
            else Segment(" " * cell_len(line.marker), fill)
        )
        margin = Segment(" " * (MARGIN + line.indent), fill)
        if self.has_focus and index in self._marked():
            margin = Segment(MARK + " " * (MARGIN - 1 + line.indent), base + self._style("mark"))
        segments = [margin, marker, Segment(text, style)]
        return Strip(segments).crop(0, width).extend_cell_length(width, fill)

    # -- a step opened whole ---------------------------------------------------------

    def _openable(self, index: int) -> bool:
        """Whether line `index` shows its step cut: a long text, or a tool call cut to
        its row (or folded from several lines to one)."""
        line = self.lines[index]
        if not line.whole:
            return False
        if line.wrap:
            return True  # a text is given its whole only when it is cut
        row = self.rows[self._row_of(line=index)][1]
        return row != line.text or "\n" in line.whole

    def _step(self, index: int) -> list[int]:
        """The lines of the step line `index` belongs to: a text and its note."""
        if self.lines[index].style == "note":
            return [index - 1, index]
        if index + 1 < len(self.lines) and self.lines[index + 1].style == "note":
            return [index, index + 1]
        return [index]

    def marked(self) -> int | None:
        """The first line on screen that shows a step cut: the one `o` opens."""
        top = int(self.scroll_offset.y)
        seen: set[int] = set()
        for index, _, _ in self.rows[top : top + self.size.height]:
            if index not in seen:
                seen.add(index)
                if self._openable(index):
                    return self._step(index)[0]
        return None

    def _marked(self) -> list[int]:
        key = (int(self.scroll_offset.y), self.size.height, id(self.rows))
        if self._marked_for != key:
            marked = self.marked()
            self._marked_for, self._marked_lines = key, [] if marked is None else self._step(marked)
        return self._marked_lines

    def action_open_step(self) -> None:
        index = self.marked()
        if index is None:
            self.notify("Every step on screen shows whole: nothing to open.", timeout=3)
            return
        self._open(index)

    def on_click(self, event: events.Click) -> None:
        y = int(self.scroll_offset.y) + event.y
        if 0 <= y < len(self.rows) and self._openable(index := self.rows[y][0]):
            self._open(self._step(index)[0])

    def _open(self, index: int) -> None:
        line = self.lines[index]
        kind = KINDS.get(line.style, "a step")
        self.post_message(self.Open(line.whole, f"turn {line.turn} · {kind}"))

    def on_focus(self) -> None:
        self.refresh()  # the mark shows

    def on_blur(self) -> None:
        self.refresh()

    def plain(self) -> Iterable[str]:
        """Every row as text (what the view shows, scrolled through)."""
        for index, text, first in self.rows:
            line = self.lines[index]
            marker = line.marker if first else " " * cell_len(line.marker)
            yield " " * (MARGIN + line.indent) + marker + text
