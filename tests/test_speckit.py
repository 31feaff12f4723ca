"""Reading spec-kit's consensus database: stage runs, consensus results, failures, schemas."""

from __future__ import annotations

import importlib.util
import json
import sqlite3
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from helpers import run_cli

from ppp_tui.core.errors import PPPError
from ppp_tui.core.scoring import rank_run
from ppp_tui.core.sensitivity import flips
from ppp_tui.core.settings import Settings, Weights
from ppp_tui.storage.files import Record
from ppp_tui.storage.speckit import open_speckit, read_speckit
from ppp_tui.storage.speckit_outputs import (
    asked_fields,
    canonical_stage,
    decode,
    failure_of,
    schemas,
    technical_from_content,
)
from ppp_tui.storage.store import Store

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def _port() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "make_speckit_example", EXAMPLES / "make_speckit_example.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["make_speckit_example"] = module
    spec.loader.exec_module(module)
    return module


port = _port()


def read(path: Path) -> tuple[list[Record], list[str]]:
    warnings: list[str] = []
    records = list(read_speckit(path, warnings.append))
    return records, warnings


invoke = run_cli


@pytest.fixture
def example(tmp_path: Path) -> Path:
    path = tmp_path / "consensus_artifacts.db"
    port.build_example(path)
    return path


@pytest.fixture
def writer(tmp_path: Path) -> Iterator[Any]:
    w = port.SpecKitWriter(tmp_path / "consensus_artifacts.db")
    yield w
    w.close()


def by_key(records: list[Record]) -> dict[tuple[str, str], list[dict[str, Any]]]:
    runs: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for record in records:
        raw = record.raw
        runs.setdefault((raw["spec_id"], raw["stage"]), []).append(raw)
    return runs


# --- stage runs ---------------------------------------------------------------------------


def test_a_real_shaped_database_comes_back_as_whole_multi_agent_stage_runs(example: Path) -> None:
    records, warnings = read(example)
    assert warnings == []  # synthesis rows are the runs' consensus results, not noise
    runs = by_key(records)
    names = {
        key: [[a["name"] for a in run["agents"]] for run in found] for key, found in runs.items()
    }
    assert names[("SPEC-KIT-101", "plan")] == [["gemini", "claude", "gpt_pro"]]
    assert names[("SPEC-KIT-101", "implement")] == [
        ["gemini", "claude", "gpt_pro", "gpt_codex", "code"]
    ]
    assert names[("SPEC-KIT-101", "specify")] == [["gpt_pro"]]
    # The retried plan of SPEC-KIT-102 is two runs, in time order.
    assert names[("SPEC-KIT-102", "plan")] == [
        ["gemini", "claude"],
        ["gemini", "claude", "gpt_pro"],
    ]
    assert len(records) == 13
    every_agent = {a["name"] for record in records for a in record.raw["agents"]}
    assert not every_agent & {"consensus-verdict", "agent-lifecycle-telemetry"}
    stages = {record.raw["stage"] for record in records}
    assert stages == {"specify", "plan", "tasks", "implement", "validate", "audit", "unlock"}
    times = [record.raw["created_at"] for record in records]
    assert times == sorted(times)


def test_the_consensus_result_and_verdict_belong_to_the_run(example: Path) -> None:
    records, _ = read(example)
    (tasks,) = by_key(records)[("SPEC-KIT-101", "tasks")]
    consensus = tasks["consensus"]
    assert consensus["status"] == "degraded"
    assert consensus["verdict"] == "degraded"
    assert consensus["artifacts_count"] == 2
    assert consensus["degraded"] is True
    assert consensus["missing_agents"] == ["gemini"]
    assert consensus["synthesis"].startswith("# spec-tasks for SPEC-KIT-101")
    assert consensus["agreements"] == "claude; gpt_pro"
    (implement,) = by_key(records)[("SPEC-KIT-102", "implement")]
    assert "verdict" not in implement["consensus"]  # that gate stored none


