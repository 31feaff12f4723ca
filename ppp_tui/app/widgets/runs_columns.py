"""The runs list's columns: which show at a width, how wide each is, how a cell fits.

Every column has the width it takes when there is room and the narrowest it is cut
to; the task takes what the others leave. From 80 columns up the run, its date and
task, its stage, agents, selected and preferred agent and regret all show; the spec,
the task type and the agent count come as the width allows. No textual here.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from rich.cells import cell_len, get_character_cell_size

GAP = 1  # the space between two columns


@dataclass(frozen=True)
class Column:
    key: str
    label: str
    width: int  # with room to spare (the task: what it wants before the rest narrow)
    least: int  # cut to this (with "…") when room is short
    align: str = "<"
    descending_first: bool = False  # the first direction a sort by it takes
    whole_or_least: bool = False  # narrowed, it goes straight to its least width


COLUMNS: tuple[Column, ...] = (
    Column("id", "run", 20, 11),
    # `2026-11-26 14:03`, or the date alone; newest first.
    Column("date", "date", 16, 10, descending_first=True, whole_or_least=True),
    Column("spec", "spec", 14, 14),
    Column("stage", "stage", 10, 9),
    Column("task_type", "task type", 15, 15),
    Column("agents", "agents", 6, 3, ">"),
    Column("task", "task", 30, 10),
    Column("selected", "selected", 13, 10),
    Column("preferred", "preferred", 13, 10),
    Column("regret", "regret", 7, 6, ">"),
)
BY_KEY = {column.key: column for column in COLUMNS}
# Left out, in this order, while the columns do not fit with the task at its wanted
# width: what tells the runs apart and what they scored stays.
DROPPED_FIRST = ("task_type", "spec")
# Then narrowed, in this order, down to their least: the id first (the task tells a
# run better), then the date's time of day, then the names.
NARROWED_FIRST = ("id", "date", "stage", "selected", "preferred", "agents", "regret", "task")


@lru_cache(maxsize=16)
def layout(room: int) -> tuple[tuple[Column, int], ...]:
    """The columns shown in `room` cells, with their widths; the task gets what is
    left (never less than its least: narrower than all the least widths, the table
    scrolls sideways)."""
    widths = {column.key: column.width for column in COLUMNS}

    def total() -> int:
        return sum(widths.values()) + GAP * (len(widths) - 1)

    for key in DROPPED_FIRST:
        if total() <= room:
            break
        del widths[key]
    narrowed = [key for key in NARROWED_FIRST if key in widths]
    for key in narrowed:
        excess = total() - room
        if excess <= 0:
            break
        column = BY_KEY[key]
        widths[key] = (
            column.least if column.whole_or_least else max(column.least, widths[key] - excess)
        )
    # What a column going straight to its least left over goes back to the ones narrowed
    # before it, so that a wider terminal never shows a narrower task; then to the task.
    for key in reversed(narrowed):
        spare, column = room - total(), BY_KEY[key]
        if spare <= 0:
            break
        grow = min(spare, column.width - widths[key])
        if grow > 0 and not (column.whole_or_least and grow < column.width - widths[key]):
            widths[key] += grow
    widths["task"] += max(0, room - total())
    return tuple((column, widths[column.key]) for column in COLUMNS if column.key in widths)


def fit(text: str, width: int, align: str = "<") -> str:
    """`text` in exactly `width` cells: padded, or cut with "…" at its end."""
    if cell_len(text) > width:
        text = _start(text, width - 1) + "…"
    return _pad(text, width, align)


def fit_middle(text: str, width: int) -> str:
    """`text` in exactly `width` cells, cut in its middle: an id keeps its kind
    (`session-`, `spec-kit-`) and the end of its hash, the part that tells runs apart."""
    if cell_len(text) <= width:
        return _pad(text, width, "<")
    head = _start(text, width - 1 - (width + 1) // 2)
    tail, room = "", width - 1 - cell_len(head)
    for character in reversed(text):
        room -= get_character_cell_size(character)
        if room < 0:
            break
        tail = character + tail
    return _pad(head + "…" + tail, width, "<")


def _start(text: str, cells: int) -> str:
    """The longest start of `text` that takes at most `cells` cells."""
    if text.isascii():  # one cell a character (controls are shown as pictures by now)
        return text[:cells]
    used = 0
    for end, character in enumerate(text):
        used += get_character_cell_size(character)
        if used > cells:
            return text[:end]
    return text


def _pad(text: str, width: int, align: str) -> str:
    padding = " " * (width - cell_len(text))
    return padding + text if align == ">" else text + padding
