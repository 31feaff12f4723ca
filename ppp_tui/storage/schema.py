"""The run store's SQLite schema and its forward migrations.

The schema version lives in PRAGMA user_version. Each migration takes the database
from version N to N + 1; a database newer than the last migration is refused, never
rewritten. Tables are plain enough that `datasette runs.db` reads well: one row per
run, per agent, per trajectory, turn, question, violation and preferred-agent mark.
One derived table, `run_scores`, packs each run's hot agent columns for fast loads
(packs.py); it is rebuilt from `agents` whenever it is missing or stale.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path

from . import packs
from .database import StoreError, switch_to_wal

_V1 = """
CREATE TABLE runs (
    id TEXT PRIMARY KEY,
    spec_id TEXT,
    stage TEXT,
    task TEXT,
    task_type TEXT NOT NULL,
    created_at TEXT,
    preferences TEXT NOT NULL DEFAULT '[]',      -- JSON list of stated preference names
    states_preferences INTEGER NOT NULL DEFAULT 0, -- 1 if one other than no_preference
    selected_agent TEXT,                          -- the system's own pick, as imported
    preferred_agent TEXT,                         -- the current mark (history: preferred_marks)
    iterations TEXT NOT NULL DEFAULT '[]',        -- JSON list of quality scores
    agents INTEGER NOT NULL,
    imported_at TEXT NOT NULL
);
CREATE INDEX runs_stage ON runs(stage);
CREATE INDEX runs_spec ON runs(spec_id);
CREATE INDEX runs_created ON runs(created_at);

CREATE TABLE agents (
    id INTEGER PRIMARY KEY,
    run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    position INTEGER NOT NULL,                    -- order in the imported run
    name TEXT NOT NULL,
    model TEXT,
    technical REAL NOT NULL,
    relevance REAL,
    confidence REAL,
    output TEXT,
    -- What the whole-database arrays need, so they load without joins. NULL counts
    -- mean "no trajectory" (the technical-only fallback).
    q_low INTEGER,                                -- question counts by effort
    q_medium INTEGER,
    q_high INTEGER,
    violations INTEGER,
    UNIQUE (run_id, name)
);
-- Covers the whole-database scan, so it never reads the (large) output column.
CREATE INDEX agents_scores
    ON agents(run_id, position, name, technical, q_low, q_medium, q_high, violations);

-- One row per agent that has a trajectory (same id as the agent): none means
-- "no trajectory".
CREATE TABLE trajectories (
    id INTEGER PRIMARY KEY REFERENCES agents(id) ON DELETE CASCADE,
    run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    turns INTEGER NOT NULL,
    questions INTEGER NOT NULL,
    violations INTEGER NOT NULL,
    unchecked TEXT NOT NULL DEFAULT '[]'          -- stated preferences no checker decided
);
CREATE INDEX trajectories_run ON trajectories(run_id);

CREATE TABLE trajectory_turns (
    id INTEGER PRIMARY KEY,
    trajectory_id INTEGER NOT NULL REFERENCES trajectories(id) ON DELETE CASCADE,
    turn INTEGER NOT NULL,                        -- 1-based
    prompt TEXT,
    response TEXT,
    token_count INTEGER,
    latency_ms INTEGER,
    timestamp TEXT
);
CREATE INDEX trajectory_turns_trajectory ON trajectory_turns(trajectory_id);

CREATE TABLE trajectory_questions (
    id INTEGER PRIMARY KEY,
    trajectory_id INTEGER NOT NULL REFERENCES trajectories(id) ON DELETE CASCADE,
    turn INTEGER,
    text TEXT NOT NULL,
    effort TEXT NOT NULL CHECK (effort IN ('low', 'medium', 'high')),
    source TEXT NOT NULL                          -- label, classifier or extracted
);
CREATE INDEX trajectory_questions_trajectory ON trajectory_questions(trajectory_id);

CREATE TABLE trajectory_violations (
    id INTEGER PRIMARY KEY,
    trajectory_id INTEGER NOT NULL REFERENCES trajectories(id) ON DELETE CASCADE,
    turn INTEGER,
    preference TEXT NOT NULL,
    severity TEXT NOT NULL,
    penalty REAL,                                 -- the violation's own penalty, if given
    source TEXT NOT NULL                          -- label or checker
);
CREATE INDEX trajectory_violations_trajectory ON trajectory_violations(trajectory_id);

