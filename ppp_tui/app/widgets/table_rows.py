"""Filling a DataTable again while its cursor stays on the same item.

The tables that are filled again when the weights or the marks change (a run's agents,
the leaderboard, the runs whose pick changes, the stages' optima) key each row by what
it shows: an agent, a run, a stage. The cursor follows that key, not its row number:
when the rows re-order, the item highlighted stays highlighted, and what shows the
highlighted item (the run screen's detail below its agents) is not told of a change,
as there is none.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from rich.text import Text
from textual.widgets import DataTable


def cursor_key(table: DataTable[Any]) -> str | None:
    """The key of the row under the cursor; None in an empty table."""
    if not table.row_count:
        return None
    return table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value


def refill(table: DataTable[Any], rows: Mapping[str, Sequence[Any]]) -> None:
    """Show `rows` (each row's key and its cells, in order) in `table`; the cursor stays
    on the key it is on.

    The same keys in the same order (the usual weight step): only the cells that changed
    are written, so nothing moves. Otherwise the rows are added again and the cursor goes
    to its key's new row, with no RowHighlighted, as the item under it is the same. When
    its key is gone, the cursor is on the first row and the table says so as usual.
    """
    if [row.key.value for row in table.ordered_rows] == list(rows):
        columns = [column.key for column in table.ordered_columns]
        for key, cells in rows.items():
            for column, old, new in zip(columns, table.get_row(key), cells, strict=True):
                if not _same(old, new):
                    wider = _width(new) > _width(old)  # e.g. a longer list of flags
                    table.update_cell(key, column, new, update_width=wider)
        return
    kept = cursor_key(table)
    if kept is None or kept not in rows:
        _fill(table, rows)
        return
    with table.prevent(DataTable.RowHighlighted):
        _fill(table, rows)
        table.move_cursor(row=table.get_row_index(kept), animate=False)


def _fill(table: DataTable[Any], rows: Mapping[str, Sequence[Any]]) -> None:
    table.clear()
    for key, cells in rows.items():
        table.add_row(*cells, key=key)


def _same(old: Any, new: Any) -> bool:
    """Two cells show the same (rich Text equality ignores the base style)."""
    if isinstance(old, Text) and isinstance(new, Text):
        return (
            old.plain == new.plain
            and old.style == new.style
            and old.spans == new.spans
            and old.justify == new.justify
        )
    return bool(old == new)


def _width(value: Any) -> int:
    return value.cell_len if isinstance(value, Text) else len(str(value))
