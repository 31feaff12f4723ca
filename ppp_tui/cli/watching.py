"""`import --watch`: the sessions imported, then followed as the agents write them, a
line for each run a change wrote, until ctrl+c or SIGTERM."""

from __future__ import annotations

import signal
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from types import FrameType
from typing import TYPE_CHECKING

import click

from ..core.sessions.waiting import MARK as WAITING
from ..safe_text import inline
from .common import Env

if TYPE_CHECKING:
    from ..core.sessions.grouping import Grouping
    from ..storage.sessions.importing import SessionReport


def watch_sessions(names: Sequence[str], options: Grouping, env: Env) -> None:
    """Import the sessions `names` hold, then follow them; exit status 0 when stopped."""
    from ..storage.sessions.watching import Places, Watcher

    places = Places.of(names)
    stop = threading.Event()
    with _stopped_by_signals(stop) as started:
        store = env.store(create=True)
        try:
            watcher = Watcher(store, places, options)
            first = watcher.first()
            _tell(first, first=True)
            roots = places.roots()
            if not roots:
                raise click.ClickException("nothing to watch: no folder of sessions is there")

            def ready() -> None:
                folders = f"{len(roots)} folder{'s' * (len(roots) != 1)}"
                click.echo(f"watching {folders} for changes (ctrl+c stops)", err=True)

            started.set()
            for report in watcher.batches(stop, ready):
                _tell(report, first=False)
        finally:
            store.close()
    click.echo("stopped watching", err=True)


@contextmanager
def _stopped_by_signals(stop: threading.Event) -> Iterator[threading.Event]:
    """Ctrl+c and SIGTERM stop the watch: between batches by `stop` (the watch ends after
    the write under way), before it by KeyboardInterrupt (the first import is rolled back
    whole). Either way the command ends with status 0."""
    watching = threading.Event()

    def ending(signum: int, frame: FrameType | None) -> None:
        stop.set()
        if not watching.is_set():
            raise KeyboardInterrupt

    previous = {sig: signal.signal(sig, ending) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield watching
    except KeyboardInterrupt:
        pass
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def _tell(report: SessionReport, first: bool) -> None:
    """A line on standard output for each run written; warnings and errors (a database
    locked for longer than its timeout) on standard error."""
    from .tables import cut, terminal_width

    for line in report.warnings:
        click.echo(f"warning: {inline(line)}", err=True)
    for line in report.errors:
        click.echo(f"error: {inline(line)}", err=True)
    if first:
        click.echo(
            f"imported {report.sessions} session{'s' * (report.sessions != 1)}:"
            f" {report.added} new run{'s' * (report.added != 1)}, {report.updated} updated,"
            f" {report.unchanged} unchanged"
        )
    stamp = time.strftime("%H:%M:%S")
    width = terminal_width()
    for rid, kind, agents, task in report.runs:
        head = f"{stamp} {kind:<7} {inline(rid)}  {cut(', '.join(agents), 40)}"
        # On a terminal, one line of it: the task takes what is left (at least 12).
        room = 50 if width is None else max(12, width - len(head) - 3)
        mark = f"{WAITING} " if rid in report.waiting else ""
        click.echo(f"{head}  {mark}{cut(task, room - len(mark))}")
