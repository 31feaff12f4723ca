"""The run store's SQLite schema and its forward migrations.

The schema version lives in PRAGMA user_version. Each migration takes the database
from version N to N + 1; a database newer than the last migration is refused, never
rewritten. Tables are plain enough that `datasette runs.db` reads well: one row per
run, per agent, per trajectory, turn, question, violation, preferred-agent mark and
edit of a file.
One derived table, `run_scores`, packs each run's hot agent columns for fast loads
(packs.py); it is rebuilt from `agents` whenever it is missing or stale.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import judge_claims, packs
from .database import StoreError, switch_to_wal

if TYPE_CHECKING:
    import sqlite_utils
    from sqlite_utils.db import ForeignKey


def _statements(script: str) -> Iterator[str]:
    """The statements of `script`, one by one (executescript would commit the migration's
    transaction)."""
    statement = ""
    for line in script.splitlines(keepends=True):
        statement += line
        if sqlite3.complete_statement(statement):
            yield statement
            statement = ""


def database(conn: sqlite3.Connection) -> sqlite_utils.Database:
    """`conn` through sqlite-utils, as it is: no plugins run on it, and recursive triggers
    stay off (with them on, a replacing insert would fire the delete triggers)."""
    import sqlite_utils

    return sqlite_utils.Database(conn, recursive_triggers=False, execute_plugins=False)


def _cascade(table: str, column: str, other: str, other_column: str = "id") -> ForeignKey:
    from sqlite_utils.db import ForeignKey

    return ForeignKey(table, column, other, other_column, on_delete="CASCADE")


def _create(conn: sqlite3.Connection) -> None:
    """Version 1: the runs, their agents, trajectories and marks."""
    db = database(conn)
    runs = db.table("runs").create(
        {
            "id": str,
            "spec_id": str,
            "stage": str,
            "task": str,
            "task_type": str,
            "created_at": str,
            "preferences": str,  # JSON list of stated preference names
            "states_preferences": int,  # 1 if one other than no_preference
            "selected_agent": str,  # the system's own pick, as imported
            "preferred_agent": str,  # the current mark (version 5: `marks`)
            "iterations": str,  # JSON list of quality scores
            "agents": int,
            "imported_at": str,
        },
        pk="id",
        not_null={"task_type", "preferences", "states_preferences", "iterations"}
        | {"agents", "imported_at"},
        defaults={"preferences": "[]", "states_preferences": 0, "iterations": "[]"},
    )
    runs.create_index(["stage"], index_name="runs_stage")
    runs.create_index(["spec_id"], index_name="runs_spec")
    runs.create_index(["created_at"], index_name="runs_created")

    agents = db.table("agents").create(
        {
            "id": int,
            "run_id": str,
            "position": int,  # order in the imported run
            "name": str,
            "model": str,
            "technical": float,
            "relevance": float,
            "confidence": float,
            "output": str,
            # What the whole-database arrays need, so they load without joins. NULL
            # counts mean "no trajectory" (the technical-only fallback).
            "q_low": int,  # question counts by effort
            "q_medium": int,
            "q_high": int,
            "violations": int,
        },
        pk="id",
        foreign_keys=[_cascade("agents", "run_id", "runs")],
        not_null={"run_id", "position", "name", "technical"},
    )
    # An agent's name is unique in its run.
    agents.create_index(["run_id", "name"], index_name="agents_run_name", unique=True)
    # Covers the whole-database scan, so it never reads the (large) output column.
    agents.create_index(
        ["run_id", "position", "name", "technical", "q_low", "q_medium", "q_high", "violations"],
        index_name="agents_scores",
    )

    # One row per agent that has a trajectory (same id as the agent): none means
    # "no trajectory".
    trajectories = db.table("trajectories").create(
        {
            "id": int,
            "run_id": str,
            "turns": int,
            "questions": int,
            "violations": int,
            "unchecked": str,  # stated preferences no checker decided, as a JSON list
        },
        pk="id",
        foreign_keys=[
            _cascade("trajectories", "id", "agents"),
            _cascade("trajectories", "run_id", "runs"),
        ],
        not_null={"run_id", "turns", "questions", "violations", "unchecked"},
        defaults={"unchecked": "[]"},
    )
    trajectories.create_index(["run_id"], index_name="trajectories_run")

    rows: dict[str, tuple[dict[str, Any], set[str]]] = {
        "trajectory_turns": (
            {
                "id": int,
                "trajectory_id": int,
                "turn": int,  # 1-based
                "prompt": str,
                "response": str,
                "token_count": int,
                "latency_ms": int,
                "timestamp": str,
            },
            {"trajectory_id", "turn"},
        ),
        "trajectory_questions": (
            {
                "id": int,
                "trajectory_id": int,
                "turn": int,
                "text": str,
                "effort": str,  # low, medium or high
                "source": str,  # label, classifier or extracted
            },
            {"trajectory_id", "text", "effort", "source"},
        ),
        "trajectory_violations": (
            {
                "id": int,
                "trajectory_id": int,
                "turn": int,
                "preference": str,
                "severity": str,
                "penalty": float,  # the violation's own penalty, if given
                "source": str,  # label or checker
            },
            {"trajectory_id", "preference", "severity", "source"},
        ),
    }
    for name, (columns, not_null) in rows.items():
        table = db.table(name).create(
            columns,
            pk="id",
            foreign_keys=[_cascade(name, "trajectory_id", "trajectories")],
            not_null=not_null,
        )
        table.create_index(["trajectory_id"], index_name=f"{name}_trajectory")

    # Every change of a run's preferred agent, kept with its time (agent NULL: cleared).
    marks = db.table("preferred_marks").create(
        {
            "id": int,
            "run_id": str,
            "agent": str,
            "marked_at": str,
            "source": str,  # import, cli or app
        },
        pk="id",
        foreign_keys=[_cascade("preferred_marks", "run_id", "runs")],
        not_null={"run_id", "marked_at", "source"},
    )
    marks.create_index(["run_id"], index_name="preferred_marks_run")


def _add_run_scores(conn: sqlite3.Connection) -> None:
    """Version 2: the per-run packs of the hot agent columns (see packs.py)."""
    _add_columns(conn, (*_V3_AGENT_COLUMNS, _V4_TECHNICAL))  # the packs are built from them
    # Hand-written: sqlite-utils makes neither WITHOUT ROWID tables nor triggers.
    for statement in _statements(packs.SCHEMA):
        conn.execute(statement)
    conn.execute(packs.INSERT_TRIGGER)
    packs.fill_missing(conn)


def _add_failures_and_consensus(conn: sqlite3.Connection) -> None:
    """Version 3: why an agent's output is a failure (NULL: it is work), the run's
    consensus result (JSON text: status, agreements, conflicts, artifacts count,
    synthesis, verdict), and the failure flags in the packs."""
    # A database migrated from version 1 got these with its packs already.
    _add_columns(conn, (*_V3_AGENT_COLUMNS, ("run_scores", "failed", "BLOB")))


_V3_AGENT_COLUMNS = (("agents", "failure", "TEXT"), ("runs", "consensus", "TEXT"))
_V4_TECHNICAL = ("agents", "technical_source", "TEXT")


def _add_sessions(conn: sqlite3.Connection) -> None:
    """Version 4: what coding agents' own sessions bring (docs/sessions.md).

    agents: where the technical score came from (NULL: given with the run; hand;
    unscored; or the test run it was read from), the models and session ids as JSON
    lists. Turns: their steps as the user lived them (JSON [[kind, text], ...]).
    Questions: how they were asked (text or tool) and, for a tool's dialog, its options
    (JSON list), the answer, whether it was dismissed and the seconds taken. Runs: the
    revision of the sessions a run was read from, so a session that grew updates it.
    """
    _add_columns(
        conn,
        (
            _V4_TECHNICAL,
            ("agents", "models", "TEXT"),
            ("agents", "sessions", "TEXT"),
            ("trajectory_turns", "steps", "TEXT"),
            ("trajectory_questions", "asked_with", "TEXT"),
            ("trajectory_questions", "options", "TEXT"),
            ("trajectory_questions", "answer", "TEXT"),
            ("trajectory_questions", "dismissed", "INTEGER"),
            ("trajectory_questions", "seconds_to_answer", "FLOAT"),
            ("runs", "revision", "TEXT"),
        ),
    )


# The current mark of each reviewer of a run (the history stays in preferred_marks).
_MARKS_TABLE = """
CREATE TABLE IF NOT EXISTS marks (
    run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    reviewer TEXT NOT NULL,
    agent TEXT NOT NULL,
    marked_at TEXT NOT NULL,
    PRIMARY KEY (run_id, reviewer)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS marks_reviewer ON marks (reviewer, run_id);
CREATE TABLE IF NOT EXISTS score_changes (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    n INTEGER NOT NULL
);
INSERT OR IGNORE INTO score_changes (id, n) VALUES (1, 0);
CREATE TRIGGER IF NOT EXISTS technical_changed AFTER UPDATE OF technical, technical_source
ON agents BEGIN UPDATE score_changes SET n = n + 1; END;
CREATE TRIGGER IF NOT EXISTS effort_changed AFTER UPDATE OF effort, source
ON trajectory_questions BEGIN UPDATE score_changes SET n = n + 1; END;
"""


def _add_reviewers(conn: sqlite3.Connection) -> None:
    """Version 5: every mark records its reviewer ("" for the unknown reviewer of the
    marks made before), and a run has one current mark per reviewer (`marks`) in place
    of the one `runs.preferred_agent`, which goes: its marks become the unknown
    reviewer's, dated by their last history entry."""
    if "reviewer" not in database(conn).table("preferred_marks").columns_dict:
        conn.execute("ALTER TABLE preferred_marks ADD COLUMN reviewer TEXT NOT NULL DEFAULT ''")
    for statement in _statements(_MARKS_TABLE):
        conn.execute(statement)
    if "preferred_agent" in database(conn).table("runs").columns_dict:
        conn.execute(
            "INSERT OR IGNORE INTO marks (run_id, reviewer, agent, marked_at)"
            " SELECT id, '', preferred_agent, coalesce((SELECT max(marked_at)"
            " FROM preferred_marks AS h WHERE h.run_id = runs.id), imported_at)"
            " FROM runs WHERE preferred_agent IS NOT NULL"
        )
        if sqlite3.sqlite_version_info >= (3, 35):  # DROP COLUMN; before, it stays unread
            conn.execute("ALTER TABLE runs DROP COLUMN preferred_agent")


# The cache of an LLM judge's answers (docs/judge.md): one row per (model, prompt
# version, hash of the prompt's input), so judging again sends no request for it.
JUDGMENTS = """
CREATE TABLE IF NOT EXISTS judgments (
    model TEXT NOT NULL,
    prompt_version TEXT NOT NULL,
    input_hash TEXT NOT NULL,
    answer TEXT NOT NULL,
    label TEXT,
    score FLOAT,
    judged_at TEXT NOT NULL,
    PRIMARY KEY (model, prompt_version, input_hash)
)
"""


def _add_judge(conn: sqlite3.Connection) -> None:
    """Version 6: what an LLM judge adds (docs/judge.md): questions whose effort a judge gave
    (source 'judged') name its model and prompt version; agents whose technical score a
    judge gave (technical_source 'judged') name its model; the judge's cache; and the
    claims of the runs judging now (judge_claims.py), which a database made before them
    gets when it is first judged.

    Idempotent (columns added only if missing, the table only if absent): the migration
    may run on a database another branch's migrations already touched.
    """
    _add_columns(
        conn,
        (
            ("trajectory_questions", "judged_model", "TEXT"),
            ("trajectory_questions", "judged_prompt", "TEXT"),
            ("agents", "judged_model", "TEXT"),
        ),
    )
    conn.execute(JUDGMENTS)
    judge_claims.ensure(conn)


# Each edit of a file by an agent read from a session (docs/sessions.md, "Changes"), in
# the order they took effect (`position`, from 0). The list of an agent's changed files
# and their counts reads `agent_edits_files` alone, never the diffs.
EDITS_TABLE = """
CREATE TABLE IF NOT EXISTS agent_edits (
    id INTEGER PRIMARY KEY,
    agent_id INTEGER NOT NULL REFERENCES agents(id) ON DELETE CASCADE,
    position INTEGER NOT NULL,
    turn INTEGER NOT NULL,
    path TEXT NOT NULL,
    added INTEGER NOT NULL,
    removed INTEGER NOT NULL,
    diff TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS agent_edits_agent ON agent_edits (agent_id, position);
CREATE INDEX IF NOT EXISTS agent_edits_files
ON agent_edits (agent_id, path, position, added, removed);
"""


def _add_edits(conn: sqlite3.Connection) -> None:
    """Version 7: the edits of files of agents read from sessions (`agent_edits`), gone
    with their agent. Idempotent, as version 6."""
    for statement in _statements(EDITS_TABLE):
        conn.execute(statement)


def _add_columns(conn: sqlite3.Connection, columns: tuple[tuple[str, str, str], ...]) -> None:
    """Add each (table, column, type) the table does not have yet."""
    db = database(conn)
    for table, column, kind in columns:
        if column not in db.table(table).columns_dict:
            db.table(table).add_column(column, kind)


# MIGRATIONS[n] takes a database at version n to version n + 1.
MIGRATIONS: tuple[Callable[[sqlite3.Connection], None], ...] = (
    _create,
    _add_run_scores,
    _add_failures_and_consensus,
    _add_sessions,
    _add_reviewers,
    _add_judge,
    _add_edits,
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
        "marks",
        "score_changes",
        "run_scores",
        "judgments",
        "agent_edits",
        "judge_claims",
    }
)


def check_version(where: object, version: int, upgrade: bool) -> None:
    """Refuse a database made by a newer ppp-tui, and without `upgrade` one that needs
    a migration (`where` names it: a file, or a server's database)."""
    if version > SCHEMA_VERSION:
        raise StoreError(
            f"{where}: made by a newer ppp-tui (schema {version}; this version reads"
            f" up to {SCHEMA_VERSION}); upgrade ppp-tui to open it"
        )
    if version < SCHEMA_VERSION and not upgrade:
        raise StoreError(f"{where}: needs an upgrade to schema {SCHEMA_VERSION}")


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
    check_version(path, version, upgrade)
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