-- Every change of a run's preferred agent, kept with its time (agent NULL: cleared).
CREATE TABLE preferred_marks (
    id INTEGER PRIMARY KEY,
    run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    agent TEXT,
    marked_at TEXT NOT NULL,
    source TEXT NOT NULL                          -- import, cli or app
);
CREATE INDEX preferred_marks_run ON preferred_marks(run_id);
"""


def _execute(conn: sqlite3.Connection, script: str) -> None:
    # Statement by statement: executescript would commit the migration's transaction.
    statement = ""
    for line in script.splitlines(keepends=True):
        statement += line
        if sqlite3.complete_statement(statement):
            conn.execute(statement)
            statement = ""


def _create(conn: sqlite3.Connection) -> None:
    _execute(conn, _V1)


def _add_run_scores(conn: sqlite3.Connection) -> None:
    """Version 2: the per-run packs of the hot agent columns (see packs.py)."""
    _add_columns(conn, _V3_AGENT_COLUMNS)  # the packs are built from them
    _execute(conn, packs.SCHEMA)
    conn.execute(packs.INSERT_TRIGGER)
    packs.fill_missing(conn)


def _add_failures_and_consensus(conn: sqlite3.Connection) -> None:
    """Version 3: why an agent's output is a failure (NULL: it is work), the run's
    consensus result (JSON text: status, agreements, conflicts, artifacts count,
    synthesis, verdict), and the failure flags in the packs."""
    # A database migrated from version 1 got these with its packs already.
    _add_columns(conn, (*_V3_AGENT_COLUMNS, ("run_scores", "failed", "BLOB")))


_V3_AGENT_COLUMNS = (("agents", "failure", "TEXT"), ("runs", "consensus", "TEXT"))


def _add_columns(conn: sqlite3.Connection, columns: tuple[tuple[str, str, str], ...]) -> None:
    """Add each (table, column, type) the table does not have yet."""
    for table, column, kind in columns:
        present = {row[1] for row in conn.execute(f"PRAGMA table_info({table})")}
        if column not in present:
            conn.execute(f"ALTER TABLE {table} ADD COLUMN {column} {kind}")


# MIGRATIONS[n] takes a database at version n to version n + 1.
MIGRATIONS: tuple[Callable[[sqlite3.Connection], None], ...] = (
    _create,
    _add_run_scores,
    _add_failures_and_consensus,
)
SCHEMA_VERSION = len(MIGRATIONS)
OUR_TABLES = frozenset(
    {
        "runs",
        "agents",
        "trajectories",
        "trajectory_turns",
        "trajectory_questions",
        "trajectory_violations",
        "preferred_marks",
        "run_scores",
    }
)


def prepare(conn: sqlite3.Connection, path: Path, upgrade: bool = True) -> None:
    """Check that the database is ppp-tui's (or empty) and not too new, switch it to WAL
    mode, and migrate it to the current schema under the write lock."""
    version = int(conn.execute("PRAGMA user_version").fetchone()[0])
    tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    if version == 0 or "runs" not in tables:
        # Another program's database, whatever its user_version says (spec-kit's is
        # 2): refused before anything, the journal mode included, is written to it.
        foreign = sorted(tables - OUR_TABLES)
        if foreign:
            raise StoreError(
                f"{path}: not a ppp-tui database (it has other tables: {', '.join(foreign[:3])})"
            )
        if version:
            raise StoreError(
                f"{path}: not a ppp-tui database (user_version {version}, no runs table)"
            )
    if version > SCHEMA_VERSION:
        raise StoreError(
            f"{path}: made by a newer ppp-tui (schema {version}; this version reads"
            f" up to {SCHEMA_VERSION}); upgrade ppp-tui to open it"
        )
    if version < SCHEMA_VERSION and not upgrade:
        raise StoreError(f"{path}: needs an upgrade to schema {SCHEMA_VERSION}")
    conn.execute("PRAGMA foreign_keys = ON")
    switch_to_wal(conn)
    conn.execute("PRAGMA synchronous = NORMAL")
    if version == SCHEMA_VERSION:
        return
    conn.execute("BEGIN IMMEDIATE")
    try:
        # Again under the write lock: another process may have created or upgraded the
        # schema since the first look, and its work is not done twice.
        version = int(conn.execute("PRAGMA user_version").fetchone()[0])
        for step in range(version, SCHEMA_VERSION):
            MIGRATIONS[step](conn)
            conn.execute(f"PRAGMA user_version = {step + 1}")
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
