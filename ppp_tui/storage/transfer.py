"""Copying runs between two stores of either engine: a SQLite file into a PostgreSQL
team store, and back.

The runs the target lacks come over whole, in one transaction of the target's: each
with its agents, trajectories, turns, questions, violations, edits of files, packed
scores, every reviewer's current mark and the history of marks (hand ratings are the
agents' technical scores with their source, and come with them); and the judge's cache
comes over entry by entry. A run the target already holds keeps its rows: only its
marks merge, and hand ratings and the judge's scores and efforts given on one side
move (transfer_ratings.py), so copying again adds nothing. Agent ids are the target's
own: a copied agent gets the next free ones, its trajectory and rows follow it, and
the rows whose ids nothing refers to (turns, questions, history) get theirs from the
target in the source's order.

Columns are tables.py's: both ends are at the current schema.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from .tables import TABLES, Table

if TYPE_CHECKING:
    import psycopg

    from .merge import HistoryRow
    from .store import Store

BATCH = 2000  # runs read and written at a time

_TABLE = {table.name: table for table in TABLES}
# How each table's rows are found from a batch of run ids, in the order they are
# written (parents first; packs after agents, whose insert triggers drop a run's pack).
_BY_RUN = "run_id IN ({runs})"
_BY_AGENT = "{column} IN (SELECT id FROM agents WHERE run_id IN ({runs}))"
_ORDER: tuple[tuple[str, str], ...] = (
    ("runs", "id IN ({runs})"),
    ("agents", _BY_RUN),
    ("trajectories", _BY_RUN),
    ("trajectory_turns", _BY_AGENT.replace("{column}", "trajectory_id")),
    ("trajectory_questions", _BY_AGENT.replace("{column}", "trajectory_id")),
    ("trajectory_violations", _BY_AGENT.replace("{column}", "trajectory_id")),
    ("agent_edits", _BY_AGENT.replace("{column}", "agent_id")),
    ("preferred_marks", _BY_RUN),
    ("marks", _BY_RUN),
    ("run_scores", _BY_RUN),
)
# The column holding an agent id, in the tables whose rows follow their agent.
_AGENT_ID = {
    "agents": "id",
    "trajectories": "id",
    "trajectory_turns": "trajectory_id",
    "trajectory_questions": "trajectory_id",
    "trajectory_violations": "trajectory_id",
    "agent_edits": "agent_id",
}
# Tables whose own ids the target gives (nothing refers to them).
_OWN_IDS = frozenset(
    {"trajectory_turns", "trajectory_questions", "trajectory_violations", "agent_edits"}
    | {"preferred_marks"}
)


@dataclass
class Copied:
    """What a copy brought: runs added, runs the target already held, cache entries."""

    added: int = 0
    present: int = 0
    judgments: int = 0
    held: set[str] = field(default_factory=set)  # the ids of the runs already held
    # In the runs already held (transfer_ratings.py): technical scores and efforts
    # brought in, and those both sides gave differently, left as they were.
    ratings: int = 0
    efforts: int = 0
    differ: int = 0


class End(Protocol):
    """One store's side of a copy: reading rows, writing them, its ids."""

    def run_ids(self) -> set[str]: ...

    def rows(
        self, table: str, columns: Sequence[str], where: str, runs: list[str]
    ) -> list[Any]: ...

    def judgments(self) -> list[Any]: ...

    def next_agent_id(self) -> int: ...

    def write(self, table: str, columns: Sequence[str], rows: list[Any]) -> None: ...

    def write_judgments(self, rows: list[Any]) -> int: ...

    def finish(self) -> None: ...


def _columns(table: Table) -> tuple[str, ...]:
    names = table.column_names
    return names[1:] if table.name in _OWN_IDS else names


def _order_by(table: Table) -> str:
    return "id" if "id" in table.column_names else ", ".join(table.key)


