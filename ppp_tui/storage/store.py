"""The run store: one SQLite database of imported runs and preferred-agent marks.

Opened through sqlite-utils on a connection in WAL mode (the app reads while an
import writes) with foreign keys on. Imports are one transaction each. The hot
paths (regret, tuning, the runs list) read flat per-agent columns in a couple of
queries; penalties are summed in SQL under the current settings, so a change of
[ppp.penalties] needs no re-import.
"""

from __future__ import annotations

import gc
import json
import os
import pickle
import signal
import sqlite3
import sys
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import cache, cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO, NoReturn

from ..core.errors import PPPError
from ..core.model import (
    MAX_PENALTY,
    Agent,
    Effort,
    Question,
    Run,
    Severity,
    Source,
    Trajectory,
    Turn,
    Violation,
)
from ..core.preferences import is_known
from ..core.relevance import task_type
from ..core.scoring import penalty_for, states_preferences
from ..core.settings import Settings
from ..core.stages import NO_STAGE
from . import packs
from .damage import check, is_count, is_penalty, is_unit, readable
from .schema import MIGRATIONS, OUR_TABLES, SCHEMA_VERSION

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt
    import sqlite_utils

    from ..core.columns import AgentColumns
    from .files import Record
    from .technical import Score

# Rows buffered before each executemany during an import.
_BATCH = 2000
# JSON Lines imports (see _Import): parse worker processes, the fewest lines in a row
# worth them, the most they share (held in memory until they are done), lines per batch.
_WORKERS = 2
_FORK_MIN = 1000
_FORK_CHUNK = 100_000
_PIPE_BATCH = 500
_PIPE_SIZE = 1 << 20
# Distinct values an import remembers (task types, preference lists) before starting over.
_CACHE_LIMIT = 10_000
_BUSY_TIMEOUT_S = 5.0
# PRAGMA application_id of a database that is being replaced (swap.py): whoever opens it
# opens the file now at its path instead.
RETIRED_ID = 0x52455449


class StoreError(PPPError):
    """A database that cannot be used: missing, corrupt, locked, foreign or too new."""


class _Retired(Exception):
    """The database file opened has just been replaced by a new one (swap.py)."""


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


@dataclass
class ImportReport:
    added: int = 0
    skipped: int = 0  # already in the database (same id or content)
    invalid: list[str] = field(default_factory=list)  # one line per rejected run
    unknown_preferences: set[str] = field(default_factory=set)
    marks: int = 0


@dataclass(frozen=True)
class Mark:
    agent: str | None  # None: the mark was cleared
    marked_at: str
    source: str


@dataclass(frozen=True)
class RunInfo:
    """A run's row in the runs list (what the runs screen and `runs` show)."""

    id: str
    spec_id: str | None
    stage: str | None
    task: str | None
    task_type: str
    created_at: str | None
    agents: int
    preferred: str | None


@dataclass
class AgentInputs:
    """What an agent's PPP score needs (`Store.first_runs`)."""

    name: str
    technical: float
    counts: tuple[int, ...] | None  # low, medium, high questions, violations; None: no trajectory
    penalty: float = 0.0  # the violations' penalty sum under the settings
    failed: bool = False  # its output is a failure: it never ranks above a working agent


@dataclass(frozen=True)
class RunAgents:
    """A run's agents with their score inputs, in position order (`Store.first_runs`)."""

    id: str
    stage: str | None
    preferred: str | None
    stated: bool  # states a preference other than no_preference
    agents: list[AgentInputs]


class DatabaseLocked(StoreError):
    """Another process held the write lock for longer than this connection waits."""


def _database_error(path: Path, error: sqlite3.Error) -> StoreError:
    text = str(error)
    if "locked" in text or "busy" in text:
        return DatabaseLocked(f"{path}: the database is locked by another process; try again")
    if "not a database" in text or "malformed" in text or "corrupt" in text:
        return StoreError(f"{path}: not a usable SQLite database ({text})")
    return StoreError(f"{path}: database error: {text}")


