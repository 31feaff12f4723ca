"""An import into a PostgreSQL team store: the SQLite import's pipeline, the server's
bulk path.

The records are read, parsed (by forked workers for long runs of JSON Lines), checked
against the runs already there and turned into table rows exactly as for a SQLite file
(importer.py, rows.py); only the writing differs: each table's rows of a batch go in
with one COPY, the agent ids shifted as `rows.write` shifts them, and a run that comes
with a mark makes it its reviewer's current one, as there. The whole import is one
transaction of the store's, under its write lock (store_server.py): another import,
from any machine, waits for its commit and then sees its runs, so two imports of the
same runs at once add them once. On any error the transaction is rolled back whole.

The tables are tables.py's, made by postgres_schema.py: COPY writes through them, their
defaults, generated columns and triggers, as an INSERT would.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from .importer import Import, ImportReport
from .mark_rows import CURRENT_MARK
from .rows import Tables, Writer, targets

if TYPE_CHECKING:
    import psycopg

    from .files import Record
    from .postgres_sql import Connection
    from .store_server import ServerStore

# The agents' identity column, set past the largest id once ids were given explicitly.
_AGENT_IDS = (
    "SELECT setval(pg_get_serial_sequence('agents', 'id'), max(id))"
    " FROM agents HAVING max(id) IS NOT NULL"
)


def copy_tables(conn: Connection, tables: Tables, offset: int = 0) -> None:
    """Insert rows taken from `rows.Rows` as `rows.write` does, each table with one
    COPY; `offset` is added to their agent (and trajectory) ids."""
    raw = conn.raw
    for (table, columns, short, shifted), rows in zip(targets(), tables, strict=True):
        if not rows:
            continue
        if short is not None:
            if all(len(row) == short for row in rows):
                columns = columns[:short]
            else:
                nulls = (None,) * (len(columns) - short)
                rows = [row + nulls if len(row) == short else row for row in rows]
        if shifted and offset:
            rows = [(row[0] + offset, *row[1:]) for row in rows]
        _copy(raw, table, columns, rows)
        if table == "preferred_marks":
            # A run imported with a mark: the mark is its reviewer's current one.
            conn.executemany(
                CURRENT_MARK, [(run, who, agent, at) for run, agent, at, _, who in rows if agent]
            )
    raw.execute(_AGENT_IDS)


def _copy(
    raw: psycopg.Connection[Any], table: str, columns: tuple[str, ...], rows: list[Any]
) -> None:
    with raw.cursor().copy(f"COPY {table} ({', '.join(columns)}) FROM STDIN") as copy:
        write_row = copy.write_row
        for row in rows:
            write_row(row)


class CopyWriter(Writer):
    """`rows.Writer` writing with COPY; no full-text index to feed."""

    def __init__(self, conn: Connection, reviewer: str) -> None:
        super().__init__(conn, reviewer)  # type: ignore[arg-type]
        self.pg = conn

    def write(self, tables: Tables, offset: int = 0) -> None:
        copy_tables(self.pg, tables, offset)
        self.written(len(tables[0]))


def import_records(
    store: ServerStore,
    records: Iterable[Record],
    skip_invalid: bool = False,
    progress: Callable[[int], None] | None = None,
    nearly_done: Callable[[], None] | None = None,
) -> ImportReport:
    """`Store.import_records` on a team store: every new run, in one transaction."""
    report = ImportReport()
    with store._transaction():
        known = {row[0] for row in store.pg.execute("SELECT id FROM runs")}
        writer = CopyWriter(store.pg, store.reviewer)
        Import(writer, known, report, skip_invalid, progress, None, nearly_done).run(records)
    store.after_bulk_write(report.added)
    return report
