"""Reading the consensus database of the spec-kit coding tool (SPEC 1, `--format spec-kit`).

spec-kit keeps its multi-agent consensus runs in SQLite (SPEC-KIT-072 / SPEC-945B schema):

    consensus_runs(id, spec_id, stage, run_timestamp, consensus_ok, degraded, synthesis_json)
    agent_outputs(id, run_id, agent_name, model_version, content, output_timestamp)

`read_speckit` opens such a database read-only and yields one `Record` per consensus run
(`open_speckit` also counts them first, for a progress bar), whose raw dict is a run of the
import format (SPEC 1):

- id `spec-kit-<consensus_runs.id>`, so importing the same database twice adds nothing;
- spec_id; stage, with spec-kit's command names folded onto the stage names ppp-tui
  knows (`spec-plan` -> `plan`, `review` / `spec-review` -> `audit`; others kept as they are);
- created_at = run_timestamp as ISO 8601 UTC (spec-kit writes unix seconds);
- task and selected_agent from synthesis_json when it names them;
- one agent per agent output: name = agent_name, model = model_version, output = content,
  technical_score = `technical_from_content(content, stage)`, and a one-turn trajectory
  whose response is the content's prose, so the core extracts and classifies its questions.

The technical score follows seed 000 (SPEC-PPP-003, `calculate_technical_score`):
`0.5 * has_required_fields + 0.5 * completeness`. The seed leaves both terms to spec-kit;
the required fields are those of spec-kit's own `validate_required_fields` (consensus.rs),
see `technical_from_content` for the exact rule.
"""

from __future__ import annotations

import json
import math
import re
import sqlite3
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ..core.errors import PPPError
from .files import Record, RecordFile

Warn = Callable[[str], None]

# --- the technical score (seed 000) -------------------------------------------------------

#: Fields every spec-kit agent output must have (spec-kit's `validate_required_fields`).
COMMON_FIELDS: tuple[str, ...] = ("stage", "agent")

