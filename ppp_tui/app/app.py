"""`ppp-tui browse`: the terminal app.

The app owns the workspace, the database and the screen stack; every message a screen
posts (messages.py) is handled here, in one place. Its larger jobs have modules of
their own, joined into the app as its bases: marks and ratings (marking.py), reading
the database again after another process's or its own changes and following agents'
sessions (rereading.py), and grouping runs (regrouping.py).
"""

from __future__ import annotations

import asyncio
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from textual import work
from textual.app import App, SystemCommand
from textual.binding import Binding
from textual.command import Provider
from textual.message import Message
from textual.timer import Timer

from ..core.errors import PPPError
from ..core.settings import Settings, Weights, preset
from ..storage.config import load_settings
from ..storage.location import ServerURL
from ..storage.store import Store
from ..storage.store_server import open_store
from .commands import AppCommands
from .first_page import RunRows, first_page
from .marking import Marking
from .messages import (
    MarkChanged,
    OpenRun,
    PresetChosen,
    StageFiltered,
    TechnicalRated,
    WeightsChanged,
    WeightsReset,
)
from .regrouping import Regrouping
from .rereading import LiveSessions
from .screens.help import HelpScreen
from .screens.quit import QuitScreen
from .screens.runs import RunsScreen
from .services import WorkspaceView
from .text import inline, literal

if TYPE_CHECKING:
    from textual.screen import Screen

    from .workspace import Workspace

# What the first page read, for the load worker to go on with: the open database and
# the settings.
FirstRead = tuple[Store, Settings]

WEIGHT_STEP = 0.05
PREVIEW_RUNS = 200  # runs shown while the whole database loads
# The UI thread shares the database connection: a statement waits at most this long for
# another process's lock, so the screen never freezes behind one.
UI_LOCK_WAIT_S = 0.05
WATCH_INTERVAL_S = 1.0  # how often the app looks for other processes' changes


QUIT_HELP = "Quit (asks first if the weights are unsaved)"
COPY_OR_QUIT_HELP = "Copy the selected text; with none selected, quit as q does"


