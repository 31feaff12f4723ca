"""The fast run parser: import's hot path.

It builds the same run as the checked parser (`checked._checked_run`), for input of the
usual shapes (exact JSON types), with cheap checks and no JSON paths. Anything it does
not expect, valid or not, raises `_Unusual` and the checked path starts over, so errors
(and the odd valid value, such as a str subclass) come out exactly as from the checked
path alone. tests/test_runs_equivalence.py holds the two to the same results.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from ..effort import classify_effort
from ..errors import RunError
from ..model import (
    MAX_ITERATION_SCORE,
    MAX_PENALTY,
    Agent,
    Effort,
    Question,
    Run,
    Severity,
    Source,
    Trajectory,
    Turn,
    Violation,
)
from ..preferences import AskedQuestion, check_questions
from ..scoring import states_preferences
from .checked import _MAX_INT, _consensus, _turn_questions, content_id, questions_of_turns
from .makers import new_agent, new_question, new_run, new_trajectory, new_turn, new_violation

_EFFORT = {e.value: e for e in Effort}
_SEVERITY = {s.value: s for s in Severity}


class _Unusual(Exception):
    """Leave the fast path for the checked one."""


def _fast_optional_str(value: Any) -> Any:
    if value is not None and type(value) is not str:
        raise _Unusual
    return value


def _fast_unit(value: Any) -> float:
    if type(value) is float:
        if 0.0 <= value <= 1.0:
            return value
    elif type(value) is int and 0 <= value <= 1:
        return float(value)
    raise _Unusual


def _fast_optional_unit(value: Any) -> float | None:
    return None if value is None else _fast_unit(value)


def _fast_magnitude(value: Any) -> int | None:
    """`_optional_int`: a count or duration >= 0."""
    if value is None:
        return None
    if type(value) is int:
        if 0 <= value <= _MAX_INT:
            return value
    elif type(value) is float and 0.0 <= value <= _MAX_INT:
        return int(value)
    raise _Unusual


def _fast_turn_number(value: Any) -> int | None:
    if value is None or (type(value) is int and 0 <= value <= _MAX_INT):
        return value
    raise _Unusual


def _fast_name(value: Any) -> str:
    """A required string: present and not blank."""
    if type(value) is not str or not value.strip():
        raise _Unusual
    return value


def fast_turn(turn: Any) -> tuple[str, str, int | None, int | None, str | None]:
    """A turn's (prompt, response, token count, latency, timestamp)."""
    if type(turn) is not dict:
        raise _Unusual
    get = turn.get
    if get("asks") is not None or get("tool_calls") is not None:
        raise _Unusual  # declared asks: the checked path reads them
    prompt = get("prompt")
    response = get("response")
    timestamp = get("timestamp")
    if (
        (prompt is not None and type(prompt) is not str)
        or (response is not None and type(response) is not str)
        or (timestamp is not None and type(timestamp) is not str)
    ):
        raise _Unusual
    return (
        prompt or "",
        response or "",
        _fast_magnitude(get("token_count")),
        _fast_magnitude(get("latency_ms")),
        timestamp,
    )


def fast_list(raw: Any) -> list[Any]:
    """`raw` if it is a list (of turns, questions, violations)."""
    if type(raw) is not list:
        raise _Unusual
    return raw


def _fast_turns(raw: Any) -> tuple[Turn, ...]:
    return tuple([new_turn(*fast_turn(turn)) for turn in fast_list(raw)])


def fast_question(question: Any, task: str | None) -> tuple[str, Effort, int | None, Source]:
    """A listed question's (text, effort, turn, source of the effort)."""
    if type(question) is not dict:
        raise _Unusual
    get = question.get
    text = get("text")
    if type(text) is not str:
        raise _Unusual
    label = get("effort")
    if label is None:
        return text, classify_effort(text, task), _fast_turn_number(get("turn")), Source.CLASSIFIER
    if type(label) is str:
        found = _EFFORT.get(label) or _EFFORT.get(label.lower())
        if found is not None:
            return text, found, _fast_turn_number(get("turn")), Source.LABEL
    raise _Unusual


