"""The runs list: every run, with the agent selected under the current weights and the mark;
`n` narrows it to the runs to mark next (core.next_mark), computed off the UI thread."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.content import Content
from textual.css.query import NoMatches
from textual.widgets import (
    Footer,
    Header,
    Input,
    Select,
    Static,
)
from textual.worker import get_current_worker

from ...core.errors import PPPError
from ...core.wording import counted
from ..messages import GroupRuns, StageFiltered
from ..services import AppServices, WorkspaceView
from ..text import (
    NO_STAGE,
    NO_STAGE_VALUE,
    inline,
    literal,
    plain,
    stage_order,
    stage_tables,
    weights_text,
)
from ..widgets.runs_table import RunsTable
from .next_runs import NextRequest, next_marks, next_request, none_left

if TYPE_CHECKING:
    from ...core.next_mark import NextMarks
    from ...storage.store import RunInfo, Store
    from ..first_page import RunRows


class RunsScreen(WorkspaceView):
    """Every run, with the agent selected under the current weights and the mark."""

    AUTO_FOCUS = "#runs"  # the table, not the search box, from the first frame
    BINDINGS = [
        # A priority binding runs as the key arrives, before the keys typed after it are
        # handed to the focused widget: with the search box focused at once, each of
        # them (typed fast or pasted) goes into it and none runs a command.
        Binding(
            "/",
            "search",
            "Search",
            tooltip="Search runs: tasks, agent outputs, questions, ids",
            id="runs.search",
            priority=True,
        ),
        Binding(
            "n",
            "next_marks",
            "Next",
            tooltip="The runs to mark next: those whose marks tell the most about the weights",
            id="runs.next",
        ),
        Binding(
            "escape",
            "clear_search",
            "Clear search",
            tooltip="Clear the search; after n, every run again; else the selection",
            show=False,
        ),
        Binding(
            "g",
            "group",
            "Group",
            tooltip="Group the selected runs (read from sessions) into one run of all"
            " their agents; asks first",
            show=False,
            id="runs.group",
        ),
    ]

    app: AppServices

    def __init__(self, preview: tuple[RunRows, int] | None = None) -> None:
        super().__init__()
        self._preview = preview  # the first runs and the total, while the rest loads
        self._stages: tuple[list[str], bool] = ([], False)  # the stage menu's choices
        self._searched_contents: tuple[int, ...] | None = None  # the database last searched
        self._searching = threading.Lock()
        self._searching_more = False  # the first matches are shown, the rest to come
        # After `n`: the runs to mark next (run id to place), and what they were computed
        # for (the workspace's state and the stage menu's choice).
        self._next: dict[str, int] | None = None
        self._next_for: tuple[object, str | None] | None = None
        self._to_highlight: str | None = None  # a run to put the cursor on once it is listed

    def compose(self) -> ComposeResult:
        yield Header()
        with Horizontal(id="runs-tools"):
            # The stage menu's place until the runs are loaded (_mount_stage_filter).
            yield Static("stages: loading…", id="stage-filter-slot")
            yield Input(placeholder="/ search tasks, outputs, questions, ids", id="search")
        yield Static("Loading runs…", id="runs-message")
        yield RunsTable(id="runs")
        yield Static("", id="runs-status")
        yield Footer()

    @property
    def table(self) -> RunsTable:
        return self.query_one(RunsTable)

    def on_mount(self) -> None:
        self.table.display = False
        self.table.focus()
        if self._preview is not None:
            self.show_preview(*self._preview)

    def _stage_filter(self) -> Select[str] | None:
        try:
            return self.query_one("#stage-filter", Select)
        except NoMatches:  # the runs are not loaded yet
            return None

    def _mount_stage_filter(self, stages: list[str], unstaged: bool) -> None:
        """Put the stage menu, with these stages, where its slot held the place.

        It comes with the runs, as filtering waits for them: a Select with its overlay
        takes about as long to build and style as all the rest of the first screen.
        """
        options: list[tuple[Content, str]] = [
            (Content(literal(stage, True)), stage) for stage in stages
        ]
        if unstaged:
            options.append((Content(NO_STAGE), NO_STAGE_VALUE))
        shown = self._stage_filter()
        if shown is not None:
            if (stages, unstaged) != self._stages:
                # Another process imported runs of a new stage: the choice stays.
                chosen = shown.value
                shown.set_options(options)
                if chosen in {value for _, value in options}:
                    shown.value = chosen
                self._stages = (stages, unstaged)
            return
        self._stages = (stages, unstaged)
        menu: Select[str] = Select(
            options,
            prompt="All stages",
            id="stage-filter",
            allow_blank=True,
        )
        self.query_one("#runs-tools").mount(menu, before="#search")
        self.query_one("#stage-filter-slot").remove()

    def on_screen_resume(self) -> None:
        # Weights or marks may have changed while a run was open.
        self.populate()

    def show_error(self, message: str) -> None:
        self.query_one("#runs-message", Static).update(plain(message))
        self._clear_slot()

    def _clear_slot(self) -> None:
        for slot in self.query("#stage-filter-slot").results(Static):
            slot.update("")

    def show_preview(self, rows: RunRows, total: int) -> None:
        """The first runs while the whole database loads (sorting and search wait)."""
        if self.app.workspace is not None and self.app.workspace.loaded:
            return
        self.query_one("#runs-message", Static).display = False
        self.table.set_rows(rows)
        self.table.display = True
        self.query_one("#runs-status", Static).update(
            f"first {len(rows.infos):,} of {counted(total, 'run')} shown · loading the rest…"
        )

    def workspace_changed(self) -> None:
        self.populate()

    def shown_run_ids(self) -> list[str] | None:
        """The runs the search and the stage menu leave, in the table's order."""
        table = self.table
        return [table.rows.infos[int(i)].id for i in table.order]

    def populate(self) -> None:
        """Fill the table from the workspace (after loading, and on weight changes)."""
        workspace = self.app.workspace
        if workspace is None or not workspace.loaded:
            return
        message = self.query_one("#runs-message", Static)
        if not workspace.infos:
            message.update(
                "This team store holds no runs yet: import some with `ppp-tui import FILE"
                " --db URL` or add demo runs with `ppp-tui demo --db URL` (URL: this store's)."
                if self.app.team_store
                else "This database holds no runs yet: import some with `ppp-tui import FILE`"
                " or create a demo database with `ppp-tui demo`."
            )
            self._clear_slot()
            return
        message.display = False
        self.table.set_rows(workspace.run_rows())
        self.table.display = True
        if self._to_highlight is not None and self._to_highlight in workspace.index:
            self.table.show_run(self._to_highlight)
            self._to_highlight = None
        if self._searched_contents not in (None, workspace.contents):
            self._apply_filter()  # runs came or went: search again
        if self._next is not None and self._next_for != self._next_request_key():
            self._suggest_next()  # a mark (or the weights) changed: the next runs follow
        self._mount_stage_filter(
            stage_order(i.stage for i in workspace.infos),
            any(not i.stage for i in workspace.infos),
        )
        self.update_status()

    def update_status(self) -> None:
        workspace = self.app.workspace
        if workspace is None or not workspace.loaded:
            return
        figures = workspace.figures()
        shown = len(self.table.order)
        total = len(workspace.infos)
        weights = workspace.settings.weights
        if self._searching_more:
            count = f"the first {shown:,} matches of {counted(total, 'run')} · searching on…"
        else:
            count = (
                f"{shown:,} of {counted(total, 'run')}"
                if shown != total
                else f"{counted(total, 'run')}"
            )
        parts = [
            count,
            f"global weights {weights_text(weights)}",
        ]
        if workspace.settings.stage_weights:
            parts.append(stage_tables(len(workspace.settings.stage_weights)))
        if figures.marked_runs:
            parts.append(
                f"agreement {figures.agreement:.1%}, mean regret {figures.mean_regret:.4f}"
                f" over {figures.marked_runs:,} marked"
            )
        if workspace.dirty:
            parts.append("● unsaved")
        if self._next is not None:
            parts.insert(1, "to mark next (escape: all runs)")
        if self.table.chosen:
            parts.insert(1, f"{len(self.table.chosen):,} selected (g groups them)")
        self.query_one("#runs-status", Static).update(Content("  ·  ".join(parts)))

    @property
    def stage_filter(self) -> str | None:
        """The stage the runs are filtered by, if any."""
        menu = self._stage_filter()
        value = None if menu is None else menu.value
        return value if isinstance(value, str) else None

    def _apply_filter(self) -> None:
        """Filter by the stage menu and the search box. Once every run is loaded, the
        search is the database's full-text search (ranked), run in a worker as the user
        types; the first page, before that, is searched in memory by id, spec and task."""
        stage = self.stage_filter
        text = self.query_one("#search", Input).value
        workspace = self.app.workspace
        self._searching_more = False
        if self._next is not None and not text.strip():
            ranking = self._next
            self.table.set_filter(lambda i: i.id in ranking and _in_stage(i, stage), ranking)
            self.update_status()
            return
        if text.strip() and workspace is not None and workspace.loaded:
            self._searched_contents = workspace.contents
            self._search(workspace.store, text, stage)
            return
        query = text.strip().lower()
        if stage is None and not query:
            self.table.set_filter(None)
        else:

            def keep(i: RunInfo) -> bool:
                return _in_stage(i, stage) and (
                    not query
                    or query in i.id.lower()
                    or query in (i.spec_id or "").lower()
                    or query in (i.task or "").lower()
                )

            self.table.set_filter(keep)
        self.update_status()

    @work(thread=True, exclusive=True, group="search")
    def _search(self, store: Store, text: str, stage: str | None) -> None:
        # One search at a time on the shared connection (two threads running the same
        # statement on it would share its cached statement); one the user has typed past
        # since it was asked for is skipped.
        with self._searching:
            if get_current_worker().is_cancelled:
                return
            self._search_now(store, text, stage)

    def _search_now(self, store: Store, text: str, stage: str | None) -> None:
        from ...storage.search import Cancelled

        worker = get_current_worker()
        try:
            if not store.search_index_current():
                # An older database's first search indexes it (seconds at 100k runs): the
                # runs that match by id, spec or task show meanwhile.
                quick = store.search(text, build=False)
                self.app.call_from_thread(self._show_matches, text, stage, quick)
            # The first screenful at once, however many runs match; then all of them,
            # unless the user typed on meanwhile (that search is stopped where it is).
            found, complete = store.search_first(text)
            if not complete:
                if worker.is_cancelled:
                    return
                self.app.call_from_thread(self._show_matches, text, stage, found, False)
                found = store.search(text, build=False, cancelled=lambda: worker.is_cancelled)
        except Cancelled:
            return
        except PPPError as error:
            if worker.is_cancelled:
                return  # e.g. quitting closed the database under the search
            self.app.call_from_thread(self.notify, str(error), severity="error", markup=False)
            return
        self.app.call_from_thread(self._show_matches, text, stage, found)

    def _show_matches(
        self, text: str, stage: str | None, found: list[str], complete: bool = True
    ) -> None:
        """Show the runs a search found, the most relevant first, unless the search box
        or the stage menu changed meanwhile (a newer search is on its way). Short of
        `complete`, they are the first ones: the rest are being found."""
        if text != self.query_one("#search", Input).value or stage != self.stage_filter:
            return
        ranking = {run_id: place for place, run_id in enumerate(found)}
        self._searching_more = not complete
        self.table.set_filter(lambda i: i.id in ranking and _in_stage(i, stage), ranking)
        self.update_status()

    @on(Select.Changed, "#stage-filter")
    def _stage_changed(self) -> None:
        self._apply_filter()
        if self._next is not None:
            self._suggest_next()  # the stage's own runs to mark next
        self.post_message(StageFiltered(self.stage_filter))  # where the dashboard opens

    @on(Input.Changed, "#search")
    def _search_changed(self, event: Input.Changed) -> None:
        if event.value.strip():
            self._next = None  # a search replaces the runs to mark next
        self._apply_filter()

    @on(Input.Submitted, "#search")
    def _search_done(self) -> None:
        self.table.focus()

    def action_search(self) -> None:
        search = self.query_one("#search", Input)
        if self.focused is search:
            search.insert_text_at_cursor("/")  # a `/` typed in the search box
            return
        self.set_focus(search)

    def action_clear_search(self) -> None:
        search = self.query_one("#search", Input)
        if not search.value and self._next is None:
            self.table.clear_chosen()
        if search.value:
            search.value = ""
        if self._next is not None:
            self._next = None
            self._apply_filter()
        self.table.focus()

    # -- grouping ------------------------------------------------------------------

    @on(RunsTable.Chosen)
    def _chosen(self) -> None:
        self.update_status()

    def action_group(self) -> None:
        """Ask whether to group the selected runs, and under which id."""
        from ...storage.sessions.regroup import group_id
        from .regroup import GroupScreen

        workspace = self.app.workspace
        if workspace is None or not workspace.loaded:
            self.notify("The runs are still loading.", severity="warning")
            return
        chosen = tuple(self.table.chosen)
        if len(chosen) < 2:
            self.notify("Select two runs or more with space; g then groups them.")
            return
        try:
            default = group_id(workspace.store, chosen)
        except PPPError as error:
            self.notify(inline(error), title="Cannot group", severity="error", markup=False)
            return
        index = workspace.index

        def named(name: str | None) -> None:
            if name is not None:
                self.post_message(GroupRuns(chosen, name or None))

        self.app.push_screen(
            GroupScreen(
                [workspace.infos[index[run_id]] for run_id in chosen],
                default,
                lambda name: name in index and name not in chosen,
            ),
            named,
        )

    def grouped(self, run_id: str) -> None:
        """Runs were grouped (or ungrouped) into `run_id`: none selected any more, and the
        cursor goes to it once the runs are read again."""
        self.table.clear_chosen()
        self._to_highlight = run_id

    # -- the runs to mark next -----------------------------------------------------

    def action_next_marks(self) -> None:
        """Show the runs whose marks tell the most about the weights (core.next_mark)."""
        workspace = self.app.workspace
        if workspace is None or not workspace.loaded:
            self.notify("The runs are still loading.", severity="warning")
            return
        search = self.query_one("#search", Input)
        search.value = ""
        self._suggest_next(announce=True)

    def _next_request_key(self) -> tuple[object, str | None]:
        workspace = self.app.workspace
        return (None if workspace is None else workspace.state(), self.stage_filter)

    def _suggest_next(self, announce: bool = False) -> None:
        """Compute the runs to mark next in a worker, from the marks as they are now."""
        workspace = self.app.workspace
        request = None if workspace is None else next_request(workspace, self.stage_filter)
        if request is None:
            return
        self._next_for = self._next_request_key()
        self._next_marks(request, self._next_for, announce)

    @work(thread=True, exclusive=True, group="next")
    def _next_marks(
        self, request: NextRequest, key: tuple[object, str | None], announce: bool
    ) -> None:
        result = next_marks(request)
        if not get_current_worker().is_cancelled:
            self.app.call_from_thread(self._show_next, key, result, announce)

    def _show_next(self, key: tuple[object, str | None], result: NextMarks, announce: bool) -> None:
        if key != self._next_for:
            return  # asked again since: a newer result is on its way
        if not result.suggestions:
            self.notify(none_left(result, self.stage_filter), severity="warning")
            self._next = None
            self._apply_filter()
            return
        self._next = {s.run_id: place for place, s in enumerate(result.suggestions)}
        self._apply_filter()
        if announce:
            self.notify(_next_note(result), markup=False)


def _next_note(result: NextMarks) -> str:
    """The one line that tells what `n` shows."""
    count = len(result.suggestions)
    runs = f"{count} run{'s' * (count != 1)}"
    if len(result.estimates) == 1:
        estimate = result.estimates[0]
        return (
            f"Mark these {runs} next: their picks change nearest technical"
            f" {estimate.centre:.4f} ({estimate.marked_runs:,} marked)."
        )
    return f"Mark these {runs} next: their picks change nearest each scope's target."


def _in_stage(info: RunInfo, stage: str | None) -> bool:
    """Whether the stage menu's choice (None: all stages) shows this run."""
    if stage is None:
        return True
    return (info.stage or None) == (None if stage == NO_STAGE_VALUE else stage)
