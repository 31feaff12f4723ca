"""Full-text search of the runs: tasks, agent outputs, questions, run and spec ids.

Three FTS5 indexes made with sqlite-utils (`enable_fts`), each over a table's own text
and reading it from there (external content, so no text is stored twice): `runs_fts`
(id, spec id, task), `agents_fts` (output) and `trajectory_questions_fts` (text). A
run matches when one of its rows holds every word of the query, the last one as a
prefix (the user is still typing it); runs are ranked by their best row's bm25.

A first import makes the indexes empty in its new database and adds the rows as they go
in (`index_added`, while the workers parse the next runs); an import into a database whose
indexes hold every row keeps them so in its own transaction; `demo` builds them as it
finishes (about 1.7 s at 100k runs). So the first search has nothing to build; a database
without them (made by an older ppp-tui) has them built by its first search (the runs
screen shows the substring matches meanwhile). They are brought up to date at every
search, 0.02 s after an import of 1000 runs: ppp-tui only ever adds rows (a `technical`
update changes no indexed text), so the rows past the last one indexed are all that is
new. A table whose last rows vanished (an outside edit) has its index rebuilt whole. A
database that cannot be written (read-only, or locked by an import) and has no index is
searched with the substring match the runs list always had: id, spec id and task.

A search answers in two steps as the user types: `first_matches`, the first screenful
in a time that does not grow with the number of matches, then `ranked`, every match.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .tables import SEARCHED

if TYPE_CHECKING:
    import sqlite_utils

# (table, the columns indexed, the run id of a matching row): tables.SEARCHED's.
_RUN_IDS = {
    "runs": "runs.id AS run_id",
    "agents": "agents.run_id AS run_id",
    "trajectory_questions": "agents.run_id AS run_id",
}
_INDEXED: tuple[tuple[str, tuple[str, ...], str], ...] = tuple(
    (searched.table, searched.columns, _RUN_IDS[searched.table]) for searched in SEARCHED
)
# How a matching row of each index leads to its run.
_JOINS = {
    "runs": " JOIN runs ON runs.rowid = {fts}.rowid",
    "agents": " JOIN agents ON agents.id = {fts}.rowid",
    "trajectory_questions": " JOIN trajectory_questions AS q ON q.id = {fts}.rowid"
    " JOIN agents ON agents.id = q.trajectory_id",
}
# Above this many matching rows, runs are not ranked by bm25, which costs about 10 us a
# row (0.1 s at this limit, 3 s for a word in every row of 100k runs).
RANK_LIMIT = 10_000


def match_expression(text: str) -> str | None:
    """The FTS5 query for what the user typed: every word quoted (so `"`, `*`, `-`, `:`,
    brackets, NEAR, AND or OR are only text), all of them required, the last one a
    prefix unless the text ends with a space. None when nothing is left to look for."""
    text = text.replace("\x00", " ")  # FTS5 reads a query up to its first NUL
    words = text.split()
    if not words:
        return None
    quoted = ['"' + word.replace('"', '""') + '"' for word in words]
    if not text[-1].isspace():
        quoted[-1] += "*"
    return " AND ".join(quoted)


def has_index(conn: sqlite3.Connection) -> bool:
    names = {f"{table}_fts" for table, _, _ in _INDEXED}
    found = conn.execute(
        "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name IN (?, ?, ?)",
        sorted(names),
    ).fetchone()[0]
    return bool(found == len(names))


def is_current(conn: sqlite3.Connection) -> bool:
    """Whether the indexes exist and hold every row (a few quick reads)."""
    if not has_index(conn):
        return False
    return all(len(set(_state(conn, table))) == 1 for table, _, _ in _INDEXED)


def _state(conn: sqlite3.Connection, table: str) -> tuple[int, int]:
    """(the last rowid indexed, the last rowid in the table): two index lookups."""
    # The docsize table holds one row per indexed row, keyed by its rowid.
    indexed = conn.execute(f"SELECT ifnull(max(id), 0) FROM {table}_fts_docsize").fetchone()
    present = conn.execute(f"SELECT ifnull(max(rowid), 0) FROM {table}").fetchone()
    return int(indexed[0]), int(present[0])


def update_index(path: Path, wait: float) -> bool:
    """Create the indexes if missing and add the rows not indexed yet, a transaction per
    index (the write lock is held for at most about 2 s at 100k runs), on a connection of
    its own (the caller's stays free meanwhile); False if the database cannot be written,
    or another process held its lock for longer than `wait` seconds."""
    import sqlite_utils

    try:
        conn = sqlite3.connect(path, timeout=wait, isolation_level=None)
    except sqlite3.Error:
        return False
    try:
        db = sqlite_utils.Database(conn, recursive_triggers=False, execute_plugins=False)
        for table, columns, _ in _INDEXED:
            conn.execute("BEGIN IMMEDIATE")
            _update(db, table, columns)
            conn.execute("COMMIT")
    except sqlite3.Error:
        return False
    finally:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        conn.close()
    return True


def _update(db: sqlite_utils.Database, table: str, columns: tuple[str, ...]) -> None:
    content = db.table(table)
    fts = f"{table}_fts"
    if not db[fts].exists():
        content.enable_fts(list(columns), fts_version="FTS5")  # indexes every row
        return
    indexed, last = _state(db.conn, table)
    if last < indexed:
        content.rebuild_fts()  # rows were removed or renumbered outside ppp-tui
    elif last > indexed:
        _add_rows(db.conn, table, columns, indexed)


def _add_rows(conn: sqlite3.Connection, table: str, columns: tuple[str, ...], after: int) -> None:
    """Index the rows of `table` past rowid `after`. Hand-written: sqlite-utils'
    populate_fts indexes every row again (2.9 s at 100k runs, 0.05 s for the 1000 runs an
    import adds)."""
    names = ", ".join(columns)
    conn.execute(
        f"INSERT INTO {table}_fts (rowid, {names}) SELECT rowid, {names} FROM {table}"
        " WHERE rowid > ?",
        (after,),
    )


def index_added(conn: sqlite3.Connection) -> None:
    """Index the rows an import has added since, inside its transaction: when the index
    held every row as it began (`is_current`), it calls this every `rows.INDEX_EVERY`
    runs and at its end (`rows.Writer`), so the index is current again as it commits, and
    was built while the next runs were parsed rather than after them all."""
    for table, columns, _ in _INDEXED:
        indexed, last = _state(conn, table)
        if last > indexed:
            _add_rows(conn, table, columns, indexed)


def forget_run(conn: sqlite3.Connection, run_id: str, only_run: bool = False) -> None:
    """Take a run's rows out of the indexes before they are deleted (an import that
    replaces a grown session's run): the indexes keep no text of their own, so each
    indexed row is removed with the values it was indexed with. Rows past the last one
    indexed were never in them. With `only_run`, only the run's own row: its agents and
    questions stay indexed as they move to another run (`ppp-tui group`)."""
    if not has_index(conn):
        return
    chosen = {
        "runs": "SELECT rowid, {names} FROM runs WHERE id = ?",
        "agents": "SELECT rowid, {names} FROM agents WHERE run_id = ?",
        "trajectory_questions": "SELECT q.rowid, {names} FROM trajectory_questions AS q"
        " JOIN agents ON agents.id = q.trajectory_id WHERE agents.run_id = ?",
    }
    for table, columns, _ in _INDEXED[:1] if only_run else _INDEXED:
        indexed, _last = _state(conn, table)
        names = ", ".join(columns)
        fts = f"{table}_fts"
        conn.execute(
            f"INSERT INTO {fts} ({fts}, rowid, {names})"
            f" SELECT 'delete', * FROM ({chosen[table].format(names=names)}) WHERE rowid <= ?",
            (run_id, indexed),
        )


def index_run(conn: sqlite3.Connection, run_id: str) -> None:
    """Put a run's own row back in the index after it changed in place (`forget_run`
    with `only_run` took it out): a row up to the last one indexed is not looked at
    again by `update_index`; one past it is indexed with the rest."""
    if not has_index(conn):
        return
    table, columns, _ = _INDEXED[0]
    indexed, _last = _state(conn, table)
    names = ", ".join(columns)
    conn.execute(
        f"INSERT INTO {table}_fts (rowid, {names}) SELECT rowid, {names} FROM {table}"
        " WHERE id = ? AND rowid <= ?",
        (run_id, indexed),
    )


class Cancelled(Exception):
    """A search stopped because its answer was no longer wanted (the user typed on)."""


# How many steps of its statements SQLite takes between asking whether a search is still
# wanted (a fraction of a millisecond).
CHECK_EVERY = 1_000


def _count(conn: sqlite3.Connection, table: str, expression: str, bound: int) -> int:
    """How many rows of `table`'s index match, counting no further than `bound`."""
    row = conn.execute(
        f"SELECT count(*) FROM (SELECT 1 FROM {table}_fts WHERE {table}_fts MATCH ? LIMIT ?)",
        (expression, bound),
    ).fetchone()
    return int(row[0])


