"""Sessions into the database: files read, sessions grouped into runs, runs written.

Reading happens first, outside any transaction: each file's problems are warnings
naming the file and line, and a file that is no transcript is one line. Writing is one
transaction. A run read from sessions records their revision (runs.revision): its task
key and each session's size. Importing again finds each session's run: an unchanged
one is skipped, a grown one replaces the agent it was (its marks, and hand ratings of
its agents, are kept), a new session of the same task joins the run.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Iterable, Sequence
from contextlib import suppress
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from ...core.errors import PPPError
from ...core.model import HAND, Agent, Run
from ...core.sessions.grouping import (
    READING,
    Grouping,
    agent_names,
    agent_session_keys,
    earliest,
    group,
    merge_parts,
    revision,
    run_id,
    session_key,
    session_run,
    task_key,
    within,
)
from ...core.sessions.model import Session, SessionError, SessionWarnings, Tool
from ...core.times import parse_time
from ..changes import kept_edits, put_back
from ..database import database_error, now
from ..mark_rows import CURRENT_MARK, MARK_HISTORY
from ..rows import Rows, next_agent
from .common import bounds_met, unreadable
from .discover import (
    is_sidecar,
    named_pipe,
    normalise_remote,
    recognise_file,
    repository_of,
    sniff,
    walk,
)

if TYPE_CHECKING:
    from ..store import Store

Progress = Callable[[int], None]

FORMATS = tuple(tool.value for tool in Tool)


@dataclass
class SessionFile:
    path: str
    tool: Tool
    named: bool  # named on the command line (not found in a folder)


@dataclass
class SessionReport:
    files: int = 0
    sessions: int = 0
    asks: int = 0
    added: int = 0
    updated: int = 0
    unchanged: int = 0
    removed: int = 0  # runs left with no session (all moved to the run --run names)
    staged: int = 0  # unchanged runs given the stage asked for
    older: int = 0  # sessions read before a larger read of them was stored (left out)
    # (run id, "new" or "updated", its agents' names, its task) of each run written
    runs: list[tuple[str, str, list[str], str | None]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)  # files named that could not be read
    waiting: set[str] = field(default_factory=set)  # runs written that wait (a watch's)


def reader_for(tool: Tool) -> Callable[[str, SessionWarnings, Progress | None], Session]:
    if tool is Tool.CLAUDE_CODE:
        from .claude_code import read_claude_code

        return read_claude_code
    if tool is Tool.CODEX:
        from .codex import read_codex

        return read_codex
    from .gemini_cli import read_gemini_cli

    return read_gemini_cli


def find_files(
    names: Iterable[str], fmt: str, report: SessionReport
) -> tuple[list[SessionFile], list[str]]:
    """(the session files among `names` and the folders under them, the other files).

    A folder stands for every session under it; its other files are skipped with a
    warning. With `fmt` one of FORMATS every file named is read as that agent's."""
    forced = Tool(fmt) if fmt in FORMATS else None
    found: list[SessionFile] = []
    others: list[str] = []
    for name in names:
        path = Path(name)
        try:
            folder = name != "-" and path.is_dir()
        except OSError as error:  # a folder on the way it may not enter, a name too long
            report.errors.append(str(unreadable(name, error)))
            continue
        if name != "-" and named_pipe(name):
            report.errors.append(
                f"{name}: a named pipe, not a file (reading it would wait for a writer);"
                " give a file, or its content on standard input"
            )
            continue
        if folder:
            odd: list[Path] = []

            def failed(error: OSError) -> None:
                report.warnings.append(str(unreadable(str(error.filename), error)))

            for inner in walk(path, failed):
                try:
                    tool = forced or sniff(str(inner))
                except OSError as error:
                    report.warnings.append(str(unreadable(str(inner), error)))
                    continue
                if tool is None:
                    odd.append(inner)
                else:
                    found.append(SessionFile(str(inner), tool, named=False))
            if len(odd) == 1:
                report.warnings.append(f"{odd[0]}: not a session transcript (skipped)")
            elif odd:
                report.warnings.append(
                    f"{path}: {len(odd)} files are not session transcripts (skipped),"
                    f" such as {odd[0].relative_to(path)}"
                )
            continue
        if name != "-" and is_sidecar(name) and path.is_file():
            report.errors.append(
                f"{name}: a sub-agent's metadata file, not a transcript"
                " (import the agent-*.jsonl beside it, or the session's folder)"
            )
            continue
        if name == "-" and forced is not None:
            report.errors.append("-: sessions are read from their files, not standard input")
            continue
        tool = forced or (None if name == "-" else recognise_file(name))
        if tool is None:
            others.append(name)
        else:
            found.append(SessionFile(name, tool, named=True))
    return found, others


