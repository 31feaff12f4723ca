"""The runs list: a line-API table that renders only the rows on screen.

textual's DataTable builds every row up front (about 16 s for 100k runs here);
this view keeps the rows as an index array into the workspace's run list and
formats a line when it scrolls into sight, so 100k runs open and scroll at once.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.binding import Binding
from textual.geometry import Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip

from ...core.sessions.waiting import MARK as WAITING
from ...core.times import compact_time, moments
from ..first_page import RunRows
from ..messages import OpenRun
from ..text import line_start, literal
from .runs_columns import BY_KEY, COLUMNS, GAP, Column, fit, fit_middle, layout

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from ...storage.store import RunInfo


# Before every row while runs are selected (space): the mark of a selected run.
CHOSEN = "✓ "
GUTTER = len(CHOSEN)


class RunsTable(ScrollView, can_focus=True):
    """Every run; `enter` opens the one under the cursor."""

    COMPONENT_CLASSES = {
        "runs-table--header",
        "runs-table--cursor",
        "runs-table--miss",
        "runs-table--chosen",
    }

    DEFAULT_CSS = """
    RunsTable {
        height: 1fr;
    }
    RunsTable > .runs-table--header {
        text-style: bold;
        background: $panel;
    }
    RunsTable > .runs-table--cursor {
        background: $block-cursor-background;
        color: $block-cursor-foreground;
        text-style: bold;
    }
    RunsTable:blur > .runs-table--cursor {
        background: $block-cursor-blurred-background;
        text-style: none;
    }
    RunsTable > .runs-table--miss {
        color: $warning;
    }
    RunsTable > .runs-table--chosen {
        color: $accent;
        text-style: bold;
    }
    """

    BINDINGS = [
        Binding("enter", "open", "Open run", tooltip="Open the highlighted run", id="runs.open"),
        Binding("up", "move(-1)", "Up", show=False),
        Binding("down", "move(1)", "Down", show=False),
        Binding("pageup", "page(-1)", "Page up", show=False),
        Binding("pagedown", "page(1)", "Page down", show=False),
        Binding("home", "jump(0)", "First", show=False),
        Binding("end", "jump(-1)", "Last", show=False),
        Binding(
            "s",
            "sort_next",
            "Sort",
            tooltip="Sort the runs by the next column, a date newest first (or click a header)",
            id="runs.sort",
        ),
        Binding("S", "sort_reverse", "Reverse", tooltip="Reverse the sort", show=False),
        Binding(
            "space",
            "choose",
            "Select",
            tooltip="Select the highlighted run, or deselect it (g groups the selected runs)",
            show=False,
            id="runs.select",
        ),
    ]

    class Chosen(Message):
        """The runs selected changed."""

    cursor: reactive[int] = reactive(0)
    # The list's first order: the newest runs first.
    sort_key: reactive[str] = reactive("date")
    sort_descending: reactive[bool] = reactive(True)

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.rows = RunRows([], [], [])
        # The rows shown, as indexes into `rows`: a range until a filter or a sort
        # (numpy is imported only then: the first page draws without it).
        self.order: Sequence[int] | npt.NDArray[np.int64] = range(0)
        self.filter: Callable[[RunInfo], bool] | None = None
        # Each shown run's place by relevance (a search, `n`): their order until the user
        # chooses a sort (`sort_chosen`).
        self.ranking: Mapping[str, int] | None = None
        # The runs selected (space), in the order they were: ids, kept across new data.
        self.chosen: dict[str, None] = {}
        self.sort_chosen = False
        # Sort keys that take long to work out, with the runs they are for.
        self._keys: dict[str, tuple[Sequence[RunInfo], npt.NDArray[Any]]] = {}

    # -- data --------------------------------------------------------------------

    def set_rows(self, rows: RunRows) -> None:
        """New data (or new weights): keep the filter, the sort and the cursor's run."""
        current = self.current_run()
        self.rows = rows
        if self.chosen:  # runs gone (grouped, say) are no longer selected
            positions = rows.positions()
            self.chosen = {run_id: None for run_id in self.chosen if run_id in positions}
        self._rebuild(keep=current)

    def set_filter(
        self,
        predicate: Callable[[RunInfo], bool] | None,
        ranking: Mapping[str, int] | None = None,
    ) -> None:
        """Show only the runs `predicate` keeps; with a `ranking` (run id to place, the
        places 0, 1, 2 …), only the runs it holds, in its order unless the user chose a
        sort. The cursor goes to the first run when the ranking changes (the best
        match), else it stays on its run."""
        keep = self.current_run() if ranking is None or ranking == self.ranking else None
        self.filter = predicate
        self.ranking = ranking
        self._rebuild(keep=keep)

    def _sort_values(self, key: str) -> npt.NDArray[Any]:
        import numpy as np

        rows = self.rows
        if key == "regret":
            return np.nan_to_num(rows.regret, nan=-1.0)
        if key == "agents":
            return np.fromiter((i.agents for i in rows.infos), np.int64, len(rows.infos))
        if key == "selected":
            return np.array(rows.selected, dtype=str)
        if key == "date" and rows.dates is not None:
            return rows.dates  # read with the runs, off the UI thread
        if key in ("date", "task"):
            return self._run_keys(key)
        attribute = {"spec": "spec_id"}.get(key, key)
        return np.array([getattr(i, attribute) or "" for i in rows.infos], dtype=str)

    def _run_keys(self, key: str) -> npt.NDArray[Any]:
        """Every run's date (seconds, nan when unknown) or task (its start on one line,
        in lower case), worked out once per list of runs: reading 100k dates takes 0.1 s,
        and the weights do not change them."""
        infos = self.rows.infos
        cached = self._keys.get(key)
        if cached is not None and cached[0] is infos:
            return cached[1]
        import numpy as np

        values: npt.NDArray[Any]
        if key == "date":
            values = moments([info.created_at for info in infos])
        else:
            # The start of a task is enough to order by it (a prompt may be megabytes).
            values = np.array(
                [" ".join((i.task or "")[:400].split())[:200].casefold() for i in infos],
                dtype=object,
            )
        self._keys[key] = (infos, values)
        return values

    @property
    def sorting(self) -> bool:
        """Whether the sort orders the rows: a ranking keeps its own order until the
        user chooses a sort."""
        return bool(self.sort_key) and (self.sort_chosen or self.ranking is None)

    def _rebuild(self, keep: str | None = None) -> None:
        infos = self.rows.infos
        sorting = self.sorting
        # The first page comes newest first from the database: no numpy for it.
        newest = (self.sort_key, self.sort_descending) == ("date", True)
        as_read = self.rows.newest_first and newest
        if self.filter is None and self.ranking is None and (not sorting or as_read):
            self.order = range(len(infos))
        else:
            import numpy as np

            shows = self.filter
            place = self.ranking
            if place is not None and not sorting and len(place) * 4 < len(infos):
                # A few ranked runs (a search's first screenful): taken from the ranking,
                # in its order, rather than every run tried (15 ms at 100k runs).
                order = np.fromiter(self._ranked(place, shows), np.int64)
            else:
                order = (
                    np.arange(len(infos))
                    if shows is None and place is None
                    else np.fromiter(
                        (
                            i
                            for i, info in enumerate(infos)
                            if (shows is None or shows(info))
                            and (place is None or info.id in place)
                        ),
                        np.int64,
                    )
                )
                if place is not None and not sorting and len(order):
                    last = len(place)
                    ranks = np.fromiter((place.get(infos[i].id, last) for i in order), np.int64)
                    order = order[np.argsort(ranks, kind="stable")]
            if sorting and len(order):
                values = self._sort_values(self.sort_key)[order]
                if self.sort_key == "date":
                    # Runs without a date last either way; those of one moment by id.
                    keys = np.where(
                        np.isnan(values), np.inf, -values if self.sort_descending else values
                    )
                    ranked = np.argsort(keys, kind="stable")
                else:
                    ranked = np.argsort(values, kind="stable")
                    if self.sort_descending:
                        ranked = ranked[::-1]
                order = order[ranked]
            self.order = order.astype(np.int64)
        self.virtual_size = Size(self._width, len(self.order) + 1)
        cursor = 0
        if keep is not None:
            found = self._find(keep)
            cursor = found if found is not None else 0
        self.cursor = min(cursor, max(0, len(self.order) - 1))
        self._scroll_to_cursor()
        self.refresh()

    def _ranked(
        self, ranking: Mapping[str, int], shows: Callable[[RunInfo], bool] | None
    ) -> Iterator[int]:
        """The places in `rows` of the ranked runs `shows` keeps, in the ranking's order."""
        by_place: list[str | None] = [None] * len(ranking)
        for run_id, place in ranking.items():
            by_place[place] = run_id
        positions = self.rows.positions()
        infos = self.rows.infos
        for ranked in by_place:
            k = None if ranked is None else positions.get(ranked)
            if k is not None and (shows is None or shows(infos[k])):
                yield k

    def _find(self, run_id: str) -> int | None:
        """The display position of a run (a linear scan: only on rebuilds)."""
        infos = self.rows.infos
        for position, i in enumerate(self.order):
            if infos[i].id == run_id:
                return position
        return None

    def show_run(self, run_id: str) -> bool:
        """Put the cursor on a run; False if it is not among the rows shown."""
        position = self._find(run_id)
        if position is not None:
            self._move_to(position)
        return position is not None

    def current_run(self) -> str | None:
        if not len(self.order):
            return None
        return self.rows.infos[int(self.order[min(self.cursor, len(self.order) - 1)])].id

    # -- rendering ---------------------------------------------------------------

    @property
    def columns(self) -> tuple[tuple[Column, int], ...]:
        """The columns shown, with their widths: as many as the table's width holds
        (beside the selection marks, while runs are selected)."""
        return layout(self.size.width - self.styles.scrollbar_size_vertical - self._gutter)

    @property
    def _gutter(self) -> int:
        """The room the selection marks take: none while no run is selected."""
        return GUTTER if self.chosen else 0

    @property
    def _width(self) -> int:
        shown = self.columns
        return self._gutter + sum(width for _, width in shown) + GAP * (len(shown) - 1)

    def on_resize(self) -> None:
        self.virtual_size = Size(self._width, len(self.order) + 1)

    def _cell(self, key: str, i: int, width: int) -> str:
        """Run `i`'s text in column `key`, `width` cells wide (data through safe_text)."""
        info = self.rows.infos[i]
        if key == "id":
            return fit_middle(literal(info.id, True), width)
        if key == "date":
            shown = compact_time(info.created_at, with_time=width >= BY_KEY["date"].width)
            return fit(shown or literal(info.created_at, True) or "—", width)
        if key == "task":
            if info.waiting:  # an agent of it waits for the user
                return fit(f"{WAITING} " + line_start(info.task, width - 2), width)
            return fit(line_start(info.task, width), width)
        if key == "agents":
            return fit(str(info.agents), width, ">")
        if key == "selected":
            return fit(literal(self.rows.selected[i], True), width)
        if key == "regret":
            regret = self.rows.regret[i]
            return fit("" if math.isnan(regret) else f"{regret:.3f}", width, ">")
        attribute = {"spec": "spec_id"}.get(key, key)
        return fit(literal(getattr(info, attribute), True), width)

    def _line(self, cells: Iterator[str]) -> list[str]:
        """The cells with the gap between them, one string each (see `_strip`)."""
        texts = list(cells)
        return [text + " " * GAP for text in texts[:-1]] + texts[-1:]

    def _header(self) -> list[str]:
        labels = []
        for column, width in self.columns:
            arrow = ""
            if column.key == self.sort_key and self.sorting:
                arrow = "▼" if self.sort_descending else "▲"
            label = column.label
            if arrow:
                # The label gives way to the arrow when both do not fit.
                label = label[: width - len(arrow)] + arrow
            labels.append(fit(label, width, column.align))
        return self._line(iter(labels))

    def render_line(self, y: int) -> Strip:
        width = self.size.width
        scroll_x = int(self.scroll_offset.x)
        base = self.rich_style
        gutter = [" " * GUTTER] if self.chosen else []
        if y == 0:
            style = base + self.get_component_rich_style("runs-table--header")
            return self._strip(gutter + self._header(), style, scroll_x, width)
        position = int(self.scroll_offset.y) + y - 1
        if position >= len(self.order):
            return Strip.blank(width, base)
        i = int(self.order[position])
        info = self.rows.infos[i]
        style = base
        if info.preferred and info.preferred != self.rows.selected[i]:
            style = base + self.get_component_rich_style("runs-table--miss")
        if gutter and info.id in self.chosen:
            gutter = [CHOSEN]
            style = base + self.get_component_rich_style("runs-table--chosen")
        if position == self.cursor:
            style = base + self.get_component_rich_style("runs-table--cursor")
        cells = (self._cell(column.key, i, width) for column, width in self.columns)
        return self._strip(gutter + self._line(cells), style, scroll_x, width)

    def _strip(self, cells: list[str], style: Style, scroll_x: int, width: int) -> Strip:
        # One segment per cell, so exports (SVG screenshots) keep the columns aligned.
        strip = Strip([Segment(cell, style) for cell in cells])
        return strip.crop(scroll_x, scroll_x + width).extend_cell_length(width, style)

    # -- movement ----------------------------------------------------------------

    @property
    def _page(self) -> int:
        return max(1, self.size.height - 2)

    def watch_cursor(self, old: int, new: int) -> None:
        self.refresh()

    def _scroll_to_cursor(self) -> None:
        top = int(self.scroll_offset.y)
        visible = max(1, self.size.height - 1)
        if self.cursor < top:
            self.scroll_to(y=self.cursor, animate=False)
        elif self.cursor >= top + visible:
            self.scroll_to(y=self.cursor - visible + 1, animate=False)

    def _move_to(self, position: int) -> None:
        if not len(self.order):
            return
        self.cursor = max(0, min(position, len(self.order) - 1))
        self._scroll_to_cursor()

    def action_move(self, delta: int) -> None:
        self._move_to(self.cursor + delta)

    def action_page(self, direction: int) -> None:
        self._move_to(self.cursor + direction * self._page)

    def action_jump(self, position: int) -> None:
        self._move_to(position if position >= 0 else len(self.order) - 1)

    def action_open(self) -> None:
        run_id = self.current_run()
        if run_id is not None:
            self.post_message(OpenRun(run_id))  # the app opens it

    def action_choose(self) -> None:
        """Select the run under the cursor (or deselect it), and go down a row."""
        run_id = self.current_run()
        if run_id is None:
            return
        if run_id in self.chosen:
            del self.chosen[run_id]
        else:
            self.chosen[run_id] = None
        self.virtual_size = Size(self._width, len(self.order) + 1)
        self.refresh()
        self._move_to(self.cursor + 1)
        self.post_message(self.Chosen())

    def clear_chosen(self) -> None:
        if self.chosen:
            self.chosen = {}
            self.virtual_size = Size(self._width, len(self.order) + 1)
            self.refresh()
            self.post_message(self.Chosen())

    def sort_by(self, key: str, descending: bool = False) -> None:
        self.sort_key = key
        self.sort_descending = descending
        self.sort_chosen = True
        self._rebuild(keep=self.current_run())

    def action_sort_next(self) -> None:
        keys = [column.key for column, _ in self.columns]
        if self.sort_key not in keys:
            following = keys[0]
        elif not self.sorting:  # a search's order: the list's own sort comes first
            following = self.sort_key
        else:
            following = keys[(keys.index(self.sort_key) + 1) % len(keys)]
        self.sort_by(following, BY_KEY[following].descending_first)

    def action_sort_reverse(self) -> None:
        self.sort_by(self.sort_key or COLUMNS[0].key, not self.sort_descending)

    def _column_at(self, x: int) -> str | None:
        x += int(self.scroll_offset.x) - self._gutter
        left = 0
        for column, width in self.columns:
            if left <= x < left + width + GAP:
                return column.key
            left += width + GAP
        return None

    async def _on_click(self, event: events.Click) -> None:
        self.focus()
        if event.y == 0:
            key = self._column_at(event.x)
            if key is not None:
                # A new column its first way (the date: newest first), the same one reversed.
                first = BY_KEY[key].descending_first
                again = key == self.sort_key and self.sorting
                self.sort_by(key, not self.sort_descending if again else first)
            return
        position = int(self.scroll_offset.y) + event.y - 1
        if position < len(self.order):
            if position == self.cursor and event.chain >= 2:
                self.action_open()
            self._move_to(position)
