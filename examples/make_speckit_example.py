"""Build examples/spec-kit-consensus.db: a small spec-kit consensus database to import.

    python examples/make_speckit_example.py [OUTPUT.db]
    ppp-tui import --format spec-kit examples/spec-kit-consensus.db

The schema is spec-kit's own (SPEC-945B migration V1: consensus_runs + agent_outputs,
PRAGMA user_version 2), with stage command names (spec-plan, ...) and unix-second
timestamps as spec-kit writes them. Agent outputs follow the JSON shapes of spec-kit's
docs/spec-kit/prompts.json. The database shows each case the importer handles:

- run 1 (plan): three complete-ish outputs; gemini asks the user questions; gpt_pro nests
  its plan under final_plan;
- run 2 (tasks): gemini was retried, so it has two outputs (the later one is kept);
- run 3 (implement): gpt_codex wraps its JSON in a ```json fence after a question in
  prose; the synthesis names the task and the selected agent;
- run 4 (validate): claude answered in plain markdown, not JSON; the synthesis_json was
  truncated by an interrupted write (a warning on import, not an error);
- run 5 (audit): a consensus run with no agent outputs (skipped with a warning).

The output is rebuilt from scratch each time, so it is the same on every run.
"""

from __future__ import annotations

import json
import sqlite3
import sys
from pathlib import Path
from typing import Any

SCHEMA = """
CREATE TABLE consensus_runs (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    spec_id TEXT NOT NULL,
    stage TEXT NOT NULL,
    run_timestamp INTEGER NOT NULL,
    consensus_ok BOOLEAN NOT NULL,
    degraded BOOLEAN DEFAULT 0,
    synthesis_json TEXT,
    UNIQUE(spec_id, stage, run_timestamp)
);
CREATE TABLE agent_outputs (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    run_id INTEGER NOT NULL,
    agent_name TEXT NOT NULL,
    model_version TEXT,
    content TEXT NOT NULL,
    output_timestamp INTEGER NOT NULL,
    FOREIGN KEY(run_id) REFERENCES consensus_runs(id) ON DELETE CASCADE
);
CREATE INDEX idx_consensus_spec_stage ON consensus_runs(spec_id, stage);
CREATE INDEX idx_consensus_timestamp ON consensus_runs(run_timestamp);
CREATE INDEX idx_agent_outputs_run ON agent_outputs(run_id);
CREATE INDEX idx_agent_outputs_agent ON agent_outputs(agent_name);
PRAGMA user_version = 2;
"""

T0 = 1763287200  # 2025-11-16T10:00:00Z

MODELS = {
    "gemini": "gemini-2.5-pro",
    "claude": "claude-sonnet-4-5",
    "gpt_pro": "gpt-5",
    "gpt_codex": "gpt-5-codex",
}


def envelope(stage: str, agent: str, version: str) -> dict[str, Any]:
    return {
        "stage": stage,
        "prompt_version": version,
        "agent": agent,
        "model": MODELS[agent],
        "model_release": "2025-09",
        "reasoning_mode": "auto",
    }


def synthesis(status: str, count: int, agreements: str, conflicts: str | None) -> str:
    return json.dumps(
        {
            "output_markdown": f"# Consensus ({status})\n\n{agreements}",
            "output_path": None,
            "status": status,
            "artifacts_count": count,
            "agreements": agreements,
            "conflicts": conflicts,
        }
    )


def plan_run() -> tuple[dict[str, Any], list[tuple[str, dict[str, Any] | str, int]]]:
    stage, version = "spec-plan", "20251002-plan-a"
    gemini = envelope(stage, "gemini", version) | {
        "research_summary": [
            {
                "topic": "Auth surface",
                "details": "The API uses session cookies in api/auth.py; OAuth2 needs a "
                "callback route and a token store.",
            },
            {"topic": "Libraries", "details": "authlib is already a transitive dependency."},
        ],
        "questions": [
            "Which identity provider comes first: Google or GitHub?",
            "Before proceeding, could you investigate whether our enterprise customers "
            "require SAML as well?",
        ],
    }
    claude = envelope(stage, "claude", version) | {
        "work_breakdown": [
            {
                "step": "Add the OAuth2 client and callback route",
                "rationale": "Entry point of the login flow",
                "success_signal": "GET /auth/callback exchanges the code for a token",
            },
            {
                "step": "Store refresh tokens encrypted",
                "rationale": "Tokens outlive the session",
                "success_signal": "No plaintext token in the database",
            },
        ],
        "acceptance_mapping": [
            {
                "requirement": "Users log in with Google",
                "validation_step": "pytest tests/test_oauth.py",
                "artifact": "docs/SPEC-KIT-042/plan.md",
            }
        ],
        "risks": [
            {"risk": "Token leakage in logs", "owner": "api", "mitigation": "Redact headers"}
        ],
    }
    gpt_pro = envelope(stage, "gpt_pro", version) | {
        "feasibility_notes": ["The plan fits in one sprint."],
        "missing_items": [],
        "final_plan": {
            "work_breakdown": claude["work_breakdown"],
            "acceptance_mapping": claude["acceptance_mapping"],
            "risks": claude["risks"],
        },
        "consensus": {"agreements": ["OAuth2 via authlib"], "conflicts": []},
    }
    run = {
        "spec_id": "SPEC-KIT-042",
        "stage": stage,
        "run_timestamp": T0,
        "consensus_ok": 1,
        "degraded": 0,
        "synthesis_json": synthesis("ok", 3, "OAuth2 via authlib; encrypted token store", None),
    }
    return run, [
        ("gemini", gemini, T0 + 41),
        ("claude", claude, T0 + 58),
        ("gpt_pro", gpt_pro, T0 + 75),
    ]


