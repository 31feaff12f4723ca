"""Runs read from sessions grouped after the fact, and ungrouped (`ppp-tui group`,
`ppp-tui ungroup`, the app's `g` and `u`).

The agents move whole: their rows (turns, questions, violations, hand and judged
scores) change run, not content. Marks follow their agents: every history entry goes
with the agent it names, and each reviewer keeps one current mark of a run, the latest
of those the runs held. A grouped run's revision holds every session's key and size,
and each session's own task key, so a later import finds every session in it (never
splitting it) and a new session of any of those tasks joins it. One transaction: bad
input changes nothing. The same on a team store (PostgreSQL), whose search reads the
rows themselves: only a SQLite file has a full-text index to keep.
"""

from __future__ import annotations

import json
import sqlite3
import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ...core.errors import PPPError
from ...core.sessions.grouping import (
    agent_names,
    earliest,
    keys_run_id,
    revision,
    tool_of,
)
from ...core.sessions.model import Session, Tool
from ...core.times import parse_time
from .. import packs, search
from ..database import database_error
from ..mark_rows import CURRENT_MARK
from ..tables import TABLES

if TYPE_CHECKING:
    from ..store import Store

_TOOLS = frozenset(tool.value for tool in Tool)
# A run's columns but its id, as a new run copies them from one grouped.
_RUN_COLUMNS = tuple(c for t in TABLES if t.name == "runs" for c in t.column_names if c != "id")
# What a first prompt of only these is not: blanks, tabs and line ends.
_BLANKS = " \t\n\r"


@dataclass(frozen=True)
class Grouped:
    """What `group_runs` did."""

    run_id: str
    agents: list[str]  # the grouped run's agents, by name
    runs: list[str]  # the runs grouped
    # Reviewers who had a current mark of more than one of the runs: their latest stays
    # current, the others are in the history.
    marked_twice: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Ungrouped:
    """What `ungroup_run` did: each session's run, (run id, its agent's name)."""

    run_id: str
    runs: list[tuple[str, str]]


@dataclass
class _Agent:
    id: int
    name: str
    models: tuple[str, ...]
    keys: set[str]  # its sessions' `session_key`s
    prompt: str | None  # its first prompt
    started: str | None  # when its first prompt was sent


@dataclass
class _Source:
    """A run read from sessions, as grouping sees it."""

    id: str
    created_at: str | None
    stage: str | None
    task: str | None
    document: dict[str, Any]  # its revision, read
    key: str
    sizes: dict[str, int]
    tasks: dict[str, str]  # each session's task key
    agents: list[_Agent]


def _text_list(text: str | None) -> tuple[str, ...]:
    try:
        value = json.loads(text) if text else []
    except ValueError:
        return ()
    return tuple(str(item) for item in value) if isinstance(value, list) else ()


def _source(conn: sqlite3.Connection, run_id: str, verb: str) -> _Source:
    """The run `run_id`, refused (a PPPError) unless it was read from sessions."""
    row = conn.execute(
        "SELECT created_at, stage, task, revision FROM runs WHERE id = ?", (run_id,)
    ).fetchone()
    if row is None:
        raise PPPError(f"unknown run id {run_id!r}")
    created_at, stage, task, text = row
    if text is None:
        raise PPPError(
            f"run {run_id!r} was not read from agents' sessions: only such runs can be {verb}"
        )
    try:
        document = json.loads(text)
        sizes = {str(k): int(v) for k, v in dict(document["sessions"]).items()}
        key = document.get("key") or ""
        tasks = {str(k): str(v) for k, v in dict(document.get("tasks", {})).items()}
        if not isinstance(key, str):
            raise TypeError(key)
    except (ValueError, TypeError, KeyError, AttributeError):
        raise PPPError(
            f"run {run_id!r}: its record of the sessions it was read from is not readable"
            " (changed outside ppp-tui)"
        ) from None
    agents = []
    for aid, name, models, sessions, prompt, started in conn.execute(
        "SELECT id, name, models, sessions, (SELECT prompt FROM trajectory_turns AS t"
        " WHERE t.trajectory_id = agents.id AND trim(prompt, ?) != ''"
        " ORDER BY turn LIMIT 1), (SELECT timestamp FROM trajectory_turns AS t"
        " WHERE t.trajectory_id = agents.id ORDER BY turn LIMIT 1)"
        " FROM agents WHERE run_id = ? ORDER BY position",
        (_BLANKS, run_id),
    ):
        tool = tool_of(name)
        keys = {f"{tool}:{sid}" for sid in _text_list(sessions)}
        agents.append(_Agent(aid, name, _text_list(models), keys, prompt, started))
    every = {session: tasks.get(session, key) for session in sizes}
    return _Source(run_id, created_at, stage, task, document, key, sizes, every, agents)


