"""The run store's tables at the current schema version, described once for both engines.

Each table's columns (type, NOT NULL, default, the table a column references, gone with
the row it references), primary key and indexes; and the two things triggers keep:
`score_changes.n` counts changes of technical scores and efforts (what tells an open
app to reload), and a run's pack in `run_scores` (packs.py) goes when its agents
change; and the text a search reads (`SEARCHED`). A SQLite file reaches this schema
through schema.py's migrations, which carry older files' data forward (tests check
that a new file matches it column for column); a PostgreSQL database is brought to it
by postgres_schema.py, which adds whatever of it is missing (and the full-text index,
search_server_schema.py), so the next version's change is made here once for both. No
I/O here.
"""

from __future__ import annotations

from dataclasses import dataclass

TEXT = "TEXT"
INTEGER = "INTEGER"
REAL = "REAL"
BLOB = "BLOB"


@dataclass(frozen=True)
class Column:
    name: str
    kind: str  # TEXT, INTEGER, REAL or BLOB
    not_null: bool = False
    default: str | int | None = None
    references: str | None = None  # "table(column)": the row goes with the one it names


@dataclass(frozen=True)
class Index:
    name: str
    columns: tuple[str, ...]
    unique: bool = False


@dataclass(frozen=True)
class Table:
    name: str
    columns: tuple[Column, ...]
    key: tuple[str, ...]  # the primary key
    indexes: tuple[Index, ...] = ()
    check: str | None = None  # a CHECK constraint's condition

    @property
    def column_names(self) -> tuple[str, ...]:
        return tuple(column.name for column in self.columns)


@dataclass(frozen=True)
class Counter:
    """`score_changes.n` goes up when any of `columns` of `table` is updated."""

    name: str
    table: str
    columns: tuple[str, ...]


def _c(
    name: str,
    kind: str = TEXT,
    *,
    not_null: bool = False,
    default: str | int | None = None,
    references: str | None = None,
) -> Column:
    return Column(name, kind, not_null, default, references)


def _rows_of(name: str, *columns: Column) -> Table:
    """A table of a trajectory's rows (turns, questions, violations)."""
    return Table(
        name,
        (
            _c("id", INTEGER),
            _c("trajectory_id", INTEGER, not_null=True, references="trajectories(id)"),
            *columns,
        ),
        key=("id",),
        indexes=(Index(f"{name}_trajectory", ("trajectory_id",)),),
    )


