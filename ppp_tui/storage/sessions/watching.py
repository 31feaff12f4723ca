"""Watching session files and folders: what they hold imported, then every change as it
comes (`import --watch`, `browse --watch`; docs/sessions.md, "Watching").

The system tells of changes (inotify, FSEvents, ReadDirectoryChangesW, through
watchfiles): nothing is looked at while nothing changes. Changes that come together are
taken as one batch, read (following.py: only what was appended, where the format allows
it) and written in one transaction, grouped into runs as `import` groups them. A write
that finds the database locked past its timeout (or a team store's server away) is
tried again with the next batch, or after a second; its reason is said once. A batch
whose write took long (a very long session) makes the next wait a few times as long,
so that following it costs a bounded share of the processor.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ...core.errors import PPPError
from ...core.sessions.grouping import Grouping, session_key
from ...core.sessions.model import Session
from .discover import walk
from .following import Following
from .importing import SessionReport, find_files, write_sessions

if TYPE_CHECKING:
    from ..store import Store

# Changes are taken together while they keep coming at most STEP_MS apart, for at most
# DEBOUNCE_MS: a burst of writes is one batch.
STEP_MS = 50
DEBOUNCE_MS = 1600
# After a write that took t seconds, the next batch waits PAUSE_SHARE * t: following a
# session whose every write is long takes at most about 1 / (1 + PAUSE_SHARE) of a core.
PAUSE_SHARE = 4.0
_RETRY_S = 1.0  # a write the database refused is tried again after this long


@dataclass(frozen=True)
class Places:
    """What is watched: folders (all of them, recursively) and files named one by one."""

    folders: tuple[Path, ...]
    files: frozenset[Path]

    @classmethod
    def of(cls, names: Sequence[str]) -> Places:
        folders: list[Path] = []
        files: list[Path] = []
        for name in names:
            path = Path(name).absolute()
            (folders if path.is_dir() else files).append(path)
        return cls(tuple(folders), frozenset(files))

    def roots(self) -> list[Path]:
        """The folders the system watches: the folders named, and those of the files (a
        file written again under its name is a new file, seen from its folder)."""
        roots = list(self.folders) + sorted({path.parent for path in self.files})
        return [root for root in roots if root.is_dir()]

    def holds(self, path: Path) -> bool:
        return path in self.files or any(path.is_relative_to(f) for f in self.folders)

    def every_file(self) -> list[str]:
        found = [str(path) for path in sorted(self.files)]
        for folder in self.folders:
            found.extend(str(path) for path in walk(folder))
        return found


class Watcher:
    """The sessions under `places`, imported into `store` and followed."""

    def __init__(self, store: Store, places: Places, options: Grouping) -> None:
        self.store = store
        self.places = places
        self.options = options
        self.following = Following()
        self.waiting: dict[str, Session] = {}  # read, not yet written (the database refused)
        self.refused: str | None = None  # why the last write was refused, told once
        self.pause = 0.0  # how long the next batch waits (after a long write)

    def first(self) -> SessionReport:
        """Import what the places hold now (as `import` would: a file named that is no
        transcript is an error, one found in a folder a warning)."""
        report = SessionReport()
        files, others = find_files([str(p) for p in sorted(self.places.files)], "auto", report)
        for name in others:
            report.errors.append(f"{name}: not a session transcript")
        names = [item.path for item in files] + [
            str(path) for folder in self.places.folders for path in walk(folder)
        ]
        self._write(self.following.read(names, report), report)
        return report

    def batches(
        self, stop: threading.Event, ready: Callable[[], None] | None = None
    ) -> Iterator[SessionReport]:
        """The report of each batch of changes written, until `stop` is set. `ready` is
        told once the system watches: from then on no change is missed (what changed
        between the first import and then is caught up with first)."""
        from watchfiles import Change, watch

        roots = self.places.roots()
        if not roots:
            if ready is not None:
                ready()
            return
        caught_up = False
        changes = watch(
            *roots,
            watch_filter=None,  # folders made count too (see below)
            debounce=DEBOUNCE_MS,
            step=STEP_MS,
            stop_event=stop,
            rust_timeout=int(_RETRY_S * 1000),
            yield_on_timeout=True,
            raise_interrupt=False,
        )
        for batch in changes:
            if stop.is_set():
                return
            paths = [] if caught_up else self.places.every_file()
            for change, name in batch:
                path = Path(name)
                if not self.places.holds(path):
                    continue
                if change is Change.deleted:
                    self.following.forget(name)
                elif path.is_dir():
                    # A new folder: files made in it before the system watched it too.
                    paths.extend(str(inner) for inner in walk(path))
                elif name.endswith((".jsonl", ".json")):
                    paths.append(name)
            if not paths and not self.waiting:
                continue
            report = SessionReport()
            started = time.perf_counter()
            self._write(self.following.read(paths, report), report)
            if not caught_up:
                caught_up = True
                if ready is not None:
                    ready()
            yield report
            took = time.perf_counter() - started
            if took * PAUSE_SHARE > 0.05 and stop.wait(took * PAUSE_SHARE):
                return

    def _write(self, sessions: list[Session], report: SessionReport) -> None:
        """Write `sessions` with those a refused write left waiting; refused again, they
        wait for the next batch (the report says so)."""
        for session in sessions:
            self.waiting[f"{session_key(session)}\0{session.path}"] = session
        if not self.waiting:
            return
        pending = list(self.waiting.values())
        try:
            write_sessions(self.store, pending, self.options, report)
            if report.runs:
                written = {rid for rid, *_ in report.runs}
                report.waiting = written & set(self.store.waiting_agents())
        except PPPError as error:
            # Said once, however many times it is tried again (every second while a
            # team store's server is away, say): a different reason is said again.
            if str(error) != self.refused:
                self.refused = str(error)
                report.errors.append(f"{error} (tried again with the next change)")
            return
        self.waiting.clear()
        self.refused = None


def watch_places(
    store: Store,
    names: Sequence[str],
    options: Grouping,
    stop: threading.Event,
    tell: Callable[[SessionReport], None],
) -> None:
    """Import what `names` hold into `store`, then follow them until `stop` is set;
    `tell` gets the report of the first import and of every batch of changes."""
    watcher = Watcher(store, Places.of(names), options)
    tell(watcher.first())
    for report in watcher.batches(stop):
        tell(report)
