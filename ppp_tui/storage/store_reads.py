"""Reading runs from the store: the runs list's rows, one run whole (its agents, their
turns, questions and violations), a run id from its start, the figures the dashboard
counts, and the score columns of many runs at once.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, replace
from itertools import groupby
from typing import TYPE_CHECKING, Any

from ..core.model import (
    Agent,
    AskedWith,
    Effort,
    Question,
    Run,
    Severity,
    Source,
    Trajectory,
    Turn,
    Violation,
)
from ..core.sessions.waiting import waiting
from ..core.settings import Settings
from . import score_reads
from .damage import check, is_count, is_penalty, is_unit, readable
from .database import (
    StoreError,
    stage_condition,
    stage_where,
)
from .score_reads import RunAgents

if TYPE_CHECKING:
    from ..core.columns import AgentColumns

from .store_base import StoreBase


@dataclass(frozen=True)
class RunInfo:
    """A run's row in the runs list (what the runs screen and `runs` show)."""

    id: str
    spec_id: str | None
    stage: str | None
    task: str | None
    task_type: str
    created_at: str | None
    agents: int
    preferred: str | None
    waiting: bool = False  # an agent of it waits for the user (core/sessions/waiting.py)


# The run ids an ambiguous prefix lists.
_PREFIX_SHOWN = 8


