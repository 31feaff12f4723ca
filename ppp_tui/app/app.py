"""`ppp-tui browse`: the terminal app (SPEC 8)."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import TYPE_CHECKING

from textual import work
from textual.app import App
from textual.binding import Binding
from textual.message import Message

from ..core.errors import PPPError
from ..core.settings import Settings, preset
from ..storage.config import load_settings
from ..storage.store import Store
from .first_page import RunRows, first_page
from .screens import HelpScreen, QuitScreen, RunsScreen

if TYPE_CHECKING:
    from .workspace import Workspace

# What the first page read, for the load worker to go on with: the open database and
# the settings.
Opened = tuple[Store, Settings]

WEIGHT_STEP = 0.05
PREVIEW_RUNS = 200  # runs shown while the whole database loads


class PPPApp(App[None]):
    """Browse runs, move the weights, watch rankings, agreement and regret follow."""

    TITLE = "ppp-tui"
    CSS_PATH = "app.tcss"
    BINDINGS = [
        Binding("q", "quit_app", "Quit", id="app.quit"),
        Binding("question_mark", "help", "Help", key_display="?", id="app.help"),
        Binding(
            "left_square_bracket",
            "nudge(-1)",
            "Tech -0.05",
            key_display="[",
            id="app.technical_down",
        ),
        Binding(
            "right_square_bracket",
            "nudge(1)",
            "Tech +0.05",
            key_display="]",
            id="app.technical_up",
        ),
        Binding("ctrl+s", "save", "Save", id="app.save"),
        Binding("t", "tune", "Tune", id="app.tune"),
        Binding(
            "d",
            "dashboard",
            "Dash",
            tooltip="Dashboard: interaction over time, violations, effort, PPP on vs off",
            id="app.dashboard",
        ),
    ]

    class Loaded(Message):
        pass

    class LoadFailed(Message):
        def __init__(self, error: str) -> None:
            super().__init__()
            self.error = error

    def __init__(self, db_path: Path, config_path: Path) -> None:
        super().__init__()
        self.db_path = db_path
        self.config_path = config_path
        self.workspace: Workspace | None = None
        # Seconds from a slider's Changed message to the refreshed screen, per step.
        self.step_latencies: list[float] = []
        # Seconds from creating the app to its first screen painted (with runs, if any).
        self.first_screen_seconds: float | None = None
        self._created = time.perf_counter()
        # Set once the whole database is loaded, or has failed to load.
        self.load_done = asyncio.Event()
        self.sub_title = str(db_path)

    def on_mount(self) -> None:
        opened, preview = self._first_page()
        self.push_screen(RunsScreen(preview))
        self.call_after_refresh(self._first_screen_painted, opened)

    def _first_screen_painted(self, opened: Opened | None) -> None:
        self.first_screen_seconds = time.perf_counter() - self._created
        # The whole load (and numpy's import) starts only now, so the two do not
        # share the interpreter while the first screen draws.
        self.load(opened)

    def _first_page(self) -> tuple[Opened | None, tuple[RunRows, int] | None]:
        """The first runs, read on the UI thread for the first screen (a few ms).

        Anything slow or wrong (a lock, a migration, an error) is left to the load
        worker, which waits and reports properly.
        """
        try:
            settings = load_settings(self.config_path)
            store = Store.open(self.db_path, timeout=0.05, upgrade=False)
        except PPPError:
            return None, None
        try:
            return (store, settings), first_page(store, settings, PREVIEW_RUNS)
        except PPPError:
            store.close()
            return None, None

    @work(thread=True, exclusive=True, group="load")
    def load(self, opened: Opened | None = None) -> None:
        """Open the database (unless the first page did) and load its arrays off the UI
        thread."""
        from .workspace import Workspace

        try:
            if opened is None:
                config_error = None
                try:
                    settings = load_settings(self.config_path)
                except PPPError as error:
                    settings, config_error = Settings(), str(error)
                store = Store.open(self.db_path, create=False)
                workspace = Workspace(store, self.config_path, settings, config_error)
            else:
                workspace = Workspace(opened[0], self.config_path, opened[1])
            workspace.load()
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
                f"{workspace.config_error}. Using the defaults; saving is off until it is fixed.",
                title="Invalid config.toml",
                severity="warning",
                timeout=12,
            )
        self._runs_screen().populate()

    def on_pppapp_load_failed(self, message: LoadFailed) -> None:
        self.load_done.set()
        self._runs_screen().show_error(message.error)
        self.notify(message.error, title="Cannot open the database", severity="error", timeout=12)

    def _runs_screen(self) -> RunsScreen:
        for screen in self.screen_stack:
            if isinstance(screen, RunsScreen):
                return screen
        raise LookupError("no runs screen")

    # -- runs ----------------------------------------------------------------------

    def open_run(self, run_id: str) -> None:
        if self.workspace is None:
            return
        try:
            run = self.workspace.store.get_run(run_id)
        except PPPError as error:
            self.notify(str(error), severity="error")
            return
        from .run_screen import RunScreen  # its widgets load when the first run opens

        self.push_screen(RunScreen(run))

    def mark_preferred(self, run_id: str, agent: str | None) -> None:
        workspace = self.workspace
        if workspace is None:
            return
        try:
            workspace.mark(run_id, agent)
        except PPPError as error:
            self.notify(str(error), severity="error")
            return
        self.notify(f"{run_id}: preferred {agent}" if agent else f"{run_id}: mark cleared")
        self._weights_changed()

    # -- weights -------------------------------------------------------------------

    def change_weight(self, technical: float, scope: str | None, started: float) -> None:
        """The slider's hot path: new weights, then every view that depends on them."""
        workspace = self.workspace
        if workspace is None or not workspace.loaded:
            return
        workspace.set_technical(technical, scope)
        self._weights_changed()
        self.call_after_refresh(self._record_step, started)

    def _record_step(self, started: float) -> None:
        self.step_latencies.append(time.perf_counter() - started)

    def _weights_changed(self) -> None:
        """Refresh what is on screen; the runs list refreshes itself when it shows again."""
        refresh = getattr(self.screen, "weights_changed", None)  # the runs list, a run
        if refresh is not None:
            refresh()

    def action_nudge(self, direction: int) -> None:
        workspace = self.workspace
        if workspace is None or not workspace.loaded:
            return
        scope = getattr(self.screen, "scope", None)  # a run's scope, else global
        current = workspace.weights_for(scope).technical
        target = min(1.0, max(0.0, round(current + direction * WEIGHT_STEP, 2)))
        self.change_weight(target, scope, started=time.perf_counter())

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
            self._weights_changed()
        chosen = preset(key)
        where = "global weights" if scope is None else f"stage {scope}"
        also = "; its penalties apply to every stage" if chosen.paper_penalties else ""
        self.notify(f"{chosen.label} applied to {where}{also} (ctrl+s saves it)")

    def reset_weights(self) -> None:
        workspace = self.workspace
        if workspace is None:
            return
        if workspace.reset():
            self._reload_scores()
        else:
            self._weights_changed()

    @work(thread=True, exclusive=True, group="reload")
    def _reload_scores(self) -> None:
        """Penalties changed: interaction changes, so the arrays are rebuilt."""
        assert self.workspace is not None
        self.workspace.reload_scores()
        self.call_from_thread(self._weights_changed)

    def action_save(self) -> None:
        self.save_weights()

    def save_weights(self) -> bool:
        workspace = self.workspace
        if workspace is None:
            return False
        try:
            workspace.save()
        except PPPError as error:
            self.notify(str(error), title="Not saved", severity="error", timeout=10)
            return False
        self.notify(f"weights saved to {self.config_path}")
        self._weights_changed()
        return True

    # -- help and quit -------------------------------------------------------------

    def action_tune(self) -> None:
        """The regret and tuning panel, on the open run's scope (else global)."""
        from .tuning_screen import TuningScreen

        if isinstance(self.screen, TuningScreen):
            return
        self.push_screen(TuningScreen(getattr(self.screen, "scope", None)))

    def action_dashboard(self) -> None:
        """The dashboard; if one is open under other screens, back to it."""
        from .dashboard_screen import DashboardScreen

        open_ = [s for s in self.screen_stack if isinstance(s, DashboardScreen)]
        if not open_:
            # It starts on the stage the runs list is filtered by.
            self.push_screen(DashboardScreen(self._runs_screen().stage_filter))
            return
        while self.screen is not open_[0]:
            self.pop_screen()

    def action_help(self) -> None:
        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen())

    async def action_quit(self) -> None:
        """ctrl+q and the command palette's Quit: the same question as `q`."""
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

        self.push_screen(QuitScreen(), decided)

    def on_unmount(self) -> None:
        if self.workspace is not None:
            self.workspace.store.close()
