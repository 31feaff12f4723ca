"""What an LLM judge reads from the run store and writes to it (docs/judge.md).

Reads: the questions in scope with their run's task text (those whose effort was
classified, or judged before; or, to evaluate the judge, those labelled with the data),
the unscored agents with their final output, and the cached judgments. Writes, one
transaction per batch: the judgments into the cache, the judged efforts onto their
questions (never onto a labelled one) with the agents' question counts, the judged
technical scores (never over a hand rating or a test run), and the packs of every run
that changed (packs.py), so rank and regret see the judged values at once.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..core.model import JUDGED, UNSCORED, Effort, Source
from . import judge_claims, packs
from .database import database_error, now, stage_condition

if TYPE_CHECKING:
    from .store import Store

# The question sources a judge may relabel: all but the data's own labels.
JUDGEABLE = (Source.CLASSIFIER.value, Source.EXTRACTED.value, Source.JUDGED.value)
# The agents a judge may score: no test run, no hand rating (or scored by a judge before).
SCORABLE = (UNSCORED, JUDGED)
_CHUNK = 500  # parameters per IN (...) list


@dataclass(frozen=True)
class QuestionRow:
    id: int
    trajectory_id: int
    text: str
    effort: Effort
    source: str
    judged_model: str | None
    task: str | None


@dataclass(frozen=True)
class AgentRow:
    id: int
    run_id: str
    name: str
    technical_source: str
    judged_model: str | None
    task: str | None
    output: str | None  # the agent's output, else its last turn's response


@dataclass(frozen=True)
class Cached:
    answer: str
    label: str | None
    score: float | None


@dataclass(frozen=True)
class Judgment:
    """One answer to keep: its cache key, the answer and what was read from it."""

    model: str
    prompt_version: str
    input_hash: str
    answer: str
    label: str | None = None
    score: float | None = None


def _scope(stage: str | None, run_id: str | None, limit: int | None) -> tuple[str, list[Any]]:
    """The condition on `runs` of a scope: a stage's runs, one run, the first `limit`."""
    conditions, params = [], []
    if stage is not None:
        condition, values = stage_condition(stage)
        conditions.append(condition)
        params += values
    if run_id is not None:
        conditions.append("runs.id = ?")
        params.append(run_id)
    where = " AND ".join(conditions) or "1 = 1"  # a condition on both engines
    if limit is None:
        return where, params
    return (
        f"runs.id IN (SELECT runs.id FROM runs WHERE {where} ORDER BY runs.id LIMIT ?)",
        [*params, limit],
    )


def questions(
    store: Store,
    stage: str | None,
    run_id: str | None,
    limit: int | None,
    labelled: bool = False,
) -> list[QuestionRow]:
    """The questions in scope whose effort a judge may give (or, `labelled`, those the
    data labelled), with their run's task text, by id."""
    where, params = _scope(stage, run_id, limit)
    sources = (Source.LABEL.value,) if labelled else JUDGEABLE
    rows = store._query(
        "SELECT q.id, q.trajectory_id, q.text, q.effort, q.source, q.judged_model, runs.task"
        " FROM trajectory_questions AS q JOIN trajectories AS t ON t.id = q.trajectory_id"
        " JOIN runs ON runs.id = t.run_id"
        f" WHERE q.source IN ({', '.join('?' for _ in sources)}) AND {where}"
        " ORDER BY q.id",
        [*sources, *params],
    )
    return [
        QuestionRow(qid, tid, text, Effort(effort), source, model, task)
        for qid, tid, text, effort, source, model, task in rows
        if isinstance(text, str) and effort in ("low", "medium", "high")
    ]


def agents(
    store: Store, stage: str | None, run_id: str | None, limit: int | None
) -> list[AgentRow]:
    """The agents in scope a judge may score: unscored (no test run, no hand rating) or
    scored by a judge before, and not failed."""
    where, params = _scope(stage, run_id, limit)
    rows = store._query(
        "SELECT agents.id, agents.run_id, agents.name, agents.technical_source,"
        " agents.judged_model, runs.task, coalesce(nullif(agents.output, ''),"
        " (SELECT response FROM trajectory_turns WHERE trajectory_id = agents.id"
        " AND response != '' ORDER BY turn DESC LIMIT 1))"
        " FROM agents JOIN runs ON runs.id = agents.run_id"
        f" WHERE agents.technical_source IN (?, ?) AND agents.failure IS NULL AND {where}"
        " ORDER BY agents.run_id, agents.position",
        [*SCORABLE, *params],
    )
    return [AgentRow(*row) for row in rows]