def tasks_run() -> tuple[dict[str, Any], list[tuple[str, dict[str, Any] | str, int]]]:
    stage, version, t = "spec-tasks", "20251002-tasks-a", T0 + 3600
    gemini_first = envelope(stage, "gemini", version) | {"surfaces": []}
    gemini = envelope(stage, "gemini", version) | {
        "surfaces": [
            {
                "area": "api/auth",
                "files": ["api/auth.py", "api/routes.py"],
                "tests": ["tests/test_oauth.py"],
                "notes": "Callback route and token exchange",
            }
        ],
        "dependencies": ["authlib>=1.3"],
        "spec_status": [{"task_id": "T1", "status": "todo"}],
    }
    claude = envelope(stage, "claude", version) | {
        "tasks": [
            {
                "order": 1,
                "task_id": "T1",
                "title": "OAuth2 client and callback",
                "status": "todo",
                "validation_step": "pytest tests/test_oauth.py",
                "artifact": "api/auth.py",
                "notes": "",
            },
            {
                "order": 2,
                "task_id": "T2",
                "title": "Encrypted token store",
                "status": "todo",
                "validation_step": "pytest tests/test_tokens.py",
                "artifact": "api/tokens.py",
                "notes": "",
            },
        ],
        "acceptance_coverage": ["Users log in with Google: T1"],
        "followups": ["Should GitHub login be a follow-up SPEC?"],
    }
    gpt_pro = envelope(stage, "gpt_pro", version) | {
        "validated_tasks": ["T1", "T2"],
        "command_plan": ["ruff check api", "pytest -q"],
        "consensus": {"agreements": ["Two tasks"], "conflicts": []},
    }
    run = {
        "spec_id": "SPEC-KIT-042",
        "stage": stage,
        "run_timestamp": t,
        "consensus_ok": 1,
        "degraded": 1,
        "synthesis_json": synthesis("degraded", 4, "Two tasks: T1, T2", None),
    }
    return run, [
        ("gemini", gemini_first, t + 20),
        ("claude", claude, t + 44),
        ("gemini", gemini, t + 95),
        ("gpt_pro", gpt_pro, t + 120),
    ]


def implement_run() -> tuple[dict[str, Any], list[tuple[str, dict[str, Any] | str, int]]]:
    stage, version, t = "spec-implement", "20251002-implement-a", T0 + 7200
    gemini = envelope(stage, "gemini", version) | {
        "code_paths": [{"area": "api/auth", "files": ["api/auth.py"], "notes": "New route"}],
        "recent_changes": [],
        "edge_cases": ["State parameter mismatch", "Expired authorization code"],
        "tests": ["tests/test_oauth.py::test_callback"],
    }
    claude = envelope(stage, "claude", version) | {
        "implementation": {
            "summary": "authlib OAuth2 client, callback route, Fernet-encrypted token store",
            "files": ["api/auth.py", "api/tokens.py"],
        },
        "approach": [{"task_id": "T1", "summary": "Register the client at startup"}],
        "operations": [
            {"file": "api/auth.py", "change_type": "modify", "description": "Callback route"}
        ],
        "validation_plan": [{"command": "pytest -q", "purpose": "Unit tests"}],
    }
    codex = envelope(stage, "gpt_codex", version) | {
        "implementation": {"summary": "Diffs for T1 and T2"},
        "diff_proposals": [
            {
                "path": "api/auth.py",
                "change": "@router.get('/auth/callback')\nasync def callback(code: str): ...",
                "rationale": "Token exchange",
                "confidence": 0.8,
            }
        ],
        "test_commands": ["pytest tests/test_oauth.py"],
        "tool_calls": [],
        "risks": ["Clock skew on token expiry"],
    }
    codex_text = (
        "Before proceeding, could you confirm whether refresh tokens must be rotated on "
        "every use? I assumed they are.\n\n```json\n" + json.dumps(codex, indent=2) + "\n```\n"
    )
    gpt_pro = envelope(stage, "gpt_pro", version) | {
        "implementation": {"summary": "Adopt gpt_codex's diffs with claude's token store"},
        "checklist": [{"step": "Apply diffs", "command": "/guardrail.implement SPEC-KIT-042"}],
        "risks": [{"risk": "Clock skew", "mitigation": "Allow 60 s leeway"}],
        "consensus": {"agreements": ["authlib", "Fernet"], "conflicts": []},
    }
    synthesis_json = json.loads(synthesis("ok", 4, "authlib client; Fernet token store", None))
    synthesis_json |= {"task": "Add OAuth2 login to the API", "selected_agent": "gpt_pro"}
    run = {
        "spec_id": "SPEC-KIT-042",
        "stage": stage,
        "run_timestamp": t,
        "consensus_ok": 1,
        "degraded": 0,
        "synthesis_json": json.dumps(synthesis_json),
    }
    return run, [
        ("gemini", gemini, t + 30),
        ("claude", claude, t + 66),
        ("gpt_codex", codex_text, t + 90),
        ("gpt_pro", gpt_pro, t + 140),
    ]


