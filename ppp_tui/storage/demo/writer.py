"""Writing a demo database (`ppp-tui demo`): the runs made in forked worker
processes, chunk by chunk, and bulk loaded into a scratch database that takes the
old one's place only when complete; the workers end with the writing process.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..files import ParsedRecord
from .draw import _timestamps
from .generator import DEMO_SIZE, _chunk_runs, _chunks, generate_parsed

if TYPE_CHECKING:
    from ..importer import ImportReport
    from ..rows import RowBatch


def write_demo(
    path: str | Path,
    runs: int = DEMO_SIZE,
    seed: int = 0,
    *,
    replace: bool = False,
    progress: Callable[[int], None] | None = None,
) -> ImportReport:
    """Write a demo database of `runs` runs at `path` (`ppp-tui demo`).

    A database that already holds runs is kept unless `replace` is true (after checking it
    is a ppp-tui database). The new database is built beside the old one and takes its
    place only when complete, so an interrupted run leaves the old one as it was. `progress`
    is called with 1 for every run written.
    """
    from ..database import StoreError, now
    from ..store import Store
    from ..swap import build_beside, link_new, replace_old

    path = Path(path)
    existed = path.exists()
    if existed:
        with Store.open(path) as store:
            held = store.count()
        if held and not replace:
            raise StoreError(
                f"{path}: already holds {held} runs; use --replace to write a fresh demo database"
            )

    with ExitStack() as stack:
        batches: Iterator[RowBatch] | None = None
        if _chunks(runs) > 1 and _workers() > 1:
            # The workers start on the chunks at once, while the new database is set up;
            # their rows carry the time the demo began as the import's time.
            batches = stack.enter_context(_built(runs, seed, now()))

        def fill(store: Store) -> ImportReport:
            if batches is not None:
                return store.import_batches(lambda _stamp: batches, progress, scratch=True)
            records = (
                ParsedRecord("<demo>", None, "$", raw, parsed=run)
                for raw, run in generate_parsed(runs, seed)
            )
            return store.import_records(records, progress=progress)

        with build_beside(path, fill) as (scratch, report):
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


@contextmanager
def _built(runs: int, seed: int, stamp: str) -> Iterator[Iterator[RowBatch]]:
    """Every chunk's rows, in order, made by forked worker processes that start at once
    and end with the block."""
    import gc
    import multiprocessing
    import os

    _JOB.update(seed=seed, stamp=stamp, times=_timestamps(random.Random(f"{seed}:time"), runs))
    # The rows received have no reference cycles: the cycle collector would only walk
    # them again and again while they are unpickled here.
    collecting = gc.isenabled()
    gc.disable()
    try:
        context = multiprocessing.get_context("fork")
        workers = min(_workers(), _chunks(runs))
        with context.Pool(workers, _worker_start, (os.getpid(),)) as pool:
            yield _received(pool.imap(_build_chunk, range(_chunks(runs))))
    finally:
        _JOB.clear()
        if collecting:
            gc.enable()


def _received(chunks: Iterator[bytes]) -> Iterator[RowBatch]:
    import marshal

    from ..rows import RowBatch

    for data in chunks:
        tables, agents, marks, unknown = marshal.loads(data)
        yield RowBatch(tables, agents, marks, frozenset(unknown))


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

    A writing process killed outright (SIGKILL) cannot stop its workers: each would
    finish its chunk, find nobody to send it to and print a traceback onto the terminal
    it shares, long after the command ended.
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


def _build_chunk(chunk: int) -> bytes:
    """A chunk's `RowBatch`, marshalled: its rows are tuples of plain values, which
    marshal writes and reads about twice as fast as pickle."""
    import marshal

    from ..rows import build_batch

    runs = (run for _, run in _chunk_runs(_JOB["seed"], _JOB["times"], chunk))
    batch = build_batch(runs, _JOB["stamp"])
    return marshal.dumps((batch.tables, batch.agents, batch.marks, tuple(batch.unknown)))