TABLES: tuple[Table, ...] = (
    Table(
        "runs",
        (
            _c("id"),
            _c("spec_id"),
            _c("stage"),
            _c("task"),
            _c("task_type", not_null=True),
            _c("created_at"),
            _c("preferences", not_null=True, default="[]"),
            _c("states_preferences", INTEGER, not_null=True, default=0),
            _c("selected_agent"),
            _c("iterations", not_null=True, default="[]"),
            _c("agents", INTEGER, not_null=True),
            _c("imported_at", not_null=True),
            _c("consensus"),
            _c("revision"),
        ),
        key=("id",),
        indexes=(
            Index("runs_stage", ("stage",)),
            Index("runs_spec", ("spec_id",)),
            Index("runs_created", ("created_at",)),
        ),
    ),
    Table(
        "agents",
        (
            _c("id", INTEGER),
            _c("run_id", not_null=True, references="runs(id)"),
            _c("position", INTEGER, not_null=True),
            _c("name", not_null=True),
            _c("model"),
            _c("technical", REAL, not_null=True),
            _c("relevance", REAL),
            _c("confidence", REAL),
            _c("output"),
            _c("q_low", INTEGER),
            _c("q_medium", INTEGER),
            _c("q_high", INTEGER),
            _c("violations", INTEGER),
            _c("failure"),
            _c("technical_source"),
            _c("models"),
            _c("sessions"),
            _c("judged_model"),
        ),
        key=("id",),
        indexes=(
            Index("agents_run_name", ("run_id", "name"), unique=True),
            Index(
                "agents_scores",
                (
                    "run_id",
                    "position",
                    "name",
                    "technical",
                    "q_low",
                    "q_medium",
                    "q_high",
                    "violations",
                ),
            ),
        ),
    ),
    Table(
        "trajectories",
        (
            _c("id", INTEGER, references="agents(id)"),
            _c("run_id", not_null=True, references="runs(id)"),
            _c("turns", INTEGER, not_null=True),
            _c("questions", INTEGER, not_null=True),
            _c("violations", INTEGER, not_null=True),
            _c("unchecked", not_null=True, default="[]"),
        ),
        key=("id",),
        indexes=(Index("trajectories_run", ("run_id",)),),
    ),
    _rows_of(
        "trajectory_turns",
        _c("turn", INTEGER, not_null=True),
        _c("prompt"),
        _c("response"),
        _c("token_count", INTEGER),
        _c("latency_ms", INTEGER),
        _c("timestamp"),
        _c("steps"),
    ),
    _rows_of(
        "trajectory_questions",
        _c("turn", INTEGER),
        _c("text", not_null=True),
        _c("effort", not_null=True),
        _c("source", not_null=True),
        _c("asked_with"),
        _c("options"),
        _c("answer"),
        _c("dismissed", INTEGER),
        _c("seconds_to_answer", REAL),
        _c("judged_model"),
        _c("judged_prompt"),
    ),
    _rows_of(
        "trajectory_violations",
        _c("turn", INTEGER),
        _c("preference", not_null=True),
        _c("severity", not_null=True),
        _c("penalty", REAL),
        _c("source", not_null=True),
    ),
    Table(
        "preferred_marks",
        (
            _c("id", INTEGER),
            _c("run_id", not_null=True, references="runs(id)"),
            _c("agent"),
            _c("marked_at", not_null=True),
            _c("source", not_null=True),
            _c("reviewer", not_null=True, default=""),
        ),
        key=("id",),
        indexes=(Index("preferred_marks_run", ("run_id",)),),
    ),
    Table(
        "run_scores",
        (
            _c("run_id", not_null=True, references="runs(id)"),
            _c("names", not_null=True),
            _c("name_lengths", BLOB, not_null=True),
            _c("technical", BLOB, not_null=True),
            _c("counts", BLOB, not_null=True),
            _c("failed", BLOB),
        ),
        key=("run_id",),
    ),
    Table(
        "marks",
        (
            _c("run_id", not_null=True, references="runs(id)"),
            _c("reviewer", not_null=True),
            _c("agent", not_null=True),
            _c("marked_at", not_null=True),
        ),
        key=("run_id", "reviewer"),
        indexes=(Index("marks_reviewer", ("reviewer", "run_id")),),
    ),
    Table(
        "score_changes",
        (_c("id", INTEGER), _c("n", INTEGER, not_null=True)),
        key=("id",),
        check="id = 1",
    ),
    Table(
        "judgments",
        (
            _c("model", not_null=True),
            _c("prompt_version", not_null=True),
            _c("input_hash", not_null=True),
            _c("answer", not_null=True),
            _c("label"),
            _c("score", REAL),
            _c("judged_at", not_null=True),
        ),
        key=("model", "prompt_version", "input_hash"),
    ),
    Table(
        "judge_claims",
        (
            _c("model", not_null=True),
            _c("prompt_version", not_null=True),
            _c("input_hash", not_null=True),
            _c("owner", not_null=True),
            _c("host", not_null=True),
            _c("pid", INTEGER, not_null=True),
            _c("seen_at", REAL, not_null=True),
        ),
        key=("model", "prompt_version", "input_hash"),
    ),
    Table(
        "agent_edits",
        (
            _c("id", INTEGER),
            _c("agent_id", INTEGER, not_null=True, references="agents(id)"),
            _c("position", INTEGER, not_null=True),
            _c("turn", INTEGER, not_null=True),
            _c("path", not_null=True),
            _c("added", INTEGER, not_null=True),
            _c("removed", INTEGER, not_null=True),
            _c("diff", not_null=True),
        ),
        key=("id",),
        indexes=(
            Index("agent_edits_agent", ("agent_id", "position")),
            Index("agent_edits_files", ("agent_id", "path", "position", "added", "removed")),
        ),
    ),
)

COUNTERS: tuple[Counter, ...] = (
    Counter("technical_changed", "agents", ("technical", "technical_source")),
    Counter("effort_changed", "trajectory_questions", ("effort", "source")),
)

# The table whose rows go when the agents of their run are inserted, updated or deleted.
PACKS = "run_scores"


@dataclass(frozen=True)
class Searched:
    """A table whose rows a search looks in, with the columns it reads (one text, the
    columns' values in this order) and how a row leads to its run (`run`, an expression
    over the table as `row`, joined to `joins`)."""

    table: str
    columns: tuple[str, ...]
    run: str
    joins: str = ""


# What a search reads, and the order its groups come in when too many rows match to
# rank them (search.py on SQLite, search_server.py on PostgreSQL).
SEARCHED: tuple[Searched, ...] = (
    Searched("runs", ("id", "spec_id", "task"), "row.id"),
    Searched("agents", ("output",), "row.run_id"),
    Searched(
        "trajectory_questions",
        ("text",),
        "agents.run_id",
        " JOIN agents ON agents.id = row.trajectory_id",
    ),
)