def test_agent_executions_group_outputs_by_pipeline_run(writer: Any) -> None:
    # Two attempts of one pipeline run's stage, with no synthesis in between, are told
    # apart by agent_executions.run_id.
    answers = {a: port.output("spec-plan", a) for a in ("gemini", "claude")}
    port.stage_run(writer, "S", "spec-plan", answers, "pipe-1", verdict=False)
    writer.conn.execute("UPDATE consensus_runs SET synthesis_json = NULL")
    writer.conn.execute(
        "DELETE FROM consensus_runs WHERE id NOT IN (SELECT run_id FROM agent_outputs)"
    )
    writer.conn.commit()
    writer.tick(5_000)
    for agent in ("gemini",):
        writer.record_spawn(f"x-{agent}", "S", "spec-plan", agent, "pipe-2")
    writer.tick(2_000)
    writer.store_artifact("S", "spec-plan", "gemini", port.output("spec-plan", "gemini"))
    records, _ = read(Path(writer.conn.execute("PRAGMA database_list").fetchone()[2]))
    assert [[a["name"] for a in r.raw["agents"]] for r in records] == [
        ["gemini", "claude"],
        ["gemini"],
    ]
    assert len({r.raw["id"] for r in records}) == 2


def test_without_agent_executions_a_repeated_agent_starts_a_retry(writer: Any) -> None:
    for agent in ("gemini", "claude", "gemini", "claude"):
        writer.tick(1_000)
        writer.store_artifact("S", "spec-plan", agent, port.output("spec-plan", agent))
    path = Path(writer.conn.execute("PRAGMA database_list").fetchone()[2])
    records, _ = read(path)
    assert [[a["name"] for a in r.raw["agents"]] for r in records] == [
        ["gemini", "claude"],
        ["gemini", "claude"],
    ]


def test_a_database_still_in_wal_mode_is_read_with_its_log(writer: Any) -> None:
    port.stage_run(writer, "S", "spec-tasks", {"claude": port.output("spec-tasks", "claude")}, None)
    path = Path(writer.conn.execute("PRAGMA database_list").fetchone()[2])
    assert writer.conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert Path(f"{path}-wal").exists()  # the writer is still open: rows live in the log
    records, _ = read(path)
    assert [r.raw["stage"] for r in records] == ["tasks"]


def test_seconds_timestamps_are_still_read(tmp_path: Path) -> None:
    w = port.SpecKitWriter(tmp_path / "old.db", wal=False)
    w.store_artifact("S", "spec-plan", "claude", port.output("spec-plan", "claude"))
    w.conn.execute("UPDATE consensus_runs SET run_timestamp = 1763287200")
    w.conn.execute("UPDATE agent_outputs SET output_timestamp = 1763287230")
    w.conn.commit()
    w.close()
    (record,), _ = read(tmp_path / "old.db")
    assert record.raw["created_at"] == "2025-11-16T10:00:00Z"


# --- failures -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        ("", "empty output"),
        ("   \n", "empty output"),
        ('{"error": "agent execution failed"}', "error: agent execution failed"),
        ('{"agent": "stub", "stage": "spec-plan", "output": "stub"}', "stub agent"),
        (port.ECHOED, "echoed prompt template"),
        (
            '{"stage": "spec-plan", "agent": "gemini", "questions": [ string ]}',
            "echoed prompt template",
        ),
    ],
)
def test_failures_are_recognised(content: str, reason: str) -> None:
    assert failure_of(content) == reason
    assert technical_from_content(content, "plan", "gemini") == 0.0


def test_real_output_is_no_failure() -> None:
    assert failure_of(port.output("spec-implement", "gpt_codex")) is None


def test_failures_are_flagged_and_score_zero(example: Path) -> None:
    records, _ = read(example)
    failed = {
        (r.raw["spec_id"], r.raw["stage"], a["name"]): a["failure"]
        for r in records
        for a in r.raw["agents"]
        if "failure" in a
    }
    assert failed == {
        ("SPEC-KIT-101", "tasks", "gemini"): "empty output",
        ("SPEC-KIT-101", "validate", "claude"): "error: agent execution failed",
        ("SPEC-KIT-102", "plan", "gemini"): "echoed prompt template",
        ("SPEC-KIT-102", "tasks", "stub"): "stub agent",
        ("SPEC-KIT-103", "audit", "gemini"): "extraction error: no JSON object found",
    }
    working = [a["technical_score"] for r in records for a in r.raw["agents"] if "failure" not in a]
    broken = [a["technical_score"] for r in records for a in r.raw["agents"] if "failure" in a]
    assert set(broken) == {0.0}
    assert min(working) > max(broken)