def read_files(
    files: Sequence[SessionFile], report: SessionReport, progress: Progress | None
) -> list[Session]:
    """Every file's session; problems go to the report, a file that fails is one line."""
    sessions = []
    for item in files:
        warnings = SessionWarnings()
        try:
            session = reader_for(item.tool)(item.path, warnings, progress)
        except SessionError as error:
            (report.errors if item.named else report.warnings).append(str(error))
            continue
        except OSError as error:
            line = f"{item.path}: cannot read ({error.strerror or error})"
            (report.errors if item.named else report.warnings).append(line)
            continue
        except MemoryError:  # what is left of memory on a small machine: this file only
            line = f"{item.path}: too large for the memory left; not read"
            (report.errors if item.named else report.warnings).append(line)
            continue
        finally:
            report.warnings.extend(warnings.lines)
        report.warnings.extend(bounds_met(item.path, session))
        if not session.turns and not session.subagent:
            # A session in which nothing was typed yet (Gemini CLI writes a header for
            # every session it starts): read well, but no agent to rank. Not an error:
            # there is nothing wrong with the file.
            report.warnings.append(f"{item.path}: nothing typed in this session yet (skipped)")
            report.files += 1
            continue
        report.files += 1
        sessions.append(session)
    return sessions


def file_sizes(files: Sequence[SessionFile]) -> int:
    total = 0
    for item in files:
        with suppress(OSError):
            total += Path(item.path).stat().st_size
    return total


# -- writing -------------------------------------------------------------------------


@dataclass
class _Existing:
    id: str
    created_at: str | None
    key: str | None
    sizes: dict[str, int]
    # Each session's own task key, in a run grouped by hand (grouping.revision).
    tasks: dict[str, str] = field(default_factory=dict)
    reading: int = READING  # the version of the rules its sessions were read by

    def has_task(self, key: str) -> bool:
        return key == self.key or key in self.tasks.values()


def _existing(conn: sqlite3.Connection) -> list[_Existing]:
    found = []
    for rid, created_at, text in conn.execute(
        "SELECT id, created_at, revision FROM runs WHERE revision IS NOT NULL ORDER BY id"
    ):
        try:
            value = json.loads(text)
            sizes = {str(k): int(v) for k, v in dict(value.get("sessions", {})).items()}
            key = value.get("key")
            tasks = {str(k): str(v) for k, v in dict(value.get("tasks", {})).items()}
            reading = int(value.get("reading", 1))
        except (ValueError, TypeError, AttributeError):
            continue  # an outside edit: the run is left alone
        key = key if isinstance(key, str) else None
        found.append(_Existing(rid, created_at, key, sizes, tasks, reading))
    return found


def repository(session: Session) -> str | None:
    """The repository a session worked in, for grouping (see discover.repository_of)."""
    if session.repository:
        return normalise_remote(session.repository)
    return repository_of(session.cwd)


def write_sessions(
    store: Store, sessions: Sequence[Session], options: Grouping, report: SessionReport
) -> None:
    """Group `sessions` into runs and write them in one transaction (nothing on error)."""
    merged = merge_parts(sessions)
    report.sessions = len(merged)
    report.asks = sum(len(turn.asks) for s in merged for turn in s.turns)
    try:
        with store.lock, store._transaction(), store._writing_runs():
            # Taken in the transaction: a team store's connection the server dropped is
            # made again as it begins (a long `import --watch` outlives a restart).
            _write(store.conn, store, merged, options, report)
    except sqlite3.Error as error:  # a read-only file, a full disk: one line, as any import
        raise database_error(store.path, error) from None


