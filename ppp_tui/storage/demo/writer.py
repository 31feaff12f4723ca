"""Writing a demo database (`ppp-tui demo`): the runs made chunk by chunk and written
into a scratch database that takes the old one's place only when complete.

Where it can fork, worker processes make the chunks and each writes its own chunks into
the scratch database itself, on a connection of its own, in chunk order (so every row
gets the id it gets in a database filled run by run). The writing process sets the
database up, counts the runs as their chunks are written and makes the indexes while
the last chunks are being made; the workers end with it.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..files import ParsedRecord
from .draw import _timestamps
from .generator import DEMO_SIZE, _chunk_models, _chunks, generate_parsed

if TYPE_CHECKING:
    from multiprocessing.pool import Pool

    from ..importer import ImportReport
    from ..store import Store


def write_demo(
    path: str | Path,
    runs: int = DEMO_SIZE,
    seed: int = 0,
    *,
    replace: bool = False,
    progress: Callable[[int], None] | None = None,
    sessions: bool = False,
) -> ImportReport:
    """Write a demo database of `runs` runs at `path` (`ppp-tui demo`).

    A database that already holds runs is kept unless `replace` is true (after checking it
    is a ppp-tui database). The new database is built beside the old one and takes its
    place only when complete, so an interrupted run leaves the old one as it was. `progress`
    is called with the number of runs written, as they are written. With `sessions`,
    the demo's few runs read from agents' sessions (demo/sessions.py) come on top.
    """
    from ..database import StoreError, now
    from ..store import Store
    from ..swap import build_beside, link_new, replace_old, scratch_beside

    path = Path(path)
    existed = path.exists()
    if existed:
        with Store.open(path) as store:
            held = store.count()
        if held and not replace:
            raise StoreError(
                f"{path}: already holds {held} runs; use --replace to write a fresh demo database"
            )

    scratch = scratch_beside(path)
    with ExitStack() as stack:
        chunks: _Chunks | None = None
        if _chunks(runs) > 1 and _workers() > 1:
            # The workers start on the chunks at once, while the new database is set up
            # (they are forked before it is opened: no connection of this process is
            # theirs); their rows carry the time the demo began as the import's time.
            chunks = stack.enter_context(_started(runs, seed, now(), scratch))

        def fill(store: Store) -> ImportReport:
            if chunks is not None:
                report = chunks.write(store, progress)
            else:
                records = (
                    ParsedRecord("<demo>", None, "$", raw, parsed=run)
                    for raw, run in generate_parsed(runs, seed)
                )
                report = store.import_records(records, progress=progress)
            if sessions:
                from .sessions import session_runs

                read = session_runs()
                extra = store.import_records(
                    ParsedRecord("<demo sessions>", None, "$", None, parsed=run) for run, _ in read
                )
                with store.lock, store._transaction():
                    store.conn.executemany(
                        "UPDATE runs SET revision = ? WHERE id = ?",
                        [(rev, run.id) for run, rev in read],
                    )
                report.added += extra.added
                report.marks += extra.marks
            from .colleagues import add_colleague_marks

            add_colleague_marks(store, seed)  # the user's marks are the report's

            # The full-text index too, so that the first search has nothing to build
            # (search.py); a search of a database without one builds it then.
            from ..search import update_index

            update_index(store.path, 5.0)
            return report

        with build_beside(path, fill, scratch) as (scratch, report):
            if existed:
                replace_old(scratch, path)
            elif not link_new(scratch, path):
                raise StoreError(f"{path}: created by another process meanwhile; not replaced")
    return report


def _workers() -> int:
    """How many processes may make chunks at once: forking only on Linux, from the main
    thread of a process that has no other thread (a fork copies no thread)."""
    import os
    import sys
    import threading

    if sys.platform != "linux" or threading.active_count() > 1:
        return 1
    return min(len(os.sched_getaffinity(0)), 8)


# What the chunk workers inherit when they are forked (one demo at a time is written).
_JOB: dict[str, Any] = {}


class _Chunks:
    """The chunk workers of a demo, started on its chunks; `write` lets them write."""

    def __init__(self, pool: Pool, written: Iterator[tuple[int, int, list[str]]]) -> None:
        self.pool = pool
        self.written = written  # each chunk's `_write_chunk` result, in chunk order

    def write(self, store: Store, progress: Callable[[int], None] | None) -> ImportReport:
        """Have the workers write every chunk into `store`'s new database (`bulk_load`).

        The indexes are made while the last chunks are still being made (one per
        worker): rather than at the very end, while all but one core stand idle.
        """
        from ..importer import ImportReport

        report = ImportReport()
        with store.bulk_load() as make_indexes:
            try:
                _pass_turn(0)  # the database is ready for the first chunk
                for chunk, (added, marks, unknown) in enumerate(self.written):
                    report.added += added
                    report.marks += marks
                    report.unknown_preferences.update(unknown)
                    if progress is not None:
                        progress(added)
                    if chunk + 1 == _JOB["indexes"]:
                        # Its turn: the next chunk waits for the indexes.
                        make_indexes()
                        _pass_turn(chunk + 2)
            except BaseException:
                # A worker failed, or ctrl+c: none may go on writing while the database
                # is thrown away.
                self.pool.terminate()
                raise
        return report


@contextmanager
def _started(runs: int, seed: int, stamp: str, scratch: Path) -> Iterator[_Chunks]:
    """Forked worker processes, started on every chunk at once, that end with the block.
    Each writes its chunk into `scratch` when the chunk before it is written
    (`_write_chunk`), the first one when `_Chunks.write` has the database ready."""
    import multiprocessing
    import os

    from .. import reviewers

    context = multiprocessing.get_context("fork")
    workers = min(_workers(), _chunks(runs))
    _JOB.update(
        seed=seed,
        stamp=stamp,
        reviewer=reviewers.current(),  # the demo's marks are the current reviewer's
        times=_timestamps(random.Random(f"{seed}:time"), runs),
        scratch=scratch,
        # Whose turn it is to write: -1 while the database is set up, then each chunk's
        # number in turn (`_turn`), with one more turn for the indexes before the last
        # chunks, one per worker (none if they are all there is).
        indexes=max(_chunks(runs) - workers, 0) or -1,
        turn=context.Value("q", -1, lock=False),
        turns=context.Condition(),
    )
    try:
        with context.Pool(workers, _worker_start, (os.getpid(),)) as pool:
            yield _Chunks(pool, pool.imap(_write_chunk, range(_chunks(runs))))
    finally:
        _JOB.clear()


def _turn(chunk: int) -> int:
    """The turn in which chunk number `chunk` is written."""
    indexes: int = _JOB["indexes"]
    return chunk + 1 if 0 <= indexes <= chunk else chunk


def _pass_turn(turn: int) -> None:
    """Let turn `turn` begin."""
    turns = _JOB["turns"]
    with turns:
        _JOB["turn"].value = turn
        turns.notify_all()


def _worker_start(parent: int) -> None:
    """A chunk worker: ctrl+c is the writing process's to handle, the cycle collector is
    off (the runs have no reference cycles; it would only walk them again and again), and
    it ends with the writing process `parent`."""
    import gc
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    gc.disable()
    _end_with(parent)


def _end_with(parent: int) -> None:
    """Have the kernel kill this process, without a word, when `parent` dies.

    A writing process killed outright (SIGKILL) cannot stop its workers: each would go
    on making and writing chunks into a database nobody will use (or wait for a turn
    that never comes), and print a traceback onto the terminal it shares, long after
    the command ended.
    """
    import ctypes
    import os
    import signal

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):  # pragma: no cover - a libc without prctl
        pass
    if os.getppid() != parent:  # it died before the kernel was told
        os._exit(0)


# prctl's option that sends the process a signal when its parent dies (linux/prctl.h).
_PR_SET_PDEATHSIG = 1


def _write_chunk(chunk: int) -> tuple[int, int, list[str]]:
    """In a worker: make chunk number `chunk`, and write it into the scratch database
    in its turn: once the chunk before it is written (and the indexes made, if they
    come in between). Returns (runs written, preferred marks, stated or violated
    preference names not in the catalogue)."""
    from ..rows import Rows
    from ..store import bulk_write

    rows = Rows(_JOB["stamp"], 0, _JOB["reviewer"])
    for run in _chunk_models(_JOB["seed"], _JOB["times"], chunk):
        rows.add(run)
    tables = rows.take()
    turn, turns, mine = _JOB["turn"], _JOB["turns"], _turn(chunk)
    with turns:
        turns.wait_for(lambda: turn.value == mine)
    bulk_write(_JOB["scratch"], tables)
    _pass_turn(mine + 1)
    runs, marks = tables[0], tables[6]
    return len(runs), len(marks), sorted(rows.unknown)