def test_model_comes_from_the_content_when_model_version_is_null(example: Path) -> None:
    records, _ = read(example)
    (plan,) = by_key(records)[("SPEC-KIT-101", "plan")]
    assert {a["name"]: a.get("model") for a in plan["agents"]} == {
        "gemini": "gemini-2.5-pro",
        "claude": "claude-sonnet-4-5",
        "gpt_pro": "gpt-5",
    }


# --- ranking: failures never win ---------------------------------------------------------


def imported(example: Path, tmp_path: Path) -> Path:
    db = tmp_path / "runs.db"
    result = invoke("import", str(example), "--db", str(db))
    assert result.exit_code == 0, result.output
    return db


def test_failures_never_rank_first_anywhere(example: Path, tmp_path: Path) -> None:
    from ppp_tui.app.first_page import pick
    from ppp_tui.core.scores import Scores

    db = imported(example, tmp_path)
    # Weights where the interaction term alone decides: a failed agent with a positive
    # interaction would win on final score.
    for technical in (0.0, 0.3, 0.7, 1.0):
        settings = Settings(weights=Weights.from_technical(technical))
        with Store.open(db) as store:
            scores = Scores.load(store, settings)
            ids = [info.id for info in store.run_infos()]
            first = {run.id: run for run in store.first_runs(settings, ids)}
            for i, run_id in enumerate(scores.arrays.run_ids):
                run = store.get_run(run_id)
                working = [a.name for a in run.agents if a.failure is None]
                ranking = rank_run(run, settings)
                selected = scores.arrays.names[i, scores.outcome.selected[i]]
                picked, _ = pick(first[run_id], settings)
                assert ranking.best_agent == selected == picked
                if working:
                    assert ranking.best_agent in working
                    ranks = [a.failure is not None for a in ranking.agents]
                    assert ranks == sorted(ranks)  # every failure after every working agent
                    assert all(f.agent in working for f in flips(ranking.agents, settings))


def test_arrays_from_runs_match_the_store_for_failed_agents(example: Path, tmp_path: Path) -> None:
    import numpy as np

    from ppp_tui.core.arrays import ScoreArrays
    from ppp_tui.core.scores import Scores

    db = imported(example, tmp_path)
    settings = Settings(weights=Weights.from_technical(0.0))
    with Store.open(db) as store:
        scores = Scores.load(store, settings)
        runs = [store.get_run(run_id) for run_id in scores.arrays.run_ids]
    slow = ScoreArrays.from_runs(runs, settings).lines(settings).outcome()
    fast = scores.outcome
    assert scores.arrays.failed is not None and scores.arrays.failed.sum() == 5
    np.testing.assert_array_equal(
        [scores.arrays.names[i, fast.selected[i]] for i in range(len(runs))],
        [
            ScoreArrays.from_runs([run], settings).names[0, slow.selected[i]]
            for i, run in enumerate(runs)
        ],
    )


def test_a_failed_agent_cannot_be_preferred(example: Path, tmp_path: Path) -> None:
    db = imported(example, tmp_path)
    with Store.open(db) as store:
        run_id = next(
            run_id
            for (run_id,) in store.conn.execute("SELECT run_id FROM agents WHERE name = 'stub'")
        )
    result = invoke("prefer", run_id, "stub", "--db", str(db))
    assert result.exit_code == 1
    assert "stub failed at this run (stub agent)" in result.output
    assert invoke("prefer", run_id, "claude", "--db", str(db)).exit_code == 0


def test_rank_json_shows_the_consensus_and_failures(example: Path, tmp_path: Path) -> None:
    db = imported(example, tmp_path)
    with Store.open(db) as store:
        (run_id,) = store.conn.execute(
            "SELECT run_id FROM agents WHERE failure = 'empty output'"
        ).fetchone()
    document = json.loads(invoke("rank", run_id, "--json", "--db", str(db)).output)
    assert document["consensus"]["status"] == "degraded"
    assert document["consensus"]["artifacts_count"] == 2
    failed = {a["name"]: (a["failed"], a["failure"]) for a in document["agents"]}
    assert failed["gemini"] == (True, "empty output")
    assert failed["claude"] == (False, None)
    assert document["agents"][-1]["name"] == "gemini"
    assert document["best_agent"] != "gemini"


def test_export_has_a_failed_column(example: Path, tmp_path: Path) -> None:
    db = imported(example, tmp_path)
    rows = json.loads(invoke("export", "--format", "json", "--db", str(db)).output)
    assert sum(row["failed"] for row in rows) == 5
    assert all(row["rank"] > 1 for row in rows if row["failed"])
    assert all(row["final"] == row["final"] and abs(row["final"]) < 10 for row in rows)


