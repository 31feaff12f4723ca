"""One spec-kit agent output: what the agent was asked for, and what its answer gives.

spec-kit asks each agent for a JSON artifact whose fields depend on the stage and the
agent (its prompts, kept here as data in speckit_schemas.json). An output is decoded
(JSON, possibly fenced, or text), and from it come the agent's technical score (the
share of asked fields it filled in), a failure (an error, an empty or echoed-prompt
answer) and the model that wrote it. Reading the database and grouping outputs into
stage runs is `speckit`'s part.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

# --- the per-agent schemas ----------------------------------------------------------------


@cache
def schemas() -> Mapping[str, Any]:
    """What each agent is asked for at each stage (spec-kit's prompts.json, as data)."""
    text = resources.files(__package__).joinpath("speckit_schemas.json").read_text("utf-8")
    value: Mapping[str, Any] = json.loads(text)
    return value


#: Fields spec-kit's own check requires of a stage's artifact (top-level keys only). Only
#: an agent that is asked for one of them is held to it.
STAGE_REQUIRED: Mapping[str, tuple[str, ...]] = {
    "plan": ("work_breakdown", "acceptance_mapping"),
    "tasks": ("tasks",),
    "implement": ("implementation",),
    "validate": ("test_strategy",),
    "audit": ("audit_verdict",),
    "unlock": ("unlock_decision",),
    "clarify": ("issues",),
    "analyze": ("issues",),
    "checklist": ("requirements",),
}


def canonical_stage(stage: str | None) -> str | None:
    """ppp-tui's name of a spec-kit stage: `spec-plan` -> `plan`, `speckit.specify` ->
    `specify`, `review` -> `audit`; other names are kept as they are (trimmed)."""
    if stage is None:
        return None
    name = stage.strip()
    lowered = name.lower()
    for prefix in ("speckit.", "spec-"):
        if lowered.startswith(prefix):
            lowered = lowered[len(prefix) :]
            break
    if lowered in ("review",):
        return "audit"
    if lowered in STAGE_REQUIRED or lowered == "specify":
        return lowered
    return name or None


def _schema_stage(stage: str | None, raw_stage: str | None) -> Mapping[str, Any] | None:
    stages = schemas()["stages"]
    for key in (raw_stage, f"spec-{stage}" if stage else None):
        if key and key in stages:
            found: Mapping[str, Any] = stages[key]
            return found
    return None


def _normal(name: str) -> str:
    return name.strip().lower().replace("-", "_").replace(" ", "_")


def asked_fields(
    stage: str | None, agent: str | None, raw_stage: str | None = None
) -> list[list[str]]:
    """The field lists `agent` may have been asked for at `stage`: its own when spec-kit's
    prompts name it (exactly, or as a prefix: `gemini_flash` -> `gemini`), else every
    agent's list at that stage (its best match is used). Empty: the stage has none."""
    entry = _schema_stage(stage, raw_stage)
    if entry is None:
        return []
    agents: Mapping[str, list[str]] = entry["agents"]
    if agent:
        name = _normal(agent)
        if name in agents:
            return [agents[name]]
        for key in sorted(agents, key=len, reverse=True):
            if name.startswith(key):
                return [agents[key]]
    return list(agents.values())


# --- decoding an output -------------------------------------------------------------------

_FENCED_JSON = re.compile(r"^[ \t]*```[ \t]*(?:json)?[ \t]*\n(.*?)\n[ \t]*```[ \t]*$", re.M | re.S)
# Placeholders of spec-kit's prompt templates: an output that still holds them echoed
# the prompt instead of answering it.
_TEMPLATE = re.compile(
    r"\$\{(?:SPEC_ID|MODEL_ID|MODEL_RELEASE|REASONING_MODE|PROMPT_VERSION|CONTEXT|TEMPLATE:[a-z]+)\}"
    r"|Return the JSON as your final response"
)
_SCHEMA_TYPE = re.compile(r":\s*\[?\s*(?:string|number)\s*[\],}]")


@dataclass(frozen=True)
class Decoded:
    """An agent output: its JSON object (if any) and the text addressed to the user."""

    obj: dict[str, Any] | None
    addressed: str


def decode(content: str) -> Decoded:
    """Parse an output: a JSON document, a ```json fenced object in prose, or plain text.

    The text addressed to the user is the prose around the JSON; the JSON itself is the
    artifact spec-kit asked for, for its own pipeline (a `questions` field there is
    planning notes, a "?" in a diff is code), so none of its strings is.
    """
    try:
        value = json.loads(content)
    except (json.JSONDecodeError, RecursionError):
        value = None
    else:
        if isinstance(value, dict):
            return Decoded(value, "")
        if isinstance(value, list):
            return Decoded(None, "")
        if isinstance(value, str):
            return Decoded(None, value)
        return Decoded(None, content)
    for match in _FENCED_JSON.finditer(content):
        try:
            fenced = json.loads(match.group(1))
        except (json.JSONDecodeError, RecursionError):
            continue
        if isinstance(fenced, dict):
            text = "\n\n".join(
                part.strip()
                for part in (content[: match.start()], content[match.end() :])
                if part.strip()
            )
            return Decoded(fenced, text)
    return Decoded(None, content)


def _filled(value: Any) -> float:
    """How much a field's value counts: 1 filled; 0.5 an empty list or object (an answer
    of "none", which spec-kit's prompts allow); 0 null or blank text."""
    if value is None:
        return 0.0
    if isinstance(value, str):
        return 1.0 if value.strip() else 0.0
    if isinstance(value, list | dict):
        return 1.0 if value else 0.5
    return 1.0  # numbers and booleans, including 0 and false


def _lookup(obj: Mapping[str, Any], path: str) -> tuple[bool, Any]:
    """(present, value) of `key` or `parent.key` in a JSON object."""
    value: Any = obj
    for part in path.split("."):
        if not isinstance(value, dict) or part not in value:
            return False, None
        value = value[part]
    return True, value


def _mentioned(path: str, text: str) -> bool:
    words = [re.escape(word) for word in path.rsplit(".", 1)[-1].split("_") if word]
    pattern = r"(?<![A-Za-z0-9])" + r"[\s_-]+".join(words) + r"(?![A-Za-z0-9])"
    return re.search(pattern, text, re.IGNORECASE) is not None


def failure_of(content: str, decoded: Decoded | None = None) -> str | None:
    """Why an output is a failure rather than work, or None.

    Blank output; an error object (`{"error": ...}`); spec-kit's stub agent
    (`{"agent": "stub", ...}`); an echo of the prompt template (its `${...}`
    placeholders, its closing instruction, or the schema's `string` / `number` types
    where values belong).
    """
    if not content.strip():
        return "empty output"
    decoded = decoded or decode(content)
    obj = decoded.obj
    if obj is not None:
        error = obj.get("error")
        if error is not None and error is not False and error != "":
            detail = error if isinstance(error, str) else json.dumps(error)
            return f"error: {detail}"[:200]
        if str(obj.get("agent", "")).strip().lower() == "stub":
            return "stub agent"
    if _TEMPLATE.search(content) or _SCHEMA_TYPE.search(content):
        return "echoed prompt template"
    return None


def technical_from_content(
    content: str, stage: str | None, agent: str | None = None, raw_stage: str | None = None
) -> float:
    """The technical score of one spec-kit agent output, in [0, 1].

    - A failure (`failure_of`) scores 0.
    - The fields: those spec-kit's prompt asked this agent for at this stage (without the
      envelope: stage, agent, model, ...); for an agent the prompts do not name, the
      stage's list it matches best.
    - JSON output: completeness = the mean over those fields of 1 if filled, 0.5 if an
      empty list or object, 0 if missing, null or blank text. If the agent was asked for a
      field spec-kit's own check requires at that stage and it is missing, the score is
      halved.
    - Prose (no JSON object): half the fraction of the fields whose names it mentions;
      prose can never beat a JSON answer that fills its fields.
    - A stage with no known fields: the best field of a JSON object other than the
      envelope (1 filled, 0.5 empty list or object), 0.5 for prose.
    """
    decoded = decode(content)
    if failure_of(content, decoded) is not None:
        return 0.0
    return _technical(decoded, stage, agent, raw_stage)


_ENVELOPE = frozenset(
    {"stage", "prompt_version", "agent", "model", "model_release", "reasoning_mode", "spec_id"}
)


def _technical(
    decoded: Decoded, stage: str | None, agent: str | None, raw_stage: str | None
) -> float:
    lists = asked_fields(stage, agent, raw_stage)
    obj = decoded.obj
    if not lists:
        if obj is None:
            return 0.5 if decoded.addressed.strip() else 0.0
        return max((_filled(v) for k, v in obj.items() if k not in _ENVELOPE), default=0.0)
    required = set(STAGE_REQUIRED.get(stage or "", ()))
    best = 0.0
    for fields in lists:
        if obj is None:
            text = decoded.addressed
            score = 0.5 * sum(1 for f in fields if _mentioned(f, text)) / len(fields)
        else:
            found = {f: _lookup(obj, f) for f in fields}
            score = sum(_filled(v) for present, v in found.values() if present) / len(fields)
            held = [f for f in fields if f.rsplit(".", 1)[-1] in required]
            if any(not found[f][0] for f in held):
                score *= 0.5
        best = max(best, score)
    return best


def model_of(model_version: str | None, obj: Mapping[str, Any] | None) -> str | None:
    """The model: the `model_version` column, else the content's `model` (spec-kit leaves
    the column NULL and writes the model into the output)."""
    if model_version and model_version.strip():
        return model_version.strip()
    if obj is not None:
        model = obj.get("model")
        if isinstance(model, str) and model.strip() and "${" not in model:
            return model.strip()
    return None
