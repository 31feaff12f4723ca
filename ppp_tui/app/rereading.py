"""Reading the database again: what another process committed (a mark, an import from
the command line, a session followed), looked for every second, and what this app
changed itself (a rating by hand, a grouping). The screens keep their place (open run,
cursor, filter, weights); an open run whose rows changed is read again and shown with
its agent, turn and scroll position kept.

`browse --watch` follows the agents' sessions while the app is open (`LiveSessions`): a
worker thread imports what their folders hold and then follows them
(storage/sessions/watching.py), writing through a connection of its own; each write is
seen as another process's is, at once rather than at the next look.

A look that read the database before one of this app's own marks would show that mark
undone, so its result is dropped and the next look reads again (`_own_marks`).
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from textual import work
from textual.message import Message

from ..core.errors import PPPError
from ..storage.database import DatabaseLocked
from ..storage.location import ServerURL
from .services import AppServices
from .text import inline

if TYPE_CHECKING:
    from pathlib import Path

    from ..core.model import Run
    from ..core.scores import Scores
    from ..core.settings import Settings
    from ..storage.sessions.importing import SessionReport
    from ..storage.store import RunInfo
    from .screens.runs import RunsScreen


@dataclass(frozen=True)
class DatabaseRead:
    """The database as a read off the UI thread found it, to show."""

    version: int  # its data version when read
    contents: tuple[int, ...]  # its contents key
    settings: Settings  # the settings it was scored with
    infos: list[RunInfo]
    scores: Scores


class Rereading(AppServices):
    """The app's side of reading the database again (PPPApp is one)."""

    _checking: bool  # a look for outside changes is under way
    _closed: bool  # the database is closed (the app ends)
    # The database's data_version when the shown data was read.
    _data_version: int | None
    _own_marks: int  # this app's own marks (and ratings) so far
    _look_error = False  # the last look failed, and said so

    if TYPE_CHECKING:

        def _workspace_changed(self) -> None: ...

        def _reload_scores(self) -> object: ...

        def _runs_screen(self) -> RunsScreen: ...

    def _look_for_changes(self) -> None:
        if self.workspace is not None and not self._checking and not self._closed:
            self._checking = True
            self._read_changes()

    @work(thread=True, group="watch")
    def _read_changes(self) -> None:
        """If another process committed since the shown data was read, read it again
        (off the UI thread: the load takes about a second at 100k runs)."""
        workspace = self.workspace
        assert workspace is not None
        store = workspace.store
        own_marks = self._own_marks
        try:
            version = store.data_version()
            if version == self._data_version:
                self._checking = False
                self._look_error = False
                return
            contents = store.contents_key()
            if contents == workspace.contents:  # only marks: a few ms at 100k runs
                changes = workspace.mark_changes(store.preferred_agents())
                # Still "checking" until the change is shown, or the next look reads it again.
                self.call_from_thread(self._marked_outside, own_marks, version, changes)
                return
            settings = workspace.settings  # an import: everything again
            read = DatabaseRead(version, contents, settings, *workspace.read())
        except DatabaseLocked:
            self._checking = False  # locked for now: the next look tries again
            return
        except (PPPError, sqlite3.Error) as error:
            self._checking = False  # gone for now: said once, and the next look tries again
            self.call_from_thread(self._look_failed, error)
            return
        self.call_from_thread(self._changed_outside, own_marks, read)

    def _look_failed(self, error: Exception) -> None:
        """A look that failed (a team store's server gone): one line, the first time
        until a look succeeds again."""
        if self._closed or self._look_error:
            return
        self._look_error = True
        self.notify(
            f"{inline(error)}; the runs shown may be out of date until it is back",
            title="Cannot read the database",
            severity="error",
            timeout=12,
            markup=False,
        )

    def _still_current(self, own_marks: int) -> bool:
        """Whether a look's reading still holds (no mark of this app's since it began);
        if not, the next look reads again."""
        self._checking = False
        self._look_error = False
        if own_marks == self._own_marks:
            return True
        self._data_version = None
        return False

    def _marked_outside(
        self, own_marks: int, version: int, changes: list[tuple[int, str | None]]
    ) -> None:
        workspace = self.workspace
        assert workspace is not None
        if not self._still_current(own_marks):
            return
        self._data_version = version
        if changes:
            workspace.apply_marks(changes)
            self._workspace_changed()

    def _changed_outside(self, own_marks: int, read: DatabaseRead) -> None:
        """Show the database as another process left it; the open screen, the cursor's
        run, the filter and the weights being edited stay."""
        if self._still_current(own_marks):
            self._show_read(read)

    def _show_read(self, read: DatabaseRead) -> None:
        """Show the database as `read` found it (scored with its settings' penalties)."""
        workspace = self.workspace
        assert workspace is not None
        workspace.replace_data(read.infos, read.scores)
        workspace.contents = read.contents
        self._data_version = read.version
        if dict(workspace.settings.penalties) != dict(read.settings.penalties):
            self._reload_scores()  # a preset changed them while the data was read
        else:
            self._workspace_changed()
        self._refresh_open_runs()

    def _refresh_open_runs(self) -> None:
        from .screens.run import RunScreen

        ids = sorted({s.run.id for s in self.screen_stack if isinstance(s, RunScreen)})
        if ids:
            self._read_open_runs(ids)

    @work(thread=True, exclusive=True, group="open-runs")
    def _read_open_runs(self, ids: list[str]) -> None:
        """The open runs as the database holds them now (a session followed grew)."""
        workspace = self.workspace
        assert workspace is not None
        runs = []
        for run_id in ids:
            try:
                runs.append(workspace.store.get_run(run_id))
            except (PPPError, sqlite3.Error):
                continue  # gone (ungrouped elsewhere) or locked: shown as it was
        if not self._closed:
            self.call_from_thread(self._open_runs_read, runs)

    def _open_runs_read(self, runs: list[Run]) -> None:
        from .screens.run import RunScreen

        by_id = {run.id: run for run in runs}
        for screen in self.screen_stack:
            if isinstance(screen, RunScreen):
                run = by_id.get(screen.run.id)
                if run is not None and run != screen.run:
                    screen.replace_run(run)

    @work(thread=True, exclusive=True, group="reread")
    def _read_again(self) -> None:
        """The runs list and the score arrays, read again after this app changed scores
        (about a second at 100k runs)."""
        workspace = self.workspace
        assert workspace is not None
        own_marks = self._own_marks
        try:
            version = workspace.store.data_version()
            contents = workspace.store.contents_key()
            read = DatabaseRead(version, contents, workspace.settings, *workspace.read())
        except (PPPError, sqlite3.Error) as error:
            if not self._closed:
                self.call_from_thread(self.notify, inline(error), severity="error", markup=False)
            return
        self.call_from_thread(self._read_again_done, own_marks, read)

    def _read_again_done(self, own_marks: int, read: DatabaseRead) -> None:
        if own_marks != self._own_marks:  # a mark since the read began: read once more
            self._read_again()
            return
        self._show_read(read)