# --- ids and re-import ----------------------------------------------------------------------


def test_reimport_adds_nothing(example: Path, tmp_path: Path) -> None:
    db = imported(example, tmp_path)
    again = invoke("import", str(example), "--db", str(db))
    assert again.exit_code == 0
    assert "imported 0 runs" in again.output and "13 already present" in again.output


def test_a_second_database_with_the_same_row_ids_imports_fully(tmp_path: Path) -> None:
    first, second = tmp_path / "a.db", tmp_path / "b.db"
    port.build_example(first)
    port.build_example(second, start_ms=port.START_MS + 86_400_000)  # same rows, a day later
    ids = [
        sqlite3.connect(p).execute("SELECT id FROM consensus_runs").fetchall()
        for p in (first, second)
    ]
    assert ids[0] == ids[1]
    db = tmp_path / "runs.db"
    invoke("import", str(first), "--db", str(db))
    result = invoke("import", str(second), "--db", str(db))
    assert "imported 13 runs" in result.output
    with Store.open(db) as store:
        assert store.count() == 26


def test_ids_do_not_depend_on_row_numbers(example: Path, tmp_path: Path) -> None:
    before = [r.raw["id"] for r in read(example)[0]]
    conn = sqlite3.connect(example)
    conn.execute("UPDATE agent_outputs SET id = id + 1000, run_id = run_id + 500")
    conn.execute("UPDATE consensus_runs SET id = id + 500")
    conn.commit()
    conn.close()
    assert [r.raw["id"] for r in read(example)[0]] == before


# --- questions -----------------------------------------------------------------------------


def test_questions_come_only_from_text_addressed_to_the_user() -> None:
    research = port.output("spec-plan", "gemini")  # a `questions` field of planning notes
    assert decode(research).addressed == ""
    diff = port.output("spec-implement", "gpt_codex")  # `load()?` and a "?" in a rationale
    assert decode(diff).addressed == ""
    fenced = "Which database should I target?\n\n```json\n" + research + "\n```\n"
    assert decode(fenced).addressed == "Which database should I target?"


def test_imported_agents_ask_only_addressed_questions(writer: Any) -> None:
    fenced = (
        "Should I keep the old API?\n\n```json\n" + port.output("spec-plan", "claude") + "\n```"
    )
    port.stage_run(
        writer,
        "S",
        "spec-plan",
        {"gemini": port.output("spec-plan", "gemini"), "claude": fenced},
        None,
    )
    path = Path(writer.conn.execute("PRAGMA database_list").fetchone()[2])
    (record,), _ = read(path)
    run = record.parse()
    asked = {
        a.name: [(q.text, q.source.value) for q in a.trajectory.questions]
        for a in run.agents
        if a.trajectory
    }
    assert asked == {"gemini": [], "claude": [("Should I keep the old API?", "extracted")]}
    assert run.agents[1].output == fenced  # the whole answer is kept


# --- the technical score ------------------------------------------------------------------


def test_the_schemas_name_their_spec_kit_source() -> None:
    data = schemas()
    assert data["source"].startswith("theturtlecsz/code")
    assert len(data["commit"]) == 40
    assert data["stages"]["spec-plan"]["version"] == "20251002-plan-a"


def test_each_agent_is_judged_against_what_it_was_asked() -> None:
    assert asked_fields("plan", "gemini") == [["research_summary", "questions"]]
    assert asked_fields("plan", "gemini-2.5-flash") == [["research_summary", "questions"]]
    assert asked_fields("implement", "gpt_codex") == [
        ["diff_proposals", "test_commands", "tool_calls", "risks"]
    ]
    # Another agent at a stage: every list there, the best match counts.
    assert len(asked_fields("plan", "mystery")) == 3


@pytest.mark.parametrize("stage", port.STAGES)
def test_every_genuine_answer_scores_one(stage: str) -> None:
    for agent in port.FIELDS[stage]:
        if agent == "code":
            continue
        content = json.dumps(
            json.loads(port.output(stage, agent))
            | {
                k: v or ["x"]
                for k, v in port.FIELDS[stage][agent].items()
                if not isinstance(v, dict)
            }
        )
        assert technical_from_content(content, canonical_stage(stage), agent, stage) == 1.0


