"""Runs turned into table rows, and the rows written with executemany.

An import (importer.py) and a demo (demo/writer.py, in worker processes that write their
own chunks) build the rows of every table from parsed runs here, batch by batch, and
write them in one go per table (an import's run objects of the usual shapes go straight
from their JSON to the same rows: direct_rows.py).
Agent ids are given while the rows are built; trajectories and their turns, questions
and violations, and an agent's edits of files, share their agent's id, so a batch built
elsewhere with ids counted from 0 is written with the next free id added in the INSERT
itself.

A parse worker of an import (importer.py) writes each batch's rows into a small database
in its memory and sends it whole (`batch_database`); the importing process copies its
tables in with INSERT ... SELECT (`copy_batch`), binding no value itself.
"""

from __future__ import annotations

import itertools
import json
import math
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache, lru_cache
from typing import Any

from ..core.model import AskedWith, Run
from ..core.preferences import is_known
from ..core.relevance import task_type
from ..core.scoring import states_preferences
from . import packs
from .database import now
from .mark_rows import CURRENT_MARK, MARK_HISTORY

# Rows buffered before each executemany during an import.
BATCH = 2000
# Runs an import writes between two additions to the full-text index: FTS5 writes what it
# took in at the end of each statement, so fewer, larger additions leave it fewer pieces
# to merge (at 100k runs, every 500 runs costs 2.0 s of CPU, every 10k 1.5 s, all at once
# 1.4 s).
INDEX_EVERY = 10_000
# Distinct values an import remembers (task types, preference lists) before starting over.
_CACHE_LIMIT = 10_000
NO_COUNTS: tuple[None, ...] = (None, None, None, None)
PACKED_NO_TRAJECTORY = (packs.NO_TRAJECTORY,) * 4  # packed counts of an agent without one

_INSERTS = (
    "INSERT INTO runs (id, spec_id, stage, task, task_type, created_at, preferences,"
    " states_preferences, selected_agent, iterations, agents,"
    " imported_at, consensus, revision) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
    "INSERT INTO agents (id, run_id, position, name, model, technical, relevance,"
    " confidence, output, q_low, q_medium, q_high, violations, failure,"
    " technical_source, models, sessions) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
    "INSERT INTO trajectories (id, run_id, turns, questions, violations, unchecked)"
    " VALUES (?,?,?,?,?,?)",
    "INSERT INTO trajectory_turns (trajectory_id, turn, prompt, response, token_count,"
    " latency_ms, timestamp, steps) VALUES (?,?,?,?,?,?,?,?)",
    "INSERT INTO trajectory_questions (trajectory_id, turn, text, effort, source,"
    " asked_with, options, answer, dismissed, seconds_to_answer)"
    " VALUES (?,?,?,?,?,?,?,?,?,?)",
    "INSERT INTO trajectory_violations (trajectory_id, turn, preference, severity,"
    " penalty, source) VALUES (?,?,?,?,?,?)",
    MARK_HISTORY,
    "INSERT INTO agent_edits (agent_id, position, turn, path, added, removed, diff)"
    " VALUES (?,?,?,?,?,?,?)",
    # After agents: their insert triggers clear a run's pack.
    packs.INSERT,
)
# The rows of each table in `_INSERTS`, in that order.
Tables = tuple[list[tuple[Any, ...]], ...]
# Rows whose last columns are all NULL are built without them (`Rows.add`): binding a
# None costs sqlite3 an adapter lookup, about a quarter of a microsecond (0.8 s of an
# import of 100k runs). An agent given with its run (no failure, technical source,
# models or sessions); a question written in the text (asked_with NULL reads as text;
# no options, answer, dismissal or time). Table index in `_INSERTS` -> the columns such
# a row holds.
_SHORT = {1: 13, 4: 5}
# The inserts whose first value is an agent id (trajectories and their rows share it).
_SHIFTED = (
    "INSERT INTO agents ",
    "INSERT INTO trajectories ",
    "INSERT INTO trajectory_turns ",
    "INSERT INTO trajectory_questions ",
    "INSERT INTO trajectory_violations ",
    "INSERT INTO agent_edits ",
)


# The name under which an import's connection holds a worker's batch (`batch_database`).
BATCH_SCHEMA = "parsed"
# Rows each INSERT of a batch database takes (`_insert`): fewer is more statements to
# step through, more a longer statement to compile for each batch.
_BATCH_ROWS_PER_INSERT = 16
# The tables keyed without a rowid, whose rows have no order of insertion to keep.
_WITHOUT_ROWID = ("marks", "run_scores")