class PPPApp(Marking, Regrouping, LiveSessions, App[None]):
    """Browse runs, move the weights, watch rankings, agreement and regret follow."""

    TITLE = "ppp-tui"
    CSS_PATH = "app.tcss"
    # Textual's commands (themes, quit, keys, screenshot) and the app's own.
    COMMANDS: ClassVar[set[type[Provider] | Callable[[], type[Provider]]]] = {
        *App.COMMANDS,
        AppCommands,
    }
    BINDINGS = [
        Binding("q", "quit_app", "Quit", tooltip=QUIT_HELP, id="app.quit"),
        # Textual's own ctrl+q, which asks too (and is listed with q in the help).
        Binding("ctrl+q", "quit_app", "Quit", tooltip=QUIT_HELP, show=False, priority=True),
        # Not a priority: with text selected, the screen's own ctrl+c copies it first.
        Binding("ctrl+c", "copy_or_quit", "Quit", tooltip=COPY_OR_QUIT_HELP, show=False),
        Binding(
            "question_mark",
            "help",
            "Help",
            key_display="?",
            tooltip="This help: every key, and what the scores mean",
            id="app.help",
        ),
        Binding(
            "left_square_bracket",
            "nudge(-1)",
            "Tech -0.05",
            key_display="[",
            tooltip="Technical weight -0.05",
            id="app.technical_down",
        ),
        Binding(
            "right_square_bracket",
            "nudge(1)",
            "Tech +0.05",
            key_display="]",
            tooltip="+0.05 (on any screen: a run's scope there, else global)",
            id="app.technical_up",
        ),
        Binding("ctrl+s", "save", "Save", tooltip="Save the weights to config.toml", id="app.save"),
        Binding(
            "t",
            "tune",
            "Tune",
            tooltip="Tuning panel: regret and agreement curves, the optimum",
            id="app.tune",
        ),
        Binding(
            "d",
            "dashboard",
            "Dash",
            tooltip="Dashboard: interaction over time, violations, effort, PPP on vs off",
            id="app.dashboard",
        ),
        Binding(
            "w",
            "reviewer",
            "Reviewer",
            tooltip="Switch the reviewer: whose marks are shown, counted and recorded",
            show=False,
            id="app.reviewer",
        ),
        Binding(
            "b",
            "leaderboard",
            "Board",
            tooltip="Leaderboard: agents' strengths from your marks and from the weights' picks",
            id="app.leaderboard",
        ),
    ]

    class Loaded(Message):
        pass

    class LoadFailed(Message):
        def __init__(self, error: str) -> None:
            super().__init__()
            self.error = error

    def __init__(
        self, db_path: Path | ServerURL, config_path: Path, watch: Sequence[str] = ()
    ) -> None:
        """`db_path`: a SQLite file, or a team store's server; `watch`: the session
        folders and files to follow while the app is open."""
        super().__init__()
        self.db_path = db_path
        self.team_store = not isinstance(db_path, Path)
        self.config_path = config_path
        self.workspace: Workspace | None = None
        # Seconds from a slider's Changed message to the refreshed screen, per step.
        self.step_latencies: list[float] = []
        # Seconds from creating the app to its first screen painted (with runs, if any).
        self.first_screen_seconds: float | None = None
        self._created = time.perf_counter()
        # Set once the whole database is loaded, or has failed to load.
        self.load_done = asyncio.Event()
        # The database's data_version when the shown data was read: another process's
        # commit (a mark, an import from the command line) changes it.
        self._data_version: int | None = None
        self._checking = False  # a look for outside changes is under way
        self._watch: Timer | None = None  # the timer that looks for them
        # The open database (the first page's, the load's), closed when the app ends;
        # `_closed` once it is (a load that opens it after that closes it itself).
        self._store: Store | None = None
        self._closed = False
        # This app's own marks (and ratings) so far: a look that read the database before
        # one of them would show it undone, so its result is dropped.
        self._own_marks = 0
        self._mark_waiting = False  # a mark waits for another process's lock
        self.stage_filter: str | None = None  # the stage the runs list is filtered by
        self.exported: Path | None = None  # the last file an export wrote
        self._followed = tuple(watch)
        self._stop_following = threading.Event()
        self.sub_title = self._subtitle()

    def _subtitle(self) -> str:
        """The header's line: whose marks are shown, and the database."""
        from ..storage.reviewers import current, shown

        return inline(f"reviewer {shown(current())} · {self.db_path}")

    def on_mount(self) -> None:
        first, preview = self._first_page()
        self.push_screen(RunsScreen(preview))
        self.call_after_refresh(self._first_screen_painted, first)

    def _first_screen_painted(self, first: FirstRead | None) -> None:
        self.first_screen_seconds = time.perf_counter() - self._created
        # The whole load (and numpy's import) starts only now, so the two do not
        # share the interpreter while the first screen draws.
        self.load(first)

    def _first_page(self) -> tuple[FirstRead | None, tuple[RunRows, int] | None]:
        """The first runs, read on the UI thread for the first screen (a few ms).

        Anything slow or wrong (a lock, a migration, an error) is left to the load
        worker, which waits and reports properly.
        """
        try:
            settings = load_settings(self.config_path)
            store = open_store(self.db_path, timeout=0.05, upgrade=False)
        except PPPError:
            return None, None
        self._store = store
        try:
            return (store, settings), first_page(store, settings, PREVIEW_RUNS)
        except PPPError:
            store.close()
            return None, None

    @work(thread=True, exclusive=True, group="load")
    def load(self, first: FirstRead | None = None) -> None:
        """Open the database (unless the first page did) and load its arrays off the UI
        thread."""
        from .workspace import Workspace

        try:
            if first is None:
                config_error = None
                try:
                    settings = load_settings(self.config_path)
                except PPPError as error:
                    settings, config_error = Settings(), str(error)
                store = open_store(self.db_path, create=False)
                self._store = store
                if self._closed:  # the app ended while it opened
                    store.close()
                    return
                workspace = Workspace(store, self.config_path, settings, config_error)
            else:
                workspace = Workspace(first[0], self.config_path, first[1])
            # Read before the data: a change made while it loads is seen on the next look.
            self._data_version = workspace.store.data_version()
            workspace.load()
            workspace.store.set_lock_wait(UI_LOCK_WAIT_S)
        except PPPError as error:
            self.post_message(self.LoadFailed(str(error)))
            return
        self.workspace = workspace
        self.post_message(self.Loaded())

    def on_pppapp_loaded(self) -> None:
        self.load_done.set()
        workspace = self.workspace
        assert workspace is not None
        if workspace.config_error:
            self.notify(
                f"{inline(workspace.config_error)}. Using the defaults;"
                " saving is off until it is fixed.",
                title="Invalid config.toml",
                severity="warning",
                timeout=12,
                markup=False,
            )
        self._runs_screen().populate()
        self._watch = self.set_interval(WATCH_INTERVAL_S, self._look_for_changes)
        self._start_following(self._followed)

    def on_pppapp_load_failed(self, message: LoadFailed) -> None:
        self.load_done.set()
        self._runs_screen().show_error(message.error)
        self.notify(
            inline(message.error),
            title="Cannot open the database",
            severity="error",
            timeout=12,
            markup=False,
        )

    def _runs_screen(self) -> RunsScreen:
        for screen in self.screen_stack:
            if isinstance(screen, RunsScreen):
                return screen
        raise LookupError("no runs screen")

    # -- what the screens ask for ----------------------------------------------------

    def on_open_run(self, message: OpenRun) -> None:
        self.open_run(message.run_id, instead=message.instead)

    def on_mark_changed(self, message: MarkChanged) -> None:
        self.mark_preferred(message.run_id, message.agent)

    def on_weights_changed(self, message: WeightsChanged) -> None:
        self.change_weights(
            message.weights, message.scope, message.started, provenance=message.provenance
        )

    def on_technical_rated(self, message: TechnicalRated) -> None:
        self.rate_technical(message.run_id, message.agent, message.technical)

    def on_preset_chosen(self, message: PresetChosen) -> None:
        self.apply_preset(message.key, message.scope)

    def on_weights_reset(self, message: WeightsReset) -> None:
        self.reset_weights()

    def on_stage_filtered(self, message: StageFiltered) -> None:
        self.stage_filter = message.stage

    # -- runs ----------------------------------------------------------------------

    def open_run(self, run_id: str, *, instead: bool = False) -> None:
        """Open a run's screen on top, or `instead` of the screen on top."""
        if self.workspace is None:
            return
        try:
            run = self.workspace.store.get_run(run_id)
        except PPPError as error:
            self.notify(inline(error), severity="error", markup=False)
            return
        from .screens.run import run_screen  # its widgets load when the first run opens

        if instead:
            self.switch_screen(run_screen(run))
        else:
            self.push_screen(run_screen(run))

    # -- weights -------------------------------------------------------------------

    def change_weights(
        self,
        weights: Weights,
        scope: str | None,
        started: float,
        *,
        provenance: str | None = None,
    ) -> None:
        """The slider's hot path: new weights for one scope (a stage's table, or None for
        global), then every view that depends on them. `provenance`, for tuned weights,
        is written beside them when they are saved."""
        workspace = self.workspace
        if workspace is None or not workspace.loaded:
            return
        if provenance is not None:
            workspace.tuned[scope] = (weights.technical, provenance)
        workspace.set_weights(weights, scope)
        self._workspace_changed()
        self.call_after_refresh(self._record_step, started)

    def _record_step(self, started: float) -> None:
        self.step_latencies.append(time.perf_counter() - started)

    def _workspace_changed(self) -> None:
        """Refresh what is on screen; the runs list refreshes itself when it shows again."""
        if isinstance(self.screen, WorkspaceView):  # the help and quit boxes show none
            self.screen.workspace_changed()

    def _scope(self) -> str | None:
        """The weights the screen on top edits: a run's stage table, else global."""
        return self.screen.scope if isinstance(self.screen, WorkspaceView) else None

    def action_nudge(self, direction: int) -> None:
        workspace = self.workspace
        if workspace is None or not workspace.loaded:
            return
        from .widgets.weight_sliders import walk  # the run screen's widgets: imported on use

        scope = self._scope()
        current = workspace.weights_for(scope)
        target = min(1.0, max(0.0, round(current.technical + direction * WEIGHT_STEP, 2)))
        # The other two walk as on the sliders: their ratio stays (the pair stays a pair).
        walked = walk((current.technical, current.proactivity, current.personalization), 0, target)
        self.change_weights(Weights(*walked), scope, started=time.perf_counter())

    def apply_preset(self, key: str, scope: str | None) -> None:
        """A preset on the scope the weights bar shows (global, or a stage's table)."""
        workspace = self.workspace
        if workspace is None or not workspace.loaded:
            return
        try:
            penalties_changed = workspace.apply_preset(key, scope)
        except PPPError as error:
            self.notify(str(error), severity="warning")
            return
        if penalties_changed:
            self._reload_scores()
        else:
            self._workspace_changed()
        chosen = preset(key)
        where = "global weights" if scope is None else f"stage {literal(scope, True)}"
        also = "; its penalties apply to every stage" if chosen.paper_penalties else ""
        self.notify(f"{chosen.label} applied to {where}{also} (ctrl+s saves it)", markup=False)

    def apply_preset_here(self, key: str) -> None:
        """A preset on the weights the screen on top edits (the command palette's)."""
        self.apply_preset(key, self._scope())

    def reset_weights(self) -> None:
        workspace = self.workspace
        if workspace is None:
            return
        if workspace.reset():
            self._reload_scores()
        else:
            self._workspace_changed()

    @work(thread=True, exclusive=True, group="reload")
    def _reload_scores(self) -> None:
        """Penalties changed: interaction changes, so the arrays are rebuilt."""
        assert self.workspace is not None
        try:
            self.workspace.reload_scores()
        except PPPError as error:
            if not self._closed:  # else quitting closed the database under the read
                self.call_from_thread(self.notify, inline(error), severity="error", markup=False)
            return
        self.call_from_thread(self._workspace_changed)

    def action_save(self) -> None:
        self.save_weights()

    def save_weights(self) -> bool:
        workspace = self.workspace
        if workspace is None:
            return False
        try:
            workspace.save()
        except PPPError as error:
            self.notify(
                inline(error), title="Not saved", severity="error", timeout=10, markup=False
            )
            return False
        self.notify(f"weights saved to {inline(self.config_path)}", markup=False)
        self._workspace_changed()
        return True

    # -- export ----------------------------------------------------------------------

    def export_shown(self, fmt: str) -> None:
        """Write the runs on screen (every agent's scores under the weights being edited)
        to a new file in the current directory, as `ppp-tui export` does."""
        workspace = self.workspace
        if workspace is None or not workspace.loaded:
            self.notify("the database is still loading", severity="warning")
            return
        from .export import export_path  # numpy's and the reports' imports wait until now

        screen = self.screen
        run_ids = screen.shown_run_ids() if isinstance(screen, WorkspaceView) else None
        self.notify("exporting…", timeout=2)
        self._export(workspace.settings, run_ids, export_path(Path.cwd(), fmt), fmt)

    @work(thread=True, group="export")
    def _export(self, settings: Settings, run_ids: list[str] | None, path: Path, fmt: str) -> None:
        from .export import export_runs

        assert self.workspace is not None
        try:
            rows = export_runs(self.workspace.store, settings, run_ids, path, fmt)
        except (PPPError, sqlite3.Error) as error:
            if self._closed:
                return  # quitting closed the database under the export
            self.call_from_thread(
                self.notify,
                inline(str(error)),
                title="Not exported",
                severity="error",
                timeout=10,
                markup=False,
            )
            return
        self.exported = path
        self.call_from_thread(
            self.notify, f"exported {rows:,} rows to {inline(path)}", timeout=8, markup=False
        )

    # -- help and quit -------------------------------------------------------------

    def action_tune(self) -> None:
        """The regret and tuning panel, on the open run's scope (else global)."""
        from .screens.tuning import TuningScreen

        if isinstance(self.screen, TuningScreen):
            return
        self.push_screen(TuningScreen(self._scope()))

    def action_dashboard(self) -> None:
        """The dashboard; if one is open under other screens, back to it."""
        from .screens.dashboard import DashboardScreen

        open_ = [s for s in self.screen_stack if isinstance(s, DashboardScreen)]
        if not open_:
            # It starts on the stage the runs list is filtered by.
            self.push_screen(DashboardScreen(self.stage_filter))
            return
        while self.screen is not open_[0]:
            self.pop_screen()

    def action_leaderboard(self) -> None:
        """The leaderboard; if one is open under other screens, back to it."""
        from .screens.leaderboard import LeaderboardScreen

        open_ = [s for s in self.screen_stack if isinstance(s, LeaderboardScreen)]
        if not open_:
            self.push_screen(LeaderboardScreen(self.stage_filter))
            return
        while self.screen is not open_[0]:
            self.pop_screen()

    def action_reviewer(self) -> None:
        """Ask whose marks to show, count and record, and switch to them."""
        from ..storage.reviewers import current
        from .screens.reviewer import ReviewerScreen

        workspace = self.workspace
        if workspace is None or isinstance(self.screen, ReviewerScreen):
            return
        try:
            counts = workspace.store.mark_counts()
        except PPPError as error:
            self.notify(inline(error), severity="error", markup=False)
            return

        def chosen(name: str | None) -> None:
            if name is not None and name != current():
                self.switch_reviewer(name)

        self.push_screen(ReviewerScreen(current(), counts), chosen)

    def switch_reviewer(self, name: str) -> None:
        """Show, count and record `name`'s marks from now on."""
        from ..storage.reviewers import Scope, shown, use

        workspace = self.workspace
        assert workspace is not None
        use(name)
        workspace.store.scope = Scope(name)
        self.sub_title = self._subtitle()
        self._own_marks += 1  # a look under way read the other reviewer's marks
        self._read_reviewer_marks(name)
        self.notify(f"reviewer: {inline(shown(name))}", timeout=4, markup=False)

    @work(thread=True, group="reviewer", exclusive=True)
    def _read_reviewer_marks(self, name: str) -> None:
        workspace = self.workspace
        assert workspace is not None
        try:
            changes = workspace.mark_changes(workspace.store.preferred_agents(name))
        except (PPPError, sqlite3.Error) as error:
            self.call_from_thread(self.notify, inline(error), severity="error", markup=False)
            return
        self.call_from_thread(self._show_reviewer_marks, name, changes)

    def _show_reviewer_marks(self, name: str, changes: list[tuple[int, str | None]]) -> None:
        from ..storage.reviewers import current

        workspace = self.workspace
        assert workspace is not None
        if name != current():
            return  # switched again meanwhile: that switch's reading shows
        if changes:
            workspace.apply_marks(changes)
            self._workspace_changed()

    def action_help(self) -> None:
        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen())

    def get_system_commands(self, screen: Screen[Any]) -> Iterable[SystemCommand]:
        """Textual's commands, its Quit described as it now behaves."""
        for command in super().get_system_commands(screen):
            if command.title == "Quit":
                command = command._replace(help=QUIT_HELP)
            yield command

    async def action_quit(self) -> None:
        """ctrl+q and the command palette's Quit: the same question as `q`."""
        self.action_quit_app()

    def action_copy_or_quit(self) -> None:
        """ctrl+c with no text selected (the screen's own ctrl+c copies a selection)."""
        self.action_quit_app()

    def action_quit_app(self) -> None:
        workspace = self.workspace
        if workspace is None or not workspace.dirty:
            self.exit()
            return
        if isinstance(self.screen, QuitScreen):
            return  # already asking

        def decided(choice: str | None) -> None:
            if choice == "discard" or (choice == "save" and self.save_weights()):
                self.exit()

        self.push_screen(QuitScreen(self.config_path.name), decided)

    def on_unmount(self) -> None:
        """Close the database safely: worker threads may be reading it (a look for changes,
        a search, a figure being computed). The look stops, the workers are told to stop,
        and the store closes once the statement under way is done; a worker's next
        statement then fails as a closed database, which each of them takes quietly."""
        self._closed = True
        self._end_following()
        if self._watch is not None:
            self._watch.stop()
        self.workers.cancel_all()
        if self._store is not None:
            self._store.close()