def _write(
    conn: sqlite3.Connection,
    store: Store,
    sessions: list[Session],
    options: Grouping,
    report: SessionReport,
) -> None:
    existing = _existing(conn)
    owner = {key: run for run in existing for key in run.sizes}
    by_id = {run.id: run for run in existing}
    # A session read before another import stored a later, larger read of it (that import
    # wrote first) is left out: a read of an older file never replaces a newer one.
    newer = {k for s in sessions if (k := session_key(s)) in owner and owner[k].sizes[k] > s.size}
    sessions = [s for s in sessions if session_key(s) not in newer]
    report.older += len(newer)
    targets: dict[str, list[Session]] = {}
    order: list[str] = []

    def assign(rid: str, members: Iterable[Session]) -> None:
        if rid not in targets:
            targets[rid] = []
            order.append(rid)
        targets[rid].extend(members)

    moved: dict[str, set[str]] = {}
    if options.run is not None:
        if not options.run.strip():
            raise PPPError("--run: a run's name cannot be empty")
        found = conn.execute(
            "SELECT revision IS NOT NULL FROM runs WHERE id = ?", (options.run,)
        ).fetchone()
        if found is not None and not found[0]:
            raise PPPError(
                f"run {options.run!r} exists and was not read from sessions; choose another name"
            )
        if sessions:
            assign(options.run, sessions)
        # A session already in another run moves to this one.
        for session in sessions:
            known = owner.get(session_key(session))
            if known is not None and known.id != options.run:
                moved.setdefault(known.id, set()).add(session_key(session))
    else:
        fresh = []
        for session in sessions:
            known = owner.get(session_key(session))
            if known is not None:
                assign(known.id, [session])
            else:
                fresh.append(session)
        for members in group(fresh, repository, options):
            key = task_key(members[0].first_prompt(), repository(members[0]))
            joined = None
            if not options.one_per_session:
                joined = next(
                    (
                        run
                        for run in existing
                        if run.has_task(key)
                        and within(run.created_at, members[0].started, options.window_hours)
                    ),
                    None,
                )
            assign(joined.id if joined else run_id(members), members)
    rows = Rows(now(), next_agent(conn), store.reviewer)
    carried = _Carried()
    for rid, keys in moved.items():
        _drop_sessions(conn, store, by_id[rid], keys, rows, report, carried)
    for rid in order:
        _write_run(conn, store, rid, targets[rid], by_id.get(rid), options, rows, report, carried)


@dataclass
class _Carried:
    """What sessions moved to the run `--run` names bring from the runs they leave: their
    agents (names and ratings by hand, by session key) and the marks of those agents."""

    agents: dict[str, Agent] = field(default_factory=dict)
    # (session key, marked_at, source, reviewer) of each history entry that moved
    marks: list[tuple[str, str, str, str]] = field(default_factory=list)
    # reviewer -> (the session key of their current mark of a run, marked_at), if it moved
    preferred: dict[str, tuple[str, str]] = field(default_factory=dict)


def _drop_sessions(
    conn: sqlite3.Connection,
    store: Store,
    known: _Existing,
    keys: set[str],
    rows: Rows,
    report: SessionReport,
    carried: _Carried,
) -> None:
    """Take the agents of sessions `keys` out of their run (gone with its last agent);
    they, and their marks, go to `carried`."""
    old = store.get_run(known.id)
    leaving = {
        a.name: sorted(agent_session_keys(a) & keys)[0]
        for a in old.agents
        if agent_session_keys(a) & keys
    }
    for agent in old.agents:
        if agent.name in leaving:
            carried.agents[leaving[agent.name]] = agent
    for agent_name, marked_at, source, reviewer in conn.execute(
        "SELECT agent, marked_at, source, reviewer FROM preferred_marks WHERE run_id = ?"
        " ORDER BY id",
        (known.id,),
    ):
        if agent_name in leaving:
            carried.marks.append((leaving[agent_name], marked_at, source, reviewer))
    for reviewer, agent_name, marked_at in conn.execute(
        "SELECT reviewer, agent, marked_at FROM marks WHERE run_id = ?", (known.id,)
    ):
        if agent_name in leaving:
            carried.preferred[reviewer] = (leaving[agent_name], marked_at)
    agents = tuple(a for a in old.agents if a.name not in leaving)
    if not agents:
        store._forget_searched(known.id)
        conn.execute("DELETE FROM runs WHERE id = ?", (known.id,))
        report.removed += 1
        return
    sizes = {key: size for key, size in known.sizes.items() if key not in keys}
    tasks = {key: task for key, task in known.tasks.items() if key in sizes}
    rev = revision(known.key or "", sizes, tasks, known.reading)
    _replace_run(conn, store, old, replace(old, agents=agents), rev, rows)
    report.updated += 1


def _replace_run(
    conn: sqlite3.Connection, store: Store, old: Run, run: Run, rev: str, rows: Rows
) -> None:
    """Write `run` in place of `old` (same id): its marks, their history kept (each
    reviewer's current mark stays if its agent is still there), and the edits of files
    of the agents not read again."""
    history = conn.execute(
        "SELECT agent, marked_at, source, reviewer FROM preferred_marks WHERE run_id = ?"
        " ORDER BY id",
        (old.id,),
    ).fetchall()
    current = conn.execute(
        "SELECT reviewer, agent, marked_at FROM marks WHERE run_id = ?", (old.id,)
    ).fetchall()
    edits = kept_edits(conn, old.id, run)
    store._forget_searched(old.id)
    conn.execute("DELETE FROM runs WHERE id = ?", (old.id,))
    rows.add(run, rev)
    store._write_rows(rows.take())
    put_back(conn, run.id, edits)
    if history:
        conn.executemany(MARK_HISTORY, [(run.id, *mark) for mark in history])
    conn.executemany(
        CURRENT_MARK,
        [(run.id, *mark) for mark in current if run.agent(mark[1]) is not None],
    )


