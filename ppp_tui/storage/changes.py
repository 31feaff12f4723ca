"""Agents' edits of files in the store (table `agent_edits`, written with their run by
rows.py): read here, as the faces need them.

`changed_files` lists each agent's files with their lines added and removed from an
index alone, never reading a diff, so a session of thousands of edits lists at once;
`file_edits` reads one file's diffs and `run_edits` a run's, when they are asked for.
When a run read from sessions is written again (a grown session, a session moved to
another run), the agents kept as they were keep their edits (`kept_edits`, `put_back`).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from ..core.model import Edit, Run
from ..core.sessions.changes import FileChange
from .damage import check, readable

if TYPE_CHECKING:
    from .store import Store

_FILES = (
    "SELECT a.name, e.path, sum(e.added), sum(e.removed), count(*) FROM agents AS a"
    " JOIN agent_edits AS e ON e.agent_id = a.id WHERE a.run_id = ?{agent}"
    " GROUP BY a.id, e.path ORDER BY a.position, min(e.position)"
)
_EDITS = (
    "SELECT a.name, e.turn, e.path, e.added, e.removed, e.diff FROM agents AS a"
    " JOIN agent_edits AS e ON e.agent_id = a.id WHERE a.run_id = ?{where}"
    " ORDER BY a.position, e.position"
)


def _is_count(value: object) -> bool:
    return type(value) is int and value >= 0


@readable
def changed_files(
    store: Store, run_id: str, agent: str | None = None
) -> dict[str, list[FileChange]]:
    """Each agent's changed files (only `agent`'s, when given), in the order first
    touched, with the lines added and removed summed over its edits of each; agents
    that changed nothing are left out."""
    params: list[Any] = [run_id]
    if agent is not None:
        params.append(agent)
    found: dict[str, list[FileChange]] = {}
    for name, path, added, removed, count in store._query(
        _FILES.format(agent=" AND a.name = ?" if agent is not None else ""), params
    ):
        check(type(path) is str and _is_count(added) and _is_count(removed))
        found.setdefault(name, []).append(FileChange(path, added, removed, count))
    return found


def _edits(rows: Iterable[Any]) -> list[tuple[str, Edit]]:
    edits = []
    for name, turn, path, added, removed, diff in rows:
        check(type(path) is str and type(diff) is str and _is_count(turn))
        check(_is_count(added) and _is_count(removed))
        edits.append((name, Edit(turn, path, added, removed, diff)))
    return edits


@readable
def file_edits(store: Store, run_id: str, agent: str, path: str) -> list[Edit]:
    """One agent's edits of one file, in order, with their diffs."""
    rows = store._query(
        _EDITS.format(where=" AND a.name = ? AND e.path = ?"), [run_id, agent, path]
    )
    return [edit for _, edit in _edits(rows)]


@readable
def run_edits(store: Store, run_id: str, agent: str | None = None) -> list[tuple[str, Edit]]:
    """(agent, edit) for every edit of the run (of `agent` only, when given), agent by
    agent in the run's order, each agent's in the order they took effect."""
    if agent is None:
        return _edits(store._query(_EDITS.format(where=""), [run_id]))
    return _edits(store._query(_EDITS.format(where=" AND a.name = ?"), [run_id, agent]))


@readable
def agent_names(store: Store, run_id: str) -> list[str]:
    """The names of a run's agents, in its order."""
    return [
        str(name)
        for (name,) in store._query(
            "SELECT name FROM agents WHERE run_id = ? ORDER BY position", [run_id]
        )
    ]


# (agent name, position, turn, path, added, removed, diff)
KeptEdit = tuple[str, int, int, str, int, int, str]


def kept_edits(conn: sqlite3.Connection, run_id: str, run: Run) -> list[KeptEdit]:
    """The stored edits of the agents of `run` that were not read again (their `edits`
    is None), by name, before their run is written anew."""
    names = [agent.name for agent in run.agents if agent.edits is None]
    if not names:
        return []
    marks = ",".join("?" * len(names))
    return conn.execute(
        "SELECT a.name, e.position, e.turn, e.path, e.added, e.removed, e.diff"
        " FROM agents AS a JOIN agent_edits AS e ON e.agent_id = a.id"
        f" WHERE a.run_id = ? AND a.name IN ({marks}) ORDER BY e.id",
        [run_id, *names],
    ).fetchall()


def put_back(conn: sqlite3.Connection, run_id: str, kept: list[KeptEdit]) -> None:
    """Give `kept` edits back to the agents of the same names in the run written anew."""
    if not kept:
        return
    ids = dict(conn.execute("SELECT name, id FROM agents WHERE run_id = ?", (run_id,)))
    conn.executemany(
        "INSERT INTO agent_edits (agent_id, position, turn, path, added, removed, diff)"
        " VALUES (?,?,?,?,?,?,?)",
        [(ids[name], *rest) for name, *rest in kept if name in ids],
    )