class SQLiteEnd:
    """A SQLite store's connection, inside its write transaction when written to."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn

    def run_ids(self) -> set[str]:
        return {row[0] for row in self.conn.execute("SELECT id FROM runs")}

    def rows(self, table: str, columns: Sequence[str], where: str, runs: list[str]) -> list[Any]:
        condition = where.format(runs="SELECT value FROM json_each(?)")
        return self.conn.execute(
            f"SELECT {', '.join(columns)} FROM {table} WHERE {condition}"
            f" ORDER BY {_order_by(_TABLE[table])}",
            [json.dumps(runs)],
        ).fetchall()

    def judgments(self) -> list[Any]:
        columns = ", ".join(_TABLE["judgments"].column_names)
        return self.conn.execute(f"SELECT {columns} FROM judgments").fetchall()

    def next_agent_id(self) -> int:
        return int(self.conn.execute("SELECT ifnull(max(id), 0) + 1 FROM agents").fetchone()[0])

    def write(self, table: str, columns: Sequence[str], rows: list[Any]) -> None:
        marks = ", ".join("?" * len(columns))
        self.conn.executemany(f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({marks})", rows)

    def write_judgments(self, rows: list[Any]) -> int:
        columns = _TABLE["judgments"].column_names
        before = self.conn.total_changes
        self.conn.executemany(
            f"INSERT OR IGNORE INTO judgments ({', '.join(columns)})"
            f" VALUES ({', '.join('?' * len(columns))})",
            rows,
        )
        return self.conn.total_changes - before

    def finish(self) -> None:
        self.conn.execute("UPDATE score_changes SET n = n + 1")


class PostgresEnd:
    """A PostgreSQL store's connection, inside its transaction when written to."""

    # The advisory lock a copy into the store holds: agent ids are counted from the
    # largest, so two copies at once must not count from the same one.
    LOCK = 0x70707476

    def __init__(self, conn: psycopg.Connection[Any]) -> None:
        self.conn = conn

    def run_ids(self) -> set[str]:
        return {row[0] for row in self.conn.execute("SELECT id FROM runs")}

    def rows(self, table: str, columns: Sequence[str], where: str, runs: list[str]) -> list[Any]:
        condition = where.format(runs="SELECT unnest(%s::text[])")
        return self.conn.execute(
            f"SELECT {', '.join(columns)} FROM {table} WHERE {condition}"
            f" ORDER BY {_order_by(_TABLE[table])}",
            [runs],
        ).fetchall()

    def judgments(self) -> list[Any]:
        columns = ", ".join(_TABLE["judgments"].column_names)
        return self.conn.execute(f"SELECT {columns} FROM judgments").fetchall()

    def next_agent_id(self) -> int:
        self.conn.execute("SELECT pg_advisory_xact_lock(%s)", [self.LOCK])
        row = self.conn.execute("SELECT coalesce(max(id), 0) + 1 FROM agents").fetchone()
        assert row is not None
        return int(row[0])

    def write(self, table: str, columns: Sequence[str], rows: list[Any]) -> None:
        if not rows:
            return
        with self.conn.cursor().copy(f"COPY {table} ({', '.join(columns)}) FROM STDIN") as copy:
            for row in rows:
                copy.write_row(row)

    def write_judgments(self, rows: list[Any]) -> int:
        columns = _TABLE["judgments"].column_names
        count = 0
        with self.conn.cursor() as cursor:
            for row in rows:
                cursor.execute(
                    f"INSERT INTO judgments ({', '.join(columns)})"
                    f" VALUES ({', '.join(['%s'] * len(columns))}) ON CONFLICT DO NOTHING",
                    row,
                )
                count += cursor.rowcount
        return count

    def finish(self) -> None:
        # The agents' identity column was given values: it goes on after the largest.
        self.conn.execute(
            "SELECT setval(pg_get_serial_sequence('agents', 'id'), max(id))"
            " FROM agents HAVING max(id) IS NOT NULL"
        )
        self.conn.execute("UPDATE score_changes SET n = n + 1")


def copy_runs(source: End, target: End) -> Copied:
    """Copy the runs `target` lacks from `source`, and the judge's cache entries it
    lacks; the caller holds the target's transaction (and commits it)."""
    done = Copied()
    present = target.run_ids()
    offered = source.run_ids()
    wanted = sorted(offered - present)
    done.held = present & offered
    done.present = len(done.held)
    next_id = target.next_agent_id()
    for batch in _batches(wanted):
        shift: dict[int, int] = {}
        for table_name, where in _ORDER:
            table = _TABLE[table_name]
            columns = _columns(table)
            rows = source.rows(table_name, columns, where, batch)
            if table_name == "agents":
                for row in rows:
                    shift[row[0]] = next_id
                    next_id += 1
            column = _AGENT_ID.get(table_name)
            if column is not None:
                at = columns.index(column)
                rows = [(*row[:at], shift[row[at]], *row[at + 1 :]) for row in rows]
            target.write(table_name, columns, rows)
        done.added += len(batch)
    done.judgments = target.write_judgments(source.judgments())
    target.finish()
    return done


def _batches(ids: list[str]) -> Iterator[list[str]]:
    for start in range(0, len(ids), BATCH):
        yield ids[start : start + BATCH]


def end_of(store: Store) -> End:
    """The store's side of a copy."""
    from .store_server import ServerStore

    if isinstance(store, ServerStore):
        return PostgresEnd(store.pg.raw)
    return SQLiteEnd(store.conn)


def mark_history(store: Store) -> list[HistoryRow]:
    """Every mark history entry of a store, oldest first (`merge.read_marks`'s rows)."""
    return [
        (row[0], row[1], row[2], row[3], row[4])
        for row in store._query(
            "SELECT run_id, agent, marked_at, source, reviewer FROM preferred_marks ORDER BY id"
        )
    ]


def bring_in(
    source: Store, target: Store, history: list[HistoryRow], replace: bool = False
) -> tuple[Copied, tuple[int, int, int]]:
    """Copy the runs `target` lacks from `source` (`copy_runs`), then merge `history`
    (the source's marks, every reviewer's) for the runs both hold and bring their hand
    ratings and judged scores and efforts (transfer_ratings.py), in one transaction of
    the target's: (what was copied, (marks recorded, repeats, marks of runs or agents
    the target lacks)). With `replace`, what the target held goes first, in the same
    transaction."""
    from .transfer_ratings import bring_ratings

    with target.lock, target._transaction():
        if replace:
            for table in ("runs", "judgments", "judge_claims"):  # the rest goes with runs
                target.conn.execute(f"DELETE FROM {table}")
        copied = copy_runs(end_of(source), end_of(target))
        # The runs just copied brought their marks: only those already held merge.
        merged = target.merge_in_transaction([[r for r in history if r[0] in copied.held]])[0]
        brought = bring_ratings(source, target, copied.held)
    copied.ratings, copied.efforts, copied.differ = brought.ratings, brought.efforts, brought.differ
    target.after_bulk_write(copied.added)
    return copied, merged
