"""The database a store works on: opening it (and migrating it, taking back one a dying
replacement left), the lock every use of the connection holds, transactions, queries,
and what tells that another process changed it (data_version, the contents key).
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable, Iterable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Self

from . import database, reviewers
from .database import (
    StoreError,
    database_error,
    take_back,
)
from .schema import prepare

if TYPE_CHECKING:
    from .rows import Tables


class StoreBase:
    """A ppp-tui database's connection: opened (and migrated) by `open`, closed by
    `close` (or `with`). `Store` (store.py) joins the reads, writes, marks and search
    to it.

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
    ) -> Self:
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
    ) -> Self | None:
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
            if database.is_retired(conn):
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

    def reopen(self) -> Self:
        """The same database on a connection of its own (a read that runs beside this
        connection's), never migrated."""
        return self.open(self.path, upgrade=False)

    def _prepare(self, upgrade: bool = True) -> None:
        prepare(self.conn, self.path, upgrade)

    def close(self) -> None:
        """Close the connection once the statement under way (in any thread) is done; a
        later use fails with a StoreError. Closing twice is harmless."""
        with self.lock:
            self.conn.close()

    def set_lock_wait(self, seconds: float) -> None:
        """How long a statement waits for another process's lock before it fails."""
        self._query(database.lock_wait(seconds))

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
        return int(self._query(database.DATA_VERSION)[0][0])

    def after_bulk_write(self, added: int) -> None:
        """What the engine needs once `added` runs came in at once: nothing for a SQLite
        file (its planner reads no statistics ppp-tui keeps); a server store refreshes
        its planner's."""

    def __enter__(self) -> Self:
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

    @contextmanager
    def _statements(self) -> Iterator[None]:
        """Around statements run on `conn` outside a transaction: the lock held, and a
        failed statement the one-line StoreError."""
        with self.lock:
            try:
                yield
            except sqlite3.Error as error:
                raise database_error(self.path, error) from None

    def _query(self, sql: str, params: Iterable[Any] = ()) -> list[Any]:
        with self._statements():
            return self.conn.execute(sql, tuple(params)).fetchall()

    # -- what a session import does that is the engine's own (store_server.py) -------

    def _writing_runs(self) -> AbstractContextManager[None]:
        """Around the writes of an import, inside its transaction (the packs' trigger
        lifted: packs.import_in_progress)."""
        from . import packs

        return packs.import_in_progress(self.conn)

    def _write_rows(self, tables: Tables) -> None:
        """Insert rows taken from `rows.Rows` (their agent ids already given)."""
        from .rows import write

        write(self.conn, tables)

    def _forget_searched(self, run_id: str) -> None:
        """Take a run about to be deleted out of the full-text index."""
        from . import search

        search.forget_run(self.conn, run_id)
