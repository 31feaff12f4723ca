"""Values a database edited outside ppp-tui may hold that an import never writes.

ppp-tui's own imports write only values they validated, so its reads trust them. A
database edited by hand or by another tool (text in a numeric column, a NULL id, a
broken packed row, JSON that is not a list) would make those reads fail somewhere
deep, with a traceback. `readable` turns such a failure into one `StoreError` line,
and `diagnose` finds the first bad value to name in it: table, column, run and value.
"""

from __future__ import annotations

import functools
import math
import sqlite3
import struct
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any, Concatenate, ParamSpec, TypeVar

from ..core.errors import PPPError
from ..core.model import MAX_COUNT, MAX_ITERATION_SCORE, MAX_PENALTY, Effort, Severity, Source

if TYPE_CHECKING:
    from .store_base import StoreBase

# What bad values raise while a read turns rows into runs and arrays.
_DATA_ERRORS = (TypeError, ValueError, struct.error, IndexError, KeyError, OverflowError)

_P = ParamSpec("_P")
_R = TypeVar("_R")
_S = TypeVar("_S", bound="StoreBase")


def _quoted(values: Iterable[str]) -> str:
    return ", ".join(f"'{value}'" for value in values)


def _number(column: str, low: float, high: float, nullable: bool = True) -> str:
    """SQL: the column is not a number in [low, high] (infinity and text included)."""
    check = (
        f"(typeof({column}) NOT IN ('integer', 'real') OR {column} < {low!r}"
        f" OR {column} > {high!r})"
    )
    return f"({column} IS NOT NULL AND {check})" if nullable else check


def _count(column: str) -> str:
    return f"({column} IS NOT NULL AND (typeof({column}) != 'integer' OR {column} < 0))"


def _list(column: str) -> str:
    return f"(NOT json_valid({column}) OR json_type({column}) != 'array')"


_AGENT_RUN = "(SELECT run_id FROM agents WHERE agents.id = trajectory_id)"
_EFFORTS = _quoted(e.value for e in Effort)
_SEVERITIES = _quoted(s.value for s in Severity)
_SOURCES = _quoted(s.value for s in Source)

# (what a good value is, table, column, the run it belongs to, the bad rows' condition),
# in the order they are tried: a JSON list is checked before its items are.
_CHECKS: tuple[tuple[str, str, str, str, str], ...] = (
    ("text", "runs", "id", "id", "typeof(id) != 'text'"),
    ("text", "agents", "name", "run_id", "typeof(name) != 'text'"),
    ("a number in [0, 1]", "agents", "technical", "run_id", _number("technical", 0, 1, False)),
    ("a number in [0, 1] or NULL", "agents", "relevance", "run_id", _number("relevance", 0, 1)),
    ("a number in [0, 1] or NULL", "agents", "confidence", "run_id", _number("confidence", 0, 1)),
    *(
        ("a whole number >= 0 or NULL", "agents", column, "run_id", _count(column))
        for column in ("q_low", "q_medium", "q_high", "violations")
    ),
    ("a JSON list", "runs", "preferences", "id", _list("preferences")),
    ("a JSON list", "runs", "iterations", "id", _list("iterations")),
    ("a JSON list", "trajectories", "unchecked", "run_id", _list("unchecked")),
    (
        "a list of preference names",
        "runs",
        "preferences",
        "id",
        "EXISTS (SELECT 1 FROM json_each(preferences) WHERE type != 'text')",
    ),
    (
        f"a list of numbers within ±{MAX_ITERATION_SCORE:g}",
        "runs",
        "iterations",
        "id",
        "EXISTS (SELECT 1 FROM json_each(iterations) WHERE type NOT IN ('integer', 'real')"
        f" OR abs(value) > {MAX_ITERATION_SCORE!r})",
    ),
    (
        f"a number in [0, {MAX_PENALTY:g}] or NULL",
        "trajectory_violations",
        "penalty",
        _AGENT_RUN,
        _number("penalty", 0, MAX_PENALTY),
    ),
    (
        f"one of {_SEVERITIES}",
        "trajectory_violations",
        "severity",
        _AGENT_RUN,
        f"severity NOT IN ({_SEVERITIES})",
    ),
    *(
        (f"one of {_SOURCES}", table, "source", _AGENT_RUN, f"source NOT IN ({_SOURCES})")
        for table in ("trajectory_violations", "trajectory_questions")
    ),
    (
        f"one of {_EFFORTS}",
        "trajectory_questions",
        "effort",
        _AGENT_RUN,
        f"effort NOT IN ({_EFFORTS})",
    ),
    *(
        ("a whole number >= 0 or NULL", table, "turn", _AGENT_RUN, _count("turn"))
        for table in ("trajectory_violations", "trajectory_questions")
    ),
    *(
        ("a whole number >= 0 or NULL", "trajectory_turns", column, _AGENT_RUN, _count(column))
        for column in ("token_count", "latency_ms")
    ),
    *(
        ("text or NULL", "trajectory_turns", column, _AGENT_RUN, f"typeof({column}) = 'blob'")
        for column in ("prompt", "response", "timestamp")
    ),
    ("text", "trajectory_questions", "text", _AGENT_RUN, "typeof(text) != 'text'"),
    ("text", "trajectory_violations", "preference", _AGENT_RUN, "typeof(preference) != 'text'"),
    *(
        ("text or NULL", "runs", column, "id", f"typeof({column}) NOT IN ('text', 'null')")
        for column in ("spec_id", "stage", "task", "created_at")
    ),
)