class Store:
    """A ppp-tui database. Use `Store.open`; close it (or use `with`)."""

    def __init__(self, path: Path, conn: sqlite3.Connection) -> None:
        self.path = path
        self.conn = conn

    @cached_property
    def db(self) -> sqlite_utils.Database:
        """The same connection through sqlite-utils (imported on first use: `rank` is quick)."""
        import sqlite_utils

        return sqlite_utils.Database(self.conn)

    # -- opening -------------------------------------------------------------------

    @classmethod
    def open(
        cls,
        path: str | Path,
        create: bool = False,
        timeout: float | None = None,
        upgrade: bool = True,
    ) -> Store:
        """Open (and migrate) the database; `create` makes a new one if it is missing.

        `timeout` is how long to wait for a lock (default 5 s); without `upgrade` a database that
        needs a migration is refused (a caller that must not wait for one).
        """
        path = Path(path)
        # A database retired on the second look was left so by a replacement that died
        # before its rename (it renames before anyone else can look): it is taken back.
        for attempt in range(4):
            store = cls._open_once(path, create, timeout, upgrade, recover=attempt > 0)
            if store is not None:
                return store
        raise StoreError(f"{path}: being replaced by another process; try again")

    @classmethod
    def _open_once(
        cls, path: Path, create: bool, timeout: float | None, upgrade: bool, recover: bool
    ) -> Store | None:
        if path.is_dir():
            raise StoreError(f"{path}: is a directory, not a database file")
        if not path.exists():
            if not create:
                raise StoreError(
                    f"{path}: no database here; create one with `ppp-tui import FILE`"
                    " or `ppp-tui demo`"
                )
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
            except OSError as error:
                raise StoreError(f"{path}: cannot create ({error.strerror})") from None
        try:
            # The app loads in a worker thread and reads on the UI thread; the sqlite3
            # module is built serialized (threadsafety 3), so sharing is safe.
            conn = sqlite3.connect(
                path,
                timeout=_BUSY_TIMEOUT_S if timeout is None else timeout,
                isolation_level=None,
                check_same_thread=False,
            )
        except sqlite3.Error as error:
            raise _database_error(path, error) from None
        store = cls(path, conn)
        try:
            if conn.execute("PRAGMA application_id").fetchone()[0] == RETIRED_ID:
                if recover:
                    _take_back(conn)
                conn.close()
                return None
            store._prepare(upgrade)
        except sqlite3.Error as error:
            conn.close()
            raise _database_error(path, error) from None
        except StoreError:
            conn.close()
            raise
        return store

    def _prepare(self, upgrade: bool = True) -> None:
        conn = self.conn
        version = int(conn.execute("PRAGMA user_version").fetchone()[0])
        tables = {
            row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
        }
        if version == 0 or "runs" not in tables:
            # Another program's database, whatever its user_version says (spec-kit's is
            # 2): refused before anything, the journal mode included, is written to it.
            foreign = sorted(tables - OUR_TABLES)
            if foreign:
                raise StoreError(
                    f"{self.path}: not a ppp-tui database (it has other tables:"
                    f" {', '.join(foreign[:3])})"
                )
            if version:
                raise StoreError(
                    f"{self.path}: not a ppp-tui database (user_version {version}, no runs table)"
                )
        if version > SCHEMA_VERSION:
            raise StoreError(
                f"{self.path}: made by a newer ppp-tui (schema {version}; this version reads"
                f" up to {SCHEMA_VERSION}); upgrade ppp-tui to open it"
            )
        if version < SCHEMA_VERSION and not upgrade:
            raise StoreError(f"{self.path}: needs an upgrade to schema {SCHEMA_VERSION}")
        conn.execute("PRAGMA foreign_keys = ON")
        _switch_to_wal(conn)
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

    def close(self) -> None:
        self.conn.close()

    def set_lock_wait(self, seconds: float) -> None:
        """How long a statement waits for another process's lock before it fails."""
        self.conn.execute(f"PRAGMA busy_timeout = {round(seconds * 1000)}")

    def contents_key(self) -> tuple[int, ...]:
        """Changes when runs or agents are added or removed, not when a mark changes
        (ppp-tui changes nothing else once a run is imported)."""
        row = self._query(
            "SELECT (SELECT count(*) FROM runs), (SELECT ifnull(max(rowid), 0) FROM runs),"
            " (SELECT count(*) FROM agents), (SELECT ifnull(max(id), 0) FROM agents)"
        )[0]
        return tuple(int(value) for value in row)

    def preferred_agents(self) -> dict[str, str | None]:
        """Every run's mark, by run id."""
        return dict(self._query("SELECT id, preferred_agent FROM runs"))

    def data_version(self) -> int:
        """A number that changes when another connection commits to the database (cheap:
        no table is read); this connection's own commits leave it as it is."""
        return int(self._query("PRAGMA data_version")[0][0])

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextmanager
    def _transaction(self) -> Iterator[None]:
        try:
            self.conn.execute("BEGIN IMMEDIATE")
        except sqlite3.Error as error:
            raise _database_error(self.path, error) from None
        try:
            yield
            self.conn.execute("COMMIT")
        except BaseException:
            # SQLite may have rolled back already (e.g. after SQLITE_FULL).
            if self.conn.in_transaction:
                self.conn.execute("ROLLBACK")
            raise

    def _query(self, sql: str, params: Iterable[Any] = ()) -> list[Any]:
        try:
            return self.conn.execute(sql, tuple(params)).fetchall()
        except sqlite3.Error as error:
            raise _database_error(self.path, error) from None

    # -- import --------------------------------------------------------------------

    def import_records(
        self,
        records: Iterable[Record],
        skip_invalid: bool = False,
        progress: Callable[[int], None] | None = None,
    ) -> ImportReport:
        """Add every new run in one transaction; on error nothing is added.

        Long runs of JSON Lines lines are parsed by forked worker processes while this
        one writes, where that is possible (see `_Import`).
        """
        report = ImportReport()
        try:
            with self._transaction(), packs.import_in_progress(self.conn):
                known = {row[0] for row in self.conn.execute("SELECT id FROM runs")}
                _Import(_Writer(self.conn), known, report, skip_invalid, progress).run(records)
        except sqlite3.Error as error:
            raise _database_error(self.path, error) from None
        return report

    def import_batches(
        self,
        make: Callable[[str], Iterable[RowBatch]],
        progress: Callable[[int], None] | None = None,
        *,
        scratch: bool = False,
    ) -> ImportReport:
        """Add runs whose rows were built already (`build_batch`, in any process) in one
        transaction; on error nothing is added.

        `make(stamp)` gives the batches in order, built with this import's `stamp`. A
        batch with a run id already present is an error: this is for runs known to be
        new, such as a demo written into a new database.

        `scratch` is for a new database no other process knows of, thrown away whole if
        the import fails (swap.py): it is then written without the WAL, without syncs or
        foreign key checks, and its indexes are built once at the end instead of row by
        row. It is back in WAL mode, with the same schema, when this returns.
        """
        report = ImportReport()
        try:
            with self._bulk(scratch), self._transaction(), packs.import_in_progress(self.conn):
                writer = _Writer(self.conn)
                rows = writer.rows
                known = {row[0] for row in self.conn.execute("SELECT id FROM runs")}
                indexes: list[str] = []
                if scratch:
                    # Dropped and made again, with the same definitions, after the rows.
                    for name, sql in self.conn.execute(
                        "SELECT name, sql FROM sqlite_master WHERE type = 'index'"
                        " AND sql IS NOT NULL ORDER BY rowid"
                    ).fetchall():
                        self.conn.execute(f'DROP INDEX "{name}"')
                        indexes.append(sql)
                for batch in make(rows.stamp):
                    ids = [row[0] for row in batch.tables[0]]
                    if not known.isdisjoint(ids):
                        taken = sorted(known.intersection(ids))[0]
                        raise StoreError(f"{self.path}: run {taken!r} is already there")
                    known.update(ids)
                    writer.write(batch.tables, offset=rows.next_agent)
                    rows.next_agent += batch.agents
                    report.added += len(ids)
                    report.marks += batch.marks
                    report.unknown_preferences.update(batch.unknown)
                    if progress is not None:
                        progress(len(ids))
                if scratch:
                    for sql in indexes:
                        self.conn.execute(sql)
        except sqlite3.Error as error:
            raise _database_error(self.path, error) from None
        return report

    @contextmanager
    def _bulk(self, on: bool) -> Iterator[None]:
        """Around a scratch database's import (see `import_batches`)."""
        if not on:
            yield
            return
        conn = self.conn
        conn.execute("PRAGMA foreign_keys = OFF")
        conn.execute("PRAGMA synchronous = OFF")
        # A rollback journal in memory: a new file's pages need none, and the WAL would
        # have every page written twice (once there, once when it is folded in).
        conn.execute("PRAGMA journal_mode = MEMORY")
        conn.execute("PRAGMA cache_size = -65536")
        try:
            yield
        finally:
            conn.execute("PRAGMA cache_size = -2000")
            conn.execute("PRAGMA journal_mode = WAL")
            conn.execute("PRAGMA synchronous = NORMAL")
            conn.execute("PRAGMA foreign_keys = ON")

    # -- technical scores from the user's evaluation -------------------------------

    def set_technical(self, scores: Sequence[Score]) -> int:
        """Replace the technical score of each (run, agent), in one transaction: every
        row is checked first (a known run, one of its agents, and not a failed agent
        given more than 0); one bad row writes nothing. The runs' packs are rebuilt.
        Returns the number of runs changed."""
        wanted = sorted({score.run_id for score in scores})
        agents: dict[tuple[str, str], str | None] = {}
        for chunk in range(0, len(wanted), 500):
            ids = wanted[chunk : chunk + 500]
            for run_id, name, failure in self._query(
                "SELECT run_id, name, failure FROM agents WHERE run_id IN"
                f" ({', '.join('?' for _ in ids)})",
                ids,
            ):
                agents[(run_id, name)] = failure
        known_runs = {run_id for run_id, _ in agents}
        for score in scores:
            where = f"{score.where}: "
            if score.run_id not in known_runs:
                raise StoreError(f"{where}unknown run id {score.run_id!r}")
            if (score.run_id, score.agent) not in agents:
                names = sorted(name for run_id, name in agents if run_id == score.run_id)
                raise StoreError(
                    f"{where}{score.run_id}: no agent named {score.agent!r};"
                    f" the agents are {', '.join(names)}"
                )
            failure = agents[(score.run_id, score.agent)]
            if failure is not None and score.technical > 0:
                raise StoreError(
                    f"{where}{score.run_id}: {score.agent} failed at this run ({failure});"
                    " a failed agent's technical score stays 0"
                )
        try:
            with self._transaction():
                self.conn.executemany(
                    "UPDATE agents SET technical = ? WHERE run_id = ? AND name = ?",
                    [(score.technical, score.run_id, score.agent) for score in scores],
                )
                # The update trigger dropped those runs' packs: build them again.
                packs.fill_missing(self.conn)
        except sqlite3.Error as error:
            raise _database_error(self.path, error) from None
        return len(wanted)

    # -- marks ---------------------------------------------------------------------

    def mark(self, run_id: str, agent: str | None, source: str = "cli") -> None:
        """Set (or with None clear) the run's preferred agent, keeping the history."""
        failures = dict(self._query("SELECT name, failure FROM agents WHERE run_id = ?", [run_id]))
        names = list(failures)
        if not names:
            raise StoreError(f"unknown run id {run_id!r}")
        if agent is not None and agent not in names:
            raise StoreError(
                f"{run_id}: no agent named {agent!r}; the agents are {', '.join(sorted(names))}"
            )
        if agent is not None and failures[agent] is not None:
            raise StoreError(
                f"{run_id}: {agent} failed at this run ({failures[agent]}); a failed agent"
                " cannot be the preferred one"
            )
        with self._transaction():
            self.conn.execute("UPDATE runs SET preferred_agent = ? WHERE id = ?", (agent, run_id))
            self.conn.execute(
                "INSERT INTO preferred_marks (run_id, agent, marked_at, source)"
                " VALUES (?, ?, ?, ?)",
                (run_id, agent, now(), source),
            )

    def marks(self, run_id: str) -> list[Mark]:
        rows = self._query(
            "SELECT agent, marked_at, source FROM preferred_marks WHERE run_id = ? ORDER BY id",
            [run_id],
        )
        return [Mark(*row) for row in rows]

    # -- reading -------------------------------------------------------------------

    def count(self) -> int:
        return int(self._query("SELECT count(*) FROM runs")[0][0])

    def stages(self) -> list[str | None]:
        rows = self._query("SELECT DISTINCT stage FROM runs ORDER BY stage")
        return [row[0] for row in rows]

    @readable
    def run_infos(self, stage: str | None = None, limit: int | None = None) -> list[RunInfo]:
        """Every run (or one stage's, or the first `limit`), by id: the score arrays' order."""
        sql = (
            "SELECT id, spec_id, stage, task, task_type, created_at, agents, preferred_agent"
            " FROM runs"
        )
        params: list[Any] = []
        if stage is not None:
            condition, params = _stage_condition(stage)
            sql += f" WHERE {condition}"
        sql += " ORDER BY id"
        if limit is not None:
            sql += " LIMIT ?"
            params.append(limit)
        infos = [RunInfo(*row) for row in self._query(sql, params)]
        # Ids are text: a NULL or a number sorts first, a blob last (an outside edit).
        check(not infos or (type(infos[0].id) is str and type(infos[-1].id) is str))
        return infos

    @readable
    def run_series(self, stage: str | None = None) -> list[tuple[str, str | None, str]]:
        """(id, created_at, iterations JSON) of every run (or one stage's), by id."""
        where, params = _stage_where(stage)
        return self._query(
            f"SELECT id, created_at, iterations FROM runs{where} ORDER BY id", params
        )

    @readable
    def violation_counts(self, stage: str | None = None) -> list[tuple[str, str, int, int]]:
        """(preference as stored, run id, trajectory id, violations) for every trajectory
        and preference it violates (or those of one stage's runs)."""
        where, params = _stage_where(stage)
        return self._query(
            "SELECT v.preference, t.run_id, v.trajectory_id, count(*)"
            " FROM trajectory_violations AS v JOIN trajectories AS t ON t.id = v.trajectory_id"
            + (" JOIN runs ON runs.id = t.run_id" + where if stage is not None else "")
            + " GROUP BY v.trajectory_id, v.preference",
            params,
        )

    @readable
    def question_counts(self, stage: str | None = None) -> list[tuple[str, str, int]]:
        """(source, effort, questions) over every question (or one stage's runs')."""
        where = ""
        params: list[Any] = []
        if stage is not None:
            condition, params = _stage_condition(stage)
            where = (
                " WHERE trajectory_id IN (SELECT t.id FROM trajectories AS t"
                f" JOIN runs ON runs.id = t.run_id WHERE {condition})"
            )
        return self._query(
            f"SELECT source, effort, count(*) FROM trajectory_questions{where}"
            " GROUP BY source, effort",
            params,
        )

    @readable
    def get_run(self, run_id: str) -> Run:
        """The whole run, as imported (labels and their sources included)."""
        rows = self._query(
            "SELECT id, spec_id, stage, task, created_at, preferences, selected_agent,"
            " preferred_agent, iterations, consensus FROM runs WHERE id = ?",
            [run_id],
        )
        if not rows:
            raise StoreError(f"unknown run id {run_id!r}")
        (
            rid,
            spec_id,
            stage,
            task,
            created_at,
            prefs,
            selected,
            preferred,
            iterations,
            consensus,
        ) = rows[0]
        agents = []
        for agent_id, name, model, technical, relevance, confidence, output, failure in self._query(
            "SELECT id, name, model, technical, relevance, confidence, output, failure"
            " FROM agents WHERE run_id = ? ORDER BY position",
            [run_id],
        ):
            # What an import never writes (an outside edit) fails here, not in scoring.
            check(type(name) is str and is_unit(technical))
            check(
                (relevance is None or is_unit(relevance))
                and (confidence is None or is_unit(confidence))
            )
            trajectory = self._trajectory(agent_id)
            agents.append(
                Agent(name, technical, trajectory, model, relevance, confidence, output, failure)
            )
        preferences = json.loads(prefs)
        scores = json.loads(iterations)
        check(type(preferences) is list and all(type(p) is str for p in preferences))
        check(type(scores) is list and all(type(x) in (float, int) for x in scores))
        return Run(
            id=rid,
            agents=tuple(agents),
            spec_id=spec_id,
            stage=stage,
            task=task,
            created_at=created_at,
            preferences=tuple(preferences),
            selected_agent=selected,
            preferred_agent=preferred,
            iterations=tuple(scores),
            consensus=consensus,
        )

    def _trajectory(self, agent_id: int) -> Trajectory | None:
        found = self._query("SELECT unchecked FROM trajectories WHERE id = ?", [agent_id])
        if not found:
            return None
        trajectory_id, unchecked = agent_id, found[0][0]
        turns = tuple(
            Turn(prompt or "", response or "", tokens, latency, timestamp)
            for prompt, response, tokens, latency, timestamp in self._query(
                "SELECT prompt, response, token_count, latency_ms, timestamp"
                " FROM trajectory_turns WHERE trajectory_id = ? ORDER BY turn",
                [trajectory_id],
            )
        )
        questions = tuple(
            Question(text, Effort(effort), turn, Source(source))
            for text, effort, turn, source in self._query(
                "SELECT text, effort, turn, source FROM trajectory_questions"
                " WHERE trajectory_id = ? ORDER BY id",
                [trajectory_id],
            )
        )
        violations = tuple(
            Violation(preference, Severity(severity), penalty, turn, Source(source))
            for preference, severity, penalty, turn, source in self._query(
                "SELECT preference, severity, penalty, turn, source FROM trajectory_violations"
                " WHERE trajectory_id = ? ORDER BY id",
                [trajectory_id],
            )
        )
        check(all(is_penalty(v.penalty) and is_count(v.turn) for v in violations))
        check(all(is_count(q.turn) and type(q.text) is str for q in questions))
        unchecked_names = json.loads(unchecked)
        check(type(unchecked_names) is list)
        return Trajectory(turns, questions, violations, tuple(unchecked_names))

    @readable
    def agent_columns(
        self,
        settings: Settings,
        stage: str | None = None,
        marked_only: bool = False,
        limit: int | None = None,
    ) -> AgentColumns:
        """Flat per-agent columns of every run, for the array paths.

        Only `stage`'s runs if given; only marked runs with `marked_only` (all that
        regret and tuning look at); only the first `limit` runs by id (the app's first
        page while the rest loads). One scan of one row per run: the run and its
        packed agent columns (`run_scores`, see packs.py); the large text columns are
        never read.
        """
        import numpy as np

        from ..core.columns import AgentColumns

        rows = self._packed_rows(stage, marked_only, limit)
        count = len(rows)
        run_ids = np.empty(count, dtype=object)
        stages = np.empty(count, dtype=object)
        preferred = np.empty(count, dtype=object)
        ids, stage_col, preferred_col, stated, names, lengths, technical, counts_col, failed_col = (
            zip(*rows, strict=True) if rows else ((),) * 9
        )
        run_ids[:], stages[:], preferred[:] = ids, stage_col, preferred_col
        per_run = np.fromiter(map(len, technical), np.int64, count) // 8
        vocabulary, name_codes = _name_codes(names, lengths)
        counts = np.frombuffer(b"".join(counts_col), "<i4").reshape(-1, 4).astype(np.int64)
        has_trajectory = counts[:, 3] != packs.NO_TRAJECTORY
        counts[~has_trajectory] = 0
        technical_col = np.frombuffer(b"".join(technical), "<f8").astype(np.float64)
        # An outside edit's values (a NaN, a score of 7) would skew every figure silently.
        check(bool(((technical_col >= 0.0) & (technical_col <= 1.0)).all()))
        check(len(technical_col) == len(counts) and bool((counts >= 0).all()))
        columns = AgentColumns(
            run_ids=run_ids,
            stages=stages,
            preferred=preferred,
            stated=np.array(stated, dtype=bool),
            run_index=np.repeat(np.arange(count), per_run),
            vocabulary=vocabulary,
            name_codes=name_codes,
            technical=technical_col,
            has_trajectory=has_trajectory,
            q_low=counts[:, 0],
            q_medium=counts[:, 1],
            q_high=counts[:, 2],
            violations=counts[:, 3],
            failed=np.fromiter(
                (
                    flag
                    for packed, n in zip(failed_col, per_run.tolist(), strict=True)
                    for flag in packs.split_failed(packed, n)
                ),
                bool,
                int(per_run.sum()),
            ),
            penalty=self._penalties(
                settings,
                run_ids,
                np.cumsum(per_run) - per_run,
                counts[:, 3],
                only_loaded=limit is not None,
            ),
        )
        # Each violation costs at most MAX_PENALTY (a sum past that: an outside edit).
        check(bool((columns.penalty <= MAX_PENALTY * np.maximum(columns.violations, 1)).all()))
        return columns

    @readable
    def first_runs(self, settings: Settings, limit: int) -> list[RunAgents]:
        """The first `limit` runs by id with their agents' score inputs, without numpy
        (the app's first page draws before numpy is imported)."""
        import struct

        runs = []
        for (
            run_id,
            stage,
            preferred,
            stated,
            names,
            lengths,
            technical,
            counts,
            failed,
        ) in self._packed_rows(None, False, limit):
            n = len(technical) // 8
            split = packs.split_names(names, lengths)
            flat = struct.unpack(f"<{4 * n}i", counts)
            flags = packs.split_failed(failed, n)
            agents = [
                AgentInputs(
                    split[k],
                    value,
                    None if flat[4 * k + 3] == packs.NO_TRAJECTORY else flat[4 * k : 4 * k + 4],
                    failed=flags[k],
                )
                for k, value in enumerate(struct.unpack(f"<{n}d", technical))
            ]
            check(all(is_unit(agent.technical) for agent in agents))
            runs.append(RunAgents(run_id, stage, preferred, bool(stated), agents))
        by_id = {run.id: run for run in runs}
        for run_id, slot, total in self._penalty_sums(settings, list(by_id)):
            check(type(total) in (float, int) and 0 <= total <= MAX_PENALTY * 1e9)
            by_id[run_id].agents[slot].penalty = total
        return runs

    def _packed_rows(self, stage: str | None, marked_only: bool, limit: int | None) -> list[Any]:
        """(id, stage, preferred agent, states_preferences, and the run_scores columns)
        of every run (or those `agent_columns` asks for) by id."""
        where: list[str] = []
        params: list[Any] = []
        if stage is not None:
            condition, params = _stage_condition(stage)
            where.append(condition)
        if marked_only:
            where.append("runs.preferred_agent IS NOT NULL")
        rows = self._query(
            "SELECT runs.id, runs.stage, runs.preferred_agent, runs.states_preferences,"
            " s.names, s.name_lengths, s.technical, s.counts, s.failed"
            " FROM runs LEFT JOIN run_scores AS s ON s.run_id = runs.id"
            f"{' WHERE ' + ' AND '.join(where) if where else ''} ORDER BY runs.id"
            f"{' LIMIT ?' if limit is not None else ''}",
            [*params, limit] if limit is not None else params,
        )
        if rows and any(row[4] is None for row in rows):
            rows = self._unpacked(rows)
        # Ids are text: a NULL or a number sorts first, a blob last (an outside edit).
        check(not rows or (type(rows[0][0]) is str and type(rows[-1][0]) is str))
        return rows

    def _unpacked(self, rows: list[Any]) -> list[Any]:
        """`rows` with the packs of runs that have none (an outside edit) built from agents."""
        found = {
            pack[0]: pack
            for pack in packs.from_agent_rows(
                self._query(
                    f"{packs.AGENT_ROWS} WHERE run_id NOT IN (SELECT run_id FROM run_scores)"
                    " ORDER BY run_id, position"
                )
            )
        }
        result = []
        for row in rows:
            if row[4] is None:
                # A run whose agents were all deleted has none.
                pack = found.get(row[0]) or packs.pack(row[0], [])
                row = (*row[:4], *pack[1:])
            result.append(row)
        return result

    def _penalties(
        self,
        settings: Settings,
        run_ids: npt.NDArray[np.object_],
        first_agent: npt.NDArray[np.int64],
        violations: npt.NDArray[np.int64],
        only_loaded: bool = False,
    ) -> npt.NDArray[np.float64]:
        """Each agent's violation penalty sum under `settings`, computed in SQL.

        `first_agent` is where each run's agents start in the flat columns. With
        `only_loaded` SQL sums only the loaded runs' violations (worth it for a few).
        """
        import numpy as np

        penalty = np.zeros(len(violations))
        if not violations.any():
            return penalty
        sums = self._penalty_sums(settings, run_ids.tolist() if only_loaded else None)
        if not sums:
            return penalty
        # Runs not loaded (another stage, unmarked) are skipped.
        first_of = dict(zip(run_ids.tolist(), first_agent.tolist(), strict=True))
        where, values = [], []
        for run_id, slot, total in sums:
            first = first_of.get(run_id)
            if first is not None:
                where.append(first + slot)
                values.append(total)
        penalty[where] = values
        return penalty

    def _penalty_sums(
        self, settings: Settings, run_ids: list[str] | None
    ) -> list[tuple[str, int, float]]:
        """(run id, agent slot by position, violation penalty sum under `settings`) of
        every agent with violations, or of the runs `run_ids` only (worth it for a few)."""
        pers = settings.personalization
        # With `run_ids`, those runs' trajectories (trajectory ids are agent ids).
        loaded = (
            "trajectory_id IN (SELECT id FROM agents WHERE run_id IN"
            " (SELECT value FROM json_each(?)))"
        )
        only_loaded = run_ids is not None
        loaded_ids = [json.dumps(run_ids)] if only_loaded else []
        names = [
            row[0]
            for row in self._query(
                "SELECT DISTINCT preference FROM trajectory_violations"
                " WHERE severity = 'error'" + (f" AND {loaded}" if only_loaded else ""),
                loaded_ids,
            )
        ]
        cases = " ".join("WHEN ? THEN ?" for _ in names)
        params: list[Any] = []
        for name in names:
            params += [name, penalty_for(name, settings)]
        error_cost = f"CASE preference {cases} ELSE 0 END" if names else "0"
        params += [
            pers.warning_penalty,
            pers.minor_penalty,
            pers.major_penalty,
            pers.critical_penalty,
        ]
        # Trajectory ids are agent ids.
        return self._query(
            # An agent's slot is its rank by position in its run (positions may have
            # gaps after an outside edit).
            "SELECT agents.run_id, (SELECT count(*) FROM agents AS other"
            " WHERE other.run_id = agents.run_id AND other.position < agents.position),"
            " v.total FROM (SELECT trajectory_id,"
            " SUM(COALESCE(penalty, CASE severity"
            f" WHEN 'error' THEN {error_cost} WHEN 'warning' THEN ? WHEN 'minor' THEN ?"
            " WHEN 'major' THEN ? WHEN 'critical' THEN ? END)) AS total"
            " FROM trajectory_violations"
            + (f" WHERE {loaded}" if only_loaded else "")
            + " GROUP BY trajectory_id) AS v JOIN agents ON agents.id = v.trajectory_id",
            [*params, *loaded_ids],
        )