def _revision(
    document: dict[str, Any], key: str, sizes: dict[str, int], tasks: dict[str, str]
) -> str:
    """The revision `grouping.revision` writes, with what else `document` held kept."""
    kept = {k: v for k, v in document.items() if k not in ("key", "sessions", "tasks")}
    # The agents move as they were read: under the rules they were read by.
    reading = document.get("reading", 1)
    rev = revision(key, sizes, tasks, reading if isinstance(reading, int) else 1)
    return json.dumps({**kept, **json.loads(rev)}, sort_keys=True)


def _start(agent: _Agent, source: _Source) -> str | None:
    """When an agent's session started: its run's start if it is the run's only agent
    (an import dates a run by its first session), else its first prompt's time."""
    if len(source.agents) == 1 and source.created_at:
        return source.created_at
    return agent.started or source.created_at


def _names(agents: Sequence[tuple[_Agent, _Source]]) -> list[str]:
    """The agents' names in one run: each keeps its own unless another holds it, or it
    is a bare tool name and the run now holds two of that tool; the others are named as
    an import names them (grouping.agent_names)."""
    count: dict[str, int] = {}
    for agent, _ in agents:
        count[tool_of(agent.name)] = count.get(tool_of(agent.name), 0) + 1
    names: list[str | None] = []
    used: set[str] = set()
    for agent, _ in agents:
        tool = tool_of(agent.name)
        if agent.name in used or (agent.name == tool and count[tool] > 1):
            names.append(None)
        else:
            names.append(agent.name)
            used.add(agent.name)
    renamed = [k for k, name in enumerate(names) if name is None]
    stand_ins = [
        Session(
            Tool(tool_of(agent.name)),
            ",".join(sorted(agent.keys)),
            "",
            started=_start(agent, source),
            models=list(agent.models),
        )
        for agent, source in (agents[k] for k in renamed)
        if tool_of(agent.name) in _TOOLS
    ]
    fresh = iter(agent_names(stand_ins, taken=used))
    for k in renamed:
        agent = agents[k][0]
        if tool_of(agent.name) in _TOOLS:
            names[k] = next(fresh)
            continue
        number = 2
        while f"{agent.name}#{number}" in used:
            number += 1
        names[k] = f"{agent.name}#{number}"
        used.add(f"{agent.name}#{number}")
    return [name for name in names if name is not None]


def _check_name(conn: sqlite3.Connection, name: str, ours: Iterable[str]) -> None:
    if not name.strip():
        raise PPPError("a run's name cannot be empty")
    if name not in ours and conn.execute("SELECT 1 FROM runs WHERE id = ?", (name,)).fetchone():
        raise PPPError(f"run {name!r} exists already: choose another name")


@dataclass
class _Plan:
    sources: list[_Source]  # by start
    target: str


def _plan(conn: sqlite3.Connection, run_ids: Sequence[str], name: str | None) -> _Plan:
    ids = list(dict.fromkeys(run_ids))
    if len(ids) < 2:
        raise PPPError("grouping takes two runs or more")
    sources = [_source(conn, rid, "grouped") for rid in ids]
    sources.sort(key=lambda s: (parse_time(s.created_at) is None, s.created_at or "", s.id))
    target = name if name is not None else keys_run_id(k for s in sources for k in s.sizes)
    _check_name(conn, target, ids)
    return _Plan(sources, target)


def group_id(store: Store, run_ids: Sequence[str]) -> str:
    """The id `group_runs` gives these runs without a name; a PPPError if they cannot
    be grouped."""
    with store._statements():
        return _plan(store.conn, run_ids, None).target


def group_runs(store: Store, run_ids: Sequence[str], name: str | None = None) -> Grouped:
    """Make one run of the agents of `run_ids` (two or more runs read from sessions),
    named `name` or, without one, as an import names a run of those sessions."""
    try:
        with store.lock, store._transaction():
            return _group(store.conn, run_ids, name)
    except sqlite3.Error as error:
        raise database_error(store.path, error) from None


