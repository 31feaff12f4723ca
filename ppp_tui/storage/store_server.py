"""A run store on a PostgreSQL server: the same `Store`, its SQL taken by PostgreSQL.

The reads, marks and writes are Store's own (store_reads.py and the others); their SQL
reaches the server through postgres_sql.py. What is the engine's own is here: opening
(connecting, and the schema from tables.py; connecting again after the server dropped
the connection), the lock every use of the connection holds, transactions (one writer
at a time), errors as one line naming the server, the keys that change when runs are
added or removed and when anything is written (the app's look for other processes'
changes), imports (import_server.py: the file's parsing, the rows written with COPY),
and searching (search_server.py: PostgreSQL's full-text index, which the server
keeps as rows are written). The connection is in autocommit mode: a read holds no
transaction open between statements, and each write is one transaction of its own.

`path` is what messages name the store by: the server's host, port and database.
"""

from __future__ import annotations

import threading
import zlib
from collections.abc import Callable, Iterable, Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import postgres, postgres_schema
from .database import DatabaseLocked, StoreError
from .location import ServerURL
from .postgres_sql import Connection
from .store import Store

if TYPE_CHECKING:
    from .files import Record
    from .importer import ImportReport
    from .rows import Tables
    from .search_server import Hits

# The advisory lock every write transaction holds (any number, the same everywhere).
WRITE_LOCK = 0x70707477


