"""`run_scores`: each run's hot agent columns packed into one row, for whole-database loads.

Regret, tuning and the runs list need every agent's name, technical score, question
counts by effort and violation count. Read from `agents` that is one row per agent
(about 310k Python rows at 100k runs); packed per run it is one row per run, and the
numbers arrive as bytes numpy reads without conversion. `agents` stays the source of
truth: triggers delete a run's pack when its agents change outside an import (a
`sqlite-utils` edit, say), and a run without a pack is read from `agents` instead.

Columns, one entry per agent in position order, little-endian:
  names         the names concatenated (a name may hold any character)
  name_lengths  int32 per agent: where `names` splits
  technical     float64 per agent; NaN for an unscored agent (no test run, no rating)
  counts        int32 x 4 per agent: low, medium, high questions, violations; -1: no trajectory
  failed        one byte per agent, 1 for an agent whose output is a failure; NULL when
                no agent of the run failed (every pack written before failures existed)
"""

from __future__ import annotations

import math
import sqlite3
import struct
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from functools import lru_cache
from itertools import groupby
from operator import itemgetter
from typing import Any

SCHEMA = """
CREATE TABLE run_scores (
    run_id TEXT PRIMARY KEY REFERENCES runs(id) ON DELETE CASCADE,
    names TEXT NOT NULL,
    name_lengths BLOB NOT NULL,
    technical BLOB NOT NULL,
    counts BLOB NOT NULL,
    failed BLOB
) WITHOUT ROWID;
CREATE TRIGGER run_scores_agent_update AFTER UPDATE ON agents BEGIN
    DELETE FROM run_scores WHERE run_id IN (OLD.run_id, NEW.run_id);
END;
CREATE TRIGGER run_scores_agent_delete AFTER DELETE ON agents BEGIN
    DELETE FROM run_scores WHERE run_id = OLD.run_id;
END;
"""
# Its own statement: an import, which writes the packs itself, lifts it for the
# length of its transaction (a trigger per agent row costs about 15% of an import).
INSERT_TRIGGER_NAME = "run_scores_agent_insert"
INSERT_TRIGGER = f"""CREATE TRIGGER {INSERT_TRIGGER_NAME} AFTER INSERT ON agents BEGIN
    DELETE FROM run_scores WHERE run_id = NEW.run_id;
END"""

DROP_INSERT_TRIGGER = f"DROP TRIGGER IF EXISTS {INSERT_TRIGGER_NAME}"

INSERT = (
    "INSERT INTO run_scores (run_id, names, name_lengths, technical, counts, failed)"
    " VALUES (?,?,?,?,?,?)"
)

# What a pack is built from, one row per agent in position order (the covering index
# agents_scores serves it; no INDEXED BY, so a database without it still works).
AGENT_ROWS = (
    "SELECT run_id, name, CASE WHEN technical_source = 'unscored' THEN NULL"
    " ELSE technical END, q_low, q_medium, q_high, violations,"
    " failure IS NOT NULL FROM agents"
)
NO_TRAJECTORY = -1

Pack = tuple[str, str, bytes, bytes, bytes, bytes | None]  # a run_scores row


def pack(
    run_id: str,
    agents: Sequence[tuple[str, float | None, Sequence[int | None]]],
    failed: Sequence[bool] = (),
) -> Pack:
    """The run_scores row of a run from its agents' (name, technical, counts).

    `counts` is (low, medium, high, violations), or NULLs / an empty tuple for an
    agent without a trajectory; a technical score of None (or NaN) is an unscored
    agent's; `failed` flags the agents whose output is a failure.
    """
    names = [agent[0] for agent in agents]
    counts: list[int] = []
    for _, _, agent_counts in agents:
        if agent_counts and agent_counts[3] is not None:
            counts.extend(c or 0 for c in agent_counts)
        else:
            counts.extend((NO_TRAJECTORY,) * 4)
    return packed(
        run_id,
        names,
        [math.nan if a[1] is None else a[1] for a in agents],
        counts,
        failed,
    )


def packed(
    run_id: str,
    names: Sequence[str],
    technical: Sequence[float],
    counts: Sequence[int],
    failed: Sequence[bool],
) -> Pack:
    """`pack`'s row from its columns made already: the names, the technical scores (NaN
    for an unscored agent), the four counts of each agent in a row (`NO_TRAJECTORY` for
    one without a trajectory) and the failure flags."""
    n = len(names)
    return (
        run_id,
        "".join(names),
        struct.pack(_format(n, "i"), *map(len, names)),
        struct.pack(_format(n, "d"), *technical),
        struct.pack(_format(4 * n, "i"), *counts),
        bytes(map(bool, failed)) if any(failed) else None,
    )


@lru_cache(maxsize=256)
def _format(n: int, kind: str) -> str:
    """struct's format for `n` little-endian values of `kind`."""
    return f"<{n}{kind}"


def split_failed(failed: bytes | None, n: int) -> list[bool]:
    """A pack's failure flags, one per agent."""
    return [False] * n if failed is None else [bool(flag) for flag in failed]


def split_names(names: str, name_lengths: bytes) -> list[str]:
    """A pack's agent names, from its `names` and `name_lengths` columns."""
    split, start = [], 0
    for length in struct.unpack(f"<{len(name_lengths) // 4}i", name_lengths):
        split.append(names[start : start + length])
        start += length
    return split


def from_agent_rows(rows: Iterable[tuple[Any, ...]]) -> list[Pack]:
    """Packs from `AGENT_ROWS` rows grouped by run, in their order."""
    return [
        pack(run_id, [(row[1], row[2], row[3:7]) for row in members], [row[7] for row in members])
        for run_id, group in groupby(rows, key=itemgetter(0))
        for members in [list(group)]
    ]


@contextmanager
def import_in_progress(conn: sqlite3.Connection) -> Iterator[None]:
    """Inside an import's transaction: no insert trigger until the end (the import adds
    each new run's pack after its agents). A rollback brings the trigger back too. A
    trigger a bulk load (`Store.bulk_load`) lifted already is its to bring back."""
    lifted = not conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'trigger' AND name = ?", (INSERT_TRIGGER_NAME,)
    ).fetchone()
    if not lifted:
        conn.execute(DROP_INSERT_TRIGGER)
    yield
    if not lifted:
        conn.execute(INSERT_TRIGGER)


def fill_missing(conn: sqlite3.Connection) -> int:
    """Pack every run that has no pack (after a migration or an outside edit)."""
    rows = conn.execute(
        f"{AGENT_ROWS} WHERE run_id NOT IN (SELECT run_id FROM run_scores)"
        " ORDER BY run_id, position"
    ).fetchall()
    packs = from_agent_rows(rows)
    conn.executemany(INSERT, packs)
    return len(packs)


def repack(conn: sqlite3.Connection, run_ids: Iterable[str]) -> None:
    """Pack these runs again from their agents (after agents moved between runs)."""
    for run_id in run_ids:
        conn.execute("DELETE FROM run_scores WHERE run_id = ?", (run_id,))
        rows = conn.execute(f"{AGENT_ROWS} WHERE run_id = ? ORDER BY position", (run_id,))
        conn.executemany(INSERT, from_agent_rows(rows.fetchall()))
