"""Scratch files that are never left behind: owned while in use, removed when their owner
is gone.

A scratch database (`swap.py`) is named `.<name>.<12 hex digits>.tmp` beside the database
it becomes; SQLite may add `-wal`, `-shm` and `-journal` to that name. Before any of them
exists, its owner creates `.<name>.<hex>.tmp.lock` and holds an advisory lock (flock) on it
for as long as the scratch file is in use, and removes it last. The system drops the lock
of a process that dies, however it dies, so a later build can tell a killed build's files
(a lock file nobody holds) from those of a build going on in another process (a lock
file held): it removes the former and never touches the latter, nor any file not named
exactly so. Scratch files without a lock file (from before the lock files) are removed
once untouched for ten minutes, as they were then.

SIGTERM and SIGHUP end a build as ctrl+c does (`signals_end_as_exit`): by an exception,
so the scratch file is removed on the way out instead of left for a later build.
"""

from __future__ import annotations

import os
import re
import signal
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from types import FrameType

# A lockless scratch file untouched this long was left by a build that was killed.
_STALE_S = 600.0
# The files of one scratch database: SQLite's, then its owner's lock file.
_DATABASE_SUFFIXES = ("", "-wal", "-shm", "-journal")
_LOCK_SUFFIX = ".lock"

# The lock files this process holds, by scratch path: (descriptor, owning pid).
_HELD: dict[Path, tuple[int, int]] = {}
_HELD_GUARD = threading.Lock()


def _pattern(path: Path) -> re.Pattern[str]:
    """The names of `path`'s scratch files (group 1: the random part, 2: the suffix)."""
    return re.compile(
        rf"\.{re.escape(path.name)}\.([0-9a-f]{{12}})\.tmp(|-wal|-shm|-journal|\.lock)"
    )


def _lock_path(scratch: Path) -> Path:
    return Path(f"{scratch}{_LOCK_SUFFIX}")


