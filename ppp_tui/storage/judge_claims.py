"""Which judging run is asking which prompt, so that two runs at once do not both pay
for it (docs/judge.md).

Before it sends anything, a run claims its prompts in one transaction that also reads
the cache again: a prompt answered since the run looked is read from the cache, one
another live run has claimed is left to that run, and the rest become this run's. A
claim names its owner (host, process id, and a token of the run) and when the owner
last showed it was alive. A run refreshes its claims while it works (`HEARTBEAT_S`),
the transaction that caches an answer drops that prompt's claim, and a run drops the
rest of its claims when it ends, however it ends short of being killed. The claims of a
killed run are taken over by the next: at once on the same host, where its process is
gone, and after `STALE_AFTER_S` seconds of silence anywhere (another machine sharing
the file, or a process id used again).
"""

from __future__ import annotations

import os
import socket
import sqlite3
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from .database import database_error

if TYPE_CHECKING:
    from .judgments import Cached
    from .store import Store

HEARTBEAT_S = 20.0
STALE_AFTER_S = 120.0
_CHUNK = 300  # hashes per IN (...) list

JUDGE_CLAIMS = """
CREATE TABLE IF NOT EXISTS judge_claims (
    model TEXT NOT NULL,
    prompt_version TEXT NOT NULL,
    input_hash TEXT NOT NULL,
    owner TEXT NOT NULL,
    host TEXT NOT NULL,
    pid INTEGER NOT NULL,
    seen_at REAL NOT NULL,
    PRIMARY KEY (model, prompt_version, input_hash)
)
"""


@dataclass(frozen=True)
class Owner:
    """A judging run: its host, its process and a token of its own."""

    host: str
    pid: int
    token: str

    @classmethod
    def this_run(cls) -> Owner:
        return cls(socket.gethostname(), os.getpid(), uuid.uuid4().hex[:12])

    @property
    def id(self) -> str:
        return f"{self.host}:{self.pid}:{self.token}"


@dataclass
class Claimed:
    """What became of the prompts a run meant to send."""

    mine: list[str] = field(default_factory=list)  # to send: claimed by this run
    answered: dict[str, Cached] = field(default_factory=dict)  # cached meanwhile
    taken: set[str] = field(default_factory=set)  # another live run is asking them


def ensure(conn: sqlite3.Connection) -> None:
    """Create the claims table where a SQLite file made before it lacks it. A team
    store's schema (tables.py) always holds it, and its users may have no right to
    create a table, which PostgreSQL checks before it looks whether the table exists."""
    if isinstance(conn, sqlite3.Connection):
        conn.execute(JUDGE_CLAIMS)


def _alive(host: str, pid: int, seen_at: float, now: float) -> bool:
    if now - seen_at > STALE_AFTER_S:
        return False
    if host != socket.gethostname():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError, ValueError):
        return True  # another user's process, or a pid that cannot be looked at
    return True


def claim(
    store: Store,
    owner: Owner,
    model: str,
    version: str,
    hashes: Sequence[str],
    answered_since: str | None,
) -> Claimed:
    """Claim `hashes` of (model, prompt version) for `owner`, in one transaction: those
    cached meanwhile (with `answered_since`, only those cached after that second, as
    `--refresh` asks again for the rest) are read instead, those another live run
    claimed are left to it. Claims whose owner is gone are dropped first."""
    from .judgments import Cached

    result = Claimed()
    now = time.time()
    try:
        with store._transaction():
            conn = store.conn
            ensure(conn)
            # An owner's id names its host and process: grouping by all three is one
            # group per owner, which PostgreSQL asks to be spelt out.
            owners = conn.execute(
                "SELECT owner, host, pid, max(seen_at) FROM judge_claims GROUP BY owner, host, pid"
            ).fetchall()
            for owner_id, host, pid, seen_at in owners:
                if owner_id != owner.id and not _alive(str(host), int(pid), float(seen_at), now):
                    conn.execute("DELETE FROM judge_claims WHERE owner = ?", (owner_id,))
            for start in range(0, len(hashes), _CHUNK):
                chunk = list(hashes[start : start + _CHUNK])
                marks = ", ".join("?" for _ in chunk)
                since = "" if answered_since is None else " AND judged_at > ?"
                for input_hash, answer, label, score in conn.execute(
                    "SELECT input_hash, answer, label, score FROM judgments"
                    f" WHERE model = ? AND prompt_version = ? AND input_hash IN ({marks}){since}",
                    [model, version, *chunk, *([answered_since] if answered_since else [])],
                ):
                    result.answered[input_hash] = Cached(answer, label, score)
                result.taken.update(
                    row[0]
                    for row in conn.execute(
                        "SELECT input_hash FROM judge_claims WHERE model = ?"
                        f" AND prompt_version = ? AND input_hash IN ({marks}) AND owner != ?",
                        [model, version, *chunk, owner.id],
                    )
                )
                mine = [h for h in chunk if h not in result.answered and h not in result.taken]
                conn.executemany(
                    "INSERT OR REPLACE INTO judge_claims (model, prompt_version, input_hash,"
                    " owner, host, pid, seen_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
                    [(model, version, h, owner.id, owner.host, owner.pid, now) for h in mine],
                )
                result.mine += mine
    except sqlite3.Error as error:
        raise database_error(store.path, error) from None
    return result


def refresh(store: Store, owner: Owner) -> None:
    """Say `owner` is still at work on its claims."""
    try:
        with store._transaction():
            store.conn.execute(
                "UPDATE judge_claims SET seen_at = ? WHERE owner = ?", (time.time(), owner.id)
            )
    except sqlite3.Error as error:
        raise database_error(store.path, error) from None


def release(store: Store, owner: Owner) -> None:
    """Drop every claim `owner` still holds (its run is ending)."""
    try:
        with store._transaction():
            ensure(store.conn)
            store.conn.execute("DELETE FROM judge_claims WHERE owner = ?", (owner.id,))
    except sqlite3.Error as error:
        raise database_error(store.path, error) from None


def drop_answered(conn: sqlite3.Connection, keys: Sequence[tuple[str, str, str]]) -> None:
    """Drop the claims of the (model, prompt version, input hash) just cached."""
    if keys:
        ensure(conn)
        conn.executemany(
            "DELETE FROM judge_claims WHERE model = ? AND prompt_version = ? AND input_hash = ?",
            keys,
        )