def _name_codes(names: Iterable[str], lengths: Iterable[bytes]) -> tuple[Any, Any]:
    """(sorted distinct names, each agent's index into them) from packed names.

    Runs mostly share a few line-ups of agents, so each distinct one is split once.
    """
    from itertools import chain

    import numpy as np

    lineups: dict[tuple[str, bytes], tuple[str, ...]] = {}
    keys = list(zip(names, lengths, strict=True))
    for key in set(keys):
        lineups[key] = tuple(packs.split_names(*key))
    vocabulary = sorted(set(chain.from_iterable(lineups.values())))
    code = {name: i for i, name in enumerate(vocabulary)}
    coded = {key: tuple(code[name] for name in lineup) for key, lineup in lineups.items()}
    per_run = [coded[key] for key in keys]
    total = sum(map(len, per_run))
    vocabulary_array = np.empty(len(vocabulary), dtype=object)
    vocabulary_array[:] = vocabulary
    return vocabulary_array, np.fromiter(chain.from_iterable(per_run), np.int64, total)


_NO_COUNTS: tuple[None, ...] = (None, None, None, None)


def _stage_condition(stage: str) -> tuple[str, list[Any]]:
    """The SQL condition selecting `stage`'s runs; NO_STAGE selects runs without one."""
    if stage == NO_STAGE:
        return "runs.stage IS NULL", []
    return "runs.stage = ?", [stage]