def validate_run() -> tuple[dict[str, Any], list[tuple[str, dict[str, Any] | str, int]]]:
    stage, version, t = "spec-validate", "20251002-validate-a", T0 + 86400
    gemini = envelope(stage, "gemini", version) | {
        "scenarios": [
            {
                "name": "Happy path login",
                "type": "integration",
                "coverage": "callback + token store",
                "acceptance_criteria": "User lands on /dashboard",
            }
        ],
        "test_strategy": ["pytest with a mocked provider", "one end-to-end run on staging"],
        "rollback_plan": "Feature flag OAUTH2_LOGIN off",
    }
    claude = (
        "## Validation\n\n"
        "Test strategy: mock the provider with respx and cover the callback, token refresh "
        "and logout paths.\n\n"
        "Which staging tenant should the end-to-end run use?\n"
    )
    gpt_pro = envelope(stage, "gpt_pro", version) | {
        "final_plan": {
            "test_scenarios": ["Happy path login", "Expired code"],
            "coverage_analysis": "All acceptance criteria covered",
            "estimated_cost": "$0.40",
            "monitoring_kpis": ["login success rate"],
        },
        "consensus": {"agreements": ["Mock the provider"], "conflicts": []},
    }
    run = {
        "spec_id": "SPEC-KIT-051",
        "stage": stage,
        "run_timestamp": t,
        "consensus_ok": 0,
        "degraded": 1,
        # An interrupted write left the synthesis truncated.
        "synthesis_json": '{"output_markdown": "# Consensus (degraded)\\n\\nMock the provi',
    }
    return run, [
        ("gemini", gemini, t + 25),
        ("claude", claude, t + 47),
        ("gpt_pro", gpt_pro, t + 81),
    ]


def audit_run() -> tuple[dict[str, Any], list[tuple[str, dict[str, Any] | str, int]]]:
    run = {
        "spec_id": "SPEC-KIT-051",
        "stage": "spec-audit",
        "run_timestamp": T0 + 90000,
        "consensus_ok": 0,
        "degraded": 1,
        "synthesis_json": synthesis("degraded", 0, "No agent produced an audit memo", None),
    }
    return run, []


def build(path: Path) -> None:
    path.unlink(missing_ok=True)
    conn = sqlite3.connect(path)
    try:
        conn.executescript(SCHEMA)
        for make in (plan_run, tasks_run, implement_run, validate_run, audit_run):
            run, outputs = make()
            cursor = conn.execute(
                "INSERT INTO consensus_runs (spec_id, stage, run_timestamp, consensus_ok,"
                " degraded, synthesis_json) VALUES (?, ?, ?, ?, ?, ?)",
                (
                    run["spec_id"],
                    run["stage"],
                    run["run_timestamp"],
                    run["consensus_ok"],
                    run["degraded"],
                    run["synthesis_json"],
                ),
            )
            for agent, content, timestamp in outputs:
                text = content if isinstance(content, str) else json.dumps(content, indent=2)
                # spec-kit's store_artifact path leaves model_version NULL; claude's is one.
                model = None if agent == "claude" else MODELS[agent]
                conn.execute(
                    "INSERT INTO agent_outputs (run_id, agent_name, model_version, content,"
                    " output_timestamp) VALUES (?, ?, ?, ?, ?)",
                    (cursor.lastrowid, agent, model, text, timestamp),
                )
        conn.commit()
        conn.execute("VACUUM")
    finally:
        conn.close()


def main(argv: list[str]) -> int:
    out = Path(argv[1]) if len(argv) > 1 else Path(__file__).with_name("spec-kit-consensus.db")
    build(out)
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
