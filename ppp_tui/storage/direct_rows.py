"""A run object's table rows built straight from its JSON, for an import's hot path.

`Rows.add(run_from_dict(obj))` makes a dozen model objects of each run only to read them
back into rows. `add_object` reads the same checked values (core.runs.fast's readers)
into the very rows `Rows.add` would build, without the objects, in about a quarter
less time. It takes the run objects of the usual shapes, as the fast parser
does; anything else raises `_Unusual` before a row is added, and the import then goes
the way of the checked parser and `Rows.add`. tests/test_runs_equivalence.py holds the
two ways to the same rows, document by document.
"""

from __future__ import annotations

from typing import Any

from ..core.model import Effort, Severity, Source
from ..core.runs.fast import (
    _Unusual,
    checker_violations,
    extracted_questions,
    fast_agent,
    fast_agent_details,
    fast_details,
    fast_head,
    fast_list,
    fast_question,
    fast_tail,
    fast_turn,
    fast_violation,
)
from . import packs
from .rows import NO_COUNTS, PACKED_NO_TRAJECTORY, Rows, cached_task_type, floats_json

_LOW, _MEDIUM = Effort.LOW, Effort.MEDIUM
_EXTRACTED = Source.EXTRACTED._value_
_CHECKER = Source.CHECKER._value_
_LABEL = Source.LABEL._value_
_ERROR = Severity.ERROR._value_


def add_object(rows: Rows, obj: dict[str, Any], known: set[str]) -> bool | None:
    """Add the rows of run object `obj` to `rows`, as `Rows.add(run_from_dict(obj))`
    would, and its id to `known`; whether the run comes with a preferred mark, or None
    (nothing added) if its id is in `known` already. Raises `_Unusual`, having added
    nothing, for a run the fast parser does not take; other errors (RecursionError for
    a run nested too deeply) go through as they are, nothing added either."""
    task, preferences, agents_raw = fast_head(obj)
    read = [fast_agent(item) for item in agents_raw]
    names = [name for name, _, _, _ in read]
    failed = [name for name, _, failure, _ in read if failure is not None]
    run_id, selected, preferred, iterations = fast_tail(obj, names, failed)
    spec_id, stage, created_at, consensus = fast_details(obj)
    preference_list, stated, unknown = rows.preference_values(preferences)
    first = rows.next_agent
    agents: list[tuple[Any, ...]] = []
    trajectories: list[tuple[Any, ...]] = []
    turns: list[tuple[Any, ...]] = []
    questions: list[tuple[Any, ...]] = []
    violations: list[tuple[Any, ...]] = []
    counts: list[Any] = []
    for position, (item, (name, technical, failure, trajectory)) in enumerate(
        zip(agents_raw, read, strict=True)
    ):
        agent_id = first + position
        if trajectory is None:
            counted: tuple[Any, ...] = NO_COUNTS
            counts.extend(PACKED_NO_TRAJECTORY)
        else:
            row, turn_rows, question_rows, violation_rows, counted = _trajectory(
                rows, trajectory, agent_id, run_id, task, preferences, stated
            )
            trajectories.append(row)
            turns += turn_rows
            questions += question_rows
            violations += violation_rows
            counts.extend(counted)
        model, relevance, confidence, output = fast_agent_details(item)
        row = (
            agent_id, run_id, position, name, model, technical, relevance, confidence, output,
            *counted,
        )  # fmt: skip
        agents.append(row if failure is None else (*row, failure, None, None, None))
    # Known only now: read whole, the run is one the checked parser takes too, so its
    # id being there already means skipping it (rather than reporting it as bad).
    if run_id in known:
        return None
    known.add(run_id)
    rows.runs.append(
        (
            run_id,
            spec_id,
            stage,
            task,
            cached_task_type(task),
            created_at,
            preference_list,
            stated,
            selected,
            floats_json(iterations),
            len(names),
            rows.stamp,
            consensus,
            None,
        )
    )
    if unknown:
        rows.unknown.update(unknown)
    if preferred is not None:
        rows.marks.append((run_id, preferred, rows.stamp, "import", rows.reviewer))
    rows.agents.extend(agents)
    if trajectories:
        rows.trajectories.extend(trajectories)
        rows.turns.extend(turns)
        rows.questions.extend(questions)
        if violations:
            for row in violations:
                rows.note(row[2])
            rows.violations.extend(violations)
    rows.next_agent = first + len(names)
    rows.packs.append(
        packs.packed(
            run_id,
            names,
            [technical for _, technical, _, _ in read],
            counts,
            [failure is not None for _, _, failure, _ in read],
        )
    )
    return preferred is not None


def _trajectory(
    rows: Rows,
    obj: Any,
    tid: int,
    run_id: str,
    task: str | None,
    preferences: tuple[str, ...],
    stated: int,
) -> tuple[tuple[Any, ...], list[Any], list[Any], list[Any], tuple[int, int, int, int]]:
    """A trajectory's row, the rows of its turns, questions and violations, and its
    counts: questions of low, medium and high effort, and violations."""
    if type(obj) is not dict:
        raise _Unusual
    get = obj.get
    read = [fast_turn(turn) for turn in fast_list(get("turns") or [])]
    turns = [(tid, number, *turn, None) for number, turn in enumerate(read, start=1)]
    questions_raw = get("questions")
    asked: list[tuple[str, Effort, int | None]]
    if questions_raw is None:
        asked = list(extracted_questions([turn[1] for turn in read], task))
        questions = [(tid, turn, text, effort._value_, _EXTRACTED) for text, effort, turn in asked]
    else:
        listed = [fast_question(item, task) for item in fast_list(questions_raw)]
        questions = [
            (tid, turn, text, effort._value_, source._value_)
            for text, effort, turn, source in listed
        ]
        asked = [(text, effort, turn) for text, effort, turn, _ in listed]
    low = medium = 0
    for _, effort, _ in asked:
        if effort is _LOW:
            low += 1
        elif effort is _MEDIUM:
            medium += 1
    unchecked: tuple[str, ...] = ()
    violations_raw = get("violations")
    if violations_raw is not None:
        violations = [
            (tid, turn, preference, severity._value_, penalty, _LABEL)
            for preference, severity, penalty, turn in map(
                fast_violation, fast_list(violations_raw)
            )
        ]
    elif stated:
        checked, unchecked = checker_violations(
            preferences, [(text, turn) for text, _, turn in asked]
        )
        violations = [(tid, turn, name, _ERROR, None, _CHECKER) for name, turn in checked]
    else:
        violations = []
    row = (tid, run_id, len(turns), len(asked), len(violations), rows.json_list(unchecked))
    counts = (low, medium, len(asked) - low - medium, len(violations))
    return row, turns, questions, violations, counts