def _switch_to_wal(conn: sqlite3.Connection) -> None:
    """Put a database in WAL mode. Two processes switching a new file at once can each
    hold the shared lock the other needs, and SQLite then fails one at once rather than
    wait (no busy handler breaks that tie): it tries again until the usual lock wait."""
    import time

    deadline = time.monotonic() + _BUSY_TIMEOUT_S
    while True:
        try:
            if conn.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
                conn.execute("PRAGMA journal_mode = WAL")
            return
        except sqlite3.OperationalError as error:
            if "locked" not in str(error) or time.monotonic() >= deadline:
                raise
            time.sleep(0.01)


def _stage_where(stage: str | None) -> tuple[str, list[Any]]:
    if stage is None:
        return "", []
    condition, params = _stage_condition(stage)
    return f" WHERE {condition}", params


def _take_back(conn: sqlite3.Connection) -> None:
    """Clear the retired mark of a database whose replacement never happened."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        retired = conn.execute("PRAGMA application_id").fetchone()[0] == RETIRED_ID
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


_INSERTS = (
    "INSERT INTO runs (id, spec_id, stage, task, task_type, created_at, preferences,"
    " states_preferences, selected_agent, preferred_agent, iterations, agents,"
    " imported_at, consensus) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
    "INSERT INTO agents (id, run_id, position, name, model, technical, relevance,"
    " confidence, output, q_low, q_medium, q_high, violations, failure)"
    " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
    "INSERT INTO trajectories (id, run_id, turns, questions, violations, unchecked)"
    " VALUES (?,?,?,?,?,?)",
    "INSERT INTO trajectory_turns (trajectory_id, turn, prompt, response, token_count,"
    " latency_ms, timestamp) VALUES (?,?,?,?,?,?,?)",
    "INSERT INTO trajectory_questions (trajectory_id, turn, text, effort, source)"
    " VALUES (?,?,?,?,?)",
    "INSERT INTO trajectory_violations (trajectory_id, turn, preference, severity,"
    " penalty, source) VALUES (?,?,?,?,?,?)",
    "INSERT INTO preferred_marks (run_id, agent, marked_at, source) VALUES (?,?,?,?)",
    # After agents: their insert triggers clear a run's pack.
    packs.INSERT,
)
# The rows of each table in `_INSERTS`, in that order.
_Tables = tuple[list[tuple[Any, ...]], ...]
# The inserts whose first value is an agent id (trajectories and their rows share it).
_SHIFTED = (
    "INSERT INTO agents ",
    "INSERT INTO trajectories ",
    "INSERT INTO trajectory_turns ",
    "INSERT INTO trajectory_questions ",
    "INSERT INTO trajectory_violations ",
)


class _Rows:
    """One import's rows, built from runs (here or in a parse worker) until taken.

    Values that repeat from run to run (task types, preference lists, unchecked
    lists, which preference names are known) are worked out once per import.
    """

    def __init__(self, stamp: str, next_agent: int) -> None:
        self.stamp = stamp
        self.next_agent = next_agent  # agent ids are given here; trajectories share them
        self.runs: list[tuple[Any, ...]] = []
        self.agents: list[tuple[Any, ...]] = []
        self.trajectories: list[tuple[Any, ...]] = []
        self.turns: list[tuple[Any, ...]] = []
        self.questions: list[tuple[Any, ...]] = []
        self.violations: list[tuple[Any, ...]] = []
        self.marks: list[tuple[Any, ...]] = []
        self.packs: list[packs.Pack] = []
        # Stated or violated preference names of the runs added that are not in the
        # catalogue.
        self.unknown: set[str] = set()
        self._task_types: dict[str | None, str] = {}
        # preferences -> (JSON list, states_preferences as 0/1, names not in the catalogue)
        self._preferences: dict[tuple[str, ...], tuple[str, int, tuple[str, ...]]] = {}
        self._lists: dict[tuple[str, ...], str] = {(): "[]"}
        self._known: dict[str, bool] = {}

    def take(self) -> _Tables:
        """The rows built so far, table by table as in `_INSERTS`; none are kept."""
        tables = (
            self.runs,
            self.agents,
            self.trajectories,
            self.turns,
            self.questions,
            self.violations,
            self.marks,
            self.packs,
        )
        self.runs, self.agents, self.trajectories = [], [], []
        self.turns, self.questions, self.violations, self.marks = [], [], [], []
        self.packs = []
        return tables

    def _note(self, name: str) -> None:
        """Note `name` in `unknown` if it is not a catalogue preference."""
        known = self._known.get(name)
        if known is None:
            if len(self._known) > _CACHE_LIMIT:
                self._known.clear()
            known = self._known[name] = is_known(name)
        if not known:
            self.unknown.add(name)

    def _run_values(self, run: Run) -> tuple[str, str, int]:
        """(task type, preferences JSON, states_preferences) of a run."""
        task_types = self._task_types
        kind = task_types.get(run.task)
        if kind is None:
            if len(task_types) > _CACHE_LIMIT:
                task_types.clear()
            kind = task_types[run.task] = task_type(run.task).value
        preferences = run.preferences
        values = self._preferences.get(preferences)
        if values is None:
            if len(self._preferences) > _CACHE_LIMIT:
                self._preferences.clear()
            values = self._preferences[preferences] = (
                json.dumps(preferences),
                int(states_preferences(preferences)),
                tuple(name for name in preferences if not is_known(name)),
            )
        text, stated, unknown = values
        if unknown:
            self.unknown.update(unknown)
        return kind, text, stated

    def _json_list(self, names: tuple[str, ...]) -> str:
        text = self._lists.get(names)
        if text is None:
            if len(self._lists) > _CACHE_LIMIT:
                self._lists.clear()
                self._lists[()] = "[]"
            text = self._lists[names] = json.dumps(names)
        return text

    def add(self, run: Run) -> None:
        run_id = run.id
        stamp = self.stamp
        kind, preferences, stated = self._run_values(run)
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
                run.preferred_agent,
                json.dumps(run.iterations) if run.iterations else "[]",
                len(run.agents),
                stamp,
                run.consensus,
            )
        )
        if run.preferred_agent is not None:
            self.marks.append((run_id, run.preferred_agent, stamp, "import"))
        agent_rows = self.agents
        agent_id = self.next_agent
        self.next_agent += len(run.agents)
        scores = []
        for position, agent in enumerate(run.agents):
            trajectory = agent.trajectory
            # NULL counts mean "no trajectory" (schema.py).
            counts: tuple[int | None, ...] = _NO_COUNTS
            if trajectory is not None:
                counts = (*trajectory.effort_counts(), len(trajectory.violations))
            scores.append((agent.name, agent.technical, counts))
            agent_rows.append(
                (
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
                    agent.failure,
                )
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
                    self._json_list(trajectory.unchecked),
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
                        )
                        for number, turn in enumerate(turns, start=1)
                    ]
                )
            if questions:
                # _value_ is what .value returns, without the property's cost.
                self.questions.extend(
                    [(tid, q.turn, q.text, q.effort._value_, q.source._value_) for q in questions]
                )
            if violations:
                for v in violations:
                    self._note(v.preference)
                self.violations.extend(
                    [
                        (tid, v.turn, v.preference, v.severity._value_, v.penalty, v.source._value_)
                        for v in violations
                    ]
                )
        self.packs.append(
            packs.pack(run_id, scores, [agent.failure is not None for agent in run.agents])
        )


@dataclass(frozen=True)
class RowBatch:
    """Runs turned into table rows, ready for `Store.import_batches`: the agent (and
    trajectory) ids count from 0, and the import adds the next free id."""

    tables: _Tables
    agents: int
    marks: int
    unknown: frozenset[str]


def build_batch(runs: Iterable[Run], stamp: str) -> RowBatch:
    """The rows of `runs` as an import stamped `stamp` writes them (picklable)."""
    rows = _Rows(stamp, 0)
    marks = 0
    for run in runs:
        rows.add(run)
        marks += run.preferred_agent is not None
    return RowBatch(rows.take(), rows.next_agent, marks, frozenset(rows.unknown))


class _Writer:
    """Buffers one import's rows and writes them with executemany."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn
        next_agent = int(conn.execute("SELECT coalesce(max(id), 0) FROM agents").fetchone()[0])
        self.rows = _Rows(now(), next_agent + 1)

    def add(self, run: Run) -> None:
        self.rows.add(run)
        if len(self.rows.runs) >= _BATCH:
            self.flush()

    def flush(self) -> None:
        self.write(self.rows.take())

    def write(self, tables: _Tables, offset: int = 0) -> None:
        """Insert the rows; `offset` is added to their agent (and trajectory) ids."""
        for sql, rows in zip(_INSERTS, tables, strict=True):
            if rows:
                if offset and sql.startswith(_SHIFTED):
                    sql = sql.replace("VALUES (?,", f"VALUES (? + {int(offset)},", 1)
                self.conn.executemany(sql, rows)


