"""Importing spec-kit consensus databases (SPEC 1, `--format spec-kit`)."""

from __future__ import annotations

import importlib.util
import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pytest import approx

from ppp_tui.core.errors import PPPError
from ppp_tui.core.model import Source
from ppp_tui.storage.files import Record
from ppp_tui.storage.speckit import (
    STAGE_FIELDS,
    canonical_stage,
    open_speckit,
    read_speckit,
    technical_from_content,
)

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
T0 = 1763287200  # 2025-11-16T10:00:00Z

RUNS_DDL = """CREATE TABLE consensus_runs (
    id INTEGER PRIMARY KEY AUTOINCREMENT, spec_id TEXT NOT NULL, stage TEXT NOT NULL,
    run_timestamp INTEGER NOT NULL, consensus_ok BOOLEAN NOT NULL, degraded BOOLEAN DEFAULT 0,
    synthesis_json TEXT)"""
OUTPUTS_DDL = """CREATE TABLE agent_outputs (
    id INTEGER PRIMARY KEY AUTOINCREMENT, run_id INTEGER NOT NULL, agent_name TEXT NOT NULL,
    model_version TEXT, content TEXT NOT NULL, output_timestamp INTEGER NOT NULL)"""


class Db:
    """A spec-kit consensus database under construction."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.conn = sqlite3.connect(path)
        self.conn.executescript(f"{RUNS_DDL};\n{OUTPUTS_DDL};")

    def run(
        self,
        stage: str = "spec-plan",
        spec_id: str = "SPEC-KIT-042",
        timestamp: Any = T0,
        synthesis: Any = None,
    ) -> int:
        if synthesis is not None and not isinstance(synthesis, str):
            synthesis = json.dumps(synthesis)
        cursor = self.conn.execute(
            "INSERT INTO consensus_runs (spec_id, stage, run_timestamp, consensus_ok,"
            " synthesis_json) VALUES (?, ?, ?, 1, ?)",
            (spec_id, stage, timestamp, synthesis),
        )
        self.conn.commit()
        assert cursor.lastrowid is not None
        return cursor.lastrowid

    def output(
        self,
        run_id: int,
        agent: str,
        content: Any,
        timestamp: Any = T0 + 30,
        model: str | None = "gemini-2.5-pro",
    ) -> int:
        if not isinstance(content, str):
            content = json.dumps(content)
        cursor = self.conn.execute(
            "INSERT INTO agent_outputs (run_id, agent_name, model_version, content,"
            " output_timestamp) VALUES (?, ?, ?, ?, ?)",
            (run_id, agent, model, content, timestamp),
        )
        self.conn.commit()
        assert cursor.lastrowid is not None
        return cursor.lastrowid

    def close(self) -> None:
        self.conn.close()


@pytest.fixture
def db(tmp_path: Path) -> Iterator[Db]:
    database = Db(tmp_path / "consensus_artifacts.db")
    yield database
    database.close()


def read(path: Path, **kwargs: Any) -> tuple[list[Record], list[str]]:
    warnings: list[str] = []
    records = list(read_speckit(path, warnings.append, **kwargs))
    return records, warnings


def plan_output(agent: str = "claude", **extra: Any) -> dict[str, Any]:
    return {
        "stage": "spec-plan",
        "agent": agent,
        "work_breakdown": [{"step": "Add the callback route"}],
        "acceptance_mapping": [{"requirement": "Login works"}],
        **extra,
    }


# --- mapping ------------------------------------------------------------------------------


def test_a_run_maps_to_the_import_format(db: Db) -> None:
    run = db.run(synthesis={"status": "ok", "task": "Add OAuth2 login", "selected_agent": "claude"})
    gemini = {
        "stage": "spec-plan",
        "agent": "gemini",
        "model": "gemini-2.5-pro",
        "research_summary": [{"topic": "Auth", "details": "Sessions live in api/auth.py."}],
        "questions": ["Which identity provider comes first: Google or GitHub?"],
    }
    db.output(run, "gemini", gemini, T0 + 41)
    db.output(run, "claude", plan_output(), T0 + 58, model="claude-sonnet-4-5")
    (record,), warnings = read(db.path)
    assert warnings == []
    assert record.source == str(db.path)
    assert record.line is None
    assert record.path == f"consensus_runs[id={run}]"
    raw = record.raw
    assert raw["id"] == f"spec-kit-{run}"
    assert raw["spec_id"] == "SPEC-KIT-042"
    assert raw["stage"] == "plan"
    assert raw["created_at"] == "2025-11-16T10:00:00Z"
    assert raw["task"] == "Add OAuth2 login"
    assert raw["selected_agent"] == "claude"
    first, second = raw["agents"]
    assert first["name"] == "gemini"
    assert first["model"] == "gemini-2.5-pro"
    assert first["output"] == json.dumps(gemini)
    assert first["technical_score"] == approx(0.25)  # stage + agent of four required fields
    (turn,) = first["trajectory"]["turns"]
    assert turn["timestamp"] == "2025-11-16T10:00:41Z"
    # The response is the JSON's prose: its metadata left out, one block per string.
    assert turn["response"] == (
        "Auth\n\nSessions live in api/auth.py.\n\n"
        "Which identity provider comes first: Google or GitHub?"
    )
    assert second["name"] == "claude"
    assert second["model"] == "claude-sonnet-4-5"
    assert second["technical_score"] == 1.0

    parsed = record.parse()
    assert parsed.id == f"spec-kit-{run}"
    assert parsed.selected_agent == "claude"
    gemini_agent = parsed.agents[0]
    assert gemini_agent.trajectory is not None
    (question,) = gemini_agent.trajectory.questions
    assert question.text == "Which identity provider comes first: Google or GitHub?"
    assert question.source is Source.EXTRACTED
    assert parsed.agents[1].trajectory is not None
    assert parsed.agents[1].trajectory.questions == ()


def test_missing_optional_values_stay_absent(db: Db) -> None:
    run = db.run(synthesis=None)
    db.output(run, "gemini", "plain text", model=None)
    (record,), _ = read(db.path)
    assert record.raw["task"] is None
    assert "selected_agent" not in record.raw
    assert "model" not in record.raw["agents"][0]
    assert record.parse().agents[0].model is None


@pytest.mark.parametrize(
    ("stored", "stage"),
    [
        ("spec-plan", "plan"),
        ("plan", "plan"),
        ("SPEC-TASKS", "tasks"),
        ("spec-implement", "implement"),
        ("spec-review", "audit"),
        ("review", "audit"),
        ("spec-unlock", "unlock"),
        ("spec-clarify", "clarify"),
        ("before-specify", "before-specify"),
    ],
)
def test_spec_kit_stage_names_fold_onto_ppp_stages(db: Db, stored: str, stage: str) -> None:
    db.output(db.run(stage=stored), "gemini", "text")
    (record,), _ = read(db.path)
    assert record.raw["stage"] == stage


@pytest.mark.parametrize(
    ("stored", "iso"),
    [
        (T0, "2025-11-16T10:00:00Z"),
        (T0 * 1000 + 250, "2025-11-16T10:00:00.250Z"),  # milliseconds
        (str(T0), "2025-11-16T10:00:00Z"),
        ("2025-11-16 10:00:00", "2025-11-16T10:00:00Z"),  # SQLite datetime('now'): UTC
        ("2025-11-16T12:00:00+02:00", "2025-11-16T10:00:00Z"),
        ("last tuesday", "last tuesday"),  # kept as it is
    ],
)
def test_timestamps_become_iso_8601(db: Db, stored: Any, iso: str) -> None:
    run = db.run(timestamp=stored)
    db.output(run, "gemini", "text", timestamp=stored)
    (record,), _ = read(db.path)
    assert record.raw["created_at"] == iso
    assert record.raw["agents"][0]["trajectory"]["turns"][0]["timestamp"] == iso
    record.parse()


def test_ids_are_stable_so_reimport_is_idempotent(db: Db) -> None:
    first = db.run(stage="spec-plan")
    second = db.run(stage="spec-tasks")
    db.output(first, "gemini", plan_output("gemini"))
    db.output(second, "claude", {"stage": "spec-tasks", "agent": "claude", "tasks": ["T1"]})
    records, _ = read(db.path)
    again, _ = read(db.path)
    assert [r.raw["id"] for r in records] == [f"spec-kit-{first}", f"spec-kit-{second}"]
    assert [r.raw for r in again] == [r.raw for r in records]
    assert [r.parse() for r in again] == [r.parse() for r in records]


def test_a_duplicate_agent_keeps_its_latest_output(db: Db) -> None:
    run = db.run()
    later = db.output(run, "gemini", plan_output("gemini"), timestamp=T0 + 90)
    db.output(run, "gemini", "an earlier attempt, stored last", timestamp=T0 + 10)
    db.output(run, "claude", plan_output(), timestamp=T0 + 50)
    (record,), warnings = read(db.path)
    names = [agent["name"] for agent in record.raw["agents"]]
    assert names == ["claude", "gemini"]  # in output order
    gemini = record.raw["agents"][1]
    assert gemini["output"] == json.dumps(plan_output("gemini"))
    assert gemini["trajectory"]["turns"][0]["timestamp"] == "2025-11-16T10:01:30Z"
    assert warnings == [
        f"{db.path}: consensus_runs[id={run}]: agent 'gemini' has 2 outputs; "
        f"kept the latest (agent_outputs id {later})"
    ]
    record.parse()


def test_a_duplicate_with_the_same_timestamp_keeps_the_last_stored(db: Db) -> None:
    run = db.run()
    db.output(run, "gemini", "first")
    db.output(run, "gemini", "second")
    (record,), warnings = read(db.path)
    assert [agent["output"] for agent in record.raw["agents"]] == ["second"]
    assert len(warnings) == 1


def test_a_run_without_outputs_is_skipped_with_a_warning(db: Db) -> None:
    empty = db.run(stage="spec-audit")
    full = db.run(stage="spec-plan")
    db.output(full, "claude", plan_output())
    records, warnings = read(db.path)
    assert [r.raw["id"] for r in records] == [f"spec-kit-{full}"]
    assert warnings == [f"{db.path}: consensus_runs[id={empty}]: no agent outputs; run skipped"]


def test_without_a_warn_callback_warnings_are_dropped(db: Db) -> None:
    db.run()
    db.output(db.run(synthesis="{oops"), "gemini", "text")
    assert len(list(read_speckit(db.path))) == 1


def test_malformed_synthesis_json_is_a_warning(db: Db) -> None:
    run = db.run(synthesis='{"output_markdown": "# Consensus (degraded)\\n\\nMock the provi')
    db.output(run, "gemini", "text")
    (record,), (warning,) = read(db.path)
    assert record.raw["task"] is None
    assert warning.startswith(
        f"{db.path}: consensus_runs[id={run}]: synthesis_json is not valid JSON ("
    )
    assert warning.endswith("); ignored")
    assert "\n" not in warning
    record.parse()


def test_synthesis_json_that_is_not_an_object_is_a_warning(db: Db) -> None:
    db.output(db.run(synthesis="[1, 2]"), "gemini", "text")
    (_record,), warnings = read(db.path)
    assert warnings == [
        f"{db.path}: consensus_runs[id=1]: synthesis_json is not a JSON object; ignored"
    ]


def test_spec_kit_synthesis_names_no_task(db: Db) -> None:
    # What spec-kit's store_synthesis writes: no task and no chosen agent.
    synthesis = {
        "output_markdown": "# Consensus",
        "output_path": None,
        "status": "ok",
        "artifacts_count": 3,
        "agreements": "OAuth2 via authlib",
        "conflicts": None,
    }
    db.output(db.run(synthesis=synthesis), "gemini", "text")
    (record,), warnings = read(db.path)
    assert warnings == []
    assert record.raw["task"] is None
    assert "selected_agent" not in record.raw


@pytest.mark.parametrize(
    ("synthesis", "task", "selected"),
    [
        ({"title": "OAuth2 login", "chosen_agent": "gemini"}, "OAuth2 login", "gemini"),
        ({"summary": "  Summary  ", "best_agent": "gemini"}, "Summary", "gemini"),
        ({"task": "", "title": "Title", "winner": "gemini"}, "Title", "gemini"),
        ({"task": 42}, None, None),
    ],
)
def test_task_and_selected_agent_from_synthesis(
    db: Db, synthesis: dict[str, Any], task: str | None, selected: str | None
) -> None:
    db.output(db.run(synthesis=synthesis), "gemini", "text")
    (record,), _ = read(db.path)
    assert record.raw["task"] == task
    assert record.raw.get("selected_agent") == selected
    record.parse()


def test_a_selected_agent_without_output_is_dropped_with_a_warning(db: Db) -> None:
    run = db.run(synthesis={"selected_agent": "gpt_pro"})
    db.output(run, "gemini", "text")
    (record,), warnings = read(db.path)
    assert "selected_agent" not in record.raw
    assert warnings == [
        f"{db.path}: consensus_runs[id={run}]: synthesis_json selects 'gpt_pro', "
        "which has no output; ignored"
    ]
    record.parse()


def test_outputs_of_no_run_are_reported(db: Db) -> None:
    db.output(db.run(), "gemini", "text")
    db.output(99, "claude", "orphan")
    records, warnings = read(db.path)
    assert len(records) == 1
    assert warnings == [f"{db.path}: 1 agent output(s) belong to no consensus run; ignored"]


def test_runs_are_read_in_batches(db: Db) -> None:
    for index in range(7):
        run = db.run(timestamp=T0 + index)
        db.output(run, "gemini", f"output {index}")
        db.output(run, "claude", f"answer {index}", model="claude-sonnet-4-5")
    skipped = db.run(timestamp=T0 + 100)
    for size in (1, 2, 3, 7, 500):
        records, warnings = read(db.path, batch_size=size)
        assert [r.raw["id"] for r in records] == [f"spec-kit-{i}" for i in range(1, 8)]
        assert [[a["output"] for a in r.raw["agents"]] for r in records] == [
            [f"output {i}", f"answer {i}"] for i in range(7)
        ]
        assert warnings == [
            f"{db.path}: consensus_runs[id={skipped}]: no agent outputs; run skipped"
        ]
    with pytest.raises(ValueError):
        read_speckit(db.path, batch_size=0)


def test_the_database_is_opened_read_only(db: Db, tmp_path: Path) -> None:
    db.output(db.run(), "gemini", "text")
    db.close()
    before = db.path.read_bytes()
    listing = sorted(p.name for p in tmp_path.iterdir())
    read(db.path)
    assert db.path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == listing


def test_a_path_with_uri_characters_opens(tmp_path: Path) -> None:
    folder = tmp_path / "odd ?#% name"
    folder.mkdir()
    database = Db(folder / "c?d#b.db")
    database.output(database.run(), "gemini", "text")
    database.close()
    records, _ = read(database.path)
    assert len(records) == 1


def test_a_bad_agent_fails_parse_naming_file_and_run(db: Db) -> None:
    run = db.run()
    db.output(run, "", "text")
    (record,), _ = read(db.path)
    with pytest.raises(PPPError) as error:
        record.parse()
    assert str(error.value).startswith(f"{db.path}: consensus_runs[id={run}].agents[0]")


# --- errors -------------------------------------------------------------------------------


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


@pytest.mark.parametrize(
    ("ddl", "message"),
    [
        ("", "no table consensus_runs"),
        ("CREATE TABLE runs (id INTEGER)", "no table consensus_runs"),
        (RUNS_DDL, "no table agent_outputs"),
        (
            "CREATE TABLE consensus_runs (id INTEGER PRIMARY KEY, spec_id TEXT, stage TEXT);"
            + OUTPUTS_DDL,
            "table consensus_runs has no columns run_timestamp, synthesis_json",
        ),
        (
            RUNS_DDL + ";CREATE TABLE agent_outputs (id INTEGER, run_id INTEGER, agent_name TEXT,"
            " content TEXT, output_timestamp INTEGER)",
            "table agent_outputs has no column model_version",
        ),
    ],
)
def test_error_not_a_spec_kit_database(tmp_path: Path, ddl: str, message: str) -> None:
    path = tmp_path / "other.db"
    conn = sqlite3.connect(path)
    conn.executescript(ddl)
    conn.close()
    assert error_of(path) == f"{path}: not a spec-kit consensus database: {message}"


def test_an_empty_file_is_not_a_spec_kit_database(tmp_path: Path) -> None:
    path = tmp_path / "empty.db"
    path.write_bytes(b"")
    assert error_of(path) == f"{path}: not a spec-kit consensus database: no table consensus_runs"


# --- the technical score (seed 000) -------------------------------------------------------


def full(stage: str) -> dict[str, Any]:
    fields = STAGE_FIELDS[stage]
    return {"stage": f"spec-{stage}", "agent": "gpt_pro"} | {field: ["x"] for field in fields}


@pytest.mark.parametrize("stage", sorted(STAGE_FIELDS))
def test_technical_all_required_fields_filled_is_one(stage: str) -> None:
    assert technical_from_content(json.dumps(full(stage)), stage) == 1.0
    assert technical_from_content(json.dumps(full(stage)), f"spec-{stage}") == 1.0


def test_technical_stage_specific_required_fields_are_spec_kits() -> None:
    assert dict(STAGE_FIELDS) == {
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
    assert canonical_stage("Spec-Review") == "audit"
    assert canonical_stage("deploy") is None
    assert canonical_stage(None) is None


@pytest.mark.parametrize(
    ("content", "stage", "expected"),
    [
        # A required field missing: has_required_fields = 0, completeness 3/4.
        ({"stage": "spec-plan", "agent": "claude", "work_breakdown": ["a"]}, "plan", 0.375),
        # All present but one empty: has_required_fields = 1, completeness 3/4.
        (plan_output(acceptance_mapping=[]), "plan", 0.875),
        (plan_output(acceptance_mapping=None), "plan", 0.875),
        (plan_output(acceptance_mapping="  "), "plan", 0.875),
        (plan_output(acceptance_mapping={}), "plan", 0.875),
        # Scalars count as filled, even 0 and false.
        ({"stage": "s", "agent": "a", "unlock_decision": False}, "unlock", 1.0),
        ({"stage": "s", "agent": "a", "tasks": 0}, "tasks", 1.0),
        # Only the envelope: 2 of 3 fields.
        ({"stage": "spec-tasks", "agent": "gemini", "surfaces": ["x"]}, "tasks", 1 / 3),
        # No agent: 2 of 3 filled, not all present.
        ({"stage": "spec-tasks", "tasks": ["T1"]}, "tasks", 1 / 3),
        ({}, "tasks", 0.0),
        # spec-kit's aggregator nests its plan one level down.
        (
            {
                "stage": "spec-plan",
                "agent": "gpt_pro",
                "final_plan": {"work_breakdown": ["a"], "acceptance_mapping": ["b"]},
            },
            "plan",
            1.0,
        ),
        # ... but not two levels.
        (
            {
                "stage": "spec-plan",
                "agent": "gpt_pro",
                "x": {"y": {"work_breakdown": ["a"], "acceptance_mapping": ["b"]}},
            },
            "plan",
            0.25,
        ),
        # A stage without fields of its own requires only stage and agent.
        ({"stage": "deploy", "agent": "claude"}, "deploy", 1.0),
        ({"stage": "deploy", "agent": ""}, None, 0.75),
        ({"agent": "claude"}, None, 0.25),
    ],
)
def test_technical_partial_json(
    content: dict[str, Any], stage: str | None, expected: float
) -> None:
    assert technical_from_content(json.dumps(content), stage) == approx(expected)


@pytest.mark.parametrize(
    ("content", "stage", "expected"),
    [
        # Prose: has_required_fields = 0; completeness = stage fields it mentions.
        ("## Work breakdown\n\n1. Add the route.\n\nAcceptance-mapping: login works.", "plan", 0.5),
        ("We propose a work_breakdown in five steps.", "plan", 0.25),
        ("We propose five steps.", "plan", 0.0),
        ("Test strategy: mock the provider.", "validate", 0.5),
        ("Teststrategy", "validate", 0.0),
        # No stage fields to look for: any non-blank text is complete as far as can be judged.
        ("Some answer.", "deploy", 0.5),
        ("Some answer.", None, 0.5),
        ("", "plan", 0.0),
        ("   \n", None, 0.0),
        # JSON that is not an object has no fields either.
        (json.dumps(["work breakdown", "acceptance mapping"]), "plan", 0.5),
        (json.dumps("work breakdown"), "plan", 0.25),
        ("42", "deploy", 0.5),
        ('{"stage": "spec-plan", "agent": ', "plan", 0.0),
    ],
)
def test_technical_non_json(content: str, stage: str | None, expected: float) -> None:
    assert technical_from_content(content, stage) == approx(expected)


def test_technical_accepts_json_in_a_fence() -> None:
    fenced = "Here is my plan.\n\n```json\n" + json.dumps(plan_output(), indent=2) + "\n```\n"
    assert technical_from_content(fenced, "plan") == 1.0
    broken = 'Here is my plan.\n\n```json\n{"stage": \n```\n'
    assert technical_from_content(broken, "plan") == 0.0


def test_technical_is_always_in_the_unit_interval() -> None:
    contents = [
        "",
        "x",
        "null",
        "[]",
        "{}",
        json.dumps(plan_output()),
        json.dumps({"a": {"b": {"c": []}}}),
        "```json\n[]\n```",
    ]
    for content in contents:
        for stage in [None, "deploy", *STAGE_FIELDS]:
            assert 0.0 <= technical_from_content(content, stage) <= 1.0


def test_a_fenced_output_keeps_its_prose_questions(db: Db) -> None:
    content = (
        "Before proceeding, could you confirm whether refresh tokens rotate?\n\n"
        "```json\n" + json.dumps(plan_output(questions=["Which provider comes first?"])) + "\n```"
    )
    db.output(db.run(), "gpt_codex", content)
    (record,), _ = read(db.path)
    agent = record.raw["agents"][0]
    assert agent["technical_score"] == 1.0
    assert agent["output"] == content
    parsed = record.parse().agents[0]
    assert parsed.trajectory is not None
    assert [q.text for q in parsed.trajectory.questions] == [
        "Before proceeding, could you confirm whether refresh tokens rotate?",
        "Which provider comes first?",
    ]


# --- the example database -----------------------------------------------------------------


def load_example_script() -> Any:
    spec = importlib.util.spec_from_file_location(
        "make_speckit_example", EXAMPLES / "make_speckit_example.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_example_database_imports() -> None:
    path = EXAMPLES / "spec-kit-consensus.db"
    records, warnings = read(path)
    runs = [record.parse() for record in records]
    assert [run.id for run in runs] == ["spec-kit-1", "spec-kit-2", "spec-kit-3", "spec-kit-4"]
    assert [run.stage for run in runs] == ["plan", "tasks", "implement", "validate"]
    assert runs[2].task == "Add OAuth2 login to the API"
    assert runs[2].selected_agent == "gpt_pro"
    assert len(warnings) == 3  # duplicate gemini, truncated synthesis, empty audit run
    questions = [
        q.text for run in runs for a in run.agents if a.trajectory for q in a.trajectory.questions
    ]
    assert "Which identity provider comes first: Google or GitHub?" in questions


def test_the_example_database_is_what_its_script_builds(tmp_path: Path) -> None:
    rebuilt = tmp_path / "rebuilt.db"
    load_example_script().build(rebuilt)
    committed, committed_warnings = read(EXAMPLES / "spec-kit-consensus.db")
    fresh, _ = read(rebuilt)
    assert [r.raw for r in fresh] == [r.raw for r in committed]
    assert len(committed_warnings) == 3


def test_open_speckit_counts_the_runs_it_yields(db: Db) -> None:
    for index in range(5):
        run = db.run(timestamp=T0 + index)
        if index != 2:
            db.output(run, "gemini", f"output {index}")
            db.output(run, "claude", f"answer {index}")
    db.output(99, "gemini", "orphan")
    warnings: list[str] = []
    opened = open_speckit(db.path, warnings.append, batch_size=2)
    assert opened.total == 4
    records = list(opened.records)
    assert len(records) == opened.total
    assert [r.raw for r in records] == [r.raw for r in read_speckit(db.path)]
    assert len(warnings) == 2  # the empty run and the orphan output
    with pytest.raises(PPPError, match="no such file"):
        open_speckit(db.path.with_name("missing.db"))