def test_worked_examples() -> None:
    # The worked examples of docs/spec-kit.md.
    claude = {"stage": "spec-plan", "agent": "claude", "work_breakdown": ["a"], "risks": []}
    # asked 3: work_breakdown 1, acceptance_mapping missing (required: halves), risks 0.5
    assert technical_from_content(json.dumps(claude), "plan", "claude") == pytest.approx(0.25)
    gemini = {
        "stage": "spec-implement",
        "agent": "gemini",
        "code_paths": ["db.rs"],
        "recent_changes": [],
        "edge_cases": ["empty"],
        "tests": ["t"],
    }
    assert technical_from_content(json.dumps(gemini), "implement", "gemini") == 0.875
    prose = "Work breakdown: do it. Risks: none."
    assert technical_from_content(prose, "plan", "claude") == pytest.approx(1 / 3)
    assert technical_from_content("The plan looks fine.", "plan", "claude") == 0.0


DOCUMENTED = [
    (
        "specify",
        "gpt_pro",
        {
            "prd_sections": {
                "problem_statement": "p",
                "user_needs": ["u"],
                "requirements": ["r"],
                "dependencies": [],
                "constraints": ["c"],
                "assumptions": ["a"],
                "test_scenarios": ["t"],
            },
            "confidence": "high",
            "open_questions": [],
        },
        0.9,
    ),
    ("plan", "claude", {"work_breakdown": ["Add the token store"], "risks": []}, 0.25),
    ("tasks", "gemini", {"surfaces": ["cli"], "dependencies": [], "spec_status": "ready"}, 5 / 6),
    (
        "implement",
        "gemini",
        {"code_paths": ["db.rs"], "recent_changes": [], "edge_cases": ["empty"], "tests": ["t"]},
        0.875,
    ),
    (
        "validate",
        "gpt_pro",
        {
            "final_plan": {"test_scenarios": ["login"], "coverage_analysis": "80%"},
            "consensus": {"agreements": ["a"]},
        },
        4 / 6,
    ),
    (
        "audit",
        "claude",
        {
            "audit_decision": "approve",
            "readiness_assessment": "ready",
            "risks": [],
            "open_items": [],
        },
        0.75,
    ),
    (
        "unlock",
        "gpt_pro",
        {"decision_rationale": "done", "next_steps": ["ship"], "consensus": {"agreements": []}},
        0.375,
    ),
]


@pytest.mark.parametrize(("stage", "agent", "fields", "score"), DOCUMENTED)
def test_the_documented_worked_examples(
    stage: str, agent: str, fields: dict[str, Any], score: float
) -> None:
    content = json.dumps({"stage": f"spec-{stage}", "agent": agent} | fields)
    assert technical_from_content(content, stage, agent) == pytest.approx(score)
    docs = (EXAMPLES.parent / "docs" / "spec-kit.md").read_text()
    assert f"| {stage} | {agent} |" in docs and f"**{round(score, 3):g}**" in docs


def test_a_genuine_answer_beats_an_echoed_template() -> None:
    real = technical_from_content(port.output("spec-plan", "gemini"), "plan", "gemini")
    echoed = technical_from_content(port.ECHOED, "plan", "gemini")
    assert real == 1.0 and echoed == 0.0


# --- format detection and errors ----------------------------------------------------------


def test_import_recognises_a_spec_kit_database_by_content(example: Path, tmp_path: Path) -> None:
    renamed = tmp_path / "runs.json"
    renamed.write_bytes(example.read_bytes())
    result = invoke("import", str(renamed), "--db", str(tmp_path / "runs.db"))
    assert result.exit_code == 0, result.output
    assert "imported 13 runs" in result.output


def test_another_sqlite_file_is_refused_clearly(tmp_path: Path) -> None:
    other = tmp_path / "other.db"
    sqlite3.connect(other).execute("CREATE TABLE t (x)").connection.close()
    result = invoke("import", str(other), "--db", str(tmp_path / "runs.db"))
    assert result.exit_code == 1
    assert result.output.strip() == (
        f"Error: {other}: not a spec-kit consensus database: no table consensus_runs"
    )