def _fast_questions(raw: Any, task: str | None) -> tuple[Question, ...]:
    return tuple([new_question(*fast_question(item, task)) for item in fast_list(raw)])


def extracted_questions(
    responses: Iterable[str], task: str | None
) -> Iterator[tuple[str, Effort, int]]:
    """(text, effort, turn) of each question the responses ask, turns numbered from 1."""
    for number, response in enumerate(responses, start=1):
        for text in _turn_questions(response):
            yield text, classify_effort(text, task), number


def fast_violation(violation: Any) -> tuple[str, Severity, float | None, int | None]:
    """A listed violation's (preference, severity, penalty, turn)."""
    if type(violation) is not dict:
        raise _Unusual
    get = violation.get
    preference = _fast_name(get("preference"))
    severity_raw = get("severity", "error")
    if type(severity_raw) is not str:
        raise _Unusual
    severity = _SEVERITY.get(severity_raw) or _SEVERITY.get(severity_raw.lower())
    if severity is None:
        raise _Unusual
    penalty = get("penalty")
    if penalty is not None:
        if type(penalty) is float:
            if not 0.0 <= penalty <= MAX_PENALTY:
                raise _Unusual
        elif type(penalty) is int and 0 <= penalty <= MAX_PENALTY:
            penalty = float(penalty)
        else:
            raise _Unusual
    return preference, severity, penalty, _fast_turn_number(get("turn"))


def _fast_violations(raw: Any) -> tuple[Violation, ...]:
    return tuple([new_violation(*fast_violation(item), Source.LABEL) for item in fast_list(raw)])


def checker_violations(
    preferences: tuple[str, ...], questions: Iterable[tuple[str, int | None]]
) -> tuple[list[tuple[str, int | None]], tuple[str, ...]]:
    """The rule checkers' violations, as (preference, turn), of a trajectory's questions
    given as (text, turn), and the preferences they could not check."""
    result = check_questions(preferences, [AskedQuestion(text, turn) for text, turn in questions])
    return [(v.preference, v.turn) for v in result.violations], result.unchecked


def _fast_trajectory(obj: Any, task: str | None, preferences: tuple[str, ...]) -> Trajectory:
    if type(obj) is not dict:
        raise _Unusual
    get = obj.get
    turns = _fast_turns(get("turns") or [])
    questions_raw = get("questions")
    if questions_raw is None:
        questions = questions_of_turns(turns, task)
    else:
        questions = _fast_questions(questions_raw, task)
    violations_raw = get("violations")
    if violations_raw is not None:
        return new_trajectory(turns, questions, _fast_violations(violations_raw), ())
    if states_preferences(preferences):
        found, unchecked = checker_violations(preferences, [(q.text, q.turn) for q in questions])
        violations = tuple(
            new_violation(preference, Severity.ERROR, None, turn, Source.CHECKER)
            for preference, turn in found
        )
        return new_trajectory(turns, questions, violations, unchecked)
    return new_trajectory(turns, questions, (), ())


def fast_agent(obj: Any) -> tuple[str, float, str | None, Any]:
    """An agent's (name, technical score, failure, trajectory object or None); its
    model, relevance, confidence and output are `fast_agent_details`."""
    if type(obj) is not dict:
        raise _Unusual
    get = obj.get
    name = _fast_name(get("name"))
    technical = get("technical_score")
    if technical is None:
        raise _Unusual
    technical = _fast_unit(technical) or 0.0  # as the checked path: -0.0 becomes 0.0
    failure = get("failure")
    if failure is not None:
        if type(failure) is not str or not failure.strip():
            raise _Unusual
        failure = failure.strip()
        technical = 0.0
    return name, technical, failure, get("trajectory")