def _counts(conn: sqlite3.Connection, expression: str) -> list[int]:
    """How many rows of each index match, as far as telling whether they are few enough
    to rank (at most `RANK_LIMIT` in all): the counting stops past that, so a word in
    most tasks is not looked for in the outputs and questions (the list is shorter) and
    the last count is cut at what was left. Each count below what it was allowed is
    exact."""
    counts: list[int] = []
    for table, _, _ in _INDEXED:
        counts.append(_count(conn, table, expression, RANK_LIMIT + 1 - sum(counts)))
        if sum(counts) > RANK_LIMIT:
            break
    return counts


def ranked(conn: sqlite3.Connection, expression: str) -> list[str]:
    """The ids of the runs matching an FTS5 `expression`, the most relevant first: by their
    best row's bm25, then by id. When more than `RANK_LIMIT` rows match (a word most runs
    hold, a first letter), where bm25 costs most and tells least, the runs whose id, spec
    or task matches come first, then those matched by an output, then by a question."""
    counts = _counts(conn, expression)
    if not sum(counts):
        return []
    return _all_matches(conn, expression, sum(counts) <= RANK_LIMIT)


def _all_matches(conn: sqlite3.Connection, expression: str, rank: bool) -> list[str]:
    parts = []
    for priority, (table, _, join) in enumerate(_INDEXED):
        fts = f"{table}_fts"
        score = f"bm25({fts})" if rank else str(priority)
        parts.append(
            f"SELECT {join}, {score} AS score FROM {fts}"
            f"{_JOINS[table].format(fts=fts)} WHERE {fts} MATCH ?"
        )
    rows = conn.execute(
        f"SELECT run_id FROM ({' UNION ALL '.join(parts)}) GROUP BY run_id"
        " ORDER BY min(score), run_id",
        (expression,) * len(_INDEXED),
    ).fetchall()
    return [row[0] for row in rows]


