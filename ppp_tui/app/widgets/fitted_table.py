"""A table that leaves out a column of numbers it cannot show whole.

Wider than its room, a DataTable scrolls sideways and cuts the column at its right
edge: a gap of 0.012 cut to "0.0" reads as another number. Here a column of numbers
shows only where it fits whole at the table's width (a narrower terminal leaves it
out; a wider one brings it back), while a column of text stays, cut or scrolled to.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from rich.cells import cell_len
from rich.text import Text
from textual import events
from textual.widgets import DataTable

from .table_rows import cursor_key, refill


@dataclass(frozen=True)
class Column:
    label: str
    numeric: bool = False  # cut, it would read as another number


def numbers(*labels: str) -> tuple[Column, ...]:
    """Columns of numbers, one per label."""
    return tuple(Column(label, numeric=True) for label in labels)


def cell_width(value: Any) -> int:
    """The cells a table cell's text takes."""
    return value.cell_len if isinstance(value, Text) else cell_len(str(value))


def shown_columns(
    columns: Sequence[Column], rows: Iterable[Sequence[Any]], room: int, padding: int = 1
) -> list[int]:
    """The indexes of the columns shown in `room` cells: every column, less each column
    of numbers that would not end within the room."""
    widths = [cell_len(column.label) for column in columns]
    for row in rows:
        for i, value in enumerate(row):
            widths[i] = max(widths[i], cell_width(value))
    shown: list[int] = []
    used = 0
    for i, column in enumerate(columns):
        width = widths[i] + 2 * padding
        if column.numeric and used + width > room:
            continue
        shown.append(i)
        used += width
    return shown


class FittedTable(DataTable[Any]):
    """A DataTable of keyed rows whose columns of numbers show only whole."""

    def __init__(self, columns: Sequence[Column], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.all_columns = tuple(columns)
        self._rows: dict[str, tuple[Any, ...]] = {}
        self.shown: list[int] | None = None  # the indexes of the columns shown

    def show_rows(self, rows: Mapping[str, Sequence[Any]]) -> None:
        """Show `rows` (each row's key and its cells, one per column); the cursor stays on
        its key (`refill`)."""
        self._rows = {key: tuple(cells) for key, cells in rows.items()}
        self._fit()

    def on_resize(self, event: events.Resize) -> None:
        self._fit()

    def _fit(self) -> None:
        room = self.scrollable_content_region.width
        shown = (
            shown_columns(self.all_columns, self._rows.values(), room, self.cell_padding)
            if room > 0
            else list(range(len(self.all_columns)))  # not laid out yet
        )
        rows = {key: [cells[i] for i in shown] for key, cells in self._rows.items()}
        if shown == self.shown:
            refill(self, rows)
            return
        self.shown = shown
        kept = cursor_key(self)
        if kept is None or kept not in rows:
            self.clear(columns=True)
            self.add_columns(*(self.all_columns[i].label for i in shown))
            refill(self, rows)
            return
        # The same rows under other columns: the highlighted one stays, unannounced.
        with self.prevent(DataTable.RowHighlighted):
            self.clear(columns=True)
            self.add_columns(*(self.all_columns[i].label for i in shown))
            refill(self, rows)
            self.move_cursor(row=self.get_row_index(kept), animate=False)
