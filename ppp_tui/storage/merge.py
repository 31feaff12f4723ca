"""Reading another ppp-tui database's marks (`ppp-tui import other.db`), without
changing it: opened read-only, never migrated."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from .database import StoreError, database_error, table_columns
from .reviewers import UNKNOWN, checked

# (run id, agent or None for a clearing, marked_at, source, reviewer)
HistoryRow = tuple[str, str | None, str, str, str]


def is_ppp_database(path: Path) -> bool:
    """Whether `path` is an SQLite file with ppp-tui's tables (runs and their marks).
    Only a regular file is looked into: a pipe's bytes are left for the import."""
    import stat

    try:
        if not stat.S_ISREG(path.stat().st_mode):
            return False
        with path.open("rb") as handle:
            if handle.read(16) != b"SQLite format 3\x00":
                return False
        conn = _connect(path)
    except (OSError, sqlite3.Error):
        return False
    try:
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        return {"runs", "agents", "preferred_marks"} <= tables
    except sqlite3.OperationalError as error:
        if "locked" in str(error) or "busy" in str(error):
            raise database_error(path, error) from None
        return False
    except sqlite3.Error:
        return False
    finally:
        conn.close()


def read_marks(path: Path) -> list[HistoryRow]:
    """Every mark history entry of the database at `path`, oldest first (the unknown
    reviewer's for a database from before reviewers were recorded)."""
    try:
        conn = _connect(path)
        try:
            columns = set(table_columns(conn, "preferred_marks"))
            reviewer = "reviewer" if "reviewer" in columns else "''"
            rows = conn.execute(
                f"SELECT run_id, agent, marked_at, source, {reviewer} FROM preferred_marks"
                " ORDER BY id"
            ).fetchall()
        finally:
            conn.close()
    except sqlite3.Error as error:
        raise StoreError(f"{path}: cannot read its marks ({error})") from None
    good = [
        row
        for row in rows
        if all(type(v) is str for v in (row[0], row[2], row[3], row[4]))
        and (row[1] is None or type(row[1]) is str)
    ]
    if len(good) != len(rows):
        raise StoreError(f"{path}: its marks hold values that are not text (an outside edit?)")
    for row in good:
        if row[4] != UNKNOWN and checked(row[4], f"{path}: reviewer") != row[4]:
            raise StoreError(
                f"{path}: reviewer {row[4]!r} is not a name ppp-tui writes (an outside edit?)"
            )
    return good


def _connect(path: Path) -> sqlite3.Connection:
    return sqlite3.connect(f"{path.absolute().as_uri()}?mode=ro", uri=True, timeout=5)