#: Stage-specific required fields, exactly as spec-kit's `validate_required_fields` has them.
STAGE_FIELDS: Mapping[str, tuple[str, ...]] = {
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

# spec-kit's `parse_consensus_stage`: the stage names and aliases it accepts.
_STAGE_ALIASES: Mapping[str, str] = {
    **{name: name for name in STAGE_FIELDS},
    **{f"spec-{name}": name for name in STAGE_FIELDS},
    "review": "audit",
    "spec-review": "audit",
}

# Envelope fields of a spec-kit output: metadata, not prose a user would read.
_ENVELOPE = frozenset(
    {
        "stage",
        "stage_name",
        "agent",
        "model",
        "model_release",
        "model_version",
        "reasoning_mode",
        "prompt_version",
        "promptVersion",
        "spec_id",
        "specId",
    }
)

_FENCED_JSON = re.compile(r"^[ \t]*```[ \t]*(?:json)?[ \t]*\n(.*?)\n[ \t]*```[ \t]*$", re.M | re.S)


def canonical_stage(stage: str | None) -> str | None:
    """The spec-kit stage a stage name stands for (`spec-plan` -> `plan`), or None if unknown."""
    if stage is None:
        return None
    return _STAGE_ALIASES.get(stage.strip().lower())


def required_fields(stage: str | None) -> tuple[str, ...]:
    """The fields spec-kit requires of an agent output at this stage: common + stage-specific."""
    canonical = canonical_stage(stage)
    return COMMON_FIELDS + (STAGE_FIELDS[canonical] if canonical else ())


@dataclass(frozen=True)
class _Content:
    """An agent output, decoded: its JSON object (if any) and its prose for question extraction."""

    obj: dict[str, Any] | None
    text: str


def _text_fields(value: Any, out: list[str]) -> None:
    """Every string in a JSON value, depth first, except the envelope's metadata."""
    if isinstance(value, str):
        if value.strip():
            out.append(value.strip())
    elif isinstance(value, dict):
        for key, item in value.items():
            if key not in _ENVELOPE:
                _text_fields(item, out)
    elif isinstance(value, list):
        for item in value:
            _text_fields(item, out)


def _prose(value: Any) -> str:
    parts: list[str] = []
    _text_fields(value, parts)
    # One block per string, so every question stays a sentence of its own.
    return "\n\n".join(parts)


def _decode(content: str) -> _Content:
    """Parse an output: a JSON document, a ```json fenced object in prose, or plain text."""
    try:
        value = json.loads(content)
    except (json.JSONDecodeError, RecursionError):
        value = None
    else:
        if isinstance(value, dict):
            return _Content(value, _prose(value))
        if isinstance(value, list):
            return _Content(None, _prose(value))
        if isinstance(value, str):
            return _Content(None, value)
        return _Content(None, content)
    for match in _FENCED_JSON.finditer(content):
        try:
            fenced = json.loads(match.group(1))
        except (json.JSONDecodeError, RecursionError):
            continue
        if isinstance(fenced, dict):
            text = "\n\n".join(
                part.strip()
                for part in (content[: match.start()], _prose(fenced), content[match.end() :])
                if part.strip()
            )
            return _Content(fenced, text)
    return _Content(None, content)


def _filled(value: Any) -> bool:
    if value is None:
        return False
    if isinstance(value, str):
        return bool(value.strip())
    if isinstance(value, list | dict):
        return bool(value)
    return True  # numbers and booleans, including 0 and false


def _lookup(obj: Mapping[str, Any], field: str) -> tuple[bool, Any]:
    """(present, value) of a field at the top level or one object down (`final_plan.risks`)."""
    if field in obj:
        return True, obj[field]
    for value in obj.values():
        if isinstance(value, dict) and field in value:
            return True, value[field]
    return False, None


def _mentioned(field: str, text: str) -> bool:
    words = [re.escape(word) for word in field.split("_") if word]
    pattern = r"(?<![A-Za-z0-9])" + r"[\s_-]+".join(words) + r"(?![A-Za-z0-9])"
    return re.search(pattern, text, re.IGNORECASE) is not None


def _score(obj: dict[str, Any] | None, text: str, stage: str | None) -> float:
    if obj is not None:
        fields = required_fields(stage)
        found = [_lookup(obj, field) for field in fields]
        has_required = all(present for present, _ in found)
        completeness = sum(1 for present, v in found if present and _filled(v)) / len(fields)
    else:
        has_required = False
        canonical = canonical_stage(stage)
        specific = STAGE_FIELDS[canonical] if canonical else ()
        if not text.strip():
            completeness = 0.0
        elif specific:
            completeness = sum(1 for field in specific if _mentioned(field, text)) / len(specific)
        else:
            completeness = 1.0
    return 0.5 * float(has_required) + 0.5 * completeness


def technical_from_content(content: str, stage: str | None) -> float:
    """The technical score of one spec-kit agent output, in [0, 1] (seed 000).

    `technical = 0.5 * has_required_fields + 0.5 * completeness`, where, for the output's
    stage (a spec-kit stage name or alias: `plan`, `spec-plan`, `review` for audit, ...):

    - required fields = `stage` and `agent`, plus the stage's own, exactly as spec-kit's
      `validate_required_fields`: plan `work_breakdown` and `acceptance_mapping`; tasks
      `tasks`; implement `implementation`; validate `test_strategy`; audit `audit_verdict`;
      unlock `unlock_decision`; clarify and analyze `issues`; checklist `requirements`.
      Another stage (or none) requires only `stage` and `agent`.
    - The content is JSON when it parses as a JSON object, or holds one in a ``` or ```json
      fenced block (the first such block that parses). A field is present when it is a key
      of that object or of an object directly inside it (spec-kit's aggregator nests its
      plan under `final_plan`).
    - has_required_fields = 1 if every required field is present (even if empty), else 0,
      as in spec-kit, which only checks that the keys exist.
    - completeness = the fraction of required fields that are present and filled: not null,
      not blank text, not an empty list or object (0, false and other scalars count).

    Content that is not a JSON object cannot have fields: has_required_fields = 0, and
    completeness is what prose lets one judge: the fraction of the stage's own required
    fields whose names it mentions, as whole words in any case with the name's words joined
    by spaces, `_` or `-` ("Work breakdown", "work-breakdown", "work_breakdown"); or, for a
    stage without fields of its own, 1 if the text is not blank. So prose scores at most
    0.5, below any output that has all its required fields. Blank content scores 0.
    """
    decoded = _decode(content)
    return _score(decoded.obj, decoded.text, stage)


# --- timestamps ---------------------------------------------------------------------------

# Unix times above this are taken as milliseconds (it is the year 5138 in seconds).
_MILLISECONDS = 1e11


def _timestamp(value: Any) -> tuple[str | None, float]:
    """(ISO 8601 text, sort key) of a spec-kit timestamp; unix numbers become UTC times.

    A text that is a number is read as one; another text is parsed as ISO 8601 (a naive
    time is UTC, as SQLite's datetime() writes it) or, failing that, kept as it is.
    """
    if value is None:
        return None, -math.inf
    if isinstance(value, bytes):
        value = value.decode("utf-8", "replace")
    if isinstance(value, str):
        text = value.strip()
        try:
            value = float(text)
        except ValueError:
            try:
                moment = datetime.fromisoformat(text)
            except ValueError:
                return text or None, -math.inf
            if moment.tzinfo is None:
                moment = moment.replace(tzinfo=UTC)
            return _iso(moment), moment.timestamp()
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return str(value), -math.inf
    seconds = value / 1000 if abs(value) >= _MILLISECONDS else float(value)
    try:
        moment = datetime.fromtimestamp(seconds, UTC)
    except (OverflowError, OSError, ValueError):
        return str(value), -math.inf
    return _iso(moment), seconds


def _iso(moment: datetime) -> str:
    moment = moment.astimezone(UTC)
    spec = "milliseconds" if moment.microsecond else "seconds"
    return moment.isoformat(timespec=spec).replace("+00:00", "Z")


# --- the database -------------------------------------------------------------------------

_RUN_COLUMNS = ("id", "spec_id", "stage", "run_timestamp", "synthesis_json")
_OUTPUT_COLUMNS = ("id", "run_id", "agent_name", "model_version", "content", "output_timestamp")

#: synthesis_json keys read as the run's task and as the agent the consensus chose, in order.
TASK_KEYS: tuple[str, ...] = ("task", "title", "summary")
SELECTED_KEYS: tuple[str, ...] = ("selected_agent", "chosen_agent", "best_agent", "winner")

DEFAULT_BATCH = 200


def _connect(path: Path, source: str) -> sqlite3.Connection:
    if not path.exists():
        raise PPPError(f"{source}: no such file")
    if path.is_dir():
        raise PPPError(f"{source}: is a directory, not a spec-kit consensus database")
    try:
        conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
    except sqlite3.Error as error:
        raise PPPError(f"{source}: cannot open the database ({error})") from None
    try:
        _check_schema(conn, source)
    except BaseException:
        conn.close()
        raise
    return conn


def _check_schema(conn: sqlite3.Connection, source: str) -> None:
    try:
        tables = {
            str(name).lower()
            for (name,) in conn.execute(
                "SELECT name FROM sqlite_master WHERE type IN ('table', 'view')"
            )
        }
    except sqlite3.DatabaseError as error:
        if "not a database" in str(error):
            raise PPPError(f"{source}: not a SQLite database") from None
        raise PPPError(f"{source}: cannot read the database ({error})") from None
    for table, needed in (("consensus_runs", _RUN_COLUMNS), ("agent_outputs", _OUTPUT_COLUMNS)):
        if table not in tables:
            raise PPPError(f"{source}: not a spec-kit consensus database: no table {table}")
        columns = {str(row[1]).lower() for row in conn.execute(f"PRAGMA table_info({table})")}
        missing = [column for column in needed if column not in columns]
        if missing:
            plural = "s" if len(missing) > 1 else ""
            raise PPPError(
                f"{source}: not a spec-kit consensus database: "
                f"table {table} has no column{plural} {', '.join(missing)}"
            )


def _text(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return str(value)


def _synthesis(raw: Any, where: str, warn: Warn) -> Mapping[str, Any]:
    text = _text(raw)
    if text is None or not text.strip():
        return {}
    try:
        value = json.loads(text)
    except json.JSONDecodeError as error:
        warn(f"{where}: synthesis_json is not valid JSON ({error}); ignored")
        return {}
    if not isinstance(value, dict):
        warn(f"{where}: synthesis_json is not a JSON object; ignored")
        return {}
    return value


def _first_text(obj: Mapping[str, Any], keys: Sequence[str]) -> str | None:
    for key in keys:
        value = obj.get(key)
        if isinstance(value, str) and value.strip():
            return value.strip()
    return None


@dataclass(frozen=True)
class _Output:
    id: Any
    name: str | None
    model: str | None
    content: str
    timestamp: str | None
    order: float


def _agents(outputs: Sequence[_Output], stage: str | None, where: str, warn: Warn) -> list[Any]:
    """One agent per name: the latest output (by output_timestamp, then id) wins."""
    latest: dict[str | None, _Output] = {}
    counts: dict[str | None, int] = {}
    for output in outputs:
        counts[output.name] = counts.get(output.name, 0) + 1
        kept = latest.get(output.name)
        if kept is None or (output.order, _id_key(output.id)) >= (kept.order, _id_key(kept.id)):
            latest[output.name] = output
    agents = []
    for output in sorted(latest.values(), key=lambda o: (o.order, _id_key(o.id))):
        if counts[output.name] > 1:
            warn(
                f"{where}: agent {output.name!r} has {counts[output.name]} outputs; "
                f"kept the latest (agent_outputs id {output.id})"
            )
        decoded = _decode(output.content)
        agent: dict[str, Any] = {
            "name": output.name,
            "technical_score": _score(decoded.obj, decoded.text, stage),
            "output": output.content,
            "trajectory": {"turns": [{"response": decoded.text, "timestamp": output.timestamp}]},
        }
        if output.model is not None:
            agent["model"] = output.model
        agents.append(agent)
    return agents


def _id_key(value: Any) -> tuple[int, float, str]:
    if isinstance(value, int | float) and not isinstance(value, bool):
        return (0, float(value), "")
    return (1, 0.0, str(value))


def _run(row: sqlite3.Row, outputs: Sequence[_Output], source: str, warn: Warn) -> Record | None:
    run_id = row["id"]
    path = f"consensus_runs[id={run_id}]"
    where = f"{source}: {path}"
    if not outputs:
        warn(f"{where}: no agent outputs; run skipped")
        return None
    stage_raw = _text(row["stage"])
    stage = canonical_stage(stage_raw) or (stage_raw.strip() if stage_raw else None) or None
    synthesis = _synthesis(row["synthesis_json"], where, warn)
    agents = _agents(outputs, stage, where, warn)
    raw: dict[str, Any] = {
        "id": f"spec-kit-{run_id}",
        "spec_id": _text(row["spec_id"]),
        "stage": stage,
        "task": _first_text(synthesis, TASK_KEYS),
        "created_at": _timestamp(row["run_timestamp"])[0],
        "agents": agents,
    }
    selected = _first_text(synthesis, SELECTED_KEYS)
    if selected is not None:
        if any(agent["name"] == selected for agent in agents):
            raw["selected_agent"] = selected
        else:
            warn(f"{where}: synthesis_json selects {selected!r}, which has no output; ignored")
    return Record(source, None, path, raw)


def _records(
    conn: sqlite3.Connection, source: str, warn: Warn, batch_size: int
) -> Iterator[Record]:
    conn.row_factory = sqlite3.Row
    runs_sql = f"SELECT {', '.join(_RUN_COLUMNS)} FROM consensus_runs"
    try:
        last: Any = None
        while True:
            params: tuple[Any, ...]
            if last is None:
                query, params = f"{runs_sql} ORDER BY id LIMIT ?", (batch_size,)
            else:
                query, params = f"{runs_sql} WHERE id > ? ORDER BY id LIMIT ?", (last, batch_size)
            runs = conn.execute(query, params).fetchall()
            if not runs:
                break
            last = runs[-1]["id"]
            outputs = _outputs(conn, [run["id"] for run in runs])
            for run in runs:
                record = _run(run, outputs.get(run["id"], []), source, warn)
                if record is not None:
                    yield record
            if len(runs) < batch_size:
                break
        (orphans,) = conn.execute(
            "SELECT COUNT(*) FROM agent_outputs"
            " WHERE run_id IS NULL OR run_id NOT IN (SELECT id FROM consensus_runs)"
        ).fetchone()
        if orphans:
            warn(f"{source}: {orphans} agent output(s) belong to no consensus run; ignored")
    except sqlite3.DatabaseError as error:
        raise PPPError(f"{source}: cannot read the database ({error})") from None
    finally:
        conn.close()


def _outputs(conn: sqlite3.Connection, run_ids: Sequence[Any]) -> dict[Any, list[_Output]]:
    marks = ", ".join("?" for _ in run_ids)
    rows = conn.execute(
        f"SELECT {', '.join(_OUTPUT_COLUMNS)} FROM agent_outputs"
        f" WHERE run_id IN ({marks}) ORDER BY run_id, id",
        tuple(run_ids),
    )
    grouped: dict[Any, list[_Output]] = {}
    for row in rows:
        timestamp, order = _timestamp(row["output_timestamp"])
        grouped.setdefault(row["run_id"], []).append(
            _Output(
                id=row["id"],
                name=_text(row["agent_name"]),
                model=_text(row["model_version"]),
                content=_text(row["content"]) or "",
                timestamp=timestamp,
                order=order,
            )
        )
    return grouped


def read_speckit(
    path: str | Path,
    warn: Warn | None = None,
    *,
    batch_size: int = DEFAULT_BATCH,
) -> Iterator[Record]:
    """The consensus runs of a spec-kit database, one `Record` per run, as SPEC 1 runs.

    The database is opened read-only and checked at once: a missing file, a file that is
    not SQLite, or one without spec-kit's tables and columns raises a one-line `PPPError`
    naming the file. Runs are then read `batch_size` at a time, in id order. A run without
    agent outputs is skipped, and a malformed synthesis_json ignored, each with a message
    to `warn` (one line, naming the file and the run); so are duplicate agent outputs
    (the latest is kept) and a selected agent that has no output.
    """
    return open_speckit(path, warn, batch_size=batch_size).records


def open_speckit(
    path: str | Path,
    warn: Warn | None = None,
    *,
    batch_size: int = DEFAULT_BATCH,
) -> RecordFile:
    """`read_speckit` with the number of runs it will yield, for a progress bar.

    The count (consensus runs that have at least one agent output) is one query; the
    records are still read lazily, `batch_size` runs at a time.
    """
    if batch_size < 1:
        raise ValueError("batch_size must be at least 1")
    source = str(path)
    conn = _connect(Path(path), source)
    try:
        (total,) = conn.execute(
            "SELECT COUNT(*) FROM consensus_runs"
            " WHERE id IN (SELECT run_id FROM agent_outputs WHERE run_id IS NOT NULL)"
        ).fetchone()
    except sqlite3.DatabaseError as error:
        conn.close()
        raise PPPError(f"{source}: cannot read the database ({error})") from None
    return RecordFile(
        int(total), _records(conn, source, warn or (lambda _message: None), batch_size)
    )