class SessionsWritten(Message):
    """The follower wrote a batch of sessions (its errors, if any), or stopped on an
    error (`failed`). Posted, never awaited: the follower never waits for the screen."""

    def __init__(self, errors: list[str], failed: bool = False) -> None:
        super().__init__()
        self.errors = errors
        self.failed = failed


class LiveSessions(Rereading):
    """The app's side of following sessions (PPPApp is one)."""

    db_path: Path | ServerURL
    _followed: tuple[str, ...]  # the folders and files followed (none: not watching)
    _stop_following: threading.Event

    def _start_following(self, names: Sequence[str]) -> None:
        self._followed = tuple(names)
        if self._followed:
            self._follow()

    def _end_following(self) -> None:
        self._stop_following.set()

    @work(thread=True, group="sessions")
    def _follow(self) -> None:
        from ..core.sessions.grouping import Grouping
        from ..storage.sessions.watching import watch_places
        from ..storage.store_server import open_store

        try:
            store = open_store(self.db_path)
        except PPPError as error:
            self.post_message(SessionsWritten([str(error)], failed=True))
            return
        try:
            watch_places(store, self._followed, Grouping(), self._stop_following, self._written)
        except PPPError as error:
            self.post_message(SessionsWritten([str(error)], failed=True))
        finally:
            store.close()

    def _written(self, report: SessionReport) -> None:
        """A batch written (in the worker): to be shown now, its errors told."""
        self.post_message(SessionsWritten(list(report.errors)))

    def on_sessions_written(self, message: SessionsWritten) -> None:
        if self._closed:
            return
        if message.failed:
            self.notify(
                f"{inline(message.errors[0])}; sessions are no longer followed",
                title="Sessions",
                severity="error",
                timeout=12,
                markup=False,
            )
            return
        self._look_for_changes()
        for error in message.errors[:3]:
            self.notify(inline(error), title="Sessions", severity="warning", markup=False)
