"""Writing runs to the store: an import's records in one transaction, a bulk load (a
demo of 100k runs) with the indexes made after the rows, and technical scores given
by the user.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager, nullcontext
from pathlib import Path
from typing import TYPE_CHECKING

from ..core.model import (
    HAND,
)
from . import database, packs
from .database import (
    StoreError,
    database_error,
)

if TYPE_CHECKING:
    from .files import Record
    from .importer import ImportReport
    from .rows import Tables
    from .technical import Score

from .store_base import StoreBase


class RunWrites(StoreBase):
    """Runs written: imports, bulk loads, technical scores."""

    # -- import --------------------------------------------------------------------

    def import_records(
        self,
        records: Iterable[Record],
        skip_invalid: bool = False,
        progress: Callable[[int], None] | None = None,
        nearly_done: Callable[[], None] | None = None,
    ) -> ImportReport:
        """Add every new run in one transaction; on error nothing is added.

        Long runs of JSON Lines lines are parsed by forked worker processes while this
        one writes, where that is possible (see `_Import`). A full-text index that holds
        every run as the import begins holds every run as it ends (search.index_added).
        `nearly_done` is called, inside the transaction, while the workers parse the last
        few batches of the records (a bulk load's `make_indexes`), if they do.
        """
        from . import search
        from .importer import Import, ImportReport
        from .rows import Writer, batches_attached

        report = ImportReport()
        try:
            with (
                self.lock,
                batches_attached(self.conn) as schema,
                self._transaction(),
                packs.import_in_progress(self.conn),
            ):
                known = {row[0] for row in self.conn.execute("SELECT id FROM runs")}
                writer = Writer(self.conn, self.reviewer, indexing=search.is_current(self.conn))
                Import(writer, known, report, skip_invalid, progress, schema, nearly_done).run(
                    records
                )
        except sqlite3.Error as error:
            raise database_error(self.path, error) from None
        return report

    @contextmanager
    def bulk_load(self) -> Iterator[Callable[[], None]]:
        """Around the filling of a scratch database: by a first import on this connection
        (swap.import_new), or by other connections (`bulk_write`, in the processes that
        built the rows; a demo's chunk workers).

        A scratch database is a new one that only its build knows of, thrown away whole
        if filling it fails (swap.py). Inside the block it has no WAL (each page would be
        written twice: there, then folded in), no index but the primary keys, no insert
        trigger on agents (the packs go in with the rows) and no foreign key checks
        (every row is written with its parent), and it is written without syncs. The
        indexes are made again, with the same definitions, once for all the rows written
        so far when the block calls what it is given (inside a transaction, in it; rows
        written after that update them as they go), or else after the block; then the
        trigger, the foreign key checks and WAL mode are back: the schema of a database
        filled run by run. After a failure inside the block the file is left as it is, to
        be thrown away.
        """
        conn = self.conn
        try:
            with self.lock:
                database.for_bulk_load(conn)
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
                with self.lock, nullcontext() if conn.in_transaction else self._transaction():
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
                database.after_bulk_load(conn)
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
            database.for_bulk_load(conn, cache=False)
            conn.execute("BEGIN IMMEDIATE")
            write(conn, tables, offset=next_agent(conn))
            conn.execute("COMMIT")
        finally:
            conn.close()
    except sqlite3.Error as error:
        raise database_error(path, error) from None
