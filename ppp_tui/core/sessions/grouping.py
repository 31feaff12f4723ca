"""Which sessions form one run: the sessions that worked on the same task.

By default that is the same first typed prompt (whitespace-normalised), in the same
repository (its git remote, else its root folder's name, so worktrees of one repository
match), started within a window (24 hours unless set): each such session is one agent of
the run. A run's id is derived from its sessions' ids, so importing again finds it.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime

from ..model import Agent, Run
from ..times import parse_time
from .agents import session_agent
from .changes import adopt_edits
from .model import Session, Tool

DEFAULT_WINDOW_HOURS = 24.0


@dataclass(frozen=True)
class Grouping:
    """How sessions are put into runs (`import` options)."""

    window_hours: float = DEFAULT_WINDOW_HOURS
    one_per_session: bool = False
    run: str | None = None  # every session into this one run
    stage: str | None = None


def session_key(session: Session) -> str:
    """`tool:id`: a session's own key, unique across the three agents."""
    return f"{session.tool.value}:{session.id}"


def normalised(text: str) -> str:
    return " ".join(text.split())


def task_key(prompt: str, repository: str | None) -> str:
    """What two sessions of one task share: their first prompt and their repository."""
    digest = hashlib.sha256(f"{repository or ''}\x00{normalised(prompt)}".encode())
    return digest.hexdigest()[:16]


def within(first: str | None, other: str | None, hours: float) -> bool:
    """Whether two start times are at most `hours` apart (an unknown time matches)."""
    a, b = parse_time(first), parse_time(other)
    # In seconds as floats: a window of inf hours (or 1e308) is no limit, not an overflow.
    return a is None or b is None or abs(b - a).total_seconds() <= hours * 3600


def earliest(times: Iterable[str | None]) -> str | None:
    """The earliest of some ISO 8601 times, as given (unreadable ones after readable)."""
    known = [t for t in times if t]
    if not known:
        return None
    return min(known, key=lambda t: (parse_time(t) is None, parse_time(t) or datetime.min, t))


def merge_parts(sessions: Iterable[Session]) -> list[Session]:
    """One session per `tool:id`: a sub-agent's transcript and the main one are one
    session. The main transcript's turns stand; a part adds its models, its edits of
    files, and its test run when the main one has none."""
    merged: dict[str, Session] = {}
    parts: list[Session] = []
    for session in sessions:
        if session.subagent:
            parts.append(session)
            continue
        key = session_key(session)
        found = merged.get(key)
        if found is None or session.size > found.size:
            merged[key] = session  # the same file twice (a copy): the larger one
    for part in parts:
        key = session_key(part)
        main = merged.get(key)
        if main is None:
            merged[key] = part  # a sub-agent's transcript alone stands for its session
            continue
        for model in part.models:
            main.add_model(model)
        adopt_edits(main, part)
        if main.tests is None:
            main.tests = part.tests
        main.size += part.size
    return list(merged.values())


def group(
    sessions: Sequence[Session], repository: Callable[[Session], str | None], options: Grouping
) -> list[list[Session]]:
    """The sessions in runs, each run's sessions by start time, runs by their first."""
    ordered = sorted(sessions, key=lambda s: (parse_time(s.started) is None, s.started or "", s.id))
    if options.run is not None:
        return [ordered] if ordered else []
    if options.one_per_session:
        return [[session] for session in ordered]
    groups: dict[str, list[list[Session]]] = {}
    result: list[list[Session]] = []
    for session in ordered:
        key = task_key(session.first_prompt(), repository(session))
        for members in groups.setdefault(key, []):
            if within(members[0].started, session.started, options.window_hours):
                members.append(session)
                break
        else:
            members = [session]
            groups[key].append(members)
            result.append(members)
    return result


def run_id(sessions: Sequence[Session]) -> str:
    """A stable id from the sessions' ids: the same sessions give the same run."""
    return keys_run_id(session_key(s) for s in sessions)