def _write_run(
    conn: sqlite3.Connection,
    store: Store,
    rid: str,
    incoming: list[Session],
    known: _Existing | None,
    options: Grouping,
    rows: Rows,
    report: SessionReport,
    carried: _Carried,
) -> None:
    sizes = dict(known.sizes) if known else {}
    changed = [s for s in incoming if sizes.get(session_key(s)) != s.size]
    if known is not None and not changed and known.reading == READING:
        if options.stage is not None:
            # The sessions are as they were: only the stage given now is set.
            changed_stage = conn.execute(
                "UPDATE runs SET stage = ? WHERE id = ? AND stage IS NOT ?",
                (options.stage, rid, options.stage),
            ).rowcount
            report.staged += changed_stage
        report.unchanged += 1
        return
    old = store.get_run(rid) if known is not None else None
    incoming_keys = {session_key(s) for s in incoming}
    kept: list[Agent] = []
    old_by_session: dict[str, Agent] = {}
    if old is not None:
        for agent in old.agents:
            keys = agent_session_keys(agent)
            if keys & incoming_keys:
                for key in keys:
                    old_by_session[key] = agent
            else:
                kept.append(agent)
    sessions = sorted(
        incoming, key=lambda s: (parse_time(s.started) is None, s.started or "", s.id)
    )
    # Each session's agent as it was: in this run, or in the run it moved from.
    named = [
        old_by_session.get(session_key(s)) or carried.agents.get(session_key(s)) for s in sessions
    ]
    used = {a.name for a in kept}
    for k, old_agent in enumerate(named):
        if old_agent is not None and old_agent.name in used:
            named[k] = None  # a name another agent here holds: the session takes a new one
        elif old_agent is not None:
            used.add(old_agent.name)
    fresh_names = iter(
        agent_names([s for s, a in zip(sessions, named, strict=True) if a is None], taken=used)
    )
    names = [a.name if a is not None else next(fresh_names) for a in named]
    key = (known.key if known else None) or task_key(
        sessions[0].first_prompt(), repository(sessions[0])
    )
    built = session_run(sessions, rid, names, key, options.stage)
    agents = []
    rated = [
        old_by_session.get(session_key(s)) or carried.agents.get(session_key(s)) for s in sessions
    ]
    for agent, old_agent in zip(built.agents, rated, strict=True):
        if old_agent is not None and old_agent.technical_source == HAND:
            # The user's own rating wins over test evidence, now and later.
            agent = replace(agent, technical=old_agent.technical, technical_source=HAND)
        agents.append(agent)
    all_agents = tuple(kept) + tuple(agents)
    tasks = dict(known.tasks) if known else {}
    for s in incoming:
        sizes[session_key(s)] = s.size
        if tasks:  # a run grouped by hand: each session's task key is kept
            tasks.setdefault(session_key(s), task_key(s.first_prompt(), repository(s)))
    run = Run(
        id=rid,
        agents=all_agents,
        stage=options.stage if options.stage is not None else (old.stage if old else None),
        task=old.task if old is not None and old.task else built.task,
        created_at=earliest([old.created_at if old else None, built.created_at]),
    )
    # Agents left as they were keep the rules they were read by, until they are read again.
    reading = known.reading if known is not None and kept else READING
    if old is not None:
        _replace_run(conn, store, old, run, revision(key, sizes, tasks, reading), rows)
        report.updated += 1
    else:
        rows.add(run, revision(key, sizes, tasks, reading))
        store._write_rows(rows.take())
        report.added += 1
    _bring_marks(conn, run, sessions, names, carried)
    kind = "new" if old is None else "updated"
    report.runs.append((rid, kind, [a.name for a in run.agents], run.task))


def _bring_marks(
    conn: sqlite3.Connection,
    run: Run,
    sessions: Sequence[Session],
    names: Sequence[str],
    carried: _Carried,
) -> None:
    """The marks of moved sessions' agents, under their names here; a reviewer's
    current mark comes too when they have none of this run."""
    name_of = {session_key(s): name for s, name in zip(sessions, names, strict=True)}
    marks = [(name_of[k], at, source, who) for k, at, source, who in carried.marks if k in name_of]
    if marks:
        conn.executemany(
            MARK_HISTORY, [(run.id, *mark) for mark in sorted(marks, key=lambda m: m[1])]
        )
    conn.executemany(
        "INSERT OR IGNORE INTO marks (run_id, reviewer, agent, marked_at) VALUES (?, ?, ?, ?)",
        [
            (run.id, reviewer, name_of[key], at)
            for reviewer, (key, at) in carried.preferred.items()
            if key in name_of
        ],
    )
