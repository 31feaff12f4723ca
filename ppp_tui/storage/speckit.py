"""Reading the consensus database of the spec-kit coding tool (`--format spec-kit`).

spec-kit keeps its multi-agent consensus work in SQLite, by default at
`~/.code/consensus_artifacts.db`:

    consensus_runs(id, spec_id, stage, run_timestamp, consensus_ok, degraded, synthesis_json)
    agent_outputs(id, run_id, agent_name, model_version, content, output_timestamp)
    agent_executions(agent_id, spec_id, stage, phase_type, agent_name, run_id, spawned_at,
                     completed_at, response_text, extraction_error, branch_id)   (optional)

It writes one `consensus_runs` row per agent output (timestamps in milliseconds), then
one more row that carries `synthesis_json` and no output; the verdict of a gate is one
more output of a pseudo-agent `consensus-verdict`, and validate's lifecycle telemetry an
output of `agent-lifecycle-telemetry` at stage `validate-lifecycle`. ppp-tui reads these
back as *stage runs*: every agent output of one attempt at one (spec, stage).

Grouping (see docs/spec-kit.md): the rows of one (spec_id, stage) are walked in time
order. A new stage run starts when an output's pipeline run id (from `agent_executions`)
differs from the current run's, when an agent answers a second time, or when an agent
output follows the consensus result (synthesis or verdict) of the current run: that is a
retry. Synthesis and verdict rows belong to the run they follow.

Each run's id is `spec-kit-` and a hash of (spec_id, stage, the attempt's identity: the
pipeline run id when known, and its first row's millisecond timestamp), so it never
depends on row numbers: two databases with the same row ids both import fully, and re-importing adds
nothing.

What one agent output gives (its technical score, a failure, its model) is read by
`speckit_outputs`.
"""

from __future__ import annotations

import hashlib
import json
import math
import sqlite3
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ..core.errors import PPPError
from .database import table_columns
from .files import Record, RecordFile
from .speckit_outputs import _technical, canonical_stage, decode, failure_of, model_of

Warn = Callable[[str], None]

#: Where spec-kit writes its consensus database.
DEFAULT_PATH = "~/.code/consensus_artifacts.db"

#: Pseudo-agents: rows spec-kit stores as agent outputs that are not agents' work.
VERDICT_AGENT = "consensus-verdict"
TELEMETRY_AGENT = "agent-lifecycle-telemetry"
#: Stages that hold only run metadata, never agents' work.
METADATA_STAGES = frozenset({"validate-lifecycle"})


# --- timestamps ---------------------------------------------------------------------------

# Unix times above this are taken as milliseconds (it is the year 5138 in seconds).
_MILLISECONDS = 1e11


def _timestamp(value: Any) -> tuple[str | None, float]:
    """(ISO 8601 text, seconds) of a spec-kit timestamp. spec-kit writes unix
    milliseconds; seconds, numeric text and ISO 8601 text (naive = UTC) are read too."""
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

_RUN_COLUMNS = (
    "id",
    "spec_id",
    "stage",
    "run_timestamp",
    "consensus_ok",
    "degraded",
    "synthesis_json",
)
_OUTPUT_COLUMNS = ("id", "run_id", "agent_name", "model_version", "content", "output_timestamp")
_EXECUTION_COLUMNS = (
    "spec_id",
    "stage",
    "agent_name",
    "run_id",
    "spawned_at",
    "extraction_error",
    "response_text",
)
_REQUIRED_COLUMNS = {
    "consensus_runs": ("id", "spec_id", "stage", "run_timestamp", "synthesis_json"),
    "agent_outputs": _OUTPUT_COLUMNS,
}