class Rows:
    """One import's rows, built from runs (here or in a parse worker) until taken.

    Values that repeat from run to run (preference lists, unchecked lists, which
    preference names are known) are worked out once per import; task types once per
    process (`cached_task_type`).
    """

    def __init__(self, stamp: str, next_agent: int, reviewer: str = "") -> None:
        self.stamp = stamp
        self.reviewer = reviewer  # whose the marks that come with the runs are
        self.next_agent = next_agent  # agent ids are given here; trajectories share them
        self.runs: list[tuple[Any, ...]] = []
        self.agents: list[tuple[Any, ...]] = []
        self.trajectories: list[tuple[Any, ...]] = []
        self.turns: list[tuple[Any, ...]] = []
        self.questions: list[tuple[Any, ...]] = []
        self.violations: list[tuple[Any, ...]] = []
        self.marks: list[tuple[Any, ...]] = []
        self.edits: list[tuple[Any, ...]] = []
        self.packs: list[packs.Pack] = []
        # Stated or violated preference names of the runs added that are not in the
        # catalogue.
        self.unknown: set[str] = set()
        # preferences -> (JSON list, states_preferences as 0/1, names not in the catalogue)
        self._preferences: dict[tuple[str, ...], tuple[str, int, tuple[str, ...]]] = {}
        self._lists: dict[tuple[str, ...], str] = {(): "[]"}
        self._known: dict[str, bool] = {}

    def take(self) -> Tables:
        """The rows built so far, table by table as in `_INSERTS`; none are kept."""
        tables = (
            self.runs,
            self.agents,
            self.trajectories,
            self.turns,
            self.questions,
            self.violations,
            self.marks,
            self.edits,
            self.packs,
        )
        self.runs, self.agents, self.trajectories = [], [], []
        self.turns, self.questions, self.violations, self.marks = [], [], [], []
        self.edits, self.packs = [], []
        return tables

    def note(self, name: str) -> None:
        """Note `name` in `unknown` if it is not a catalogue preference."""
        known = self._known.get(name)
        if known is None:
            if len(self._known) > _CACHE_LIMIT:
                self._known.clear()
            known = self._known[name] = is_known(name)
        if not known:
            self.unknown.add(name)

    def run_values(self, task: str | None, preferences: tuple[str, ...]) -> tuple[str, str, int]:
        """(task type, preferences JSON, states_preferences) of a run's task and
        preferences; notes the preferences not in the catalogue."""
        text, stated, unknown = self.preference_values(preferences)
        if unknown:
            self.unknown.update(unknown)
        return cached_task_type(task), text, stated

    def preference_values(self, preferences: tuple[str, ...]) -> tuple[str, int, tuple[str, ...]]:
        """(JSON list, states_preferences as 0/1, names not in the catalogue) of a run's
        preferences."""
        values = self._preferences.get(preferences)
        if values is None:
            if len(self._preferences) > _CACHE_LIMIT:
                self._preferences.clear()
            values = self._preferences[preferences] = (
                json.dumps(preferences),
                int(states_preferences(preferences)),
                tuple(name for name in preferences if not is_known(name)),
            )
        return values

    def json_list(self, names: tuple[str, ...]) -> str:
        """`names` as a JSON list (an agent's models or sessions, a trajectory's
        unchecked preferences), each list's text made once."""
        text = self._lists.get(names)
        if text is None:
            if len(self._lists) > _CACHE_LIMIT:
                self._lists.clear()
                self._lists[()] = "[]"
            text = self._lists[names] = json.dumps(names)
        return text

    def _agent_lists(self, models: tuple[str, ...], sessions: tuple[str, ...]) -> tuple[Any, Any]:
        """An agent's models and sessions columns: JSON lists, NULL for none."""
        return (
            self.json_list(models) if models else None,
            self.json_list(sessions) if sessions else None,
        )

    def add(self, run: Run, revision: str | None = None) -> None:
        """The rows of `run`; `revision` is the revision of the sessions it was read
        from (None for other runs)."""
        run_id = run.id
        stamp = self.stamp
        kind, preferences, stated = self.run_values(run.task, run.preferences)
        self.runs.append(
            (
                run_id,
                run.spec_id,
                run.stage,
                run.task,
                kind,
                run.created_at,
                preferences,
                stated,
                run.selected_agent,
                floats_json(run.iterations),
                len(run.agents),
                stamp,
                run.consensus,
                revision,
            )
        )
        if run.preferred_agent is not None:
            self.marks.append((run_id, run.preferred_agent, stamp, "import", self.reviewer))
        agent_rows = self.agents
        agent_id = self.next_agent
        self.next_agent += len(run.agents)
        # The run's pack (packs.pack), its columns gathered agent by agent.
        names: list[str] = []
        technicals: list[float] = []
        packed_counts: list[int] = []
        failed: list[bool] = []
        for position, agent in enumerate(run.agents):
            trajectory = agent.trajectory
            # NULL counts mean "no trajectory" (schema.py).
            counts: tuple[int | None, ...] = NO_COUNTS
            if trajectory is not None:
                counts = (*trajectory.effort_counts(), len(trajectory.violations))
                packed_counts.extend(counts)
            else:
                packed_counts.extend(PACKED_NO_TRAJECTORY)
            names.append(agent.name)
            # An unscored agent's placeholder is packed as NaN: the reads rank it as
            # the settings say (score_reads.py).
            technical = agent.technical
            technicals.append(math.nan if agent.unscored or technical is None else technical)
            failed.append(agent.failure is not None)
            row = (
                agent_id,
                run_id,
                position,
                agent.name,
                agent.model,
                agent.technical,
                agent.relevance,
                agent.confidence,
                agent.output,
                *counts,
            )
            if agent.failure is None and agent.technical_source is None:
                if agent.models or agent.sessions:
                    row += (None, None, *self._agent_lists(agent.models, agent.sessions))
            else:
                row += (
                    agent.failure,
                    agent.technical_source,
                    *self._agent_lists(agent.models, agent.sessions),
                )
            agent_rows.append(row)
            if agent.edits:
                self.edits.extend(
                    (agent_id, order, e.turn, e.path, e.added, e.removed, e.diff)
                    for order, e in enumerate(agent.edits)
                )
            if trajectory is None:
                agent_id += 1
                continue
            tid = agent_id
            turns = trajectory.turns
            questions = trajectory.questions
            violations = trajectory.violations
            agent_id += 1
            self.trajectories.append(
                (
                    tid,
                    run_id,
                    len(turns),
                    len(questions),
                    len(violations),
                    self.json_list(trajectory.unchecked),
                )
            )
            if turns:
                self.turns.extend(
                    [
                        (
                            tid,
                            number,
                            turn.prompt,
                            turn.response,
                            turn.token_count,
                            turn.latency_ms,
                            turn.timestamp,
                            json.dumps(turn.steps) if turn.steps else None,
                        )
                        for number, turn in enumerate(turns, start=1)
                    ]
                )
            if questions:
                # _value_ is what .value returns, without the property's cost.
                self.questions.extend(
                    [
                        (tid, q.turn, q.text, q.effort._value_, q.source._value_)
                        if q.asked_with is AskedWith.TEXT
                        else (
                            tid,
                            q.turn,
                            q.text,
                            q.effort._value_,
                            q.source._value_,
                            q.asked_with._value_,
                            json.dumps(q.options),
                            q.answer,
                            int(q.dismissed),
                            q.seconds_to_answer,
                        )
                        for q in questions
                    ]
                )
            if violations:
                for v in violations:
                    self.note(v.preference)
                self.violations.extend(
                    [
                        (tid, v.turn, v.preference, v.severity._value_, v.penalty, v.source._value_)
                        for v in violations
                    ]
                )
        self.packs.append(packs.packed(run_id, names, technicals, packed_counts, failed))