class _Import:
    """One import: each record parsed, checked against the runs already there, written.

    Runs of at least `_FORK_MIN` JSON Lines records in a row (records that still hold
    their line) are parsed by `_WORKERS` forked worker processes, on Linux and from the
    main thread: the lines are cut into batches of `_PIPE_BATCH`, worker i parses
    batches i, i + _WORKERS, ... and sends back each batch's rows and report, and this
    process writes them in batch order. A worker numbers the agents of each batch from
    0 (the insert adds the next agent id here) and knows the ids that were there when it
    started plus those it added itself, so a batch that adds a run another worker
    already added is parsed again here. Together they write exactly what the plain loop
    would, in the same order, and report the same, bad runs first to last. Workers never
    touch the database: the transaction, and rolling it back on any error, stays here.
    """

    def __init__(
        self,
        writer: _Writer,
        known: set[str],
        report: ImportReport,
        skip_invalid: bool,
        progress: Callable[[int], None] | None,
    ) -> None:
        self.writer = writer
        self.known = known
        self.report = report
        self.skip_invalid = skip_invalid
        self.progress = progress
        self.forks = _can_fork()

    def run(self, records: Iterable[Record]) -> None:
        stream = self.stream = _Stream(records)
        while (record := stream.next()) is not None:
            if self.forks and _is_line(record):
                self.lines(record)
            else:
                self.one(record)
        self.writer.flush()
        self.report.unknown_preferences = self.writer.rows.unknown

    def one(self, record: Record) -> None:
        if self.progress is not None:
            self.progress(1)
        self.parse(record, self.writer.rows, self.report)
        if len(self.writer.rows.runs) >= _BATCH:
            self.writer.flush()

    def parse(self, record: Record, rows: _Rows, report: ImportReport) -> None:
        """Add the record's run to `rows` unless it is there already."""
        try:
            run = record.parse()
        except PPPError as error:
            if not self.skip_invalid:
                raise
            report.invalid.append(str(error))
            return
        if run.id in self.known:
            report.skipped += 1
            return
        self.known.add(run.id)
        rows.add(run)
        report.added += 1
        report.marks += run.preferred_agent is not None

    # -- parse workers -------------------------------------------------------------

    def lines(self, first: Record) -> None:
        """`first` and the JSON Lines records after it (up to `_FORK_CHUNK`)."""
        chunk = [first]
        while len(chunk) < _FORK_CHUNK and (line := self.stream.line()) is not None:
            chunk.append(line)
        if len(chunk) < _FORK_MIN or not self.forked(chunk):
            for record in chunk:
                self.one(record)

    def forked(self, chunk: list[Record]) -> bool:
        """Parse `chunk` in workers and write it; False if they could not start."""
        import fcntl  # Linux only, as forking is here

        self.writer.flush()  # rows go in in record order
        workers: list[tuple[int, int]] = []  # (pid, read end of its pipe)
        # The lines, their JSON, runs and rows have no reference cycles: the cycle
        # collector (here and in the workers) would only walk them again and again.
        collecting = gc.isenabled()
        gc.disable()
        try:
            # No SIGINT between a fork and the worker's own handling of it.
            mask = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
            try:
                for index in range(_WORKERS):
                    try:
                        read_fd, write_fd = os.pipe()
                    except OSError:
                        return False
                    others = [read_fd, *(fd for _, fd in workers)]
                    try:
                        pid = os.fork()
                    except OSError:
                        os.close(read_fd)
                        os.close(write_fd)
                        return False
                    if pid == 0:
                        self._work(chunk, index, write_fd, others, mask)  # never returns
                    os.close(write_fd)
                    workers.append((pid, read_fd))
                    with suppress(OSError):  # room for a whole batch: workers need not wait
                        fcntl.fcntl(read_fd, fcntl.F_SETPIPE_SZ, _PIPE_SIZE)
            finally:
                signal.pthread_sigmask(signal.SIG_SETMASK, mask)
            for number, start in enumerate(range(0, len(chunk), _PIPE_BATCH)):
                message = pickle.loads(_read_message(workers[number % _WORKERS][1]))
                if message[0] == "error":
                    raise message[1]
                self._apply(chunk[start : start + _PIPE_BATCH], message)
        finally:
            for pid, fd in workers:
                os.close(fd)
                # Done, failed or interrupted: the worker has nothing more to do.
                with suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
                with suppress(ChildProcessError):  # reaped already (SIGCHLD ignored)
                    os.waitpid(pid, 0)
            if collecting:
                gc.enable()
        return True

    def _apply(self, batch: list[Record], message: tuple[Any, ...]) -> None:
        """Write a worker's batch: its rows, or (if it added a run already added) it again."""
        _, tables, agents, added, skipped, invalid, marks, unknown = message
        known = self.known
        ids = [row[0] for row in tables[0]]
        if not known.isdisjoint(ids):  # another worker's batch added one of its runs
            for record in batch:
                self.one(record)
            self.writer.flush()
            return
        known.update(ids)
        rows = self.writer.rows
        self.writer.write(tables, offset=rows.next_agent)
        rows.next_agent += agents
        rows.unknown.update(unknown)
        report = self.report
        report.added += added
        report.skipped += skipped
        report.invalid.extend(invalid)
        report.marks += marks
        if self.progress is not None:
            self.progress(len(batch))

    def _work(
        self, chunk: list[Record], index: int, write_fd: int, inherited: list[int], mask: Any
    ) -> NoReturn:
        """Worker `index`: parse its batches of `chunk` and send them; never returns."""
        status = 1
        try:
            signal.signal(signal.SIGINT, signal.SIG_DFL)
            signal.pthread_sigmask(signal.SIG_SETMASK, mask)
            for fd in inherited:
                os.close(fd)
            rows = _Rows(self.writer.rows.stamp, 0)
            with open(write_fd, "wb") as pipe:
                try:
                    step = _WORKERS * _PIPE_BATCH
                    for start in range(index * _PIPE_BATCH, len(chunk), step):
                        report = ImportReport()
                        rows.next_agent = 0
                        rows.unknown = set()
                        for record in chunk[start : start + _PIPE_BATCH]:
                            self.parse(record, rows, report)
                        message = (
                            "rows",
                            rows.take(),
                            rows.next_agent,
                            report.added,
                            report.skipped,
                            report.invalid,
                            report.marks,
                            rows.unknown,
                        )
                        _send(pipe, message)
                except Exception as error:
                    _send(pipe, ("error", _portable(error)))
            status = 0
        finally:
            os._exit(status)


