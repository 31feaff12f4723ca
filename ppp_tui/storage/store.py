"""The run store: opening a ppp-tui database, and what is read from and written to it.

Opened on a connection in WAL mode (the app reads while an import writes) with foreign
keys on; the schema and its migrations are in schema.py. Imports are one transaction
each (importer.py parses, rows.py writes); the hot score reads are in score_reads.py and
the full-text search in search.py.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..core.model import (
    HAND,
    Agent,
    AskedWith,
    Effort,
    Question,
    Run,
    Severity,
    Source,
    Trajectory,
    Turn,
    Violation,
)
from ..core.settings import Settings
from . import database, packs, reviewers, score_reads
from .damage import check, is_count, is_penalty, is_unit, readable
from .database import (
    RETIRED_ID,
    DatabaseLocked,
    StoreError,
    database_error,
    now,
    stage_condition,
    stage_where,
    take_back,
)
from .mark_rows import CURRENT_MARK, MARK_HISTORY
from .schema import prepare
from .score_reads import RunAgents

if TYPE_CHECKING:
    from ..core.columns import AgentColumns
    from .files import Record
    from .importer import ImportReport
    from .mark_files import FileMark
    from .rows import Tables
    from .technical import Score

# The types Store's methods return or raise, importable with it.
__all__ = ["DatabaseLocked", "ImportReport", "Mark", "RunAgents", "RunInfo", "Store", "StoreError"]

# The run ids an ambiguous prefix lists.
_PREFIX_SHOWN = 8


def __getattr__(name: str) -> Any:
    # The importer (and the row writer under it) load with the first import, and the
    # full-text search with the first search: reading a database needs neither, and
    # the app's first screen comes about 10 ms sooner without them.
    if name == "ImportReport":
        from .importer import ImportReport

        return ImportReport
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


@dataclass(frozen=True)
class Mark:
    agent: str | None  # None: the mark was cleared
    marked_at: str
    source: str
    reviewer: str = reviewers.UNKNOWN


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


class Store:
    """A ppp-tui database. Use `Store.open`; close it (or use `with`).

    A store may be shared by threads (the app reads in workers and on its UI thread):
    every use of its connection holds `lock`, a statement (or a transaction) at a time,
    and `close` waits for the one under way. SQLite's connection is not safe to use from
    two threads at once: one thread's error would be reported with another's result
    ("another row available"), and a connection closed under a running statement crashes.
    """

    def __init__(self, path: Path, conn: sqlite3.Connection) -> None:
        self.path = path
        self.conn = conn
        self.lock = threading.RLock()
        # Whose marks the reads count and whom new marks are recorded for: by default
        # the process's current reviewer (reviewers.py), worked out when first needed.
        self._scope: reviewers.Scope | None = None
        self.scope_source: Callable[[], reviewers.Scope] = lambda: reviewers.Scope(
            reviewers.current()
        )

    @property
    def scope(self) -> reviewers.Scope:
        """Whose marks count: the current reviewer's, or every reviewer's."""
        if self._scope is None:
            self._scope = self.scope_source()
        return self._scope

    @scope.setter
    def scope(self, scope: reviewers.Scope) -> None:
        self._scope = scope

    @property
    def reviewer(self) -> str:
        """The current reviewer: whom new marks are recorded for."""
        return self.scope.reviewer

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
            # The app loads in a worker thread and reads on the UI thread: the store's
            # lock keeps them to one statement at a time.
            conn = sqlite3.connect(
                path,
                timeout=database.BUSY_TIMEOUT_S if timeout is None else timeout,
                isolation_level=None,
                check_same_thread=False,
            )
        except sqlite3.Error as error:
            raise database_error(path, error) from None
        store = cls(path, conn)
        try:
            if conn.execute("PRAGMA application_id").fetchone()[0] == RETIRED_ID:
                if recover:
                    take_back(conn)
                conn.close()
                return None
            store._prepare(upgrade)
        except sqlite3.Error as error:
            conn.close()
            raise database_error(path, error) from None
        except StoreError:
            conn.close()
            raise
        return store

    def _prepare(self, upgrade: bool = True) -> None:
        prepare(self.conn, self.path, upgrade)

    def close(self) -> None:
        """Close the connection once the statement under way (in any thread) is done; a
        later use fails with a StoreError. Closing twice is harmless."""
        with self.lock:
            self.conn.close()

    def set_lock_wait(self, seconds: float) -> None:
        """How long a statement waits for another process's lock before it fails."""
        self._query(f"PRAGMA busy_timeout = {round(seconds * 1000)}")

    def contents_key(self) -> tuple[int, ...]:
        """Changes when runs or agents are added or removed, or a technical score or a
        question's effort changes; not when a mark changes."""
        row = self._query(
            "SELECT (SELECT count(*) FROM runs), (SELECT ifnull(max(rowid), 0) FROM runs),"
            " (SELECT count(*) FROM agents), (SELECT ifnull(max(id), 0) FROM agents),"
            " (SELECT ifnull(max(n), 0) FROM score_changes)"
        )[0]
        return tuple(int(value) for value in row)

    def preferred_agents(self, reviewer: str | None = None) -> dict[str, str | None]:
        """Every run's mark by `reviewer` (by default the current one), by run id."""
        return dict(
            self._query(
                "SELECT runs.id, m.agent FROM runs LEFT JOIN marks AS m"
                " ON m.run_id = runs.id AND m.reviewer = ?",
                [self.reviewer if reviewer is None else reviewer],
            )
        )

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
        # The lock is held to the end: another thread's read would see the transaction's
        # rows before they are committed.
        with self.lock:
            try:
                self.conn.execute("BEGIN IMMEDIATE")
            except sqlite3.Error as error:
                raise database_error(self.path, error) from None
            try:
                yield
                self.conn.execute("COMMIT")
            except BaseException:
                # SQLite may have rolled back already (e.g. after SQLITE_FULL).
                if self.conn.in_transaction:
                    self.conn.execute("ROLLBACK")
                raise

    def _query(self, sql: str, params: Iterable[Any] = ()) -> list[Any]:
        with self.lock:
            try:
                return self.conn.execute(sql, tuple(params)).fetchall()
            except sqlite3.Error as error:
                raise database_error(self.path, error) from None

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
        from .importer import Import, ImportReport
        from .rows import Writer

        report = ImportReport()
        try:
            with self.lock, self._transaction(), packs.import_in_progress(self.conn):
                known = {row[0] for row in self.conn.execute("SELECT id FROM runs")}
                writer = Writer(self.conn, self.reviewer)
                Import(writer, known, report, skip_invalid, progress).run(records)
        except sqlite3.Error as error:
            raise database_error(self.path, error) from None
        return report

    @contextmanager
    def bulk_load(self) -> Iterator[Callable[[], None]]:
        """Around the filling of a scratch database by other connections (`bulk_write`,
        in the processes that built the rows; a demo's chunk workers).

        A scratch database is a new one that only its build knows of, thrown away whole
        if filling it fails (swap.py). Inside the block it has no WAL (each page would be
        written twice: there, then folded in), no index but the primary keys and no
        insert trigger on agents (the packs go in with the rows), and it is written
        without syncs. The indexes are made again, with the same definitions, once for
        all the rows written so far when the block calls what it is given (rows written
        after that update them as they go), or else after the block; then the trigger
        is back and so is WAL mode: the schema of a database filled run by run. After a
        failure inside the block the file is left as it is, to be thrown away.
        """
        conn = self.conn
        try:
            with self.lock:
                conn.execute("PRAGMA synchronous = OFF")
                conn.execute("PRAGMA journal_mode = MEMORY")
                conn.execute("PRAGMA cache_size = -65536")
                with self._transaction():
                    indexes = conn.execute(
                        "SELECT name, sql FROM sqlite_master WHERE type = 'index'"
                        " AND sql IS NOT NULL ORDER BY rowid"
                    ).fetchall()
                    for name, _ in indexes:
                        conn.execute(f'DROP INDEX "{name}"')
                    conn.execute(packs.DROP_INSERT_TRIGGER)
        except sqlite3.Error as error:
            raise database_error(self.path, error) from None

        def make_indexes() -> None:
            if not indexes:
                return
            try:
                with self.lock, self._transaction():
                    for _, sql in indexes:
                        conn.execute(sql)
            except sqlite3.Error as error:
                raise database_error(self.path, error) from None
            indexes.clear()

        yield make_indexes
        make_indexes()
        try:
            with self.lock:
                with self._transaction():
                    conn.execute(packs.INSERT_TRIGGER)
                conn.execute("PRAGMA cache_size = -2000")
                conn.execute("PRAGMA journal_mode = WAL")
                conn.execute("PRAGMA synchronous = NORMAL")
        except sqlite3.Error as error:
            raise database_error(self.path, error) from None

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
                    "UPDATE agents SET technical = ?, technical_source = ?, judged_model = NULL"
                    " WHERE run_id = ? AND name = ?",
                    [(score.technical, HAND, score.run_id, score.agent) for score in scores],
                )
                # The update trigger dropped those runs' packs: build them again.
                packs.fill_missing(self.conn)
        except sqlite3.Error as error:
            raise database_error(self.path, error) from None
        return len(wanted)

    # -- marks ---------------------------------------------------------------------

    def mark(
        self, run_id: str, agent: str | None, source: str = "cli", reviewer: str | None = None
    ) -> None:
        """Set (or with None clear) the run's preferred agent for `reviewer` (by default
        the current one), keeping the history."""
        self._check_mark(run_id, agent)
        who = self.reviewer if reviewer is None else reviewer
        with self._transaction():
            self._record_mark(run_id, agent, now(), source, who)

    def _check_mark(self, run_id: str, agent: str | None) -> None:
        """A StoreError unless `agent` (None: a clearing) can be `run_id`'s mark."""
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

    def _record_mark(
        self, run_id: str, agent: str | None, at: str, source: str, reviewer: str
    ) -> None:
        """One history entry, and the reviewer's current mark (inside a transaction)."""
        self.conn.execute(MARK_HISTORY, (run_id, agent, at, source, reviewer))
        if agent is None:
            self.conn.execute(
                "DELETE FROM marks WHERE run_id = ? AND reviewer = ?", (run_id, reviewer)
            )
        else:
            self.conn.execute(CURRENT_MARK, (run_id, reviewer, agent, at))

    def add_marks(self, marks: Sequence[FileMark], source: str = "file") -> int:
        """Record `marks` in one transaction, checked first (a bad one: a StoreError and
        nothing recorded); returns how many were new. An exact repeat is skipped: the
        same run, reviewer, agent and time in the history, or with no time given, the
        reviewer's current mark already that agent. A reviewer's current mark is their
        latest by time."""
        for mark in marks:
            try:
                self._check_mark(mark.run_id, mark.agent)
            except StoreError as error:
                raise StoreError(f"{mark.where}: {error}" if mark.where else str(error)) from None
        stamp = now()
        added = 0
        try:
            with self.lock, self._transaction():
                for mark in sorted(marks, key=lambda m: m.at or stamp):  # stable: file order
                    added += self._merge_mark(
                        mark.run_id,
                        mark.agent,
                        mark.at or stamp,
                        source,
                        mark.reviewer,
                        timed=mark.at is not None,
                    )
        except sqlite3.Error as error:
            raise database_error(self.path, error) from None
        return added

    def insert_new_marks(self, marks: Sequence[FileMark], source: str) -> int:
        """Record marks known to be sound and new, each its reviewer's current mark (a
        demo's simulated reviewers), in one transaction without checking each."""
        history = [(m.run_id, m.agent, m.at or now(), source, m.reviewer) for m in marks]
        try:
            with self.lock, self._transaction():
                self.conn.executemany(MARK_HISTORY, history)
                self.conn.executemany(
                    CURRENT_MARK, [(run, who, agent, at) for run, agent, at, _, who in history]
                )
        except sqlite3.Error as error:
            raise database_error(self.path, error) from None
        return len(history)

    def _merge_mark(
        self,
        run_id: str,
        agent: str | None,
        at: str,
        source: str,
        reviewer: str,
        timed: bool,
        current: bool = True,
    ) -> int:
        """One mark from elsewhere (a file, another database): 1 if recorded, 0 if an
        exact repeat. With `current` it becomes the reviewer's current mark unless they
        have a later one (the later of two at the same time wins)."""
        conn = self.conn
        if timed:
            repeat = conn.execute(
                "SELECT 1 FROM preferred_marks WHERE run_id = ? AND reviewer = ?"
                " AND agent IS ? AND marked_at = ?",
                (run_id, reviewer, agent, at),
            ).fetchone()
        else:
            repeat = conn.execute(
                "SELECT 1 FROM marks WHERE run_id = ? AND reviewer = ? AND agent = ?",
                (run_id, reviewer, agent),
            ).fetchone()
        if repeat:
            return 0
        (latest,) = conn.execute(
            "SELECT max(marked_at) FROM preferred_marks WHERE run_id = ? AND reviewer = ?",
            (run_id, reviewer),
        ).fetchone()
        if current and (latest is None or at >= latest):
            self._record_mark(run_id, agent, at, source, reviewer)
        else:
            conn.execute(MARK_HISTORY, (run_id, agent, at, source, reviewer))
        return 1

    def merge_marks(self, others: Sequence[Path]) -> list[tuple[int, int, int]]:
        """Bring in the marks of other ppp-tui databases, by run id, all in one
        transaction: for each, (marks recorded, exact repeats skipped, marks of runs or
        agents this database lacks). Merging again records nothing."""
        from .merge import read_marks

        histories = [read_marks(other) for other in others]  # every file read first
        counts = []
        try:
            with self.lock, self._transaction():
                known: dict[str, set[str]] = {}
                for run_id, name in self.conn.execute(
                    "SELECT run_id, name FROM agents WHERE failure IS NULL"
                ):
                    known.setdefault(run_id, set()).add(name)
                for history in histories:
                    added = absent = 0
                    # Each reviewer's last entry of each run there: their current mark
                    # (None: cleared), and when.
                    last: dict[tuple[str, str], tuple[str, str | None]] = {}
                    for run_id, agent, at, source, reviewer in history:
                        names = known.get(run_id)
                        if names is None or (agent is not None and agent not in names):
                            absent += 1
                            continue
                        added += self._merge_mark(
                            run_id, agent, at, source, reviewer, timed=True, current=False
                        )
                        last[run_id, reviewer] = (at, agent)
                    for (run_id, reviewer), (at, agent) in last.items():
                        self._settle_current(run_id, reviewer, at, agent)
                    counts.append((added, len(history) - added - absent, absent))
        except sqlite3.Error as error:
            raise database_error(self.path, error) from None
        return counts

    def _settle_current(self, run_id: str, reviewer: str, at: str, agent: str | None) -> None:
        """The reviewer's current mark of the run: this one (another database's current
        mark, None: cleared there, at `at`) or the one here, whichever is later. At the
        same time the greater (time, agent) wins, a clearing the least, so that two
        databases merged into each other agree."""
        here = self.conn.execute(
            "SELECT marked_at, agent FROM marks WHERE run_id = ? AND reviewer = ?",
            (run_id, reviewer),
        ).fetchone()
        if here is None:
            # Cleared here (or never marked): the last history entry's time says when.
            (cleared,) = self.conn.execute(
                "SELECT max(marked_at) FROM preferred_marks WHERE run_id = ? AND reviewer = ?"
                " AND agent IS NULL",
                (run_id, reviewer),
            ).fetchone()
            here = (cleared, None) if cleared is not None else None
        if here is not None and (here[0], here[1] or "") >= (at, agent or ""):
            return
        if agent is None:
            self.conn.execute(
                "DELETE FROM marks WHERE run_id = ? AND reviewer = ?", (run_id, reviewer)
            )
        else:
            self.conn.execute(CURRENT_MARK, (run_id, reviewer, agent, at))

    def marks(self, run_id: str) -> list[Mark]:
        """The run's mark history, every reviewer's, oldest first (marks merged from
        elsewhere among them by their time)."""
        rows = self._query(
            "SELECT agent, marked_at, source, reviewer FROM preferred_marks WHERE run_id = ?"
            " ORDER BY marked_at, id",
            [run_id],
        )
        return [Mark(*row) for row in rows]

    def current_marks(self, run_id: str) -> dict[str, str]:
        """Each reviewer's current mark of the run: reviewer -> agent, by reviewer."""
        return dict(
            self._query(
                "SELECT reviewer, agent FROM marks WHERE run_id = ? ORDER BY reviewer", [run_id]
            )
        )

    @readable
    def mark_counts(self) -> list[tuple[str, int]]:
        """(reviewer, runs with their current mark) of every reviewer with one, by name."""
        return self._query(
            "SELECT reviewer, count(*) FROM marks GROUP BY reviewer ORDER BY reviewer"
        )

    @readable
    def reviewers(self) -> list[tuple[str, int, int, str | None]]:
        """(reviewer, runs with their current mark, history entries, last mark's time)
        of everyone who ever marked, by name."""
        return self._query(
            "SELECT h.reviewer, (SELECT count(*) FROM marks AS m WHERE m.reviewer = h.reviewer),"
            " count(*), max(h.marked_at) FROM preferred_marks AS h GROUP BY h.reviewer"
            " ORDER BY h.reviewer"
        )

    def rename_reviewer(self, old: str, new: str) -> tuple[int, int]:
        """Give `old`'s marks, history included, to `new` in one transaction: (history
        entries moved, runs where both had a current mark). There the later mark stays
        current."""
        if old == new:
            raise StoreError("the two names are the same reviewer")
        try:
            with self.lock, self._transaction():
                conn = self.conn
                moved = conn.execute(
                    "UPDATE preferred_marks SET reviewer = ? WHERE reviewer = ?", (new, old)
                ).rowcount
                if not moved:
                    raise StoreError(f"no marks by {reviewers.shown(old)}")
                both = conn.execute(
                    "SELECT count(*) FROM marks AS o JOIN marks AS n"
                    " ON n.run_id = o.run_id AND n.reviewer = ? WHERE o.reviewer = ?",
                    (new, old),
                ).fetchone()[0]
                # Where both marked a run, the earlier current mark goes.
                conn.execute(
                    "DELETE FROM marks WHERE reviewer = ? AND run_id IN (SELECT o.run_id"
                    " FROM marks AS o WHERE o.reviewer = ? AND o.marked_at > marks.marked_at)",
                    (new, old),
                )
                conn.execute(
                    "DELETE FROM marks WHERE reviewer = ? AND run_id IN"
                    " (SELECT run_id FROM marks WHERE reviewer = ?)",
                    (old, new),
                )
                conn.execute("UPDATE marks SET reviewer = ? WHERE reviewer = ?", (new, old))
        except sqlite3.Error as error:
            raise database_error(self.path, error) from None
        return moved, both

    @readable
    def all_marks(self, stage: str | None = None) -> list[tuple[str, str | None, str, str]]:
        """(run id, stage, reviewer, agent) of every current mark (or of `stage`'s runs),
        by run id and reviewer."""
        where, params = stage_where(stage)
        return self._query(
            "SELECT runs.id, runs.stage, m.reviewer, m.agent FROM marks AS m"
            f" JOIN runs ON runs.id = m.run_id{where} ORDER BY runs.id, m.reviewer",
            params,
        )

    # -- reading -------------------------------------------------------------------

    def count(self) -> int:
        return int(self._query("SELECT count(*) FROM runs")[0][0])

    def stages(self) -> list[str | None]:
        rows = self._query("SELECT DISTINCT stage FROM runs ORDER BY stage")
        return [row[0] for row in rows]

    @readable
    def run_infos(
        self, stage: str | None = None, ids: Sequence[str] | None = None
    ) -> list[RunInfo]:
        """Every run (or one stage's) by id: the score arrays' order; or the runs `ids`
        names, in its order (the app's first page)."""
        sql = (
            "SELECT id, spec_id, stage, task, task_type, created_at, agents, m.agent"
            " FROM runs LEFT JOIN marks AS m ON m.run_id = runs.id AND m.reviewer = ?"
        )
        params: list[Any] = [self.reviewer]
        if stage is not None:
            condition, stage_params = stage_condition(stage)
            sql += f" WHERE {condition}"
            params += stage_params
        elif ids is not None:
            sql += f" WHERE id IN ({', '.join('?' * len(ids))})"
            params += ids
        infos = [RunInfo(*row) for row in self._query(sql + " ORDER BY id", params)]
        # Ids are text: a NULL or a number sorts first, a blob last (an outside edit).
        check(not infos or (type(infos[0].id) is str and type(infos[-1].id) is str))
        if ids is not None:
            place = {run_id: k for k, run_id in enumerate(ids)}
            infos.sort(key=lambda info: place[info.id])
        return infos

    @readable
    def newest_ids(self, limit: int) -> list[str]:
        """The ids of the runs list's first `limit` runs: the newest first, through the
        created_at index (by the time as written: the whole list, by moment, differs
        only where offsets or precisions are mixed), then those without a time, by id."""
        # ISO 8601 times start with the year's digits; other text is no time.
        dated = "created_at >= '0' AND created_at < ':'"
        ids = [
            row[0]
            for row in self._query(
                f"SELECT id FROM runs WHERE {dated} ORDER BY created_at DESC, id LIMIT ?",
                [limit],
            )
        ]
        if len(ids) < limit:
            ids += [
                row[0]
                for row in self._query(
                    f"SELECT id FROM runs WHERE created_at IS NULL OR NOT ({dated})"
                    " ORDER BY id LIMIT ?",
                    [limit - len(ids)],
                )
            ]
        check(all(type(run_id) is str for run_id in ids))
        return ids

    @readable
    def run_series(self, stage: str | None = None) -> list[tuple[str, str | None, str]]:
        """(id, created_at, iterations JSON) of every run (or one stage's), by id."""
        where, params = stage_where(stage)
        return self._query(
            f"SELECT id, created_at, iterations FROM runs{where} ORDER BY id", params
        )

    @readable
    def violation_counts(self, stage: str | None = None) -> list[tuple[str, str, int, int]]:
        """(preference as stored, run id, trajectory id, violations) for every trajectory
        and preference it violates (or those of one stage's runs)."""
        where, params = stage_where(stage)
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
            condition, params = stage_condition(stage)
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
    def resolve_run_id(self, given: str) -> str:
        """The run `given` names: the run with that id, else the one run whose id starts
        with it. An unknown id, or a prefix of several, is an error naming them."""
        if self._query("SELECT 1 FROM runs WHERE id = ?", [given]):
            return given
        found = [
            row[0]
            for row in self._query(
                "SELECT id FROM runs WHERE id > ? AND id < ? ORDER BY id LIMIT ?",
                [given, given + "\U0010ffff", _PREFIX_SHOWN + 1],
            )
        ]
        if len(found) == 1 and given:
            return str(found[0])
        if not found or not given:
            raise StoreError(f"unknown run id {given!r}")
        listed = ", ".join(found[:_PREFIX_SHOWN]) + (", …" if len(found) > _PREFIX_SHOWN else "")
        raise StoreError(f"{given!r} is the start of several run ids: {listed}")

    @readable
    def get_run(self, run_id: str) -> Run:
        """The whole run, as imported (labels and their sources included)."""
        rows = self._query(
            "SELECT id, spec_id, stage, task, created_at, preferences, selected_agent,"
            " (SELECT agent FROM marks WHERE run_id = runs.id AND reviewer = ?), iterations,"
            " consensus FROM runs WHERE id = ?",
            [self.reviewer, run_id],
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
        for (
            agent_id,
            name,
            model,
            technical,
            relevance,
            confidence,
            output,
            failure,
            technical_source,
            models,
            sessions,
            judged_model,
        ) in self._query(
            "SELECT id, name, model, technical, relevance, confidence, output, failure,"
            " technical_source, models, sessions, judged_model FROM agents"
            " WHERE run_id = ? ORDER BY position",
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
                Agent(
                    name,
                    technical,
                    trajectory,
                    model,
                    relevance,
                    confidence,
                    output,
                    failure,
                    technical_source,
                    _text_list(models),
                    _text_list(sessions),
                    judged_model,
                )
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
            Turn(prompt or "", response or "", tokens, latency, timestamp, _steps(steps))
            for prompt, response, tokens, latency, timestamp, steps in self._query(
                "SELECT prompt, response, token_count, latency_ms, timestamp, steps"
                " FROM trajectory_turns WHERE trajectory_id = ? ORDER BY turn",
                [trajectory_id],
            )
        )
        questions = tuple(
            Question(
                text,
                Effort(effort),
                turn,
                Source(source),
                AskedWith(asked_with or AskedWith.TEXT),
                _text_list(options),
                answer,
                bool(dismissed),
                seconds,
                judged_model,
            )
            for (
                text,
                effort,
                turn,
                source,
                asked_with,
                options,
                answer,
                dismissed,
                seconds,
                judged_model,
            ) in self._query(
                "SELECT text, effort, turn, source, asked_with, options, answer, dismissed,"
                " seconds_to_answer, judged_model FROM trajectory_questions"
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
        """Flat per-agent columns of every run, for the array paths (see score_reads.py).

        Only `stage`'s runs if given; only marked runs with `marked_only` (all that
        regret and tuning look at); only the first `limit` runs by id (the app's first
        page while the rest loads).
        """
        return score_reads.agent_columns(
            self._query, settings, self.scope, stage, marked_only, limit
        )

    @readable
    def first_runs(self, settings: Settings, ids: Sequence[str]) -> list[RunAgents]:
        """The runs `ids` names, in its order, with their agents' score inputs, without
        numpy (the app's first page draws before numpy is imported)."""
        return score_reads.first_runs(self._query, settings, self.reviewer, ids)

    # -- search --------------------------------------------------------------------

    def search(
        self,
        text: str,
        lock_wait: float = 0.1,
        build: bool = True,
        cancelled: Callable[[], bool] | None = None,
    ) -> list[str]:
        """The ids of the runs whose task, agent outputs, questions, id or spec id hold
        every word of `text` (the last one as a prefix), the most relevant first.

        The full-text index is built or brought up to date first unless `build` is
        False (see search.py); a database without one that cannot be written (read-only,
        or its lock held for longer than `lock_wait` seconds) is searched by substring
        of id, spec id and task instead, by id. A search that `cancelled` (asked now and
        then while it runs) says is no longer wanted stops with `search.Cancelled`.
        """
        from . import search

        def every(conn: sqlite3.Connection, expression: str) -> tuple[list[str], bool]:
            return search.ranked(conn, expression), True

        found, _ = self._search(text, lock_wait, build, cancelled, every)
        return found

    def search_first(
        self, text: str, limit: int | None = None, lock_wait: float = 0.1, build: bool = True
    ) -> tuple[list[str], bool]:
        """The first `limit` runs (a screenful, `search.PAGE`, by default) of `search`'s
        answer, or all of it when that is as quick to find, and whether it is all of it:
        quick however many runs match (the app shows them while it finds the rest)."""
        from . import search

        def first(conn: sqlite3.Connection, expression: str) -> tuple[list[str], bool]:
            return search.first_matches(conn, expression, limit or search.PAGE)

        return self._search(text, lock_wait, build, None, first)

    def _search(
        self,
        text: str,
        lock_wait: float,
        build: bool,
        cancelled: Callable[[], bool] | None,
        answer: Callable[[sqlite3.Connection, str], tuple[list[str], bool]],
    ) -> tuple[list[str], bool]:
        from . import search

        expression = search.match_expression(text)
        if expression is None:
            return [], True
        try:
            # The index is built on a connection of its own: this one stays free meanwhile.
            if build and not self._locked(search.is_current):
                search.update_index(self.path, lock_wait)
            with self.lock:
                if search.has_index(self.conn):
                    if cancelled is None:
                        return answer(self.conn, expression)
                    return self._cancellable(cancelled, answer, expression)
        except sqlite3.Error as error:
            raise database_error(self.path, error) from None
        return search.substring_matches(self._query, text), True

    def _cancellable(
        self,
        cancelled: Callable[[], bool],
        answer: Callable[[sqlite3.Connection, str], tuple[list[str], bool]],
        expression: str,
    ) -> tuple[list[str], bool]:
        """`answer`, stopped by SQLite as soon as `cancelled` says so (it is asked every
        `search.CHECK_EVERY` steps of a statement)."""
        from . import search

        if cancelled():
            raise search.Cancelled
        self.conn.set_progress_handler(lambda: 1 if cancelled() else 0, search.CHECK_EVERY)
        try:
            found = answer(self.conn, expression)
        except sqlite3.OperationalError:
            if cancelled():
                raise search.Cancelled from None
            raise
        finally:
            self.conn.set_progress_handler(None, 0)
        return found

    def search_index_current(self) -> bool:
        """Whether the full-text index holds every run (a search needs no indexing)."""
        from . import search

        try:
            return self._locked(search.is_current)
        except sqlite3.Error as error:
            raise database_error(self.path, error) from None

    def _locked(self, read: Callable[[sqlite3.Connection], bool]) -> bool:
        with self.lock:
            return read(self.conn)


def bulk_write(path: Path, tables: Tables) -> None:
    """Add rows built elsewhere (`Rows`, agent ids counted from 0) to the database at
    `path` while `Store.bulk_load` fills it: in one transaction on a connection of
    this call's own, their agent ids after those already there.

    The database is a scratch file thrown away whole if filling it fails, so nothing
    is synced and the rollback journal is kept in memory (no file made and removed at
    each call). The connection never creates the file: one removed meanwhile is an
    error, not a new empty file. Opening a connection at each call costs nothing
    measurable: the rows go at the end of each table, so the pages it reads again
    after another process's writes are few.
    """
    from .rows import next_agent, write

    try:
        conn = sqlite3.connect(
            f"{path.absolute().as_uri()}?mode=rw",
            uri=True,
            timeout=database.BUSY_TIMEOUT_S,
            isolation_level=None,
        )
        try:
            conn.execute("PRAGMA synchronous = OFF")
            conn.execute("PRAGMA journal_mode = MEMORY")
            conn.execute("BEGIN IMMEDIATE")
            write(conn, tables, offset=next_agent(conn))
            conn.execute("COMMIT")
        finally:
            conn.close()
    except sqlite3.Error as error:
        raise database_error(path, error) from None


def _text_list(text: str | None) -> tuple[str, ...]:
    """A JSON list of strings stored by an import; an outside edit's other value fails."""
    if text is None:
        return ()
    value = json.loads(text)
    check(type(value) is list and all(type(item) is str for item in value))
    return tuple(value)


def _steps(text: str | None) -> tuple[tuple[str, str], ...]:
    """A turn's steps, stored as JSON [[kind, text], ...]."""
    if text is None:
        return ()
    value = json.loads(text)
    check(
        type(value) is list
        and all(type(s) is list and len(s) == 2 and all(type(x) is str for x in s) for s in value)
    )
    return tuple((kind, step) for kind, step in value)