def diagnose(conn: sqlite3.Connection) -> str | None:
    """The first bad value of the database, described in a line; None if none is found."""
    for expected, table, column, run, condition in _CHECKS:
        try:
            row = conn.execute(
                f"SELECT {run}, {column} FROM {table} WHERE {condition} LIMIT 1"
            ).fetchone()
        except sqlite3.Error:  # a table or column edited away: the next check may say more
            continue
        if row is not None:
            where = "" if table == "runs" and column == "id" else f" of run {_show(row[0])}"
            return f"{table}.{column}{where} holds {_show(row[1])}, not {expected}"
    # The packs are derived from the agents: a damaged one is rebuilt once deleted.
    try:
        row = conn.execute(
            "SELECT run_id FROM run_scores WHERE typeof(names) != 'text'"
            " OR typeof(technical) != 'blob' OR typeof(counts) != 'blob'"
            " OR typeof(name_lengths) != 'blob' OR length(technical) % 8 != 0"
            " OR length(counts) != 4 * length(technical)"
            " OR 2 * length(name_lengths) != length(technical) LIMIT 1"
        ).fetchone()
    except sqlite3.Error:
        row = None
    if row is not None:
        return (
            f"the packed scores of run {_show(row[0])} (table run_scores) are damaged;"
            " delete that table's rows and ppp-tui rebuilds them"
        )
    return None


def _show(value: Any) -> str:
    """A database value for an error line, kept short."""
    if value is None:
        return "NULL"
    if isinstance(value, bytes):
        return f"a blob of {len(value)} bytes"
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def readable(method: Callable[Concatenate[_S, _P], _R]) -> Callable[Concatenate[_S, _P], _R]:
    """A `Store` read whose failures on bad values become one StoreError line."""

    def read(self: _S, /, *args: _P.args, **kwargs: _P.kwargs) -> _R:
        try:
            return method(self, *args, **kwargs)
        except PPPError:
            raise
        except _DATA_ERRORS as error:
            with self.lock:  # its diagnosis reads the connection, shared with other threads
                raise unreadable(self.path, self.conn, error) from None

    functools.update_wrapper(read, method)
    return read


def unreadable(path: Any, conn: sqlite3.Connection, error: Exception) -> PPPError:
    """The StoreError for a read that failed on a value it could not use."""
    from .database import StoreError

    try:
        problem = diagnose(conn)
    except sqlite3.Error:
        problem = None
    if problem is None:
        problem = f"holds a value ppp-tui cannot read ({type(error).__name__}: {error})"
    return StoreError(f"{path}: {problem}; was it edited outside ppp-tui?")


def check(condition: bool) -> None:
    """Refuse a value a read cannot use (`readable` says which and where)."""
    if not condition:
        raise ValueError("a value an import never writes")


def is_unit(value: Any) -> bool:
    """A number in [0, 1], as the agents' scores are."""
    return type(value) in (float, int) and 0.0 <= value <= 1.0


def is_penalty(value: Any) -> bool:
    return value is None or (type(value) in (float, int) and 0.0 <= value <= MAX_PENALTY)


def is_count(value: Any) -> bool:
    return value is None or (type(value) is int and 0 <= value <= MAX_COUNT)
