"""The run store: one SQLite database of imported runs and preferred-agent marks.

Opened through sqlite-utils on a connection in WAL mode (the app reads while an
import writes) with foreign keys on. Imports are one transaction each. The hot
paths (regret, tuning, the runs list) read flat per-agent columns in a couple of
queries; penalties are summed in SQL under the current settings, so a change of
[ppp.penalties] needs no re-import.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..core.errors import PPPError
from ..core.model import Agent, Effort, Question, Run, Severity, Source, Trajectory, Turn, Violation
from ..core.preferences import is_known
from ..core.relevance import task_type
from ..core.scoring import penalty_for, states_preferences
from ..core.settings import Settings
from .files import Record
from .schema import MIGRATIONS, OUR_TABLES, SCHEMA_VERSION

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt
    import sqlite_utils

    from ..core.columns import AgentColumns

# Rows buffered before each executemany during an import.
_BATCH = 2000
_BUSY_TIMEOUT_S = 5.0


class StoreError(PPPError):
    """A database that cannot be used: missing, corrupt, locked, foreign or too new."""


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


def _database_error(path: Path, error: sqlite3.Error) -> StoreError:
    text = str(error)
    if "locked" in text or "busy" in text:
        return StoreError(f"{path}: the database is locked by another process; try again")
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
    def open(cls, path: str | Path, create: bool = False) -> Store:
        """Open (and migrate) the database; `create` makes a new one if it is missing."""
        path = Path(path)
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
                path, timeout=_BUSY_TIMEOUT_S, isolation_level=None, check_same_thread=False
            )
        except sqlite3.Error as error:
            raise _database_error(path, error) from None
        store = cls(path, conn)
        try:
            store._prepare()
        except sqlite3.Error as error:
            conn.close()
            raise _database_error(path, error) from None
        except StoreError:
            conn.close()
            raise
        return store

    def _prepare(self) -> None:
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
        conn.execute("PRAGMA foreign_keys = ON")
        if conn.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
            conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("PRAGMA synchronous = NORMAL")
        for step in range(version, SCHEMA_VERSION):
            conn.execute("BEGIN IMMEDIATE")
            try:
                MIGRATIONS[step](conn)
                conn.execute(f"PRAGMA user_version = {step + 1}")
                conn.execute("COMMIT")
            except BaseException:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise

    def close(self) -> None:
        self.conn.close()

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
        """Add every new run in one transaction; on error nothing is added (SPEC 1)."""
        report = ImportReport()
        try:
            with self._transaction():
                writer = _Writer(self.conn)
                known = {row[0] for row in self.conn.execute("SELECT id FROM runs")}
                for record in records:
                    if progress is not None:
                        progress(1)
                    try:
                        run = record.parse()
                    except PPPError as error:
                        if not skip_invalid:
                            raise
                        report.invalid.append(str(error))
                        continue
                    if run.id in known:
                        report.skipped += 1
                        continue
                    known.add(run.id)
                    writer.add(run)
                    report.added += 1
                    report.marks += run.preferred_agent is not None
                    report.unknown_preferences.update(_unknown_preferences(run))
                writer.flush()
        except sqlite3.Error as error:
            raise _database_error(self.path, error) from None
        return report

    # -- marks ---------------------------------------------------------------------

    def mark(self, run_id: str, agent: str | None, source: str = "cli") -> None:
        """Set (or with None clear) the run's preferred agent, keeping the history."""
        names = [
            row[0] for row in self._query("SELECT name FROM agents WHERE run_id = ?", [run_id])
        ]
        if not names:
            raise StoreError(f"unknown run id {run_id!r}")
        if agent is not None and agent not in names:
            raise StoreError(
                f"{run_id}: no agent named {agent!r}; the agents are {', '.join(sorted(names))}"
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

    def run_infos(self, stage: str | None = None) -> list[RunInfo]:
        """Every run (or one stage's), by id: the order of the score arrays."""
        sql = (
            "SELECT id, spec_id, stage, task, task_type, created_at, agents, preferred_agent"
            " FROM runs"
        )
        params: list[Any] = []
        if stage is not None:
            sql += " WHERE stage = ?"
            params.append(stage)
        return [RunInfo(*row) for row in self._query(sql + " ORDER BY id", params)]

    def get_run(self, run_id: str) -> Run:
        """The whole run, as imported (labels and their sources included)."""
        rows = self._query(
            "SELECT id, spec_id, stage, task, created_at, preferences, selected_agent,"
            " preferred_agent, iterations FROM runs WHERE id = ?",
            [run_id],
        )
        if not rows:
            raise StoreError(f"unknown run id {run_id!r}")
        rid, spec_id, stage, task, created_at, prefs, selected, preferred, iterations = rows[0]
        agents = []
        for agent_id, name, model, technical, relevance, confidence, output in self._query(
            "SELECT id, name, model, technical, relevance, confidence, output FROM agents"
            " WHERE run_id = ? ORDER BY position",
            [run_id],
        ):
            trajectory = self._trajectory(agent_id)
            agents.append(Agent(name, technical, trajectory, model, relevance, confidence, output))
        return Run(
            id=rid,
            agents=tuple(agents),
            spec_id=spec_id,
            stage=stage,
            task=task,
            created_at=created_at,
            preferences=tuple(json.loads(prefs)),
            selected_agent=selected,
            preferred_agent=preferred,
            iterations=tuple(json.loads(iterations)),
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
        return Trajectory(turns, questions, violations, tuple(json.loads(unchecked)))

    def agent_columns(self, settings: Settings, stage: str | None = None) -> AgentColumns:
        """Flat per-agent columns of every run (or one stage's), for the array paths.

        Two ordered scans, runs by id and agents by (run id, position) from a
        covering index: no joins, and the large text columns are never read.
        """
        import numpy as np

        from ..core.columns import AgentColumns

        runs = self._query(
            "SELECT id, stage, preferred_agent, states_preferences FROM runs ORDER BY id"
        )
        agents = self._query(
            "SELECT id, run_id, name, technical, q_low, q_medium, q_high, violations"
            " FROM agents INDEXED BY agents_scores ORDER BY run_id, position"
        )
        run_ids = np.empty(len(runs), dtype=object)
        stages = np.empty(len(runs), dtype=object)
        preferred = np.empty(len(runs), dtype=object)
        stated = np.zeros(len(runs), dtype=bool)
        if runs:
            ids, stage_col, preferred_col, stated_col = zip(*runs, strict=True)
            run_ids[:], stages[:], preferred[:] = ids, stage_col, preferred_col
            stated[:] = stated_col
        count = len(agents)
        names = np.empty(count, dtype=object)
        if agents:
            agent_ids, agent_runs, name_col, technical, q_low, q_medium, q_high, violations = zip(
                *agents, strict=True
            )
            names[:] = name_col
        else:
            agent_ids = agent_runs = technical = q_low = q_medium = q_high = violations = ()
        run_index = _run_index(run_ids, agent_runs)
        has_trajectory = np.array([v is not None for v in violations], dtype=bool)

        def counts(values: tuple[Any, ...]) -> npt.NDArray[np.int64]:
            return np.array([v or 0 for v in values], dtype=np.int64)

        violation_counts = counts(violations)
        columns = AgentColumns(
            run_ids=run_ids,
            stages=stages,
            preferred=preferred,
            stated=stated,
            run_index=run_index,
            names=names,
            technical=np.array(technical, dtype=np.float64),
            has_trajectory=has_trajectory,
            q_low=counts(q_low),
            q_medium=counts(q_medium),
            q_high=counts(q_high),
            violations=violation_counts,
            penalty=self._penalties(
                settings, np.array(agent_ids, dtype=np.int64), violation_counts
            ),
        )
        return columns if stage is None else columns.only_stage(stage)

    def _penalties(
        self,
        settings: Settings,
        agent_ids: npt.NDArray[np.int64],
        violations: npt.NDArray[np.int64],
    ) -> npt.NDArray[np.float64]:
        """Each agent's violation penalty sum under `settings`, computed in SQL."""
        import numpy as np

        penalty = np.zeros(len(agent_ids))
        if not violations.any():
            return penalty
        pers = settings.personalization
        names = [
            row[0]
            for row in self._query(
                "SELECT DISTINCT preference FROM trajectory_violations WHERE severity = 'error'"
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
        sums = self._query(
            "SELECT trajectory_id, SUM(COALESCE(penalty, CASE severity"
            f" WHEN 'error' THEN {error_cost} WHEN 'warning' THEN ? WHEN 'minor' THEN ?"
            " WHEN 'major' THEN ? WHEN 'critical' THEN ? END))"
            " FROM trajectory_violations GROUP BY trajectory_id",
            params,
        )
        if not sums:
            return penalty
        ids = np.fromiter((row[0] for row in sums), np.int64, len(sums))
        values = np.fromiter((row[1] for row in sums), np.float64, len(sums))
        # Trajectory ids are agent ids.
        order = np.argsort(agent_ids)
        found = np.clip(np.searchsorted(agent_ids, ids, sorter=order), 0, len(agent_ids) - 1)
        hit = agent_ids[order[found]] == ids
        penalty[order[found[hit]]] = values[hit]
        return penalty


def _run_index(run_ids: npt.NDArray[np.object_], agent_runs: tuple[str, ...]) -> Any:
    """Each agent's row in the run arrays (agents come grouped, in run id order)."""
    import numpy as np

    count = len(agent_runs)
    if not count:
        return np.zeros(0, dtype=np.int64)
    runs = np.empty(count, dtype=object)
    runs[:] = agent_runs
    starts = np.flatnonzero(np.concatenate(([True], runs[1:] != runs[:-1])))
    if len(starts) == len(run_ids) and (runs[starts] == run_ids).all():
        return np.repeat(np.arange(len(run_ids)), np.diff(np.append(starts, count)))
    # Not grouped as expected (text collation differences): map by id.
    position = {run_id: i for i, run_id in enumerate(run_ids)}
    return np.array([position[run_id] for run_id in agent_runs], dtype=np.int64)


def remove_database(path: Path) -> None:
    """Delete a database file with its WAL and shared-memory files."""
    for suffix in ("", "-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)


def _unknown_preferences(run: Run) -> set[str]:
    names = set(run.preferences)
    for agent in run.agents:
        if agent.trajectory is not None:
            names.update(v.preference for v in agent.trajectory.violations)
    return {name for name in names if not is_known(name)}


class _Writer:
    """Buffers one import's rows and writes them with executemany."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn
        self.stamp = now()
        self.next_agent = (
            int(conn.execute("SELECT coalesce(max(id), 0) FROM agents").fetchone()[0]) + 1
        )
        self.runs: list[tuple[Any, ...]] = []
        self.agents: list[tuple[Any, ...]] = []
        self.trajectories: list[tuple[Any, ...]] = []
        self.turns: list[tuple[Any, ...]] = []
        self.questions: list[tuple[Any, ...]] = []
        self.violations: list[tuple[Any, ...]] = []
        self.marks: list[tuple[Any, ...]] = []

    def add(self, run: Run) -> None:
        self.runs.append(
            (
                run.id,
                run.spec_id,
                run.stage,
                run.task,
                task_type(run.task).value,
                run.created_at,
                json.dumps(run.preferences),
                int(states_preferences(run.preferences)),
                run.selected_agent,
                run.preferred_agent,
                json.dumps(run.iterations),
                len(run.agents),
                self.stamp,
            )
        )
        if run.preferred_agent is not None:
            self.marks.append((run.id, run.preferred_agent, self.stamp, "import"))
        for position, agent in enumerate(run.agents):
            agent_id = self.next_agent
            self.next_agent += 1
            trajectory = agent.trajectory
            counts: tuple[int | None, ...] = (None, None, None, None)
            if trajectory is not None:
                counts = (*trajectory.effort_counts(), len(trajectory.violations))
            self.agents.append(
                (
                    agent_id,
                    run.id,
                    position,
                    agent.name,
                    agent.model,
                    agent.technical,
                    agent.relevance,
                    agent.confidence,
                    agent.output,
                    *counts,
                )
            )
            if trajectory is None:
                continue
            tid = agent_id
            self.trajectories.append(
                (
                    tid,
                    run.id,
                    len(trajectory.turns),
                    len(trajectory.questions),
                    len(trajectory.violations),
                    json.dumps(trajectory.unchecked),
                )
            )
            for number, turn in enumerate(trajectory.turns, start=1):
                self.turns.append(
                    (
                        tid,
                        number,
                        turn.prompt,
                        turn.response,
                        turn.token_count,
                        turn.latency_ms,
                        turn.timestamp,
                    )
                )
            for q in trajectory.questions:
                self.questions.append((tid, q.turn, q.text, q.effort.value, q.source.value))
            for v in trajectory.violations:
                self.violations.append(
                    (tid, v.turn, v.preference, v.severity.value, v.penalty, v.source.value)
                )
        if len(self.runs) >= _BATCH:
            self.flush()

    def flush(self) -> None:
        statements = (
            (
                "INSERT INTO runs (id, spec_id, stage, task, task_type, created_at, preferences,"
                " states_preferences, selected_agent, preferred_agent, iterations, agents,"
                " imported_at) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
                self.runs,
            ),
            (
                "INSERT INTO agents (id, run_id, position, name, model, technical, relevance,"
                " confidence, output, q_low, q_medium, q_high, violations)"
                " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
                self.agents,
            ),
            (
                "INSERT INTO trajectories (id, run_id, turns, questions, violations, unchecked)"
                " VALUES (?,?,?,?,?,?)",
                self.trajectories,
            ),
            (
                "INSERT INTO trajectory_turns (trajectory_id, turn, prompt, response, token_count,"
                " latency_ms, timestamp) VALUES (?,?,?,?,?,?,?)",
                self.turns,
            ),
            (
                "INSERT INTO trajectory_questions (trajectory_id, turn, text, effort, source)"
                " VALUES (?,?,?,?,?)",
                self.questions,
            ),
            (
                "INSERT INTO trajectory_violations (trajectory_id, turn, preference, severity,"
                " penalty, source) VALUES (?,?,?,?,?,?)",
                self.violations,
            ),
            (
                "INSERT INTO preferred_marks (run_id, agent, marked_at, source) VALUES (?,?,?,?)",
                self.marks,
            ),
        )
        for sql, rows in statements:
            if rows:
                self.conn.executemany(sql, rows)
                rows.clear()