def _text(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return str(value)


def is_speckit(conn: sqlite3.Connection) -> bool:
    """Whether an open SQLite database has spec-kit's consensus tables."""
    try:
        tables = {
            str(name).lower()
            for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
        }
    except sqlite3.DatabaseError:
        return False
    return {"consensus_runs", "agent_outputs"} <= tables


def _connect(path: Path, source: str) -> sqlite3.Connection:
    if not path.exists():
        raise PPPError(f"{source}: no such file")
    if path.is_dir():
        raise PPPError(f"{source}: is a directory, not a spec-kit consensus database")
    try:
        # Read-only. A database in WAL mode (spec-kit's) is read with its -wal file.
        conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
    except sqlite3.Error as error:
        raise PPPError(f"{source}: cannot open the database ({error})") from None
    try:
        _check_schema(conn, source)
    except BaseException:
        conn.close()
        raise
    return conn


def _columns(conn: sqlite3.Connection, table: str) -> set[str]:
    return {column.lower() for column in table_columns(conn, table)}


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
    for table, needed in _REQUIRED_COLUMNS.items():
        if table not in tables:
            raise PPPError(f"{source}: not a spec-kit consensus database: no table {table}")
        columns = _columns(conn, table)
        missing = [column for column in needed if column not in columns]
        if missing:
            plural = "s" if len(missing) > 1 else ""
            raise PPPError(
                f"{source}: not a spec-kit consensus database: "
                f"table {table} has no column{plural} {', '.join(missing)}"
            )


@dataclass
class _Row:
    """One consensus_runs row with its outputs (spec-kit writes at most one)."""

    id: Any
    spec_id: str | None
    stage: str | None
    time: float
    timestamp: str | None
    synthesis: Mapping[str, Any] | None
    consensus_ok: Any
    degraded: Any
    outputs: list[_Output] = field(default_factory=list)


@dataclass(frozen=True)
class _Output:
    id: Any
    name: str
    model: str | None
    content: str
    timestamp: str | None
    time: float
    execution: str | None  # pipeline run id from agent_executions
    extraction_error: str | None
    response: str | None  # the raw response from agent_executions (content is its JSON)


@dataclass
class _Attempt:
    spec_id: str | None
    stage: str | None
    identity: str
    start: float
    timestamp: str | None
    execution: str | None = None
    outputs: list[_Output] = field(default_factory=list)
    synthesis: Mapping[str, Any] | None = None
    consensus_ok: Any = None
    degraded: Any = None
    verdict: Mapping[str, Any] | None = None
    closed: bool = False

    @property
    def names(self) -> set[str]:
        return {output.name for output in self.outputs}


def _json_object(text: str | None) -> Mapping[str, Any] | None:
    if text is None or not text.strip():
        return None
    try:
        value = json.loads(text)
    except (json.JSONDecodeError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


@dataclass(frozen=True)
class _Execution:
    """One agent_executions row: an agent spawned for a pipeline run."""

    spawned: float
    run_id: str | None
    error: str | None  # extraction_error
    response: str | None  # the raw response, prose and all


def _executions(conn: sqlite3.Connection) -> dict[tuple[str, str, str], list[_Execution]]:
    """(spec, stage, agent) -> its executions, by spawn time."""
    tables = {
        str(n).lower() for (n,) in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")
    }
    if "agent_executions" not in tables:
        return {}
    columns = _columns(conn, "agent_executions")
    if not {"spec_id", "stage", "agent_name", "spawned_at"} <= columns:
        return {}
    select = ", ".join(c if c in columns else f"NULL AS {c}" for c in _EXECUTION_COLUMNS)
    found: dict[tuple[str, str, str], list[_Execution]] = {}
    for spec, stage, agent, run_id, spawned, error, response in conn.execute(
        f"SELECT {select} FROM agent_executions"
    ):
        key = (_text(spec) or "", _text(stage) or "", _text(agent) or "")
        run = _text(run_id)
        found.setdefault(key, []).append(
            _Execution(
                _timestamp(spawned)[1],
                run if run and run.strip() else None,
                _text(error),
                _text(response),
            )
        )
    for entries in found.values():
        entries.sort(key=lambda e: e.spawned)
    return found


# spawned_at is SQLite datetime('now'): whole seconds, so an output may seem to come
# up to a second before its agent was spawned.
_SPAWN_SLACK = 1.0


def _execution_for(
    executions: Mapping[tuple[str, str, str], list[_Execution]],
    spec: str | None,
    stage: str | None,
    agent: str,
    time: float,
) -> _Execution | None:
    """The latest execution of this agent at this (spec, stage) spawned before `time`."""
    chosen = None
    for entry in executions.get((spec or "", stage or "", agent), ()):
        if entry.spawned <= time + _SPAWN_SLACK:
            chosen = entry
    return chosen


def _read_rows(conn: sqlite3.Connection, source: str, warn: Warn) -> list[_Row]:
    columns = _columns(conn, "consensus_runs")
    select = ", ".join(c if c in columns else f"NULL AS {c}" for c in _RUN_COLUMNS)
    executions = _executions(conn)
    rows: dict[Any, _Row] = {}
    for rid, spec, stage, stamp, ok, degraded, synthesis in conn.execute(
        f"SELECT {select} FROM consensus_runs ORDER BY id"
    ):
        timestamp, time = _timestamp(stamp)
        text = _text(synthesis)
        parsed = _json_object(text)
        if parsed is None and text is not None and text.strip():
            warn(
                f"{source}: consensus_runs row {rid}: synthesis_json is not a JSON object; ignored"
            )
        rows[rid] = _Row(rid, _text(spec), _text(stage), time, timestamp, parsed, ok, degraded)
    orphans = 0
    for oid, run_id, name, model, content, stamp in conn.execute(
        f"SELECT {', '.join(_OUTPUT_COLUMNS)} FROM agent_outputs ORDER BY id"
    ):
        row = rows.get(run_id)
        if row is None:
            orphans += 1
            continue
        timestamp, time = _timestamp(stamp)
        agent = _text(name) or ""
        execution = _execution_for(
            executions, row.spec_id, row.stage, agent, time if math.isfinite(time) else row.time
        )
        row.outputs.append(
            _Output(
                oid,
                agent,
                _text(model),
                _text(content) or "",
                timestamp,
                time,
                execution.run_id if execution else None,
                execution.error if execution else None,
                execution.response if execution else None,
            )
        )
    if orphans:
        warn(f"{source}: {orphans} agent output(s) belong to no consensus run; ignored")
    return list(rows.values())


def _attempts(rows: list[_Row]) -> list[_Attempt]:
    """Stage runs from consensus_runs rows (the grouping of the module docstring)."""
    groups: dict[tuple[str | None, str | None], list[_Row]] = {}
    for row in rows:
        groups.setdefault((row.spec_id, row.stage), []).append(row)
    attempts: list[_Attempt] = []
    for (spec, stage), members in groups.items():
        if canonical_stage(stage) in METADATA_STAGES or (stage or "") in METADATA_STAGES:
            continue  # lifecycle telemetry: run metadata, not a stage
        members.sort(key=lambda r: (r.time, _id_key(r.id)))
        current: _Attempt | None = None
        mine: list[_Attempt] = []
        for row in members:
            for output in row.outputs:
                if output.name == TELEMETRY_AGENT:
                    continue
                if output.name == VERDICT_AGENT:
                    target = current or (mine[-1] if mine else None)
                    if target is not None:
                        target.verdict = _json_object(output.content) or {"status": output.content}
                        target.closed = True
                    continue
                if (
                    current is None
                    or current.closed
                    or output.name in current.names
                    or (
                        output.execution is not None
                        and current.execution is not None
                        and output.execution != current.execution
                    )
                ):
                    current = _Attempt(spec, stage, "", row.time, row.timestamp)
                    mine.append(current)
                if current.execution is None and output.execution is not None:
                    current.execution = output.execution
                current.outputs.append(output)
            # Usually a row of its own; in the same millisecond as an answer spec-kit's
            # upsert puts it on the answer's row.
            if row.synthesis is not None:
                target = current or (mine[-1] if mine else None)
                if target is not None:
                    target.synthesis = row.synthesis
                    target.consensus_ok, target.degraded = row.consensus_ok, row.degraded
                    target.closed = True
        # The identity is the pipeline run id (when known) and the first row's time:
        # a stage retried inside one pipeline run, or another machine's pipeline run
        # with the same name, stays a run of its own.
        for attempt in mine:
            attempt.identity = f"{attempt.execution or ''}@{attempt.start:.3f}"
        attempts.extend(mine)
    attempts.sort(key=lambda a: (a.start, a.spec_id or "", a.stage or ""))
    return attempts


def _id_key(value: Any) -> tuple[int, float, str]:
    if isinstance(value, int | float) and not isinstance(value, bool):
        return (0, float(value), "")
    return (1, 0.0, str(value))


def run_id(spec_id: str | None, stage: str | None, identity: str) -> str:
    """The stable id of a stage run: a hash of (spec, stage, the attempt's identity)."""
    digest = hashlib.sha256(
        json.dumps([spec_id, stage, identity], ensure_ascii=False).encode("utf-8")
    ).hexdigest()
    return f"spec-kit-{digest[:16]}"


def _bool(value: Any) -> bool | None:
    if value is None:
        return None
    if isinstance(value, bytes | str):
        text = _text(value) or ""
        return text.strip().lower() in ("1", "true", "yes")
    return bool(value)


def _consensus(attempt: _Attempt) -> dict[str, Any] | None:
    synthesis, verdict = attempt.synthesis, attempt.verdict
    if synthesis is None and verdict is None:
        return None
    consensus: dict[str, Any] = {}
    if synthesis is not None:
        for key in ("status", "agreements", "conflicts", "output_path"):
            value = synthesis.get(key)
            if value is not None:
                consensus[key] = value
        count = synthesis.get("artifacts_count")
        if isinstance(count, int) and not isinstance(count, bool):
            consensus["artifacts_count"] = count
        markdown = synthesis.get("output_markdown")
        if isinstance(markdown, str):
            consensus["synthesis"] = markdown
        degraded = _bool(attempt.degraded)
        if degraded is not None:
            consensus["degraded"] = degraded
    if verdict is not None:
        status = verdict.get("status")
        consensus["verdict"] = status if isinstance(status, str) else json.dumps(verdict)
        missing = verdict.get("missing_agents")
        if isinstance(missing, list) and missing:
            consensus["missing_agents"] = [str(m) for m in missing]
    return consensus


def _agent(output: _Output, stage: str | None, raw_stage: str | None) -> dict[str, Any]:
    decoded = decode(output.content)
    failure = failure_of(output.content, decoded)
    if failure is None and output.extraction_error and output.extraction_error.strip():
        failure = f"extraction error: {output.extraction_error.strip()}"[:200]
    technical = 0.0 if failure else _technical(decoded, stage, output.name, raw_stage)
    # The turn is the text addressed to the user, so the questions the core extracts
    # from it are questions to the user; the whole answer stays in `output`. spec-kit
    # stores the JSON it extracted from a response; the raw response (in
    # agent_executions, when recorded) holds the prose around it.
    raw = output.response if output.response and output.response.strip() else None
    addressed = (decode(raw) if raw is not None else decoded).addressed.strip()
    trajectory: dict[str, Any] = (
        {"turns": [{"response": addressed, "timestamp": output.timestamp}]}
        if addressed
        else {"questions": []}
    )
    agent: dict[str, Any] = {
        "name": output.name,
        "technical_score": technical,
        "output": output.content,
        "trajectory": trajectory,
    }
    model = model_of(output.model, decoded.obj)
    if model is not None:
        agent["model"] = model
    if failure is not None:
        agent["failure"] = failure
    return agent


def _record(attempt: _Attempt, source: str) -> Record | None:
    raw_stage = attempt.stage
    stage = canonical_stage(raw_stage)
    if not attempt.outputs:
        return None
    agents = [_agent(output, stage, raw_stage) for output in attempt.outputs]
    raw: dict[str, Any] = {
        "id": run_id(attempt.spec_id, raw_stage, attempt.identity),
        "spec_id": attempt.spec_id,
        "stage": stage,
        "created_at": attempt.timestamp,
        "agents": agents,
    }
    consensus = _consensus(attempt)
    if consensus is not None:
        raw["consensus"] = consensus
    where = f"stage run {raw['id']} ({attempt.spec_id}, {raw_stage}): $"
    return Record(source, None, where, raw)


def _records(attempts: list[_Attempt], source: str) -> Iterator[Record]:
    for attempt in attempts:
        record = _record(attempt, source)
        if record is not None:
            yield record


def read_speckit(path: str | Path, warn: Warn | None = None) -> Iterator[Record]:
    """The stage runs of a spec-kit database, one `Record` per run, in time order."""
    return open_speckit(path, warn).records


def open_speckit(path: str | Path, warn: Warn | None = None) -> RecordFile:
    """`read_speckit` with the number of runs it will yield, for a progress bar.

    The database is opened read-only and checked at once: a missing file, a file that is
    not SQLite, or one without spec-kit's tables and columns raises a one-line `PPPError`
    naming the file.
    """
    source = str(path)
    conn = _connect(Path(path), source)
    try:
        # One read transaction: a consistent snapshot while spec-kit may be writing.
        conn.execute("BEGIN")
        rows = _read_rows(conn, source, warn or (lambda _message: None))
    except sqlite3.DatabaseError as error:
        raise PPPError(f"{source}: cannot read the database ({error})") from None
    finally:
        conn.close()
    attempts = [a for a in _attempts(rows) if a.outputs]
    return RecordFile(len(attempts), _records(attempts, source))