# The first screenful of a search's answer: what the app shows while it finds the rest.
PAGE = 100
# Above this many matching rows in a group (ids, specs and tasks; outputs; questions),
# its first runs by id are found by walking the runs in id order and looking each one
# up among the matching rows, which stops at the page's last run; at or below it, from
# the matching rows, each led to its run and sorted by id (a cost in step with them).
DENSE = 5_000
# One group's runs by id, at most ? of them: walking the runs in id order (dense) or
# from the matching rows (sparse). `+` keeps SQLite from looping over the matching rows
# for each run (a lookup in them is what is wanted).
_DENSE_PAGE = {
    "runs": "SELECT id FROM runs INDEXED BY sqlite_autoindex_runs_1 WHERE +rowid IN"
    " (SELECT rowid FROM runs_fts WHERE runs_fts MATCH ?) ORDER BY id LIMIT ?",
    "agents": "SELECT id FROM runs INDEXED BY sqlite_autoindex_runs_1 WHERE EXISTS"
    " (SELECT 1 FROM agents WHERE agents.run_id = runs.id AND +agents.id IN"
    " (SELECT rowid FROM agents_fts WHERE agents_fts MATCH ?)) ORDER BY id LIMIT ?",
    "trajectory_questions": "SELECT id FROM runs INDEXED BY sqlite_autoindex_runs_1"
    " WHERE EXISTS (SELECT 1 FROM agents CROSS JOIN trajectory_questions AS q"
    " ON q.trajectory_id = agents.id WHERE agents.run_id = runs.id AND +q.id IN"
    " (SELECT rowid FROM trajectory_questions_fts WHERE trajectory_questions_fts MATCH ?))"
    " ORDER BY id LIMIT ?",
}
_SPARSE_PAGE = (
    "SELECT DISTINCT run_id FROM (SELECT {join} FROM {fts}{joins} WHERE {fts} MATCH ?)"
    " ORDER BY run_id LIMIT ?"
)


def first_matches(
    conn: sqlite3.Connection, expression: str, limit: int = PAGE
) -> tuple[list[str], bool]:
    """The first `limit` runs of `ranked`'s answer, or all of it, and whether it is all
    of it, in a time that does not grow with the number of matches: a query that matches
    few rows (at most `RANK_LIMIT`) is answered whole, ranked; one that matches more (a
    first letter, a common word) has its first runs taken in id order, group by group,
    without listing the others."""
    counts = _counts(conn, expression)
    if not sum(counts):
        return [], True
    if sum(counts) <= RANK_LIMIT:
        return _all_matches(conn, expression, True), True
    found: list[str] = []
    for group, (table, _, join) in enumerate(_INDEXED):
        # Every count but the last is exact; the last one was cut, and is counted again
        # unless it is dense already (as is one not counted at all).
        last = group >= len(counts) - 1
        if not last or (group == len(counts) - 1 and counts[group] > DENSE):
            rows = counts[group]
        else:
            rows = _count(conn, table, expression, DENSE + 1)
        if not rows:
            continue
        if rows > DENSE:
            sql = _DENSE_PAGE[table]
        else:
            fts = f"{table}_fts"
            sql = _SPARSE_PAGE.format(join=join, fts=fts, joins=_JOINS[table].format(fts=fts))
        # The runs an earlier group holds are all in `found` (it ran out before
        # `limit`): as many more as it holds are taken, and they are left out.
        seen = set(found)
        for (run_id,) in conn.execute(sql, (expression, limit)):
            if run_id not in seen:
                found.append(run_id)
                if len(found) == limit:
                    return found, False
    return found, True


def substring_matches(query: Callable[..., list[Any]], text: str) -> list[str]:
    """The runs list's own search, for a database without an index: the ids of the runs
    whose id, spec id or task holds `text` (in any case), by id."""
    needle = text.strip().lower()
    if not needle:
        return []
    return [
        run_id
        for run_id, spec_id, task in query("SELECT id, spec_id, task FROM runs ORDER BY id")
        if needle in run_id.lower()
        or needle in (spec_id or "").lower()
        or needle in (task or "").lower()
    ]