RUN = {"id": "r1", "agents": [{"name": "a", "technical_score": 0.5}]}
RUN2 = {"id": "r2", "agents": [{"name": "a", "technical_score": 0.5}]}


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("array.jsonl", json.dumps([RUN, RUN2])),
        ("lines.json", json.dumps(RUN) + "\n" + json.dumps(RUN2) + "\n"),
        ("pretty.jsonl", json.dumps([RUN, RUN2], indent=2)),
        ("lines.txt", json.dumps(RUN) + "\n\n" + json.dumps(RUN2)),
    ],
)
def test_json_and_json_lines_are_told_apart_by_content(
    tmp_path: Path, name: str, text: str
) -> None:
    path = tmp_path / name
    path.write_text(text)
    result = invoke("import", str(path), "--db", str(tmp_path / "runs.db"))
    assert result.exit_code == 0, result.output
    assert "imported 2 runs" in result.output


def test_import_help_names_spec_kits_real_path() -> None:
    assert "~/.code/consensus_artifacts.db" in invoke("import", "--help").output


def test_runs_are_listed_in_time_order(example: Path, tmp_path: Path) -> None:
    db = imported(example, tmp_path)
    rows = json.loads(invoke("runs", "--json", "--db", str(db)).output)
    times = [row["created_at"] for row in rows]
    assert times == sorted(times) and len(rows) == 13
    assert [row["id"] for row in rows] != sorted(row["id"] for row in rows)


def error_of(path: Path) -> str:
    with pytest.raises(PPPError) as error:
        read_speckit(path)
    message = str(error.value)
    assert "\n" not in message
    assert message.startswith(f"{path}: ")
    return message


def test_error_no_such_file(tmp_path: Path) -> None:
    path = tmp_path / "missing.db"
    assert error_of(path) == f"{path}: no such file"


def test_error_a_directory(tmp_path: Path) -> None:
    assert error_of(tmp_path) == f"{tmp_path}: is a directory, not a spec-kit consensus database"


def test_error_not_sqlite(tmp_path: Path) -> None:
    path = tmp_path / "runs.jsonl"
    path.write_text('{"agents": []}\n' * 200)
    assert error_of(path) == f"{path}: not a SQLite database"


def test_error_missing_columns(tmp_path: Path) -> None:
    path = tmp_path / "other.db"
    conn = sqlite3.connect(path)
    conn.executescript(
        "CREATE TABLE consensus_runs (id INTEGER PRIMARY KEY, spec_id TEXT, stage TEXT);"
        "CREATE TABLE agent_outputs (id INTEGER, run_id INTEGER, agent_name TEXT,"
        " model_version TEXT, content TEXT, output_timestamp INTEGER)"
    )
    conn.close()
    assert error_of(path) == (
        f"{path}: not a spec-kit consensus database: "
        "table consensus_runs has no columns run_timestamp, synthesis_json"
    )


def test_the_database_is_opened_read_only(example: Path) -> None:
    before = example.read_bytes()
    read(example)
    # Unchanged. (Reading a WAL database may leave SQLite's -wal and -shm files beside
    # it, as spec-kit's own connections do.)
    assert example.read_bytes() == before
    with pytest.raises(sqlite3.OperationalError, match="readonly"):
        conn = sqlite3.connect(f"{example.as_uri()}?mode=ro", uri=True)
        conn.execute("DELETE FROM agent_outputs")


def test_open_speckit_counts_the_runs_it_yields(example: Path) -> None:
    opened = open_speckit(example)
    assert opened.total == len(list(opened.records)) == 13


def test_the_example_database_is_what_its_script_builds(tmp_path: Path) -> None:
    built = tmp_path / "built.db"
    port.build_example(built)

    def dump(path: Path) -> list[str]:
        return list(sqlite3.connect(path).iterdump())

    assert dump(built) == dump(EXAMPLES / "spec-kit-consensus.db")


# --- the schema migration ----------------------------------------------------------------


