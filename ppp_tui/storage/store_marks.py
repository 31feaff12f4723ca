"""Marks in the store: each reviewer's current mark of a run and everyone's history,
recorded one at a time (`p`, `prefer`), from a file, or merged from other databases;
the reviewers who marked.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from . import reviewers
from .damage import readable
from .database import (
    StoreError,
    database_error,
    now,
    stage_where,
)
from .mark_rows import CURRENT_MARK, MARK_HISTORY

if TYPE_CHECKING:
    from .mark_files import FileMark
    from .merge import HistoryRow

from .store_base import StoreBase


@dataclass(frozen=True)
class Mark:
    agent: str | None  # None: the mark was cleared
    marked_at: str
    source: str
    reviewer: str = reviewers.UNKNOWN


class MarkStore(StoreBase):
    """Marks: recording, merging and reading them."""

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

        return self.merge_histories([read_marks(other) for other in others])

    def merge_histories(self, histories: Sequence[list[HistoryRow]]) -> list[tuple[int, int, int]]:
        """`merge_marks` of histories already read (`merge.read_marks`'s rows)."""
        try:
            with self.lock, self._transaction():
                return self.merge_in_transaction(histories)
        except sqlite3.Error as error:
            raise database_error(self.path, error) from None

    def merge_in_transaction(
        self, histories: Sequence[list[HistoryRow]]
    ) -> list[tuple[int, int, int]]:
        """`merge_histories` inside the caller's transaction (which holds the lock)."""
        counts = []
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