def floats_json(values: tuple[float, ...]) -> str:
    """`json.dumps(values)`: for finite floats (what an import reads) the same text made
    directly, in half the time."""
    try:
        text = ", ".join(map(float.__repr__, values))
    except TypeError:  # not all floats
        return json.dumps(values)
    if "n" in text:  # inf or nan, which JSON spells otherwise
        return json.dumps(values)
    return f"[{text}]"


@lru_cache(maxsize=_CACHE_LIMIT)
def cached_task_type(task: str | None) -> str:
    """A task text's type, remembered across imports and batches (a demo's chunk worker
    builds many batches whose runs share task texts)."""
    return task_type(task).value


class Writer:
    """Buffers one import's rows and writes them with executemany; with `indexing`, the
    full-text index takes in the rows written every `INDEX_EVERY` runs, and at `finish`
    (search.index_added)."""

    def __init__(
        self, conn: sqlite3.Connection, reviewer: str = "", indexing: bool = False
    ) -> None:
        self.conn = conn
        self.rows = Rows(now(), next_agent(conn), reviewer)
        self.indexing = indexing
        self.unindexed = 0  # runs written since the index last took rows in

    def add(self, run: Run) -> None:
        self.rows.add(run)
        if len(self.rows.runs) >= BATCH:
            self.flush()

    def flush(self) -> None:
        self.write(self.rows.take())

    def write(self, tables: Tables, offset: int = 0) -> None:
        """Insert the rows; `offset` is added to their agent (and trajectory) ids."""
        write(self.conn, tables, offset)
        self.written(len(tables[0]))

    def copy(self, data: bytes, runs: int, offset: int) -> None:
        """Insert a worker's `batch_database` of `runs` runs (`copy_batch`)."""
        copy_batch(self.conn, data, offset)
        self.written(runs)

    def written(self, runs: int) -> None:
        self.unindexed += runs
        if self.unindexed >= INDEX_EVERY:
            self.index()

    def finish(self) -> None:
        """Write the rows still buffered, and index them."""
        self.flush()
        self.index()

    def index(self) -> None:
        if self.indexing and self.unindexed:
            from .search import index_added

            index_added(self.conn)
        self.unindexed = 0