def test_a_database_written_before_failures_existed_keeps_working(tmp_path: Path) -> None:
    from ppp_tui.core.scores import Scores
    from ppp_tui.storage.schema import SCHEMA_VERSION

    path = tmp_path / "runs.db"
    conn = sqlite3.connect(path)
    conn.executescript((Path(__file__).parent / "data" / "schema2.sql").read_text())
    conn.execute("PRAGMA user_version = 2")
    conn.commit()
    conn.close()
    settings = Settings()
    with Store.open(path) as store:
        assert store.conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION == 7
        run = store.get_run("old-1")
        assert run.consensus is None and all(a.failure is None for a in run.agents)
        assert rank_run(run, settings).best_agent == "a"  # 0.48 against 0.435
        scores = Scores.load(store, settings)
        assert scores.arrays.failed is None
        assert list(scores.arrays.run_ids) == ["old-1", "old-2"]
        assert [scores.arrays.names[i, scores.outcome.selected[i]] for i in range(2)] == ["a", "c"]
        assert store.first_runs(settings, ["old-1"])[0].agents[0].failed is False
    # The old run ids keep working, and new runs import beside them.
    assert invoke("rank", "old-2", "--db", str(path)).exit_code == 0
    assert invoke("prefer", "old-2", "c", "--db", str(path)).exit_code == 0
    example = tmp_path / "spec-kit.db"
    port.build_example(example)
    assert "imported 13 runs" in invoke("import", str(example), "--db", str(path)).output


# --- technical scores from the user's evaluation ------------------------------------------


def _ids(db: Path) -> dict[str, str]:
    with Store.open(db) as store:
        return {
            f"{spec}/{stage}": run_id
            for run_id, spec, stage in store.conn.execute(
                "SELECT id, spec_id, stage FROM runs WHERE spec_id = 'SPEC-KIT-101'"
            )
        }


def test_technical_scores_from_a_csv_file_rerank_and_repack(example: Path, tmp_path: Path) -> None:
    from ppp_tui.core.scores import Scores

    db = imported(example, tmp_path)
    plan = _ids(db)["SPEC-KIT-101/plan"]
    scores = tmp_path / "scores.csv"
    scores.write_text(
        f"run_id,agent,technical,notes\n{plan},gpt_pro,1.0,all tests pass\n"
        f"{plan},gemini,0.2,research only\n{plan},claude,0.3,\n"
    )
    result = invoke("technical", str(scores), "--db", str(db))
    assert result.exit_code == 0, result.output
    assert result.output == "set 3 technical scores in 1 run\n"
    settings = Settings()
    with Store.open(db) as store:
        run = store.get_run(plan)
        assert {a.name: a.technical for a in run.agents} == {
            "gemini": 0.2,
            "claude": 0.3,
            "gpt_pro": 1.0,
        }
        assert rank_run(run, settings).best_agent == "gpt_pro"
        # The packed columns the whole-database paths read agree.
        whole = Scores.load(store, settings)
        row = list(whole.arrays.run_ids).index(plan)
        assert whole.arrays.names[row, whole.outcome.selected[row]] == "gpt_pro"
        assert sorted(whole.arrays.technical[row][whole.arrays.valid[row]]) == [0.2, 0.3, 1.0]
        assert store.conn.execute(
            "SELECT count(*) FROM runs WHERE id NOT IN (SELECT run_id FROM run_scores)"
        ).fetchone() == (0,)


def test_technical_scores_from_json(example: Path, tmp_path: Path) -> None:
    db = imported(example, tmp_path)
    plan = _ids(db)["SPEC-KIT-101/plan"]
    scores = tmp_path / "scores.json"
    scores.write_text(json.dumps([{"run_id": plan, "agent": "claude", "technical": 0.5}]))
    assert invoke("technical", str(scores), "--db", str(db)).exit_code == 0
    with Store.open(db) as store:
        assert store.get_run(plan).agent("claude").technical == 0.5  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("rows", "message"),
    [
        (
            "run_id,agent\nX,claude\n",
            "line 1: the CSV header lacks technical (it needs run_id, agent, technical)",
        ),
        ("run_id,agent,technical\nnope,claude,0.5\n", "line 2: unknown run id 'nope'"),
        (
            "run_id,agent,technical\n{plan},claude,0.5\n{plan},mistral,0.5\n",
            "line 3: {plan}: no agent named 'mistral'; the agents are claude, gemini, gpt_pro",
        ),
        ("run_id,agent,technical\n{plan},claude,1.5\n", "line 2: technical must be in [0, 1]"),
        ("run_id,agent,technical\n{plan},claude,high\n", "technical must be a number"),
        (
            "run_id,agent,technical\n{plan},claude,0.5\n{plan},claude,0.6\n",
            "line 3: claude of run {plan} is given twice (also at line 2)",
        ),
        (
            "run_id,agent,technical\n{tasks},gemini,0.9\n",
            "gemini failed at this run (empty output)",
        ),
    ],
)
def test_bad_technical_scores_change_nothing(
    example: Path, tmp_path: Path, rows: str, message: str
) -> None:
    db = imported(example, tmp_path)
    ids = _ids(db)
    values = {"plan": ids["SPEC-KIT-101/plan"], "tasks": ids["SPEC-KIT-101/tasks"]}
    before = sqlite3.connect(db).execute("SELECT run_id, name, technical FROM agents").fetchall()
    scores = tmp_path / "scores.csv"
    # A good row first: nothing is written when a later one is bad.
    scores.write_text(rows.format(**values))
    result = invoke("technical", str(scores), "--db", str(db))
    assert result.exit_code == 1
    assert result.output.startswith(f"Error: {scores}: ")
    assert message.format(**values) in result.output
    assert len(result.output.splitlines()) == 1
    after = sqlite3.connect(db).execute("SELECT run_id, name, technical FROM agents").fetchall()
    assert after == before