def _group(conn: sqlite3.Connection, run_ids: Sequence[str], name: str | None) -> Grouped:
    plan = _plan(conn, run_ids, name)
    sources, target = plan.sources, plan.target
    first = sources[0]
    agents = [(agent, source) for source in sources for agent in source.agents]
    names = _names(agents)
    sizes = {key: size for source in sources for key, size in source.sizes.items()}
    tasks = {key: task for source in sources for key, task in source.tasks.items()}
    stage = next((s.stage for s in sources if s.stage is not None), None)
    _place(
        conn,
        target,
        first.id,
        [s.id for s in sources],
        first.task,
        stage,
        earliest(s.created_at for s in sources),
        _revision(first.document, first.key, sizes, tasks),
    )
    _move_agents(conn, [(a.id, target, n) for (a, _), n in zip(agents, names, strict=True)])
    rename = {(s.id, a.name): n for (a, s), n in zip(agents, names, strict=True)}
    ids = [s.id for s in sources]
    history = _history(conn, ids)
    conn.executemany(
        "UPDATE preferred_marks SET run_id = ?, agent = ? WHERE id = ?",
        [(target, rename.get((rid, agent), agent), hid) for hid, rid, agent, _, _ in history],
    )
    current = _current(conn, ids)
    latest: dict[str, tuple[str, str]] = {}
    twice = set()
    for rid, reviewer, agent, at in current:
        mark = (at, rename.get((rid, agent), agent))
        if reviewer in latest:
            twice.add(reviewer)
        latest[reviewer] = max(latest.get(reviewer, mark), mark)
    conn.executemany(
        CURRENT_MARK, [(target, who, agent, at) for who, (at, agent) in latest.items()]
    )
    _finish(conn, ids, [target])
    return Grouped(target, names, ids, sorted(twice))


def ungroup_run(store: Store, run_id: str) -> Ungrouped:
    """Give each session of `run_id` its own run again, with the id and the agent name
    an import gives a session alone."""
    try:
        with store.lock, store._transaction():
            return _ungroup(store.conn, run_id)
    except sqlite3.Error as error:
        raise database_error(store.path, error) from None


def _ungroup(conn: sqlite3.Connection, run_id: str) -> Ungrouped:
    source = _source(conn, run_id, "ungrouped")
    if len(source.agents) < 2:
        raise PPPError(f"run {run_id!r} holds one session: there is nothing to ungroup")
    parts = []
    for agent in source.agents:
        if not agent.keys:
            raise PPPError(f"run {run_id!r}: its agent {agent.name!r} names no session")
        new = keys_run_id(agent.keys)
        if new != run_id and conn.execute("SELECT 1 FROM runs WHERE id = ?", (new,)).fetchone():
            raise PPPError(f"cannot ungroup {run_id!r}: run {new!r} exists already")
        tool = tool_of(agent.name)
        parts.append((agent, new, tool if tool in _TOOLS else agent.name))
    for agent, new, _ in parts:
        sizes = {key: source.sizes.get(key, 0) for key in sorted(agent.keys)}
        key = source.tasks.get(min(agent.keys), source.key)
        _place(
            conn,
            new,
            run_id,
            [run_id],
            agent.prompt or source.task,
            source.stage,
            _start(agent, source),
            _revision(source.document, key, sizes, {}),
        )
    _move_agents(conn, [(agent.id, new, name) for agent, new, name in parts])
    where = {agent.name: (new, name) for agent, new, name in parts}
    first = parts[0][1]
    # A clearing goes with the run of the reviewer's mark it cleared.
    moves: list[tuple[str, str | None, int]] = []
    last: dict[str, str] = {}  # each reviewer's run of their last mark so far
    for hid, _, agent, _, reviewer in _history(conn, [run_id]):
        if agent is None:
            moves.append((last.get(reviewer, first), None, hid))
            continue
        new, name = where.get(agent, (first, agent))
        last[reviewer] = new
        moves.append((new, name, hid))
    conn.executemany("UPDATE preferred_marks SET run_id = ?, agent = ? WHERE id = ?", moves)
    marks = []
    for _, who, agent, at in _current(conn, [run_id]):
        if agent in where:
            new, name = where[agent]
            marks.append((new, who, name, at))
    conn.executemany(CURRENT_MARK, marks)
    _finish(conn, [run_id], [new for _, new, _ in parts])
    return Ungrouped(run_id, [(new, name) for _, new, name in parts])