def _widths(sql: str, rows: list[tuple[Any, ...]], short: int) -> tuple[str, list[tuple[Any, ...]]]:
    """The statement for rows of which some may leave out their last columns (`_SHORT`):
    the statement of the short rows alone when every row is short, else every short row
    made whole with NULLs."""
    if all(len(row) == short for row in rows):
        return _short_insert(sql, short), rows
    width = sql.count("?")
    nulls = (None,) * (width - short)
    return sql, [row + nulls if len(row) == short else row for row in rows]


@cache
def _short_insert(sql: str, short: int) -> str:
    """`sql` with only its first `short` columns."""
    head, _, _ = sql.partition(" VALUES ")
    table, _, columns = head.partition(" (")
    kept = ", ".join(columns.rstrip(")").split(", ")[:short])
    return f"{table} ({kept}) VALUES ({','.join('?' * short)})"


def next_agent(conn: sqlite3.Connection) -> int:
    """The first agent id not taken yet (trajectories share their agent's id)."""
    return int(conn.execute("SELECT coalesce(max(id), 0) FROM agents").fetchone()[0]) + 1


def write(conn: sqlite3.Connection, tables: Tables, offset: int = 0, per: int = 1) -> None:
    """Insert rows taken from `Rows`; `offset` is added to their agent (and trajectory)
    ids, so rows built with ids counted from 0 (in a worker process) go in after the
    agents already there with `offset=next_agent(conn)`. `per`: rows an INSERT takes at
    a time (`_insert`)."""
    # Hand-written executemany: 2.8 s against 7.8 s with sqlite-utils' insert_all for
    # the 259k rows of 20k demo runs.
    for table, (sql, rows) in enumerate(zip(_INSERTS, tables, strict=True)):
        if rows:
            short = _SHORT.get(table)
            if short is not None:
                sql, rows = _widths(sql, rows, short)
            if offset and sql.startswith(_SHIFTED):
                sql = sql.replace("VALUES (?,", f"VALUES (? + {int(offset)},", 1)
            _insert(conn, sql, rows, per)
            if sql is MARK_HISTORY:
                # A run imported with a mark: the mark is its reviewer's current one.
                conn.executemany(
                    CURRENT_MARK,
                    [(run, who, agent, at) for run, agent, at, _, who in rows if agent],
                )


def _insert(conn: sqlite3.Connection, sql: str, rows: list[tuple[Any, ...]], per: int) -> None:
    """`conn.executemany(sql, rows)`, `per` rows to a statement (`INSERT ... VALUES
    (...), (...)`) while that many are left: the same rows in the same order, in fewer
    steps through SQLite (a fifth less time for a parse worker's batch database). Rows of
    another width than the statement's go in one by one, failing as executemany does."""
    whole = len(rows) - len(rows) % per if per > 1 else 0
    if whole and set(map(len, rows)) != {sql.count("?")}:
        whole = 0
    if whole:
        joined = itertools.chain.from_iterable
        conn.executemany(
            _rows_insert(sql, per),
            [tuple(joined(rows[start : start + per])) for start in range(0, whole, per)],
        )
    if whole < len(rows):
        conn.executemany(sql, rows[whole:] if whole else rows)