class ServerStore(Store):
    """A ppp-tui store on a PostgreSQL server. Use `ServerStore.connect`."""

    server: ServerURL
    _lock_wait_ms: int | None = None  # set_lock_wait's, set again on a new connection
    _shut = False  # closed by its user: never connected again
    _hits: Hits  # the rows holding a searched word, counted (search_server.py)

    @classmethod
    def connect(cls, server: ServerURL, create: bool = False, upgrade: bool = True) -> ServerStore:
        """Connect and bring the schema up to date; an empty database is refused unless
        `create` (an import into it)."""
        raw = postgres.connect(server, autocommit=True)
        try:
            if not create:
                tables = postgres_schema.tables(raw)
                if postgres_schema.VERSION_TABLE not in tables:
                    postgres_schema.refuse_foreign(server, tables)
                    raise StoreError(
                        f"{server}: no ppp-tui store here yet; import runs into it first"
                        " (`ppp-tui import FILE --db URL`)"
                    )
            postgres_schema.prepare(raw, server, upgrade)
        except BaseException as error:
            raw.close()
            if isinstance(error, StoreError):
                raise
            raise postgres.server_error(server, error) from None
        store = cls(Path(str(server)), Connection(raw))  # type: ignore[arg-type]
        store.server = server
        store._hits = {}
        return store

    def reopen(self) -> ServerStore:
        """The same store on a connection of its own."""
        return ServerStore.connect(self.server, upgrade=False)

    @property
    def pg(self) -> Connection:
        return self.conn  # type: ignore[return-value]

    def close(self) -> None:
        with self.lock:
            self._shut = True
            self.pg.close()

    def _reconnect(self) -> None:
        """A connection the server dropped (a restart, a network cut) is made again at
        the next use: the app left open goes on once the server is back. Under the
        lock; a failure is the StoreError saying why."""
        if self.pg.raw.closed:
            if self._shut:
                raise StoreError(f"{self.server}: the store is closed")
            self.conn = Connection(postgres.connect(self.server, autocommit=True))  # type: ignore[assignment]
            if self._lock_wait_ms is not None:
                self.pg.raw.execute(f"SET lock_timeout = {self._lock_wait_ms}")

    @contextmanager
    def _statements(self) -> Iterator[None]:
        pg = postgres.psycopg_module()
        with self.lock:
            try:
                self._reconnect()
                yield
            except pg.Error as error:
                raise postgres.server_error(self.server, error) from None

    def _query(self, sql: str, params: Iterable[Any] = ()) -> list[Any]:
        with self._statements():
            return self.pg.execute(sql, params).fetchall()

    @contextmanager
    def _transaction(self) -> Iterator[None]:
        pg = postgres.psycopg_module()
        with self.lock:
            try:
                self._reconnect()
                with self.pg.raw.transaction():
                    # One writer at a time, as on SQLite: writes never conflict, so the
                    # server never rolls one back (no serialization failure, no
                    # deadlock); a second writer waits for the first's commit.
                    self.pg.raw.execute("SELECT pg_advisory_xact_lock(%s)", [WRITE_LOCK])
                    yield
            except pg.Error as error:
                raise postgres.server_error(self.server, error) from None

    def contents_key(self) -> tuple[int, ...]:
        """Changes when runs or agents are added or removed (new agents get new ids),
        or a technical score or a question's effort changes; not when a mark changes."""
        row = self._query(
            "SELECT (SELECT count(*) FROM runs), (SELECT count(*) FROM agents),"
            " (SELECT coalesce(max(id), 0) FROM agents),"
            " (SELECT coalesce(max(n), 0) FROM score_changes)"
        )[0]
        return tuple(int(value) for value in row)

    def set_lock_wait(self, seconds: float) -> None:
        """How long a write waits for another writer's turn before it fails (with
        DatabaseLocked, as on SQLite); reads never wait."""
        pg = postgres.psycopg_module()
        with self.lock:
            self._lock_wait_ms = round(seconds * 1000)
            try:
                self._reconnect()
                self.pg.raw.execute(f"SET lock_timeout = {self._lock_wait_ms}")
            except pg.Error as error:
                raise postgres.server_error(self.server, error) from None

    def data_version(self) -> int:
        """A number that changes when a transaction that wrote commits: the server's
        current snapshot (the transactions under way and the next one to start) read
        as a number. Any database's writes on the same server change it too, which
        costs only a look at the marks."""
        (snapshot,) = self._query("SELECT pg_current_snapshot()::text")[0]
        return zlib.crc32(str(snapshot).encode())

    def after_bulk_write(self, added: int) -> None:
        """Bring the planner's statistics up to date once `added` runs came in that are
        a tenth or more of the store's (ANALYZE): without them the server plans the
        runs list's reads for empty tables, and the app's first screen on a store
        filled a moment ago takes several seconds. Autovacuum would do it too, later."""
        if added <= 0:
            return
        (total,) = self._query("SELECT count(*) FROM runs")[0]
        if added * 10 < int(total):
            return
        pg = postgres.psycopg_module()
        with self.lock:
            try:
                self._reconnect()
                with self.pg.raw.transaction():
                    self.pg.raw.execute("ANALYZE")
            except pg.Error as error:
                raise postgres.server_error(self.server, error) from None

    # -- imports: the SQLite pipeline's rows, written with COPY (import_server.py) ----

    def import_records(
        self,
        records: Iterable[Record],
        skip_invalid: bool = False,
        progress: Callable[[int], None] | None = None,
        nearly_done: Callable[[], None] | None = None,
    ) -> ImportReport:
        from .import_server import import_records

        return import_records(self, records, skip_invalid, progress, nearly_done)

    def _writing_runs(self) -> AbstractContextManager[None]:
        return nullcontext()  # the packs' trigger works per statement: nothing to lift

    def _write_rows(self, tables: Tables) -> None:
        from .import_server import copy_tables

        copy_tables(self.pg, tables)

    def _forget_searched(self, run_id: str) -> None:
        pass  # the server's index goes with the rows (its trigger)

    # -- search: PostgreSQL's full-text index (search_server.py), kept on every write --

    def search(
        self,
        text: str,
        lock_wait: float = 0.1,
        build: bool = True,
        cancelled: Callable[[], bool] | None = None,
    ) -> list[str]:
        from . import search, search_server  # with the first search: not at the app's start

        if cancelled is None:
            return search_server.ranked(self._query, text, self._hits)
        if cancelled():
            raise search.Cancelled
        # Under the lock throughout: a cancel the server gets meets only this search's
        # statements (one it gets while the connection is idle is ignored).
        with self.lock, _cancelling(self.pg.raw, cancelled) as sent:

            def query(sql: str, params: Iterable[Any] = ()) -> list[Any]:
                if sent:  # no next statement once cancelled
                    raise search.Cancelled
                return self._query(sql, params)

            try:
                return search_server.ranked(query, text, self._hits)
            except DatabaseLocked:  # what a cancelled statement becomes (server_error)
                if sent:
                    raise search.Cancelled from None
                raise

    def search_first(
        self, text: str, limit: int | None = None, lock_wait: float = 0.1, build: bool = True
    ) -> tuple[list[str], bool]:
        from . import search, search_server

        return search_server.first_matches(self._query, text, limit or search.PAGE, self._hits)

    def search_index_current(self) -> bool:
        return True


# How often a search asks whether it is still wanted, in seconds.
CHECK_S = 0.01


@contextmanager
def _cancelling(conn: Any, cancelled: Callable[[], bool]) -> Iterator[list[bool]]:
    """Ask `cancelled` every `CHECK_S` seconds, from a thread of its own, while the
    block runs, and cancel the statement running on `conn` once it says so; the list
    given holds True once a cancel was sent. The thread has ended when the block does."""
    sent: list[bool] = []
    done = threading.Event()

    def watch() -> None:
        while not done.wait(CHECK_S):
            if cancelled():
                sent.append(True)
                conn.cancel_safe()
                return

    watcher = threading.Thread(target=watch, name="ppp-search-cancel", daemon=True)
    watcher.start()
    try:
        yield sent
    finally:
        done.set()
        watcher.join()


def open_store(
    where: Path | ServerURL,
    create: bool = False,
    timeout: float | None = None,
    upgrade: bool = True,
) -> Store:
    """The store at `where`: a SQLite file (`timeout`: how long opening waits for a
    lock) or a team store on a PostgreSQL server."""
    if isinstance(where, ServerURL):
        return ServerStore.connect(where, create=create, upgrade=upgrade)
    return Store.open(where, create=create, timeout=timeout, upgrade=upgrade)
