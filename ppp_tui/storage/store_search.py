"""Searching the store's runs as the user types: the full-text index (search.py) asked
under the store's lock, a screenful first, cancellable, and whether the index is current.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from typing import TYPE_CHECKING

from .database import (
    database_error,
)

if TYPE_CHECKING:
    pass

from .store_base import StoreBase


class RunSearch(StoreBase):
    """Full-text search of the runs."""

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