@cache
def _rows_insert(sql: str, per: int) -> str:
    """An INSERT ... VALUES statement of `_INSERTS` taking `per` rows."""
    head, _, values = sql.partition(" VALUES ")
    return f"{head} VALUES {','.join([values] * per)}"


def _columns(sql: str) -> tuple[str, str]:
    """(table, its columns as the INSERT lists them) of an INSERT statement of `_INSERTS`."""
    head, _, _ = sql.partition(" VALUES ")
    table, _, columns = (
        head.removeprefix("INSERT OR REPLACE INTO ").removeprefix("INSERT INTO ").partition(" (")
    )
    return table, columns.rstrip(")")


@cache
def targets() -> tuple[tuple[str, tuple[str, ...], int | None, bool], ...]:
    """What `write` inserts, table by table in `Rows.take`'s order: (table, its columns,
    how many of them a short row holds or None, whether the first is an agent id that an
    offset shifts). For an engine that loads rows its own way (import_server.py)."""
    found = []
    for index, sql in enumerate(_INSERTS):
        table, columns = _columns(sql)
        names = tuple(name.strip() for name in columns.split(","))
        found.append((table, names, _SHORT.get(index), sql.startswith(_SHIFTED)))
    return tuple(found)


@cache
def _copies() -> tuple[str, ...]:
    """The INSERT ... SELECT statements copying a batch's tables in, in `write`'s order;
    the first column of the shifted ones has the parameter added (the agent id offset)."""
    copies = []
    for sql in (*_INSERTS[:7], CURRENT_MARK, *_INSERTS[7:]):
        table, columns = _columns(sql)
        chosen = columns
        if sql.startswith(_SHIFTED):
            first, _, rest = columns.partition(", ")
            chosen = f"{first} + ?, {rest}"
        verb = "INSERT OR REPLACE INTO" if sql is CURRENT_MARK else "INSERT INTO"
        order = "" if table in _WITHOUT_ROWID else " ORDER BY rowid"
        copies.append(
            f"{verb} main.{table} ({columns}) SELECT {chosen} FROM {BATCH_SCHEMA}.{table}{order}"
        )
    return tuple(copies)


@contextmanager
def batches_attached(conn: sqlite3.Connection) -> Iterator[list[str] | None]:
    """Around an import on `conn`, outside its transaction: a place for workers' batches
    (`copy_batch`), attached. Gives the CREATE TABLE statements the workers make their
    batch databases with, or None if batches cannot be copied (this sqlite3 cannot load a
    database from bytes, or a transaction is open: then rows travel as values)."""
    if conn.in_transaction or not hasattr(conn, "deserialize"):
        yield None
        return
    tables = sorted({_columns(sql)[0] for sql in (*_INSERTS, CURRENT_MARK)})
    schema = [_bare_table(conn, name) for name in tables]
    conn.execute(f"ATTACH ':memory:' AS {BATCH_SCHEMA}")
    try:
        yield schema
    finally:
        conn.execute(f"DETACH {BATCH_SCHEMA}")


def _bare_table(conn: sqlite3.Connection, table: str) -> str:
    """A batch database's `table`: the columns of the database's own, in order, with
    their declared types and defaults (so each value is stored as it would be there),
    and no key, constraint or index, which the copy into the database checks (a run's
    text key alone costs a batch as much as all its other columns)."""
    columns = [
        f'"{name}" {kind}' + ("" if default is None else f" DEFAULT {default}")
        for _, name, kind, _, default, _ in conn.execute(f'PRAGMA table_info("{table}")')
    ]
    return f'CREATE TABLE "{table}" ({", ".join(columns)})'


def batch_database(schema: list[str], tables: Tables) -> bytes:
    """A database holding `tables` (rows taken from `Rows`, agent ids from 0), made with
    `schema` (`batches_attached`), as bytes."""
    conn = sqlite3.connect(":memory:", isolation_level=None)
    try:
        for sql in schema:
            conn.execute(sql)
        conn.execute("BEGIN")
        write(conn, tables, per=_BATCH_ROWS_PER_INSERT)
        conn.execute("COMMIT")
        return conn.serialize()
    finally:
        conn.close()


def copy_batch(conn: sqlite3.Connection, data: bytes, offset: int) -> None:
    """Insert the rows of a `batch_database` as `write` would have inserted them, `offset`
    added to their agent (and trajectory) ids."""
    conn.deserialize(data, name=BATCH_SCHEMA)
    for sql in _copies():
        conn.execute(sql, (offset,) if "+ ?" in sql else ())
