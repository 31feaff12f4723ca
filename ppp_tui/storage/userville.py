"""Reading the PPP paper's UserVille rollouts (`ppp-tui import --format userville`).

A rollout is one agent's session on one task, as the paper's code holds it when it scores
the session: the chat `messages` (system, the task prompt, then the agent's responses and
what came back), the task's `extra_info` (its `preference` and whether the prompt `is_vague`),
and the `stats` the simulated user's tags added up. The reader takes them one rollout per
line (JSON Lines) or as a JSON list, each with the `model` that produced it.

What becomes of a rollout (docs/userville.md has the whole mapping):

- rollouts of the same task (instance, preference, vague or precise) are one run, with one
  agent per model;
- each assistant message is a turn; its first tool call, if it is `ask_question`, is the
  one question that turn put to the user (the paper's environment runs only the first);
- the simulated user's reply labels the question: its `[Cost N]` tag is the effort (the
  levels of the coding or the search environment), its `[Reward 0]` tag a violation of the
  task's preference, for the preferences the simulated user judges;
- the preferences the paper's code computes from the whole session (no_ask, only_begin,
  ask_many, answer_more) are left to ppp-tui's rule checkers, which follow that code;
- the technical score is the task's own score before the interaction rewards
  (`stats.raw_score`, else the second number of `score`), kept within [0, 1].
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterator, Mapping
from typing import Any

from ..core.errors import PPPError
from ..core.extraction import ask_texts
from .files import Record, RecordFile, json_lines, read_text

# The environments' effort levels (the simulated user's cost tag) as the paper's efforts:
# low = answered from the precise task, medium = the user could not or would not answer,
# high = the user had to give more than the precise task.
GYM_EFFORT = {1: "low", 2: "high", 3: "medium", 4: "high", 5: "high"}
SEARCH_EFFORT = {1: "low", 2: "medium", 3: "high"}
# The preferences the paper's code computes from the whole session, not from the tags.
COMPUTED = frozenset({"no_ask", "only_begin", "ask_many", "answer_more"})
# Preferences without a reward in the paper's code: nothing to violate.
UNJUDGED = frozenset({"no_preference", "professional"})

_COST_TAG = re.compile(r"\[\s*(?:Cost|Level)\s*(\d)\s*\]", re.IGNORECASE)
_FUNCTION = re.compile(r"<function=([^>\s]+)>(.*?)(?:</function>|\Z)", re.DOTALL)
_PARAMETER = re.compile(r"<parameter=([^>\s]+)>(.*?)(?:</parameter>|\Z)", re.DOTALL)
_TOOL_CALL = re.compile(r"<tool_call>\s*(.*?)\s*(?:</tool_call>|\Z)", re.DOTALL)
_SEARCH_ENVS = frozenset({"search", "browsecomp", "deep_research", "research"})


class _Bad(Exception):
    """A rollout the reader cannot use; the message says why."""


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, list):  # content parts: [{"type": "text", "text": ...}]
        return "".join(
            part.get("text", "") if isinstance(part, dict) else str(part) for part in value
        )
    return "" if value is None else str(value)


def _first_call(message: Mapping[str, Any]) -> tuple[str, Any] | None:
    """The first tool call of an assistant message: (name, arguments), or None."""
    calls = message.get("tool_calls")
    if isinstance(calls, list) and calls:
        call = calls[0]
        if isinstance(call, dict):
            function = call.get("function", call)
            if isinstance(function, dict) and isinstance(function.get("name"), str):
                return function["name"], function.get("arguments", {})
    content = _text(message.get("content"))
    # The paper's parser reads the text after the last <[...]> marker.
    content = re.split(r"<\[[^\]]+\]>", content)[-1]
    positions = []
    match = _FUNCTION.search(content)
    if match:
        arguments = {k.strip(): v.strip() for k, v in _PARAMETER.findall(match.group(2))}
        positions.append((match.start(), match.group(1), arguments))
    json_call = _TOOL_CALL.search(content)
    if json_call:
        body = re.sub(r"\A```(?:json)?\s*|\s*```\Z", "", json_call.group(1))
        try:
            call = json.loads(body)
        except ValueError:
            call = None
        if isinstance(call, dict) and isinstance(call.get("name"), str):
            positions.append((json_call.start(), call["name"], call.get("arguments", {})))
    if not positions:
        return None
    _, name, arguments = min(positions, key=lambda item: item[0])
    return name, arguments


def _preference(extra: Mapping[str, Any]) -> str | None:
    """The task's preference name, read as the paper's environment reads it."""
    preference = extra.get("preference")
    if isinstance(preference, str):
        return preference.strip() or None
    if not isinstance(preference, dict):
        return None
    named = preference.get("preference_name")
    if isinstance(named, str) and named.strip():
        return named.strip()
    for key, value in preference.items():
        if value is not None and key != "preference_name":
            return str(key)
    return None


def _effort_levels(rollout: Mapping[str, Any], extra: Mapping[str, Any]) -> dict[int, str]:
    env = rollout.get("env") or extra.get("env") or rollout.get("ability") or extra.get("ability")
    if isinstance(env, str) and env.strip().lower() in _SEARCH_ENVS:
        return SEARCH_EFFORT
    return GYM_EFFORT


def _task_key(rollout: Mapping[str, Any], extra: Mapping[str, Any], prompt: str) -> str:
    for source in (rollout, extra):
        for key in ("instance_id", "task_id", "uid", "index"):
            value = source.get(key)
            if isinstance(value, str | int) and not isinstance(value, bool) and str(value):
                return str(value)
    return "task-" + hashlib.sha256(prompt.encode()).hexdigest()[:12]


def _unit(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float) or value != value:
        return None
    return min(max(float(value), 0.0), 1.0)


def _technical(rollout: Mapping[str, Any]) -> float:
    stats = rollout.get("stats")
    if isinstance(stats, dict) and _unit(stats.get("raw_score")) is not None:
        return _unit(stats["raw_score"]) or 0.0
    score = rollout.get("score")
    if isinstance(score, list | tuple) and len(score) >= 2 and _unit(score[1]) is not None:
        return _unit(score[1]) or 0.0
    if _unit(score) is not None:
        return _unit(score) or 0.0
    return 0.0


def _agent(rollout: Mapping[str, Any], preference: str | None) -> dict[str, Any]:
    messages = rollout.get("messages")
    if not isinstance(messages, list) or not all(isinstance(m, dict) for m in messages):
        raise _Bad("messages must be a list of {role, content} objects")
    extra = rollout.get("extra_info") or {}
    levels = _effort_levels(rollout, extra)
    judged = preference is not None and preference not in COMPUTED | UNJUDGED
    turns: list[dict[str, Any]] = []
    questions: list[dict[str, Any]] = []
    violations: list[dict[str, Any]] = []
    before = ""
    for index, message in enumerate(messages):
        role = message.get("role")
        if role != "assistant":
            before = _text(message.get("content"))
            continue
        number = len(turns) + 1
        response = _text(message.get("content"))
        turns.append({"prompt": before, "response": response})
        call = _first_call(message)
        asks = ask_texts(call[0], call[1]) if call is not None else None
        if asks is None:
            continue
        reply = next(
            (
                _text(m.get("content"))
                for m in messages[index + 1 :]
                if m.get("role") in ("user", "tool", "observation")
            ),
            "",
        )
        tag = _COST_TAG.search(reply)
        effort = levels.get(int(tag.group(1))) if tag else None
        # The paper's tool asks one query per call; an AskUserQuestion call may hold more.
        for text in asks or [""]:
            question: dict[str, Any] = {"text": text, "turn": number}
            if effort is not None:
                question["effort"] = effort
            questions.append(question)
        if judged and "[Reward 0]" in reply:
            violations.append({"preference": preference, "turn": number})
    trajectory: dict[str, Any] = {"turns": turns, "questions": questions}
    if preference is None or preference in UNJUDGED or judged:
        trajectory["violations"] = violations
    return trajectory


def _prompt(messages: Any) -> str:
    if isinstance(messages, list):
        for message in messages:
            if isinstance(message, dict) and message.get("role") == "user":
                return _text(message.get("content"))
    return ""


def _model(rollout: Mapping[str, Any]) -> str:
    for key in ("model", "model_name", "agent", "policy"):
        value = rollout.get(key)
        if isinstance(value, str) and value.strip():
            return value.strip()
    return "agent"


def _rollouts(source: str, text: str) -> Iterator[tuple[str, Any]]:
    """(where, decoded rollout) for a JSON list, one JSON object, or JSON Lines."""
    stripped = text.lstrip()
    if stripped.startswith("["):
        try:
            items = json.loads(text)
        except json.JSONDecodeError as error:
            raise PPPError(
                f"{source}: invalid JSON: {error.msg} (line {error.lineno}, column {error.colno})"
            ) from None
        for i, item in enumerate(items):
            yield f"{source}: $[{i}]", item
        return
    for number, line in enumerate(json_lines(text), start=1):
        if not line.strip():
            continue
        try:
            yield f"{source}:{number}", json.loads(line)
        except json.JSONDecodeError as error:
            if number == 1 and stripped.startswith("{"):
                try:  # one pretty-printed rollout
                    yield f"{source}: $", json.loads(text)
                    return
                except json.JSONDecodeError:
                    pass
            raise PPPError(
                f"{source}:{number}: invalid JSON: {error.msg} (column {error.colno})"
            ) from None


def runs_from_rollouts(source: str, text: str) -> list[Record]:
    """Group the rollouts of one file into import-format runs (one per task)."""
    runs: dict[tuple[str, str | None, bool], dict[str, Any]] = {}
    for where, rollout in _rollouts(source, text):
        if not isinstance(rollout, dict):
            raise PPPError(f"{where}: a rollout is a JSON object")
        extra = rollout.get("extra_info") or {}
        if not isinstance(extra, dict):
            raise PPPError(f"{where}: extra_info must be an object")
        preference = _preference(extra)
        vague = extra.get("is_vague", rollout.get("is_vague", True)) is not False
        prompt = _prompt(rollout.get("messages"))
        key = (_task_key(rollout, extra, prompt), preference, vague)
        try:
            trajectory = _agent(rollout, preference)
        except _Bad as error:
            raise PPPError(f"{where}: {error}") from None
        run = runs.get(key)
        if run is None:
            digest = hashlib.sha256(json.dumps(key).encode()).hexdigest()[:12]
            run = runs[key] = {
                "id": f"userville-{key[0]}-{digest}",
                "spec_id": key[0],
                "stage": "vague" if vague else "precise",
                "task": prompt,
                "preferences": [preference] if preference else [],
                "agents": [],
            }
        names = {agent["name"] for agent in run["agents"]}
        name = base = _model(rollout)
        copy = 1
        while name in names:  # the same model sampled twice on the task
            copy += 1
            name = f"{base}#{copy}"
        run["agents"].append(
            {
                "name": name,
                "model": base,
                "technical_score": _technical(rollout),
                "trajectory": trajectory,
            }
        )
    return [Record(source, None, f"$[{i}]", run) for i, run in enumerate(runs.values())]


def open_userville(name: str) -> RecordFile:
    """The runs of one rollout file (or "-" for standard input)."""
    source, text = read_text(name)
    records = runs_from_rollouts(source, text)
    return RecordFile(len(records), iter(records))


def looks_like_userville(text: str) -> bool:
    """Whether a file's first rollout looks like the paper's (messages and extra_info)."""
    head = text.lstrip()[:200_000]
    return '"messages"' in head and '"extra_info"' in head and '"agents"' not in head