def keys_run_id(keys: Iterable[str]) -> str:
    """`run_id` of the sessions with these `session_key`s."""
    return "session-" + hashlib.sha256("\n".join(sorted(keys)).encode()).hexdigest()[:12]


def tool_of(name: str) -> str:
    """The tool an agent read from a session is: its name starts with it (`codex`,
    `claude-code/claude-opus-4-5`, `claude-code@03-02 10:00`, `gemini-cli#2`)."""
    for tool in Tool:
        if name == tool.value or name.startswith(tuple(tool.value + c for c in "/@#")):
            return tool.value
    return name


def agent_session_keys(agent: Agent) -> set[str]:
    """The `session_key`s of the sessions an agent was read from."""
    return {f"{tool_of(agent.name)}:{sid}" for sid in agent.sessions}


def start_label(started: str | None) -> str | None:
    """A session's start as month, day, hours and minutes in local time ("03-02 10:00"):
    short, and what a person recalls of a session; None when unknown."""
    moment = parse_time(started)
    if moment is None:
        return None
    try:
        return moment.astimezone().strftime("%m-%d %H:%M")
    except (OverflowError, OSError, ValueError):  # out of the platform's time range
        return moment.strftime("%m-%d %H:%M")


def agent_names(sessions: Sequence[Session], taken: Iterable[str] = ()) -> list[str]:
    """A distinct name for each session. The only session of its tool in the run (`taken`
    holds the names of the run's other agents) is named after the tool; two or more of
    one tool each take the tool and their model, when their models differ, else the tool
    and their start ("claude-code@03-02 10:00"), else a number ("claude-code#2")."""
    used = set(taken)
    tools = Counter(s.tool.value for s in sessions)
    named = Counter(tool_of(name) for name in used)
    models = Counter((s.tool.value, s.models[0]) for s in sessions if s.models)
    names = []
    for session in sessions:
        tool = session.tool.value
        candidates = []
        if tools[tool] == 1 and not named[tool]:
            candidates.append(tool)
        if session.models and models[tool, session.models[0]] == 1:
            candidates.append(f"{tool}/{session.models[0]}")
        start = start_label(session.started)
        if start is not None:
            candidates.append(f"{tool}@{start}")
        name = next((c for c in candidates if c not in used), None)
        number = 1
        while name is None or name in used:
            number += 1
            name = f"{tool}#{number}"
        used.add(name)
        names.append(name)
    return names


# The version of the rules sessions are read by (which of an agent's text counts as a
# question to the user, its edits of files, and the like). A run read under older rules
# is read again by the next import of its sessions, grown or not.
READING = 3


def revision(
    key: str,
    sizes: dict[str, int],
    tasks: dict[str, str] | None = None,
    reading: int = READING,
) -> str:
    """What a session run records of its sessions: its task key, each session's size
    (by `session_key`) and the rules they were read by, so that a grown session (or one
    read under older rules) updates the run and an unchanged one is skipped. A run
    grouped by hand (`ppp-tui group`) also records each session's own task key
    (`tasks`), so that a new session of any of those tasks joins it and ungrouping gives
    each session's run its own key again."""
    document: dict[str, object] = {"key": key, "reading": reading, "sessions": sizes}
    if tasks:
        document["tasks"] = tasks
    return json.dumps(document, sort_keys=True)


def session_run(
    sessions: Sequence[Session],
    identifier: str,
    names: Sequence[str],
    key: str,
    stage: str | None,
) -> Run:
    """The run of `sessions` (by start time), its agents named `names`."""
    task = sessions[0].first_prompt() if sessions else ""
    return Run(
        id=identifier,
        agents=tuple(
            session_agent(session, name, task)
            for session, name in zip(sessions, names, strict=True)
        ),
        stage=stage,
        task=task or None,
        created_at=earliest(s.started for s in sessions),
    )