def fast_agent_details(
    obj: dict[str, Any],
) -> tuple[str | None, float | None, float | None, str | None]:
    """An agent's (model, relevance, confidence, output)."""
    get = obj.get
    return (
        _fast_optional_str(get("model")),
        _fast_optional_unit(get("relevance")),
        _fast_optional_unit(get("confidence")),
        _fast_optional_str(get("output")),
    )


def _fast_agent(obj: Any, task: str | None, preferences: tuple[str, ...]) -> Agent:
    name, technical, failure, trajectory = fast_agent(obj)
    if trajectory is not None:
        trajectory = _fast_trajectory(trajectory, task, preferences)
    return new_agent(name, technical, trajectory, *fast_agent_details(obj), failure)


def _fast_consensus(obj: dict[str, Any]) -> str | None:
    try:
        return _consensus(obj, "$")
    except RunError:
        raise _Unusual from None


def fast_head(obj: dict[str, Any]) -> tuple[str | None, tuple[str, ...], list[Any]]:
    """A run's (task, preferences, agent objects): what its agents are read with."""
    get = obj.get
    task = _fast_optional_str(get("task"))
    preferences_raw = get("preferences") or []
    if type(preferences_raw) is not list:
        raise _Unusual
    preferences = []
    for item in preferences_raw:
        if type(item) is not str:
            raise _Unusual
        item = item.strip()
        if not item:
            raise _Unusual
        preferences.append(item)
    agents_raw = get("agents")
    if type(agents_raw) is not list or not agents_raw:
        raise _Unusual
    return task, tuple(preferences), agents_raw


def fast_tail(
    obj: dict[str, Any], names: list[str], failed: list[str]
) -> tuple[str, str | None, str | None, tuple[float, ...]]:
    """A run's (id, selected agent, preferred agent, iterations), its agents' `names`
    read, `failed` the names of those that failed."""
    get = obj.get
    seen = set(names)
    if len(seen) != len(names):
        raise _Unusual
    iterations_raw = get("iterations") or []
    if type(iterations_raw) is not list:
        raise _Unusual
    iterations = []
    for value in iterations_raw:
        if type(value) is float:
            if not -MAX_ITERATION_SCORE <= value <= MAX_ITERATION_SCORE:  # nan too
                raise _Unusual
            iterations.append(value)
        elif type(value) is int and -MAX_ITERATION_SCORE <= value <= MAX_ITERATION_SCORE:
            iterations.append(float(value))
        else:
            raise _Unusual
    run_id = get("id")
    if run_id is None:
        run_id = content_id(obj)
    elif type(run_id) is int:
        run_id = str(run_id)
    elif type(run_id) is not str or not run_id.strip():
        raise _Unusual
    selected = get("selected_agent")
    preferred = get("preferred_agent")
    if (selected is not None and (type(selected) is not str or selected not in seen)) or (
        preferred is not None and (type(preferred) is not str or preferred not in seen)
    ):
        raise _Unusual
    if preferred is not None and preferred in failed:
        raise _Unusual
    return run_id, selected, preferred, tuple(iterations)


def fast_details(obj: dict[str, Any]) -> tuple[str | None, str | None, str | None, str | None]:
    """A run's (spec id, stage, created at, consensus as canonical JSON)."""
    get = obj.get
    return (
        _fast_optional_str(get("spec_id")),
        _fast_optional_str(get("stage")),
        _fast_optional_str(get("created_at")),
        None if get("consensus") is None else _fast_consensus(obj),
    )


def _fast_run(obj: dict[str, Any]) -> Run:
    task, prefs, agents_raw = fast_head(obj)
    agents = tuple([_fast_agent(item, task, prefs) for item in agents_raw])
    run_id, selected, preferred, iterations = fast_tail(
        obj,
        [agent.name for agent in agents],
        [agent.name for agent in agents if agent.failure is not None],
    )
    spec_id, stage, created_at, consensus = fast_details(obj)
    return new_run(
        run_id,
        agents,
        spec_id,
        stage,
        task,
        created_at,
        prefs,
        selected,
        preferred,
        iterations,
        consensus,
    )
