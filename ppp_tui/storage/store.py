"""The run store: a ppp-tui database, and what is read from and written to it.

Opened on a connection in WAL mode (the app reads while an import writes) with foreign
keys on; the schema and its migrations are in schema.py. The store is made of pieces,
each a module of its own: the connection (store_base.py), reading runs
(store_reads.py), writing them (store_writes.py), marks (store_marks.py) and search
(store_search.py). What is SQLite's own in the SQL (pragmas, the full-text index) sits
in database.py and search.py. Imports are one transaction each (importer.py parses,
rows.py writes); the hot score reads are in score_reads.py.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .database import DatabaseLocked, StoreError
from .score_reads import RunAgents
from .store_marks import Mark, MarkStore
from .store_reads import RunInfo, RunReads
from .store_search import RunSearch
from .store_writes import RunWrites, bulk_write

if TYPE_CHECKING:
    from .importer import ImportReport

# The types Store's methods return or raise, importable with it.
__all__ = [
    "DatabaseLocked",
    "ImportReport",
    "Mark",
    "RunAgents",
    "RunInfo",
    "Store",
    "StoreError",
    "bulk_write",
]


def __getattr__(name: str) -> Any:
    # The importer (and the row writer under it) load with the first import, and the
    # full-text search with the first search: reading a database needs neither, and
    # the app's first screen comes about 10 ms sooner without them.
    if name == "ImportReport":
        from .importer import ImportReport

        return ImportReport
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class Store(RunReads, RunWrites, MarkStore, RunSearch):
    """A ppp-tui database. Use `Store.open`; close it (or use `with`).

    A store may be shared by threads (the app reads in workers and on its UI thread):
    every use of its connection holds `lock`, a statement (or a transaction) at a time,
    and `close` waits for the one under way.
    """