class _Stream:
    """The records of an import, read one at a time, or a line ahead for the workers.

    An error reading ahead is raised in its turn, once the records before it are in.
    """

    def __init__(self, records: Iterable[Record]) -> None:
        self._records = iter(records)
        self._held: Record | None = None
        self._failure: Exception | None = None
        self._ended = False

    def next(self) -> Record | None:
        held = self._held
        if held is not None:
            self._held = None
            return held
        if self._failure is not None:
            raise self._failure
        if self._ended:
            return None
        record = next(self._records, None)
        self._ended = record is None
        return record

    def line(self) -> Record | None:
        """The next record if it is a JSON Lines one; else None, and `next` gives it."""
        if self._held is not None or self._failure is not None or self._ended:
            return None
        try:
            record = next(self._records, None)
        except Exception as error:
            self._failure = error
            return None
        if record is None:
            self._ended = True
        elif not _is_line(record):
            self._held = record
            return None
        return record


def _can_fork() -> bool:
    if sys.platform != "linux" or threading.current_thread() is not threading.main_thread():
        return False
    return len(os.sched_getaffinity(0)) > 1  # on one core a worker only adds work


def _is_line(record: Record) -> bool:
    return record.text is not None and type(record) is _record_type()


@cache
def _record_type() -> type[Record]:
    # Imported on first use: files brings the classifier, which reports never need.
    from .files import Record

    return Record


def _send(pipe: BinaryIO, message: tuple[Any, ...]) -> None:
    data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    pipe.write(len(data).to_bytes(8, "little"))
    pipe.write(data)
    pipe.flush()


def _read_message(fd: int) -> bytes:
    size = int.from_bytes(_read_exactly(fd, 8), "little")
    return _read_exactly(fd, size)


def _read_exactly(fd: int, size: int) -> bytes:
    parts = []
    while size:
        part = os.read(fd, min(size, 1 << 20))
        if not part:
            raise PPPError("import: a process parsing the runs stopped unexpectedly")
        parts.append(part)
        size -= len(part)
    return b"".join(parts)


def _portable(error: Exception) -> Exception:
    """`error`, or an equivalent that survives pickling, to raise in the importing process."""
    try:
        pickle.loads(pickle.dumps(error, protocol=pickle.HIGHEST_PROTOCOL))
    except Exception:
        return RuntimeError(f"{type(error).__name__}: {error}")
    return error