class RunReads(StoreBase):
    """Runs and their figures, read."""

    # -- reading -------------------------------------------------------------------

    def count(self) -> int:
        return int(self._query("SELECT count(*) FROM runs")[0][0])

    def stages(self) -> list[str | None]:
        rows = self._query("SELECT DISTINCT stage FROM runs ORDER BY stage")
        return [row[0] for row in rows]

    @readable
    def run_infos(
        self, stage: str | None = None, ids: Sequence[str] | None = None
    ) -> list[RunInfo]:
        """Every run (or one stage's) by id: the score arrays' order; or the runs `ids`
        names, in its order (the app's first page)."""
        sql = (
            "SELECT id, spec_id, stage, task, task_type, created_at, agents, m.agent"
            " FROM runs LEFT JOIN marks AS m ON m.run_id = runs.id AND m.reviewer = ?"
        )
        params: list[Any] = [self.reviewer]
        if stage is not None:
            condition, stage_params = stage_condition(stage)
            sql += f" WHERE {condition}"
            params += stage_params
        elif ids is not None:
            sql += f" WHERE id IN ({', '.join('?' * len(ids))})"
            params += ids
        waiting = self.waiting_agents(ids)
        rows = self._query(sql + " ORDER BY id", params)
        infos = [RunInfo(*row) for row in rows]
        if waiting:
            infos = [replace(i, waiting=True) if i.id in waiting else i for i in infos]
        # Ids are text: a NULL or a number sorts first, a blob last (an outside edit).
        check(not infos or (type(infos[0].id) is str and type(infos[-1].id) is str))
        if ids is not None:
            place = {run_id: k for k, run_id in enumerate(ids)}
            infos.sort(key=lambda info: place[info.id])
        return infos

    @readable
    def waiting_agents(self, ids: Sequence[str] | None = None) -> dict[str, set[str]]:
        """The agents waiting for the user, by run id (core/sessions/waiting.py), of every
        run or of the runs `ids` names: read from the last turn of each agent read from a
        session, its last step's kind and its questions."""
        among = f" AND r.id IN ({', '.join('?' * len(ids))})" if ids is not None else ""
        rows = self._query(
            "WITH last AS (SELECT a.id AS agent, a.run_id, a.name, t.turn,"
            " json_extract(t.steps, '$[#-1][0]') AS kind"
            " FROM runs AS r JOIN agents AS a ON a.run_id = r.id"
            " JOIN trajectory_turns AS t ON t.trajectory_id = a.id AND t.turn ="
            " (SELECT max(turn) FROM trajectory_turns WHERE trajectory_id = a.id)"
            f" WHERE r.revision IS NOT NULL AND a.sessions IS NOT NULL{among}"
            " AND json_valid(t.steps))"
            " SELECT last.agent, last.run_id, last.name, last.kind, q.asked_with, q.answer,"
            " q.dismissed, q.id FROM last LEFT JOIN trajectory_questions AS q"
            " ON q.trajectory_id = last.agent AND q.turn = last.turn"
            " ORDER BY last.agent, q.id",
            list(ids or []),
        )
        found: dict[str, set[str]] = {}
        for (_, run_id, name, kind), group in groupby(rows, key=lambda row: row[:4]):
            asked = [(w or "text", answer, bool(d)) for *_, w, answer, d, qid in group if qid]
            if waiting(kind if isinstance(kind, str) else None, asked):
                found.setdefault(run_id, set()).add(name)
        return found

    @readable
    def newest_ids(self, limit: int) -> list[str]:
        """The ids of the runs list's first `limit` runs: the newest first, through the
        created_at index (by the time as written: the whole list, by moment, differs
        only where offsets or precisions are mixed), then those without a time, by id."""
        # ISO 8601 times start with the year's digits; other text is no time.
        dated = "created_at >= '0' AND created_at < ':'"
        ids = [
            row[0]
            for row in self._query(
                f"SELECT id FROM runs WHERE {dated} ORDER BY created_at DESC, id LIMIT ?",
                [limit],
            )
        ]
        if len(ids) < limit:
            ids += [
                row[0]
                for row in self._query(
                    f"SELECT id FROM runs WHERE created_at IS NULL OR NOT ({dated})"
                    " ORDER BY id LIMIT ?",
                    [limit - len(ids)],
                )
            ]
        check(all(type(run_id) is str for run_id in ids))
        return ids

    @readable
    def run_series(self, stage: str | None = None) -> list[tuple[str, str | None, str]]:
        """(id, created_at, iterations JSON) of every run (or one stage's), by id."""
        where, params = stage_where(stage)
        return self._query(
            f"SELECT id, created_at, iterations FROM runs{where} ORDER BY id", params
        )

    @readable
    def violation_counts(self, stage: str | None = None) -> list[tuple[str, str, int, int]]:
        """(preference as stored, run id, trajectory id, violations) for every trajectory
        and preference it violates (or those of one stage's runs)."""
        where, params = stage_where(stage)
        return self._query(
            "SELECT v.preference, t.run_id, v.trajectory_id, count(*)"
            " FROM trajectory_violations AS v JOIN trajectories AS t ON t.id = v.trajectory_id"
            + (" JOIN runs ON runs.id = t.run_id" + where if stage is not None else "")
            # t.run_id follows from the trajectory; PostgreSQL wants it named all the same.
            + " GROUP BY v.trajectory_id, v.preference, t.run_id",
            params,
        )

    @readable
    def question_counts(self, stage: str | None = None) -> list[tuple[str, str, int]]:
        """(source, effort, questions) over every question (or one stage's runs')."""
        where = ""
        params: list[Any] = []
        if stage is not None:
            condition, params = stage_condition(stage)
            where = (
                " WHERE trajectory_id IN (SELECT t.id FROM trajectories AS t"
                f" JOIN runs ON runs.id = t.run_id WHERE {condition})"
            )
        return self._query(
            f"SELECT source, effort, count(*) FROM trajectory_questions{where}"
            " GROUP BY source, effort",
            params,
        )

    @readable
    def resolve_run_id(self, given: str) -> str:
        """The run `given` names: the run with that id, else the one run whose id starts
        with it. An unknown id, or a prefix of several, is an error naming them."""
        if self._query("SELECT 1 FROM runs WHERE id = ?", [given]):
            return given
        found = [
            row[0]
            for row in self._query(
                "SELECT id FROM runs WHERE id > ? AND id < ? ORDER BY id LIMIT ?",
                [given, given + "\U0010ffff", _PREFIX_SHOWN + 1],
            )
        ]
        if len(found) == 1 and given:
            return str(found[0])
        if not found or not given:
            raise StoreError(f"unknown run id {given!r}")
        listed = ", ".join(found[:_PREFIX_SHOWN]) + (", …" if len(found) > _PREFIX_SHOWN else "")
        raise StoreError(f"{given!r} is the start of several run ids: {listed}")

    @readable
    def get_run(self, run_id: str) -> Run:
        """The whole run, as imported (labels and their sources included)."""
        rows = self._query(
            "SELECT id, spec_id, stage, task, created_at, preferences, selected_agent,"
            " (SELECT agent FROM marks WHERE run_id = runs.id AND reviewer = ?), iterations,"
            " consensus FROM runs WHERE id = ?",
            [self.reviewer, run_id],
        )
        if not rows:
            raise StoreError(f"unknown run id {run_id!r}")
        (
            rid,
            spec_id,
            stage,
            task,
            created_at,
            prefs,
            selected,
            preferred,
            iterations,
            consensus,
        ) = rows[0]
        agents = []
        for (
            agent_id,
            name,
            model,
            technical,
            relevance,
            confidence,
            output,
            failure,
            technical_source,
            models,
            sessions,
            judged_model,
        ) in self._query(
            "SELECT id, name, model, technical, relevance, confidence, output, failure,"
            " technical_source, models, sessions, judged_model FROM agents"
            " WHERE run_id = ? ORDER BY position",
            [run_id],
        ):
            # What an import never writes (an outside edit) fails here, not in scoring.
            check(type(name) is str and is_unit(technical))
            check(
                (relevance is None or is_unit(relevance))
                and (confidence is None or is_unit(confidence))
            )
            trajectory = self._trajectory(agent_id)
            agents.append(
                Agent(
                    name,
                    technical,
                    trajectory,
                    model,
                    relevance,
                    confidence,
                    output,
                    failure,
                    technical_source,
                    _text_list(models),
                    _text_list(sessions),
                    judged_model,
                )
            )
        preferences = json.loads(prefs)
        scores = json.loads(iterations)
        check(type(preferences) is list and all(type(p) is str for p in preferences))
        check(type(scores) is list and all(type(x) in (float, int) for x in scores))
        return Run(
            id=rid,
            agents=tuple(agents),
            spec_id=spec_id,
            stage=stage,
            task=task,
            created_at=created_at,
            preferences=tuple(preferences),
            selected_agent=selected,
            preferred_agent=preferred,
            iterations=tuple(scores),
            consensus=consensus,
        )

    def _trajectory(self, agent_id: int) -> Trajectory | None:
        found = self._query("SELECT unchecked FROM trajectories WHERE id = ?", [agent_id])
        if not found:
            return None
        trajectory_id, unchecked = agent_id, found[0][0]
        turns = tuple(
            Turn(prompt or "", response or "", tokens, latency, timestamp, _steps(steps))
            for prompt, response, tokens, latency, timestamp, steps in self._query(
                "SELECT prompt, response, token_count, latency_ms, timestamp, steps"
                " FROM trajectory_turns WHERE trajectory_id = ? ORDER BY turn",
                [trajectory_id],
            )
        )
        questions = tuple(
            Question(
                text,
                Effort(effort),
                turn,
                Source(source),
                AskedWith(asked_with or AskedWith.TEXT),
                _text_list(options),
                answer,
                bool(dismissed),
                seconds,
                judged_model,
            )
            for (
                text,
                effort,
                turn,
                source,
                asked_with,
                options,
                answer,
                dismissed,
                seconds,
                judged_model,
            ) in self._query(
                "SELECT text, effort, turn, source, asked_with, options, answer, dismissed,"
                " seconds_to_answer, judged_model FROM trajectory_questions"
                " WHERE trajectory_id = ? ORDER BY id",
                [trajectory_id],
            )
        )
        violations = tuple(
            Violation(preference, Severity(severity), penalty, turn, Source(source))
            for preference, severity, penalty, turn, source in self._query(
                "SELECT preference, severity, penalty, turn, source FROM trajectory_violations"
                " WHERE trajectory_id = ? ORDER BY id",
                [trajectory_id],
            )
        )
        check(all(is_penalty(v.penalty) and is_count(v.turn) for v in violations))
        check(all(is_count(q.turn) and type(q.text) is str for q in questions))
        unchecked_names = json.loads(unchecked)
        check(type(unchecked_names) is list)
        return Trajectory(turns, questions, violations, tuple(unchecked_names))

    @readable
    def agent_columns(
        self,
        settings: Settings,
        stage: str | None = None,
        marked_only: bool = False,
        limit: int | None = None,
    ) -> AgentColumns:
        """Flat per-agent columns of every run, for the array paths (see score_reads.py).

        Only `stage`'s runs if given; only marked runs with `marked_only` (all that
        regret and tuning look at); only the first `limit` runs by id (the app's first
        page while the rest loads).
        """
        return score_reads.agent_columns(
            self._query, settings, self.scope, stage, marked_only, limit
        )

    @readable
    def first_runs(self, settings: Settings, ids: Sequence[str]) -> list[RunAgents]:
        """The runs `ids` names, in its order, with their agents' score inputs, without
        numpy (the app's first page draws before numpy is imported)."""
        return score_reads.first_runs(self._query, settings, self.reviewer, ids)


def _text_list(text: str | None) -> tuple[str, ...]:
    """A JSON list of strings stored by an import; an outside edit's other value fails."""
    if text is None:
        return ()
    value = json.loads(text)
    check(type(value) is list and all(type(item) is str for item in value))
    return tuple(value)


def _steps(text: str | None) -> tuple[tuple[str, str], ...]:
    """A turn's steps, stored as JSON [[kind, text], ...]."""
    if text is None:
        return ()
    value = json.loads(text)
    check(
        type(value) is list
        and all(type(s) is list and len(s) == 2 and all(type(x) is str for x in s) for s in value)
    )
    return tuple((kind, step) for kind, step in value)
