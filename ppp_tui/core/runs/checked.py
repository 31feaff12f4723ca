"""The checked run parser: every value is checked on the way, and the first problem is
named by its JSON path ($.agents[1].technical_score).

It reads every shape a run may take (declared asks, tool calls, `failure: true`, numbers
as any JSON number). Import's usual documents take the fast path (`fast`) instead, which
builds the same run; this one decides whatever that path declines.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Mapping
from functools import lru_cache
from typing import Any

from ..effort import classify_effort
from ..errors import RunError
from ..extraction import ask_texts, extract_questions, inline_asks
from ..model import (
    MAX_COUNT,
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
from .makers import new_question

EFFORTS = tuple(e.value for e in Effort)
SEVERITIES = tuple(s.value for s in Severity)


def content_id(obj: Mapping[str, Any]) -> str:
    """A stable id from a run's content, so importing the same run twice adds nothing."""
    body = {key: value for key, value in obj.items() if key != "id"}
    digest = hashlib.sha256(
        json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()
    ).hexdigest()
    return f"run-{digest[:16]}"


def _type_name(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    return "an object" if isinstance(value, dict) else type(value).__name__


def _object(value: Any, path: str) -> Mapping[str, Any]:
    if not isinstance(value, dict):
        raise RunError(f"expected an object, got {_type_name(value)}", path)
    return value


def _list(value: Any, path: str) -> list[Any]:
    if not isinstance(value, list):
        raise RunError(f"expected a list, got {_type_name(value)}", path)
    return value


def _string(obj: Mapping[str, Any], key: str, path: str, required: bool = False) -> str | None:
    value = obj.get(key)
    if value is None:
        if required:
            raise RunError(f"{key} is required", path)
        return None
    if not isinstance(value, str):
        raise RunError(f"expected a string, got {_type_name(value)}", f"{path}.{key}")
    if required and not value.strip():
        raise RunError(f"{key} must not be empty", f"{path}.{key}")
    return value


def _number(value: Any, path: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise RunError(f"expected a number, got {_type_name(value)}", path)
    if isinstance(value, int) and not -_FLOAT_MAX < value < _FLOAT_MAX:
        raise RunError("number out of range: an integer beyond ±1e308", path)
    if not math.isfinite(value):
        # JSON's 1e400 reads as infinity; NaN and Infinity are not JSON at all.
        got = "NaN" if value != value else "a number beyond ±1.8e308 (infinity)"
        raise RunError(f"expected a finite number, got {got}", path)
    return float(value)


def _bounded(value: Any, path: str, low: float, high: float, what: str) -> float:
    """A finite number in [low, high]; the error names the bounds."""
    number = _number(value, path)
    if not low <= number <= high:
        raise RunError(f"{what} must be in [{low:g}, {high:g}], got {number:g}", path)
    return number


def _unit(obj: Mapping[str, Any], key: str, path: str, required: bool = False) -> float | None:
    """A number in [0, 1] (technical score, relevance, confidence)."""
    if obj.get(key) is None:
        if required:
            raise RunError(f"{key} is required", path)
        return None
    value = _number(obj[key], f"{path}.{key}")
    if not 0.0 <= value <= 1.0:
        raise RunError(f"{key} must be in [0, 1], got {obj[key]}", f"{path}.{key}")
    return value


def _turn_number(obj: Mapping[str, Any], path: str) -> int | None:
    value = obj.get("turn")
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_COUNT:
        raise RunError(
            f"turn must be a whole number >= 0 (below 2**63), got {_short(value)}", f"{path}.turn"
        )
    return value


def _short(value: Any) -> str:
    """A value for an error line: long numbers by their size, not their digits."""
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) >= 10**20:
        return f"an integer of about {value.bit_length() * 3 // 10 + 1} digits"
    return repr(value)


_FLOAT_MAX = 1e308  # an int within this converts to float without overflow
_MAX_INT = MAX_COUNT


def _optional_int(obj: Mapping[str, Any], key: str, path: str) -> int | None:
    value = obj.get(key)
    if value is None:
        return None
    # NaN, infinity and integers beyond SQLite's 64 bits are refused here, not at insert.
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= _MAX_INT:
        raise RunError(
            f"{key} must be a number >= 0 (below 2**63), got {_short(value)}", f"{path}.{key}"
        )
    return int(value)


def _tool_call(raw: Any, path: str) -> list[str] | None:
    """The asks of one tool call: {"name", "arguments"}, or OpenAI's {"function": {...}}."""
    call = _object(raw, path)
    if isinstance(call.get("function"), dict):
        call, path = call["function"], f"{path}.function"
    name = _string(call, "name", path, required=True) or ""
    arguments = call.get("arguments", call.get("input"))
    if arguments is not None and not isinstance(arguments, dict | str):
        raise RunError(
            f"arguments must be an object or a JSON string, got {_type_name(arguments)}",
            f"{path}.arguments",
        )
    return ask_texts(name, arguments)


def _turn_asks(turn: Mapping[str, Any], path: str) -> list[str] | None:
    """What one turn put to the user, when the turn says (asks, tool_calls); else None."""
    if turn.get("asks") is None and turn.get("tool_calls") is None:
        return None
    asks: list[str] = []
    if turn.get("asks") is not None:
        for i, ask in enumerate(_list(turn["asks"], f"{path}.asks")):
            if not isinstance(ask, str):
                raise RunError(f"an ask is a string, got {_type_name(ask)}", f"{path}.asks[{i}]")
            asks.append(ask.strip())
    if turn.get("tool_calls") is not None:
        for i, call in enumerate(_list(turn["tool_calls"], f"{path}.tool_calls")):
            asks.extend(_tool_call(call, f"{path}.tool_calls[{i}]") or [])
    return asks


def _declared_asks(raw: Any, path: str) -> list[list[str] | None] | None:
    """Each turn's declared asks, or None when no turn declares any."""
    if not isinstance(raw, list):
        return None
    declared = [
        _turn_asks(item, f"{path}[{i}]") if isinstance(item, dict) else None
        for i, item in enumerate(raw)
    ]
    return declared if any(asks is not None for asks in declared) else None


def _turns(raw: Any, path: str) -> tuple[Turn, ...]:
    turns = []
    for i, item in enumerate(_list(raw, path)):
        where = f"{path}[{i}]"
        turn = _object(item, where)
        turns.append(
            Turn(
                prompt=_string(turn, "prompt", where) or "",
                response=_string(turn, "response", where) or "",
                token_count=_optional_int(turn, "token_count", where),
                latency_ms=_optional_int(turn, "latency_ms", where),
                timestamp=_string(turn, "timestamp", where),
            )
        )
    return tuple(turns)


def _questions(raw: Any, path: str, task: str | None) -> tuple[Question, ...]:
    questions = []
    for i, item in enumerate(_list(raw, path)):
        where = f"{path}[{i}]"
        question = _object(item, where)
        # An empty text is an ask without words (the user was still asked); absent is an error.
        text = _string(question, "text", where)
        if text is None:
            raise RunError("text is required", where)
        label = question.get("effort")
        if label is None:
            effort, source = classify_effort(text, task), Source.CLASSIFIER
        elif isinstance(label, str) and label.lower() in EFFORTS:
            effort, source = Effort(label.lower()), Source.LABEL
        else:
            raise RunError(
                f"effort must be one of {', '.join(EFFORTS)}, got {label!r}", f"{where}.effort"
            )
        questions.append(Question(text, effort, _turn_number(question, where), source))
    return tuple(questions)


def _violations(raw: Any, path: str) -> tuple[Violation, ...]:
    violations = []
    for i, item in enumerate(_list(raw, path)):
        where = f"{path}[{i}]"
        violation = _object(item, where)
        preference = _string(violation, "preference", where, required=True) or ""
        severity_raw = violation.get("severity", "error")
        if not isinstance(severity_raw, str) or severity_raw.lower() not in SEVERITIES:
            raise RunError(
                f"severity must be one of {', '.join(SEVERITIES)}, got {severity_raw!r}",
                f"{where}.severity",
            )
        penalty = None
        if violation.get("penalty") is not None:
            penalty = _number(violation["penalty"], f"{where}.penalty")
            if penalty < 0:
                raise RunError(
                    f"penalty is a magnitude and must be >= 0, got {penalty:g}", f"{where}.penalty"
                )
            if penalty > MAX_PENALTY:
                raise RunError(
                    f"penalty must be at most {MAX_PENALTY:g}, got {penalty:g}", f"{where}.penalty"
                )
        violations.append(
            Violation(
                preference,
                Severity(severity_raw.lower()),
                penalty,
                _turn_number(violation, where),
            )
        )
    return tuple(violations)


# Short responses whose questions are remembered: agents' stock replies come back run
# after run. Long ones (which seldom repeat) are not kept.
_RESPONSE_CACHE_SIZE = 4096
_CACHED_RESPONSE_CHARS = 1000


def _turn_questions(response: str) -> tuple[str, ...]:
    """A response's questions to the user: its tool-call asks if it calls tools, else its
    sentences ending in a question mark, thinking left out."""
    if len(response) <= _CACHED_RESPONSE_CHARS:
        return _short_turn_questions(response)
    return _questions_in(response)


def _questions_in(response: str) -> tuple[str, ...]:
    asks = inline_asks(response)
    return tuple(extract_questions(response) if asks is None else asks)


_short_turn_questions = lru_cache(maxsize=_RESPONSE_CACHE_SIZE)(_questions_in)


def questions_of_turns(
    turns: tuple[Turn, ...], task: str | None, declared: list[list[str] | None] | None = None
) -> tuple[Question, ...]:
    """The questions a trajectory's turns ask, classified: the declared asks when the turns
    give them, else the questions read from each response (thinking left out)."""
    if declared is not None:
        # The trajectory says what each turn asked: only those asks are questions.
        return tuple(
            new_question(text, classify_effort(text, task), number, Source.EXTRACTED)
            for number, asks in enumerate(declared, start=1)
            for text in asks or ()
        )
    return tuple(
        new_question(text, classify_effort(text, task), number, Source.EXTRACTED)
        for number, turn in enumerate(turns, start=1)
        for text in _turn_questions(turn.response)
    )


def _trajectory(raw: Any, path: str, task: str | None, preferences: tuple[str, ...]) -> Trajectory:
    obj = _object(raw, path)
    turns = _turns(obj.get("turns") or [], f"{path}.turns")
    if obj.get("questions") is None:
        declared = _declared_asks(obj.get("turns") or [], f"{path}.turns")
        questions = questions_of_turns(turns, task, declared)
    else:
        questions = _questions(obj["questions"], f"{path}.questions", task)
    unchecked: tuple[str, ...] = ()
    if obj.get("violations") is not None:
        violations = _violations(obj["violations"], f"{path}.violations")
    elif states_preferences(preferences):
        # The rule checkers decide what they can (a trajectory without turns asked nothing,
        # which answer_more and no_ask can judge); the rest stays unchecked.
        result = check_questions(preferences, [AskedQuestion(q.text, q.turn) for q in questions])
        violations = tuple(
            Violation(v.preference, Severity.ERROR, None, v.turn, Source.CHECKER)
            for v in result.violations
        )
        unchecked = result.unchecked
    else:
        violations = ()
    return Trajectory(turns, questions, violations, unchecked)


def _agent(raw: Any, path: str, task: str | None, preferences: tuple[str, ...]) -> Agent:
    obj = _object(raw, path)
    name = _string(obj, "name", path, required=True) or ""
    trajectory = obj.get("trajectory")
    failure = _failure(obj, path)
    technical = _unit(obj, "technical_score", path, required=True) or 0.0
    return Agent(
        name=name,
        technical=0.0 if failure is not None else technical,
        trajectory=None
        if trajectory is None
        else _trajectory(trajectory, f"{path}.trajectory", task, preferences),
        model=_string(obj, "model", path),
        relevance=_unit(obj, "relevance", path),
        confidence=_unit(obj, "confidence", path),
        output=_string(obj, "output", path),
        failure=failure,
    )


def _failure(obj: Mapping[str, Any], path: str) -> str | None:
    """An agent's optional `failure`: a reason (text), or true for an unnamed one."""
    value = obj.get("failure")
    if value is None or value is False:
        return None
    if value is True:
        return "failed"
    if isinstance(value, str) and value.strip():
        return value.strip()
    raise RunError(f"failure must be a reason (text) or true, got {value!r}", f"{path}.failure")


def _consensus(obj: Mapping[str, Any], path: str) -> str | None:
    """A run's optional `consensus` object, kept as canonical JSON text."""
    value = obj.get("consensus")
    if value is None:
        return None
    if not isinstance(value, dict):
        raise RunError(f"consensus must be an object, got {_type_name(value)}", f"{path}.consensus")
    try:
        return json.dumps(value, sort_keys=True, ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError) as error:
        raise RunError(f"consensus is not plain JSON ({error})", f"{path}.consensus") from None


def _checked_run(raw: Any, path: str) -> Run:
    """`run_from_dict` checking every value on the way, to name the first problem."""
    obj = _object(raw, path)
    task = _string(obj, "task", path)
    preferences_raw = obj.get("preferences") or []
    preferences = []
    for i, item in enumerate(_list(preferences_raw, f"{path}.preferences")):
        if not isinstance(item, str) or not item.strip():
            raise RunError(f"expected a preference name, got {item!r}", f"{path}.preferences[{i}]")
        preferences.append(item.strip())
    prefs = tuple(preferences)
    if "agents" not in obj:
        raise RunError("agents is required (a list of at least one agent)", path)
    agents_raw = _list(obj["agents"], f"{path}.agents")
    if not agents_raw:
        raise RunError("agents must hold at least one agent", f"{path}.agents")
    agents = tuple(
        _agent(item, f"{path}.agents[{i}]", task, prefs) for i, item in enumerate(agents_raw)
    )
    seen: set[str] = set()
    for i, agent in enumerate(agents):
        if agent.name in seen:
            raise RunError(f"duplicate agent name {agent.name!r}", f"{path}.agents[{i}].name")
        seen.add(agent.name)
    iterations = tuple(
        _bounded(
            value,
            f"{path}.iterations[{i}]",
            -MAX_ITERATION_SCORE,
            MAX_ITERATION_SCORE,
            "an iteration's score",
        )
        for i, value in enumerate(_list(obj.get("iterations") or [], f"{path}.iterations"))
    )
    run_id = obj.get("id")
    if run_id is None:
        run_id = content_id(obj)
    elif isinstance(run_id, int) and not isinstance(run_id, bool):
        run_id = str(run_id)
    elif not isinstance(run_id, str) or not run_id.strip():
        raise RunError(f"id must be a non-empty string, got {run_id!r}", f"{path}.id")
    for key in ("selected_agent", "preferred_agent"):
        named = _string(obj, key, path)
        if named is not None and named not in seen:
            raise RunError(f"{named!r} is not one of the run's agents", f"{path}.{key}")
    preferred = _string(obj, "preferred_agent", path)
    for agent in agents:
        if agent.name == preferred and agent.failure is not None:
            raise RunError(
                f"{preferred!r} failed ({agent.failure}); a failed agent cannot be the"
                " preferred one",
                f"{path}.preferred_agent",
            )
    return Run(
        id=run_id,
        agents=agents,
        spec_id=_string(obj, "spec_id", path),
        stage=_string(obj, "stage", path),
        task=task,
        created_at=_string(obj, "created_at", path),
        preferences=prefs,
        selected_agent=_string(obj, "selected_agent", path),
        preferred_agent=_string(obj, "preferred_agent", path),
        iterations=iterations,
        consensus=_consensus(obj, path),
    )
