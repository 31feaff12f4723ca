"""Build examples/spec-kit-consensus.db the way spec-kit itself writes its database.

    python examples/make_speckit_example.py [OUTPUT.db]
    ppp-tui import examples/spec-kit-consensus.db

`SpecKitWriter` is a small Python port of spec-kit's write path (its consensus database
module and the migration that creates `consensus_runs` / `agent_outputs`):

- `store_artifact` upserts one `consensus_runs` row per agent output, keyed on
  (spec_id, stage, run_timestamp) with a millisecond timestamp, consensus_ok 1 and no
  synthesis, then inserts the output with `model_version` NULL and a millisecond
  `output_timestamp`;
- `store_synthesis` upserts one more row that carries `synthesis_json` (output_markdown,
  output_path, status, artifacts_count, agreements, conflicts) and no output;
- `remember_verdict` stores the gate's verdict as an output of the pseudo-agent
  `consensus-verdict`; `lifecycle_telemetry` one of `agent-lifecycle-telemetry` at stage
  `validate-lifecycle`;
- `record_spawn` / `record_completion` / `record_extraction_failure` fill
  `agent_executions` (times from SQLite's datetime('now'), whole seconds), which older
  pipelines left empty;
- the database is in WAL mode, as spec-kit's connection pool sets it.

The clock is simulated (`SpecKitWriter.now_ms`), so the output is the same every time.
`build_example` writes several specs through all stages with 1 to 5 agents, failures
(empty output, error objects, the stub agent, an extraction error, an echoed prompt),
retries, verdicts and telemetry.
"""

from __future__ import annotations

import json
import sqlite3
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

SCHEMA = """
CREATE TABLE IF NOT EXISTS consensus_runs (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    spec_id TEXT NOT NULL,
    stage TEXT NOT NULL,
    run_timestamp INTEGER NOT NULL,
    consensus_ok BOOLEAN NOT NULL,
    degraded BOOLEAN DEFAULT 0,
    synthesis_json TEXT,
    UNIQUE(spec_id, stage, run_timestamp)
);
CREATE TABLE IF NOT EXISTS agent_outputs (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    run_id INTEGER NOT NULL,
    agent_name TEXT NOT NULL,
    model_version TEXT,
    content TEXT NOT NULL,
    output_timestamp INTEGER NOT NULL,
    FOREIGN KEY(run_id) REFERENCES consensus_runs(id) ON DELETE CASCADE
);
CREATE INDEX IF NOT EXISTS idx_consensus_spec_stage ON consensus_runs(spec_id, stage);
CREATE INDEX IF NOT EXISTS idx_consensus_timestamp ON consensus_runs(run_timestamp);
CREATE INDEX IF NOT EXISTS idx_agent_outputs_run ON agent_outputs(run_id);
CREATE INDEX IF NOT EXISTS idx_agent_outputs_agent ON agent_outputs(agent_name);
CREATE TABLE IF NOT EXISTS agent_executions (
    agent_id TEXT PRIMARY KEY,
    spec_id TEXT NOT NULL,
    stage TEXT NOT NULL,
    phase_type TEXT NOT NULL,
    agent_name TEXT NOT NULL,
    run_id TEXT,
    spawned_at TEXT NOT NULL,
    completed_at TEXT,
    response_text TEXT,
    extraction_error TEXT,
    branch_id TEXT
);
"""

START_MS = 1_763_280_000_000  # 2025-11-16T08:00:00Z


