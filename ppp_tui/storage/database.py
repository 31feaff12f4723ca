"""A database file's connection: its errors, its WAL mode, its retired mark, its removal.

What every part of the run store shares about the SQLite file itself, apart from its
tables (schema.py) and its rows (rows.py): the one-line errors a failed statement
becomes, the switch to WAL mode, the mark a database being replaced carries (swap.py),
and the SQL that selects one stage's runs.
"""

from __future__ import annotations

import sqlite3
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ..core.errors import PPPError
from ..core.stages import NO_STAGE

BUSY_TIMEOUT_S = 5.0
# PRAGMA application_id of a database that is being replaced (swap.py): whoever opens it
# opens the file now at its path instead.
RETIRED_ID = 0x52455449


class StoreError(PPPError):
    """A database that cannot be used: missing, corrupt, locked, foreign or too new."""


class DatabaseLocked(StoreError):
    """Another process held the write lock for longer than this connection waits."""


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def database_error(path: Path, error: sqlite3.Error) -> StoreError:
    text = str(error)
    if "locked" in text or "busy" in text:
        return DatabaseLocked(f"{path}: the database is locked by another process; try again")
    if "not a database" in text or "malformed" in text or "corrupt" in text:
        return StoreError(f"{path}: not a usable SQLite database ({text})")
    return StoreError(f"{path}: database error: {text}")


def stage_condition(stage: str) -> tuple[str, list[Any]]:
    """The SQL condition selecting `stage`'s runs; NO_STAGE selects runs without one."""
    if stage == NO_STAGE:
        return "runs.stage IS NULL", []
    return "runs.stage = ?", [stage]


def stage_where(stage: str | None) -> tuple[str, list[Any]]:
    if stage is None:
        return "", []
    condition, params = stage_condition(stage)
    return f" WHERE {condition}", params


def switch_to_wal(conn: sqlite3.Connection) -> None:
    """Put a database in WAL mode. Two processes switching a new file at once can each
    hold the shared lock the other needs, and SQLite then fails one at once rather than
    wait (no busy handler breaks that tie): it tries again until the usual lock wait."""
    deadline = time.monotonic() + BUSY_TIMEOUT_S
    while True:
        try:
            if conn.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
                conn.execute("PRAGMA journal_mode = WAL")
            return
        except sqlite3.OperationalError as error:
            if "locked" not in str(error) or time.monotonic() >= deadline:
                raise
            time.sleep(0.01)


def take_back(conn: sqlite3.Connection) -> None:
    """Clear the retired mark of a database whose replacement never happened."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        retired = is_retired(conn)
        if retired and conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'runs'").fetchone():
            conn.execute("PRAGMA application_id = 0")
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise


def remove_database(path: Path) -> None:
    """Delete a database file with its WAL and shared-memory files."""
    for suffix in ("", "-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)


# -- what is SQLite's own: the pragmas a store sets and reads ---------------------------


def is_retired(conn: sqlite3.Connection) -> bool:
    """Whether a replacement (swap.py) marked the database as being replaced."""
    return bool(conn.execute("PRAGMA application_id").fetchone()[0] == RETIRED_ID)


def lock_wait(seconds: float) -> str:
    """The statement that sets how long one waits for another process's lock."""
    return f"PRAGMA busy_timeout = {round(seconds * 1000)}"


DATA_VERSION = "PRAGMA data_version"  # changes when another connection commits


def for_bulk_load(conn: sqlite3.Connection, cache: bool = True) -> None:
    """Settings for writing many rows at once into a database no reader shares yet.

    No foreign key is checked: the rows come from `rows.Rows`, which builds every row
    with its parent, and nothing is deleted (at 100k runs, 0.5 s fewer of an import's
    4 s of inserts)."""
    conn.execute("PRAGMA foreign_keys = OFF")
    conn.execute("PRAGMA synchronous = OFF")
    conn.execute("PRAGMA journal_mode = MEMORY")
    if cache:
        conn.execute("PRAGMA cache_size = -65536")


def after_bulk_load(conn: sqlite3.Connection) -> None:
    """The usual settings again: WAL (readers beside a writer), the default cache."""
    conn.execute("PRAGMA cache_size = -2000")
    conn.execute("PRAGMA foreign_keys = ON")
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA synchronous = NORMAL")
    # The WAL opens with the next statement that reads: until then a checkpoint
    # (swap.seal) fails with "database table is locked".
    conn.execute("SELECT count(*) FROM sqlite_master").fetchone()


def table_columns(conn: sqlite3.Connection, table: str) -> list[str]:
    """The columns of `table`, in order."""
    return [str(row[1]) for row in conn.execute(f"PRAGMA table_info({table})")]
