"""Putting a freshly built database in place whole: a kill or a rival process never sees half.

A new database (a first import, a demo) is built in a scratch file beside its final place
(same folder, so the final step is a rename), folded into one file (no -wal beside it) and
then linked in where nothing is yet, or renamed over the old database. The old database is
replaced only when no other process has it open, and is marked retired just before the
rename, so a process that opened it a moment earlier notices and opens the new one
(`Store.open`) instead of reading or writing a file that is gone.

The scratch file is its process's (`scratch.py`): removed on the way out, ctrl+c, SIGTERM
and SIGHUP included, and by a later build once its process is gone, killed outright.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

from .database import BUSY_TIMEOUT_S, RETIRED_ID, StoreError
from .durable import sync_directory, sync_file
from .files import ParsedRecord, Record
from .importer import ImportReport
from .scratch import claim, release, signals_end_as_exit, signals_held
from .search import update_index
from .store import Store

# How long a replacement waits for other connections to the old database to finish.
_REPLACE_TIMEOUT_S = 2.0


def import_new(
    path: Path,
    records: Iterable[Record],
    skip_invalid: bool = False,
    progress: Callable[[int], None] | None = None,
) -> ImportReport:
    """A first import: the database appears at `path` only once the import is complete, so a
    failed one leaves nothing behind and never deletes what another process wrote.

    If another process created the database meanwhile, the runs go into that one.

    The new database is bulk loaded (`Store.bulk_load`: no WAL, its indexes made after
    the rows, while the last runs are parsed), and its full-text index, made empty first,
    takes in the runs as they go in.
    """

    def fill(store: Store) -> ImportReport:
        update_index(store.path, BUSY_TIMEOUT_S)
        with store.bulk_load() as make_indexes:
            return store.import_records(
                records, skip_invalid=skip_invalid, progress=progress, nearly_done=make_indexes
            )

    with build_beside(path, fill) as (scratch, report):
        if link_new(scratch, path):
            return report
        with Store.open(scratch) as built, Store.open(path, create=True) as store:
            ids = [info.id for info in built.run_infos()]
            again = store.import_records(
                ParsedRecord(str(path), None, "$", None, parsed=built.get_run(run_id))
                for run_id in ids
            )
    report.added = again.added
    report.skipped += again.skipped
    report.marks = again.marks
    return report


@contextmanager
def build_beside(
    path: Path, fill: Callable[[Store], ImportReport], scratch: Path | None = None
) -> Iterator[tuple[Path, ImportReport]]:
    """Fill a new scratch database beside `path` (`fill` imports into it) and seal it; the
    scratch file is removed on the way out, whatever happens (once renamed, it is not there).
    SIGTERM and SIGHUP end the block as ctrl+c does, by an exception, so it is removed then
    too.

    `scratch` is its name if chosen beforehand (`scratch_beside`), for processes that
    write into it too.
    """
    if scratch is None:
        scratch = scratch_beside(path)
    try:
        with signals_end_as_exit():
            with Store.open(scratch, create=True) as store:
                report = fill(store)
                seal(store.conn)
            _check_sealed(scratch)
            yield scratch, report
    finally:
        discard(scratch)


def scratch_beside(path: Path) -> Path:
    """A new, unused file name in `path`'s folder (the folder is created if missing),
    this process's until `discard`. The scratch files of killed builds beside `path` are
    removed first; those of builds going on in other processes are kept."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise StoreError(f"{path}: cannot create ({error.strerror})") from None
    try:
        return claim(path)
    except OSError as error:
        raise StoreError(f"{path}: cannot create ({error.strerror or error})") from None


def seal(conn: sqlite3.Connection) -> None:
    """Fold a scratch database's WAL into its main file (closing it removes the -wal)."""
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")


def _check_sealed(scratch: Path) -> None:
    """The scratch file must stand alone: its WAL mode stays in its header, its -wal is gone."""
    wal = Path(f"{scratch}-wal")
    if wal.exists() and wal.stat().st_size:
        raise StoreError(f"{scratch}: the new database could not be completed; nothing replaced")


def discard(scratch: Path) -> None:
    """Remove the scratch database and give it up (its lock file goes last)."""
    release(scratch)


def link_new(scratch: Path, path: Path) -> bool:
    """Put the sealed scratch file at `path` if nothing is there; False if something is."""
    sync_file(scratch)
    try:
        os.link(scratch, path)
    except FileExistsError:
        return False
    except OSError:
        # A file system without hard links: a rename, checked first (a narrow race).
        if os.path.lexists(path):
            return False
        os.replace(scratch, path)
    discard(scratch)
    sync_directory(path.parent)
    return True


def replace_old(scratch: Path, path: Path) -> None:
    """Rename the sealed scratch file over the database at `path`.

    Refused while another process has the old database open: its connection would go on
    with a file that is gone, beside a -wal file that would then belong to the new one.
    """
    sync_file(scratch)
    try:
        conn = sqlite3.connect(path, timeout=_REPLACE_TIMEOUT_S, isolation_level=None)
    except sqlite3.Error as error:
        raise StoreError(f"{path}: cannot replace ({error})") from None
    try:
        # Leaving WAL mode needs every other connection closed; the exclusive locking mode
        # keeps everyone else out from here until this connection closes, after the rename.
        # The in-memory journal leaves no -journal file to be taken for the new database's.
        conn.execute("PRAGMA locking_mode = EXCLUSIVE")
        if conn.execute("PRAGMA journal_mode = MEMORY").fetchone()[0] != "memory":
            raise sqlite3.OperationalError("database is locked")
        # Ctrl+c or SIGTERM waits for the rename: never a retired database left in place.
        with signals_held():
            conn.execute("BEGIN IMMEDIATE")
            conn.execute(f"PRAGMA application_id = {RETIRED_ID}")
            conn.execute("COMMIT")
            try:
                os.replace(scratch, path)
            except OSError:
                conn.execute("PRAGMA application_id = 0")  # the old database stays in use
                raise
    except sqlite3.Error as error:
        if "locked" in str(error) or "busy" in str(error):
            raise StoreError(
                f"{path}: open in another process (the app?); close it and try again"
            ) from None
        raise StoreError(f"{path}: cannot replace ({error})") from None
    except OSError as error:
        raise StoreError(f"{path}: cannot replace ({error.strerror or error})") from None
    finally:
        conn.close()
    sync_directory(path.parent)