def cached(store: Store, model: str, version: str, hashes: Iterable[str]) -> dict[str, Cached]:
    """The cached judgments of (model, prompt version) among `hashes`, by input hash."""
    wanted = sorted(set(hashes))
    found: dict[str, Cached] = {}
    for start in range(0, len(wanted), _CHUNK):
        chunk = wanted[start : start + _CHUNK]
        for input_hash, answer, label, score in store._query(
            "SELECT input_hash, answer, label, score FROM judgments"
            " WHERE model = ? AND prompt_version = ?"
            f" AND input_hash IN ({', '.join('?' for _ in chunk)})",
            [model, version, *chunk],
        ):
            found[input_hash] = Cached(answer, label, score)
    return found


def save(
    store: Store,
    judgments: Sequence[Judgment],
    efforts: Sequence[tuple[int, int, Effort, str, str]] = (),
    scores: Sequence[tuple[int, float, str]] = (),
) -> None:
    """In one transaction: keep `judgments` in the cache (and drop their claims); set
    each (question id, trajectory id, effort, model, prompt version) of `efforts` (a
    labelled question is left alone) and bring its agent's question counts up to date;
    set each (agent id, technical, model) of `scores` on an agent still unscored or
    judged; then pack the runs again."""
    if not (judgments or efforts or scores):
        return
    stamp = now()
    try:
        with store._transaction():
            conn = store.conn
            conn.executemany(
                "INSERT OR REPLACE INTO judgments (model, prompt_version, input_hash, answer,"
                " label, score, judged_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
                [
                    (j.model, j.prompt_version, j.input_hash, j.answer, j.label, j.score, stamp)
                    for j in judgments
                ],
            )
            judge_claims.drop_answered(
                conn, [(j.model, j.prompt_version, j.input_hash) for j in judgments]
            )
            touched = _set_efforts(conn, efforts)
            _count_questions(conn, touched)
            conn.executemany(
                "UPDATE agents SET technical = ?, technical_source = ?, judged_model = ?"
                " WHERE id = ? AND failure IS NULL AND technical_source IN (?, ?)"
                " AND NOT (technical_source = ? AND technical = ? AND judged_model IS ?)",
                [
                    (score, JUDGED, model, agent_id, *SCORABLE, JUDGED, score, model)
                    for agent_id, score, model in scores
                ],
            )
            # The agents' update trigger dropped the packs of the runs changed.
            packs.fill_missing(conn)
    except sqlite3.Error as error:
        raise database_error(store.path, error) from None


def _set_efforts(
    conn: sqlite3.Connection, efforts: Sequence[tuple[int, int, Effort, str, str]]
) -> set[int]:
    """Set the judged efforts; the trajectories whose questions changed."""
    touched: set[int] = set()
    for question_id, trajectory_id, effort, model, version in efforts:
        cursor = conn.execute(
            "UPDATE trajectory_questions SET effort = ?, source = ?, judged_model = ?,"
            " judged_prompt = ? WHERE id = ? AND source != ?"
            " AND NOT (effort = ? AND source = ? AND judged_model IS ? AND judged_prompt IS ?)",
            (
                effort.value,
                Source.JUDGED.value,
                model,
                version,
                question_id,
                Source.LABEL.value,
                effort.value,
                Source.JUDGED.value,
                model,
                version,
            ),
        )
        if cursor.rowcount:
            touched.add(trajectory_id)
    return touched


def _count_questions(conn: sqlite3.Connection, trajectories: set[int]) -> None:
    """Count again the questions by effort of the agents of `trajectories` (an agent
    and its trajectory share an id)."""
    ids = sorted(trajectories)
    for start in range(0, len(ids), _CHUNK):
        chunk = ids[start : start + _CHUNK]
        conn.execute(
            "UPDATE agents SET"
            " q_low = (SELECT count(*) FROM trajectory_questions AS q"
            " WHERE q.trajectory_id = agents.id AND q.effort = 'low'),"
            " q_medium = (SELECT count(*) FROM trajectory_questions AS q"
            " WHERE q.trajectory_id = agents.id AND q.effort = 'medium'),"
            " q_high = (SELECT count(*) FROM trajectory_questions AS q"
            " WHERE q.trajectory_id = agents.id AND q.effort = 'high')"
            f" WHERE id IN ({', '.join('?' for _ in chunk)})",
            chunk,
        )