def _place(
    conn: sqlite3.Connection,
    run_id: str,
    base: str,
    sources: Sequence[str],
    task: str | None,
    stage: str | None,
    created_at: str | None,
    rev: str,
) -> None:
    """The row of run `run_id`, with what `base`'s row holds otherwise: one of
    `sources` changed in place, or a new row."""
    if run_id in sources:
        if _indexed(conn):
            search.forget_run(conn, run_id, only_run=True)  # its task may change
    else:
        listed = ", ".join(_RUN_COLUMNS)
        conn.execute(
            f"INSERT INTO runs (id, {listed}) SELECT ?, {listed} FROM runs WHERE id = ?",
            (run_id, base),
        )
    conn.execute(
        "UPDATE runs SET task = ?, stage = ?, created_at = ?, revision = ? WHERE id = ?",
        (task, stage, created_at, rev, run_id),
    )
    if run_id in sources and _indexed(conn):
        search.index_run(conn, run_id)


def _indexed(conn: sqlite3.Connection) -> bool:
    """Whether `conn` is a SQLite file's, whose full-text index (search.py) holds each
    indexed row by its values; a team store has no such index to keep."""
    return isinstance(conn, sqlite3.Connection)


def _move_agents(conn: sqlite3.Connection, moves: Sequence[tuple[int, str, str]]) -> None:
    """(agent id, its run, its name): each agent with its trajectory to its run, in
    this order. Names go through a placeholder first (no name's: a token of this move's
    own; no NUL, which PostgreSQL's text cannot hold): two agents may swap names."""
    token = uuid.uuid4().hex
    conn.executemany(
        "UPDATE agents SET name = ? WHERE id = ?", [(f"({token} {a})", a) for a, _, _ in moves]
    )
    positions: dict[str, int] = {}
    rows = []
    for agent, run_id, name in moves:
        position = positions.get(run_id, 0)
        positions[run_id] = position + 1
        rows.append((run_id, name, position, agent))
    conn.executemany("UPDATE agents SET run_id = ?, name = ?, position = ? WHERE id = ?", rows)
    conn.executemany(
        "UPDATE trajectories SET run_id = ? WHERE id = ?", [(r, a) for a, r, _ in moves]
    )


def _history(conn: sqlite3.Connection, run_ids: Sequence[str]) -> list[tuple[Any, ...]]:
    """(id, run, agent, time, reviewer) of the runs' mark history, oldest first."""
    marks = ", ".join("?" * len(run_ids))
    return conn.execute(
        "SELECT id, run_id, agent, marked_at, reviewer FROM preferred_marks"
        f" WHERE run_id IN ({marks}) ORDER BY marked_at, id",
        list(run_ids),
    ).fetchall()


def _current(conn: sqlite3.Connection, run_ids: Sequence[str]) -> list[tuple[Any, ...]]:
    """(run, reviewer, agent, time) of the runs' current marks, taken off them."""
    marks = ", ".join("?" * len(run_ids))
    rows = conn.execute(
        f"SELECT run_id, reviewer, agent, marked_at FROM marks WHERE run_id IN ({marks})"
        " ORDER BY marked_at",
        list(run_ids),
    ).fetchall()
    conn.execute(f"DELETE FROM marks WHERE run_id IN ({marks})", list(run_ids))
    return rows


def _finish(conn: sqlite3.Connection, sources: Sequence[str], targets: Sequence[str]) -> None:
    """The sources that are no target gone (out of the index first), the targets'
    agent counts and packs set, and the change told to readers of the scores."""
    for run_id in sources:
        if run_id not in targets:
            if _indexed(conn):
                search.forget_run(conn, run_id, only_run=True)
            conn.execute("DELETE FROM runs WHERE id = ?", (run_id,))
    conn.executemany(
        "UPDATE runs SET agents = (SELECT count(*) FROM agents WHERE run_id = runs.id)"
        " WHERE id = ?",
        [(run_id,) for run_id in targets],
    )
    packs.repack(conn, targets)
    # Agents changed runs and names: a reader comparing `Store.contents_key` reads again.
    conn.execute("UPDATE score_changes SET n = n + 1")
