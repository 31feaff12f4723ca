"""A run store on a PostgreSQL server: the same `Store`, its SQL taken by PostgreSQL.

The reads, marks and writes are Store's own (store_reads.py and the others); their SQL
reaches the server through postgres_sql.py. What is the engine's own is here: opening
(connecting, and the schema from tables.py), the lock every use of the connection
holds, transactions (one writer at a time), errors as one line naming the server, and
the key that changes when runs are added or removed. The connection is in autocommit
mode: a read holds no transaction open between statements, and each write is one
transaction of its own.

`path` is what messages name the store by: the server's host, port and database.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from . import postgres, postgres_schema
from .database import StoreError
from .location import ServerURL
from .postgres_sql import Connection
from .store import Store

# The advisory lock every write transaction holds (any number, the same everywhere).
WRITE_LOCK = 0x70707477


class ServerStore(Store):
    """A ppp-tui store on a PostgreSQL server. Use `ServerStore.connect`."""

    server: ServerURL

    @classmethod
    def connect(cls, server: ServerURL, create: bool = False, upgrade: bool = True) -> ServerStore:
        """Connect and bring the schema up to date; an empty database is refused unless
        `create` (an import into it)."""
        raw = postgres.connect(server, autocommit=True)
        try:
            if not create:
                tables = postgres_schema.tables(raw)
                if postgres_schema.VERSION_TABLE not in tables:
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
        return store

    @property
    def pg(self) -> Connection:
        return self.conn  # type: ignore[return-value]

    def close(self) -> None:
        with self.lock:
            self.pg.close()

    def _query(self, sql: str, params: Iterable[Any] = ()) -> list[Any]:
        pg = postgres.psycopg_module()
        with self.lock:
            try:
                return self.pg.execute(sql, params).fetchall()
            except pg.Error as error:
                raise postgres.server_error(self.server, error) from None

    @contextmanager
    def _transaction(self) -> Iterator[None]:
        pg = postgres.psycopg_module()
        with self.lock:
            try:
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