def test_a_bad_answer_is_reported_naming_file_and_stage_run(writer: Any) -> None:
    writer.store_artifact("S", "spec-plan", "", port.output("spec-plan", "claude"))
    path = Path(writer.conn.execute("PRAGMA database_list").fetchone()[2])
    (record,), _ = read(path)
    with pytest.raises(PPPError) as error:
        record.parse()
    assert str(error.value) == (
        f"{path}: stage run {record.raw['id']} (S, spec-plan): $.agents[0].name:"
        " name must not be empty"
    )


def test_broken_rows_are_warnings_naming_the_row(writer: Any) -> None:
    port.stage_run(writer, "S", "spec-tasks", {"claude": port.output("spec-tasks", "claude")}, None)
    writer.conn.execute(
        'UPDATE consensus_runs SET synthesis_json = \'{"status": "ok"\' WHERE synthesis_json'
        " IS NOT NULL"
    )
    writer.conn.execute("INSERT INTO agent_outputs VALUES (99, 999, 'gemini', NULL, 'x', 1)")
    writer.conn.commit()
    path = Path(writer.conn.execute("PRAGMA database_list").fetchone()[2])
    (record,), warnings = read(path)
    assert warnings == [
        f"{path}: consensus_runs row 2: synthesis_json is not a JSON object; ignored",
        f"{path}: 1 agent output(s) belong to no consensus run; ignored",
    ]
    assert record.raw["consensus"] == {"verdict": "ok"}


def test_score_ranks_a_spec_kit_database_without_importing_it(example: Path) -> None:
    result = invoke("score", str(example), "--json")
    assert result.exit_code == 0, result.output
    documents = [json.loads(line) for line in result.output.splitlines()]
    assert len(documents) == 13
    for document in documents:
        failed = [a["failed"] for a in document["agents"]]
        assert failed == sorted(failed)  # failures after every working agent


def test_questions_come_from_the_raw_response_spec_kit_recorded(example: Path) -> None:
    records, _ = read(example)
    (plan,) = by_key(records)[("SPEC-KIT-101", "plan")]
    run = Record("x", None, "$", plan).parse()
    asked = {a.name: [q.text for q in a.trajectory.questions] for a in run.agents if a.trajectory}
    assert asked == {
        "gemini": [],  # its `questions` field is planning notes
        "claude": ["Should the plan also migrate the existing sessions?"],
        "gpt_pro": [],
    }
    assert json.loads(run.agents[1].output or "")["agent"] == "claude"  # the stored JSON


def test_answers_and_synthesis_in_the_same_millisecond_share_a_row(writer: Any) -> None:
    # spec-kit's upsert keys rows on (spec, stage, millisecond): two answers in the same
    # millisecond land on one row, and a synthesis written then fills that row's
    # synthesis_json.
    writer.store_artifact("S", "spec-plan", "gemini", port.output("spec-plan", "gemini"))
    writer.now_ms -= 1
    writer.store_artifact("S", "spec-plan", "claude", port.output("spec-plan", "claude"))
    writer.now_ms -= 1
    writer.store_synthesis("S", "spec-plan", "# plan", "ok", 2)
    path = Path(writer.conn.execute("PRAGMA database_list").fetchone()[2])
    assert writer.conn.execute("SELECT count(*) FROM consensus_runs").fetchone() == (1,)
    (record,), warnings = read(path)
    assert [a["name"] for a in record.raw["agents"]] == ["gemini", "claude"]
    assert record.raw["consensus"]["status"] == "ok" and warnings == []
