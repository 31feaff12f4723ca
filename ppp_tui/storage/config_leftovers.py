"""Temporary files of config.toml saves that were killed, and the writer lock's quick
test: what reading the config needs of config_write.py, without tomlkit (a command or
the app reads its settings before anything else, and tomlkit only writes)."""

from __future__ import annotations

import os
import re
import sys
from contextlib import suppress
from pathlib import Path


def lock_now(descriptor: int) -> None:
    """Take the writer lock without waiting; OSError if another process holds it."""
    if sys.platform == "win32":
        import msvcrt

        msvcrt.locking(descriptor, msvcrt.LK_NBLCK, 1)
    else:
        import fcntl

        fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)


def remove_leftovers(path: Path) -> None:
    """Remove the temporary files of saves of `path` that were killed, if no save is at
    work now (its writer lock is free); otherwise leave everything for a later call.

    For a process that reads the config without saving it: it never waits, never creates
    the lock file (without one, no save has run beside this file) and never raises.
    """
    with suppress(OSError):
        target = Path(os.path.realpath(path))
        descriptor = os.open(target.with_name(f".{target.name}.lock"), os.O_RDWR)
        try:
            lock_now(descriptor)
            remove_stale_temporary_files(target)
        finally:
            os.close(descriptor)  # releases the lock


def _temporary_name(target: Path) -> re.Pattern[str]:
    return re.compile(rf"\.{re.escape(target.name)}\.[0-9a-f]{{12}}\.tmp")


def remove_stale_temporary_files(target: Path) -> None:
    """Remove the temporary files beside `target` named exactly as a save names them (only
    under the writer lock: then none is being written)."""
    pattern = _temporary_name(target)
    try:
        names = os.listdir(target.parent)
    except OSError:
        return
    for name in names:
        if pattern.fullmatch(name):
            (target.parent / name).unlink(missing_ok=True)