class SpecKitWriter:
    """spec-kit's write path, against a simulated millisecond clock."""

    def __init__(self, path: Path, start_ms: int = START_MS, wal: bool = True) -> None:
        self.conn = sqlite3.connect(path)
        if wal:
            self.conn.execute("PRAGMA journal_mode=WAL")
        self.conn.executescript(SCHEMA)
        self.conn.execute("PRAGMA user_version = 2")
        self.now_ms = start_ms

    def tick(self, ms: int = 1) -> int:
        self.now_ms += ms
        return self.now_ms

    def _datetime(self) -> str:
        return datetime.fromtimestamp(self.now_ms // 1000, UTC).strftime("%Y-%m-%d %H:%M:%S")

    def _upsert_run(self, spec_id: str, stage: str, synthesis: str | None, degraded: bool) -> int:
        stamp = self.tick()
        self.conn.execute(
            "INSERT INTO consensus_runs"
            " (spec_id, stage, run_timestamp, consensus_ok, degraded, synthesis_json)"
            " VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT(spec_id, stage, run_timestamp) DO UPDATE SET"
            " consensus_ok = excluded.consensus_ok, degraded = excluded.degraded,"
            " synthesis_json = excluded.synthesis_json",
            (spec_id, stage, stamp, True, degraded, synthesis),
        )
        (row,) = self.conn.execute(
            "SELECT id FROM consensus_runs WHERE spec_id = ? AND stage = ? AND run_timestamp = ?",
            (spec_id, stage, stamp),
        ).fetchone()
        return int(row)

    def store_artifact(self, spec_id: str, stage: str, agent: str, content: str) -> int:
        run = self._upsert_run(spec_id, stage, None, False)
        cursor = self.conn.execute(
            "INSERT INTO agent_outputs (run_id, agent_name, model_version, content,"
            " output_timestamp) VALUES (?, ?, NULL, ?, ?)",
            (run, agent, content, self.now_ms),
        )
        self.conn.commit()
        return int(cursor.lastrowid or 0)

    def store_synthesis(
        self,
        spec_id: str,
        stage: str,
        markdown: str,
        status: str,
        artifacts: int,
        agreements: str | None = None,
        conflicts: str | None = None,
        degraded: bool = False,
    ) -> int:
        synthesis = json.dumps(
            {
                "output_markdown": markdown,
                "output_path": f"docs/{spec_id}/{stage}.md",
                "status": status,
                "artifacts_count": artifacts,
                "agreements": agreements,
                "conflicts": conflicts,
            }
        )
        run = self._upsert_run(spec_id, stage, synthesis, degraded)
        self.conn.commit()
        return run

    def remember_verdict(
        self,
        spec_id: str,
        stage: str,
        ok: bool,
        agreements: list[str],
        conflicts: list[str],
        missing: list[str] = (),  # type: ignore[assignment]
    ) -> None:
        status = "ok" if ok else ("conflict" if conflicts else "degraded")
        summary = {
            "spec_id": spec_id,
            "stage": stage,
            "status": status,
            "missing_agents": list(missing),
            "agreements": agreements,
            "conflicts": conflicts,
        }
        self.store_artifact(spec_id, stage, "consensus-verdict", json.dumps(summary))

    def lifecycle_telemetry(self, spec_id: str, run_id: str, event: str) -> None:
        telemetry = {
            "spec_id": spec_id,
            "stage": "validate",
            "event": event,
            "mode": "auto",
            "stage_run_id": run_id,
            "attempt": 1,
            "timestamp": datetime.fromtimestamp(self.now_ms / 1000, UTC).isoformat(),
        }
        self.store_artifact(
            spec_id, "validate-lifecycle", "agent-lifecycle-telemetry", json.dumps(telemetry)
        )

    def record_spawn(
        self, agent_id: str, spec_id: str, stage: str, agent: str, run_id: str | None
    ) -> None:
        self.conn.execute(
            "INSERT OR REPLACE INTO agent_executions (agent_id, spec_id, stage, phase_type,"
            " agent_name, run_id, branch_id, spawned_at) VALUES (?, ?, ?, 'regular_stage', ?, ?,"
            " NULL, ?)",
            (agent_id, spec_id, stage, agent, run_id, self._datetime()),
        )
        self.conn.commit()

    def record_completion(self, agent_id: str, response: str) -> None:
        self.conn.execute(
            "UPDATE agent_executions SET completed_at = ?, response_text = ? WHERE agent_id = ?",
            (self._datetime(), response, agent_id),
        )
        self.conn.commit()

    def record_extraction_failure(self, agent_id: str, raw: str, error: str) -> None:
        self.conn.execute(
            "UPDATE agent_executions SET completed_at = ?, response_text = ?,"
            " extraction_error = ? WHERE agent_id = ?",
            (self._datetime(), raw, error, agent_id),
        )
        self.conn.commit()

    def close(self) -> None:
        self.conn.close()


# --- outputs, in the shapes spec-kit's prompts ask for ---------------------------------------

MODELS = {
    "gemini": ("gemini-2.5-pro", "2025-06-17"),
    "claude": ("claude-sonnet-4-5", "2025-09-29"),
    "gpt_pro": ("gpt-5", "2025-08-07"),
    "gpt_codex": ("gpt-5-codex", "2025-09-15"),
    "code": ("gpt-5-codex", "2025-09-15"),
}

FIELDS: dict[str, dict[str, dict[str, Any]]] = {
    "spec-plan": {
        "gemini": {
            "research_summary": [{"topic": "auth", "details": "Sessions live in core/auth.rs."}],
            "questions": ["Should refresh tokens rotate on every use?"],
        },
        "claude": {
            "work_breakdown": [
                {"step": "Add token store", "rationale": "r", "success_signal": "s"}
            ],
            "acceptance_mapping": [{"requirement": "R1", "validation_step": "v", "artifact": "a"}],
            "risks": [{"risk": "clock skew", "owner": "core", "mitigation": "leeway"}],
        },
        "gpt_pro": {
            "feasibility_notes": ["Feasible in two steps."],
            "missing_items": [],
            "final_plan": {"work_breakdown": ["w"], "acceptance_mapping": ["a"], "risks": ["r"]},
        },
    },
    "spec-tasks": {
        "gemini": {"surfaces": ["cli"], "dependencies": ["sqlite"], "spec_status": "ready"},
        "claude": {
            "tasks": [{"id": "T1", "title": "store"}],
            "acceptance_coverage": ["R1"],
            "followups": ["docs"],
        },
        "gpt_pro": {
            "validated_tasks": ["T1"],
            "command_plan": ["cargo test"],
            "consensus": {"agreements": ["T1"], "conflicts": []},
        },
    },
    "spec-implement": {
        "gemini": {
            "code_paths": [{"area": "db", "files": ["db.rs"], "notes": "n"}],
            "recent_changes": ["c"],
            "edge_cases": ["e"],
            "tests": ["t"],
        },
        "claude": {
            "approach": [{"task_id": "T1", "summary": "s"}],
            "operations": [{"file": "db.rs", "change_type": "edit", "description": "d"}],
            "validation_plan": [{"command": "cargo test", "purpose": "p"}],
        },
        "gpt_codex": {
            "diff_proposals": [
                {
                    "path": "db.rs",
                    "change": "let x = load()?;\n+ ok",
                    "rationale": "Why not unwrap? It panics.",
                    "confidence": 0.8,
                }
            ],
            "test_commands": ["cargo test -p core"],
            "tool_calls": [],
            "risks": ["r"],
        },
        "gpt_pro": {
            "checklist": [{"step": "s", "command": "c"}],
            "risks": [{"risk": "r", "mitigation": "m"}],
            "consensus": {"agreements": ["a"], "conflicts": []},
        },
        "code": {
            "diff_proposals": [
                {"path": "cli.rs", "change": "+x", "rationale": "r", "confidence": 0.5}
            ],
            "test_commands": ["t"],
        },
    },
    "spec-validate": {
        "gemini": {"scenarios": ["s"], "test_strategy": "unit + e2e", "rollback_plan": "revert"},
        "claude": {"acceptance_mapping": ["a"], "gaps": [], "recommendations": ["r"]},
        "gpt_pro": {
            "final_plan": {
                "test_scenarios": ["t"],
                "coverage_analysis": "c",
                "estimated_cost": "1h",
                "monitoring_kpis": ["k"],
            },
            "consensus": {"agreements": ["a"], "conflicts": []},
        },
    },
    "spec-audit": {
        "gemini": {
            "implementation_review": "ok",
            "security_concerns": [],
            "quality_checks": ["q"],
            "compliance_flags": [],
        },
        "claude": {
            "audit_decision": "approve",
            "readiness_assessment": "ready",
            "risks": [],
            "open_items": [],
        },
        "gpt_pro": {
            "final_checks": ["f"],
            "recommendation": "ship",
            "conditions_for_approval": [],
            "consensus": {"agreements": [], "conflicts": []},
        },
    },
    "spec-unlock": {
        "gemini": {"completion_summary": "done", "remaining_work": [], "unlock_blockers": []},
        "claude": {
            "unlock_justification": "j",
            "readiness_assessment": "r",
            "safeguards": ["s"],
            "followups": [],
        },
        "gpt_pro": {
            "unlock_decision": "unlock",
            "decision_rationale": "d",
            "next_steps": ["n"],
            "consensus": {"agreements": ["a"], "conflicts": []},
        },
    },
    "speckit.specify": {
        "gpt_pro": {
            "prd_sections": {
                "problem_statement": "p",
                "user_needs": ["u"],
                "requirements": ["r"],
                "dependencies": [],
                "constraints": [],
                "assumptions": [],
                "test_scenarios": ["t"],
            },
            "confidence": "high",
            "open_questions": [],
        },
    },
}

ECHOED = (
    '{\n  "stage": "spec-plan",\n  "prompt_version": "${PROMPT_VERSION}",\n  "agent": "gemini",\n'
    '  "model": "${MODEL_ID}",\n  "research_summary": [ { "topic": string, "details": string } ],\n'
    '  "questions": [ string ]\n}\nReturn the JSON as your final response.'
)


def output(stage: str, agent: str, drop: int = 0) -> str:
    """An agent's answer at a stage, as its prompt asks; `drop` leaves out its last fields."""
    model, release = MODELS.get(agent, ("unknown", ""))
    body: dict[str, Any] = {
        "stage": stage,
        "prompt_version": "20251002-a",
        "agent": agent,
        "model": model,
        "model_release": release,
        "reasoning_mode": "thinking",
    }
    fields = dict(FIELDS[stage][agent])
    for key in list(fields)[len(fields) - drop :] if drop else []:
        fields.pop(key)
    body.update(fields)
    return json.dumps(body)


STAGES = ("spec-plan", "spec-tasks", "spec-implement", "spec-validate", "spec-audit", "spec-unlock")


def stage_run(
    w: SpecKitWriter,
    spec: str,
    stage: str,
    answers: dict[str, str],
    pipeline: str | None,
    extraction_errors: dict[str, str] | None = None,
    verdict: bool = True,
    raw: dict[str, str] | None = None,
) -> None:
    """One attempt: agents spawned, answers stored one by one, then the synthesis and
    (for gates) the verdict, as spec-kit's orchestrator does. `raw` gives an agent's
    whole response (prose around its JSON) where it differs from the stored JSON."""
    for agent in answers:
        if pipeline is not None:
            w.record_spawn(f"{spec}-{stage}-{agent}-{w.now_ms}", spec, stage, agent, pipeline)
    w.tick(40_000)
    for agent, content in answers.items():
        w.tick(1_200)
        if pipeline is not None:
            agent_id = f"{spec}-{stage}-{agent}"
            rows = w.conn.execute(
                "SELECT agent_id FROM agent_executions WHERE agent_id LIKE ? || '%'"
                " AND completed_at IS NULL",
                (agent_id,),
            ).fetchall()
            for (found,) in rows:
                response = (raw or {}).get(agent, content)
                if extraction_errors and agent in extraction_errors:
                    w.record_extraction_failure(found, response, extraction_errors[agent])
                else:
                    w.record_completion(found, response)
        w.store_artifact(spec, stage, agent, content)
    ok = [a for a, c in answers.items() if c.strip() and '"error"' not in c]
    w.tick(500)
    w.store_synthesis(
        spec,
        stage,
        f"# {stage} for {spec}\n\nAgreed by {', '.join(ok)}.",
        "ok" if len(ok) == len(answers) else "degraded",
        len(ok),
        agreements="; ".join(ok) or None,
        conflicts=None if len(ok) == len(answers) else "missing answers",
        degraded=len(ok) != len(answers),
    )
    if verdict:
        w.tick(200)
        missing = [a for a in answers if a not in ok]
        w.remember_verdict(spec, stage, not missing, ok, [], missing)


def build_example(path: Path, start_ms: int = START_MS) -> None:
    """The example database: three specs through the pipeline, with everything spec-kit
    writes (see the module docstring)."""
    if path.exists():
        path.unlink()
    for suffix in ("-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)
    w = SpecKitWriter(path, start_ms)
    three = ("gemini", "claude", "gpt_pro")
    # SPEC-KIT-101: a full pipeline, agent_executions filled.
    spec = "SPEC-KIT-101"
    w.store_artifact(spec, "speckit.specify", "gpt_pro", output("speckit.specify", "gpt_pro"))
    for stage in STAGES:
        agents = (*three, "gpt_codex", "code") if stage == "spec-implement" else three
        answers = {agent: output(stage, agent) for agent in agents}
        if stage == "spec-tasks":
            answers["gemini"] = ""  # an empty output
        if stage == "spec-validate":
            answers["claude"] = json.dumps({"error": "agent execution failed"})
        raw = None
        if stage == "spec-plan":  # the response asks the user; spec-kit stores its JSON
            raw = {
                "claude": "I followed plan-template.md. Should the plan also migrate the"
                " existing sessions?\n\n```json\n" + answers["claude"] + "\n```\n"
            }
        stage_run(w, spec, stage, answers, "pipeline-101", raw=raw)
        if stage == "spec-validate":
            w.lifecycle_telemetry(spec, "pipeline-101", "completed")
    # SPEC-KIT-102: an older pipeline, agent_executions left empty; plan is retried.
    spec = "SPEC-KIT-102"
    stage_run(
        w, spec, "spec-plan", {"gemini": ECHOED, "claude": output("spec-plan", "claude", 2)}, None
    )
    w.tick(3_600_000)
    stage_run(w, spec, "spec-plan", {a: output("spec-plan", a) for a in three}, None)
    stage_run(
        w,
        spec,
        "spec-tasks",
        {
            "claude": output("spec-tasks", "claude"),
            "stub": json.dumps({"agent": "stub", "stage": "spec-tasks", "output": "stub"}),
        },
        None,
    )
    stage_run(
        w,
        spec,
        "spec-implement",
        {"gpt_codex": output("spec-implement", "gpt_codex")},
        None,
        verdict=False,
    )
    # SPEC-KIT-103: an extraction error recorded in agent_executions.
    spec = "SPEC-KIT-103"
    answers = {a: output("spec-audit", a) for a in three}
    answers["gemini"] = "I reviewed it. Looks fine overall. Should I also check the docs?"
    stage_run(
        w,
        spec,
        "spec-audit",
        answers,
        "pipeline-103",
        extraction_errors={"gemini": "no JSON object found"},
    )
    stage_run(
        w, spec, "spec-unlock", {a: output("spec-unlock", a, drop=1) for a in three}, "pipeline-103"
    )
    w.close()


if __name__ == "__main__":
    out = (
        Path(sys.argv[1])
        if len(sys.argv) > 1
        else Path(__file__).with_name("spec-kit-consensus.db")
    )
    build_example(out)
    print(f"wrote {out}")