def claim(path: Path) -> Path:
    """A new scratch file name beside `path`, owned by this process until `release`.

    The scratch files of killed builds of `path` are removed first (`remove_orphans`).
    Without advisory locks (Windows) the name is returned unowned.
    """
    remove_orphans(path)
    while True:
        scratch = path.with_name(f".{path.name}.{os.urandom(6).hex()}.tmp")
        if _lock_unavailable():
            return scratch
        lock = _lock_path(scratch)
        try:
            descriptor = os.open(lock, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            continue
        if _try_lock(descriptor) and _same_file(descriptor, lock):
            break
        # Another process cleaning up took the new file for a killed build's (it was not
        # locked yet) and removes it: another name.
        os.close(descriptor)
    with suppress(OSError):  # for whoever looks: which process it is
        os.write(descriptor, f"{os.getpid()}\n".encode())
    with _HELD_GUARD:
        _HELD[scratch] = (descriptor, os.getpid())
    return scratch


def release(scratch: Path) -> None:
    """Remove the scratch database `scratch` (with SQLite's files beside it) and, if this
    process owns it, its lock file last. Neither ctrl+c nor SIGTERM stops it half way."""
    with signals_held():
        for suffix in _DATABASE_SUFFIXES:
            with suppress(FileNotFoundError):
                os.unlink(f"{scratch}{suffix}")
        with _HELD_GUARD:
            held = _HELD.get(scratch)
            if held is None or held[1] != os.getpid():
                return  # not this process's (a forked child's copy of the parent's list)
            del _HELD[scratch]
        with suppress(FileNotFoundError):
            os.unlink(_lock_path(scratch))
        os.close(held[0])


def owned(scratch: Path) -> bool:
    """Whether this process holds `scratch`'s lock."""
    with _HELD_GUARD:
        held = _HELD.get(scratch)
    return held is not None and held[1] == os.getpid()


def remove_orphans(path: Path) -> list[Path]:
    """Remove the scratch files beside `path` whose owner is gone; returns the scratch
    names removed. A scratch file whose lock another process holds is kept, and so is
    every file not named as `path`'s scratch files are."""
    pattern = _pattern(path)
    try:
        names = os.listdir(path.parent)
    except OSError:
        return []
    groups: dict[str, set[str]] = {}
    for name in names:
        if match := pattern.fullmatch(name):
            groups.setdefault(match.group(1), set()).add(match.group(2))
    removed = []
    for key, suffixes in sorted(groups.items()):
        scratch = path.with_name(f".{path.name}.{key}.tmp")
        if owned(scratch):
            continue
        if _LOCK_SUFFIX in suffixes and not _lock_unavailable():
            if _remove_if_unowned(scratch):
                removed.append(scratch)
        elif _untouched(scratch) > _STALE_S:
            _remove_files(scratch)
            removed.append(scratch)
    return removed


def _remove_if_unowned(scratch: Path) -> bool:
    """Take the lock of `scratch` if nobody holds it, and remove its files under it."""
    lock = _lock_path(scratch)
    try:
        descriptor = os.open(lock, os.O_RDWR)
    except OSError:
        return False  # removed meanwhile, or not ours to open
    try:
        if not _try_lock(descriptor) or not _same_file(descriptor, lock):
            return False  # its owner is alive (or another process is removing it)
        _remove_files(scratch)
        return True
    finally:
        os.close(descriptor)


def _remove_files(scratch: Path) -> None:
    """The database files first and the lock file last: a lock file left alone by a kill
    here is still found (and removed) by the next build."""
    for suffix in (*_DATABASE_SUFFIXES, _LOCK_SUFFIX):
        with suppress(OSError):
            os.unlink(f"{scratch}{suffix}")


def _untouched(scratch: Path) -> float:
    """Seconds since any of `scratch`'s files was last written."""
    newest = 0.0
    for suffix in (*_DATABASE_SUFFIXES, _LOCK_SUFFIX):
        with suppress(OSError):
            newest = max(newest, os.stat(f"{scratch}{suffix}").st_mtime)
    return time.time() - newest


def _lock_unavailable() -> bool:
    return sys.platform == "win32"


def _try_lock(descriptor: int) -> bool:
    """Lock `descriptor`'s file for this process (and the children it forks), without
    waiting; False if another process holds it."""
    import fcntl

    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return False
    return True


def _same_file(descriptor: int, path: Path) -> bool:
    """Whether `path` still names the file open as `descriptor` (not removed meanwhile)."""
    try:
        here, there = os.fstat(descriptor), os.stat(path)
    except OSError:
        return False
    return (here.st_dev, here.st_ino) == (there.st_dev, there.st_ino)


# --- Signals --------------------------------------------------------------------------------

# The signals that end a process at once by default and that a build turns into an exit.
_ENDING = tuple(getattr(signal, name) for name in ("SIGTERM", "SIGHUP") if hasattr(signal, name))


class Terminated(SystemExit):
    """SIGTERM (or SIGHUP) arrived during a build: the process exits as that signal asks,
    after the `finally` blocks on the way out have removed its scratch files."""


@contextmanager
def signals_end_as_exit() -> Iterator[None]:
    """Within the block, SIGTERM and SIGHUP raise `Terminated` (exit status 128 + the
    signal's number, as a shell reports a process ended by it) in the main thread, as
    ctrl+c raises KeyboardInterrupt, so the block's cleanup runs. Only a signal left to
    its default action is changed (one ignored stays ignored), only in the main thread,
    and the handlers are restored afterwards. A process forked meanwhile (a worker) dies
    of the signal as before."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    owner = os.getpid()

    def ending(signum: int, frame: FrameType | None) -> None:
        if os.getpid() != owner:  # a forked child that inherited the handler
            signal.signal(signum, signal.SIG_DFL)
            os.kill(os.getpid(), signum)
            return
        raise Terminated(128 + signum)

    previous = {}
    for signum in _ENDING:
        if signal.getsignal(signum) is signal.SIG_DFL:
            previous[signum] = signal.signal(signum, ending)
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


@contextmanager
def signals_held() -> Iterator[None]:
    """Ctrl+c, SIGTERM and SIGHUP wait until the block is done (in this thread, POSIX): a
    step that must not stop half way."""
    if not hasattr(signal, "pthread_sigmask"):
        yield
        return
    held = {signal.SIGINT, *_ENDING}
    mask = signal.pthread_sigmask(signal.SIG_BLOCK, held)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)
