"""The run store (SPEC 1, 2, 6): opening, importing, marks, and the array path vs rank_run."""

from __future__ import annotations

import json
import os
import random
import re
import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from ppp_tui.app.first_page import first_page
from ppp_tui.core.errors import PPPError
from ppp_tui.core.model import Effort, Severity, Source, Trajectory
from ppp_tui.core.preferences import CATALOGUE
from ppp_tui.core.runs import content_id
from ppp_tui.core.scores import Scores, finals, ranks
from ppp_tui.core.scoring import rank_run
from ppp_tui.core.settings import (
    STAGE_TUNED,
    PersonalizationSettings,
    ProactivitySettings,
    Settings,
    Weights,
    preset,
)
from ppp_tui.core.times import moment
from ppp_tui.storage import database
from ppp_tui.storage import rows as rows_module
from ppp_tui.storage.config import load_settings
from ppp_tui.storage.database import StoreError
from ppp_tui.storage.files import Record, read_records
from ppp_tui.storage.importer import ImportReport
from ppp_tui.storage.schema import OUR_TABLES, SCHEMA_VERSION
from ppp_tui.storage.store import RunInfo, Store

EXAMPLES = Path(__file__).resolve().parent.parent / "examples" / "runs.jsonl"


# --- helpers -----------------------------------------------------------------------------------


def write_jsonl(path: Path, runs: list[Any]) -> Path:
    path.write_text("".join(json.dumps(run) + "\n" for run in runs), encoding="utf-8")
    return path


def import_file(store: Store, path: Path, **kwargs: Any) -> ImportReport:
    return store.import_records(read_records(str(path)), **kwargs)


def dump(path: Path) -> list[str]:
    """Every statement that rebuilds the database: equal dumps, equal databases."""
    conn = sqlite3.connect(path)
    try:
        return list(conn.iterdump())
    finally:
        conn.close()


def row_counts(path: Path) -> dict[str, int]:
    conn = sqlite3.connect(path)
    try:
        return {
            table: conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
            for table in sorted(OUR_TABLES)
        }
    finally:
        conn.close()


def one_line(error: BaseException) -> str:
    text = str(error)
    assert "\n" not in text, text
    assert "Traceback" not in text
    return text


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "runs.db"


@pytest.fixture
def store(db: Path) -> Iterator[Store]:
    with Store.open(db, create=True) as opened:
        yield opened


@pytest.fixture
def examples(store: Store) -> Store:
    report = import_file(store, EXAMPLES)
    assert report.added == 3
    return store


def simple_run(run_id: str | None, *agents: tuple[str, float], **extra: Any) -> dict[str, Any]:
    run: dict[str, Any] = {
        "agents": [{"name": name, "technical_score": tech} for name, tech in agents],
        **extra,
    }
    if run_id is not None:
        run["id"] = run_id
    return run


# --- opening -----------------------------------------------------------------------------------


def test_a_new_database_has_every_table_at_the_current_schema_version(db: Path) -> None:
    with Store.open(db, create=True) as store:
        tables = {
            row[0]
            for row in store.conn.execute("SELECT name FROM sqlite_master WHERE type='table'")
        }
        assert tables >= OUR_TABLES
        assert store.conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
        assert store.conn.execute("PRAGMA foreign_keys").fetchone()[0] == 1
        assert store.conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        # Foreign keys are enforced, not just declared.
        with pytest.raises(sqlite3.IntegrityError):
            store.conn.execute(
                "INSERT INTO agents (run_id, position, name, technical) VALUES ('nope', 0, 'a', 1)"
            )
    # WAL is a property of the file: another reader sees it too.
    conn = sqlite3.connect(db)
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    conn.close()


def test_reopening_keeps_the_runs_and_does_not_migrate_again(db: Path) -> None:
    with Store.open(db, create=True) as store:
        import_file(store, EXAMPLES)
    before = dump(db)
    with Store.open(db) as store:
        assert store.count() == 3
        assert store.conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    assert dump(db) == before


def test_deleting_a_run_cascades_to_everything_under_it(examples: Store) -> None:
    examples.conn.execute("DELETE FROM runs WHERE id = 'seed-003'")
    assert examples.conn.execute(
        "SELECT count(*) FROM agents WHERE run_id = 'seed-003'"
    ).fetchone() == (0,)
    assert examples.conn.execute(
        "SELECT count(*) FROM trajectory_violations v JOIN trajectories t"
        " ON t.id = v.trajectory_id WHERE t.run_id = 'seed-003'"
    ).fetchone() == (0,)


def _refused_untouched(db: Path, create: bool = False) -> str:
    """The one line with which opening `db` fails, which leaves it byte for byte."""
    before = db.read_bytes()
    with pytest.raises(StoreError) as caught:
        Store.open(db, create=create)
    assert db.read_bytes() == before
    return one_line(caught.value)


def test_a_database_from_a_newer_ppp_tui_is_refused_and_left_byte_for_byte(db: Path) -> None:
    conn = sqlite3.connect(db)
    conn.execute("CREATE TABLE runs (id TEXT PRIMARY KEY, future TEXT)")
    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    conn.commit()
    conn.close()
    message = _refused_untouched(db)
    assert str(db) in message
    assert f"schema {SCHEMA_VERSION + 1}" in message
    assert "newer ppp-tui" in message and "upgrade" in message
    assert not Path(f"{db}-wal").exists()


def test_a_file_that_is_not_sqlite_is_one_clear_line(db: Path) -> None:
    db.write_bytes(random.Random(7).randbytes(8192))
    message = _refused_untouched(db)
    assert message.startswith(f"{db}: not a usable SQLite database")


@pytest.mark.parametrize("user_version", [0, 1, 2, SCHEMA_VERSION + 5])
def test_a_sqlite_database_of_another_program_is_refused_untouched(
    db: Path, user_version: int
) -> None:
    # Other programs set user_version too (spec-kit's consensus database says 2): a
    # database without our tables is someone else's, never "made by a newer ppp-tui",
    # and is not switched to WAL on the way.
    conn = sqlite3.connect(db)
    conn.execute("CREATE TABLE invoices (id INTEGER PRIMARY KEY, total REAL)")
    conn.execute("INSERT INTO invoices (total) VALUES (12.5)")
    conn.execute(f"PRAGMA user_version = {user_version}")
    conn.commit()
    conn.close()
    message = _refused_untouched(db, create=True)
    assert message == f"{db}: not a ppp-tui database (it has other tables: invoices)"


def test_a_missing_database_is_not_created_unless_asked(db: Path) -> None:
    with pytest.raises(StoreError) as caught:
        Store.open(db)
    message = one_line(caught.value)
    assert str(db) in message and "ppp-tui import" in message
    assert not db.exists()


def test_a_directory_is_not_a_database(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="is a directory"):
        Store.open(tmp_path, create=True)


def test_a_locked_database_is_reported_within_the_busy_timeout(
    examples: Store, db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(database, "BUSY_TIMEOUT_S", 0.2)
    holder = sqlite3.connect(db, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        started = time.monotonic()
        with Store.open(db) as second:
            extra = write_jsonl(db.parent / "more.jsonl", [simple_run("new", ("a", 0.5))])
            with pytest.raises(StoreError) as caught:
                import_file(second, extra)
            assert "locked" in one_line(caught.value)
            with pytest.raises(StoreError, match="locked"):
                second.mark("seed-000", "agent_a")
        assert time.monotonic() - started < 3.0
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    # Once the other process lets go, the same import goes through.
    with Store.open(db) as third:
        assert import_file(third, extra).added == 1
        assert third.marks("seed-000") == []


def test_opening_a_database_another_process_holds_exclusively_says_locked(
    db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A fresh file in rollback-journal mode: an exclusive lock blocks even reading it.
    monkeypatch.setattr(database, "BUSY_TIMEOUT_S", 0.2)
    holder = sqlite3.connect(db, isolation_level=None)
    holder.execute("CREATE TABLE runs (id TEXT)")
    holder.execute("DROP TABLE runs")
    holder.execute("BEGIN EXCLUSIVE")
    try:
        started = time.monotonic()
        with pytest.raises(StoreError) as caught:
            Store.open(db)
        assert "locked" in one_line(caught.value)
        assert time.monotonic() - started < 3.0
    finally:
        holder.execute("ROLLBACK")
        holder.close()


# --- importing ---------------------------------------------------------------------------------


def test_one_bad_run_rejects_the_whole_import_and_leaves_the_database_as_it_was(
    examples: Store, db: Path, tmp_path: Path
) -> None:
    examples.mark("seed-003", "claude")
    before, counts = dump(db), row_counts(db)
    bad = write_jsonl(
        tmp_path / "bad.jsonl",
        [
            simple_run("good-1", ("a", 0.5), preferred_agent="a"),
            simple_run("bad", ("a", 0.5), ("b", 1.5)),
            simple_run("good-2", ("a", 0.5)),
        ],
    )
    with pytest.raises(PPPError) as caught:
        import_file(examples, bad)
    message = one_line(caught.value)
    assert message == (
        f"{bad}:2: $.agents[1].technical_score: technical_score must be in [0, 1], got 1.5"
    )
    assert row_counts(db) == counts
    assert dump(db) == before


def test_a_bad_run_in_a_json_document_is_named_by_its_json_path(
    examples: Store, db: Path, tmp_path: Path
) -> None:
    before = dump(db)
    bad = tmp_path / "runs.json"
    bad.write_text(
        json.dumps(
            [
                simple_run("ok", ("a", 0.5)),
                {
                    "id": "bad",
                    "agents": [
                        {
                            "name": "a",
                            "technical_score": 0.5,
                            "trajectory": {"violations": [{"preference": "json", "severity": 3}]},
                        }
                    ],
                },
            ]
        )
    )
    with pytest.raises(PPPError) as caught:
        import_file(examples, bad)
    message = one_line(caught.value)
    assert message.startswith(f"{bad}: $[1].agents[0].trajectory.violations[0].severity:")
    assert "severity must be one of error, warning, minor, major, critical" in message
    assert dump(db) == before


def test_a_bad_run_after_a_flushed_batch_still_rolls_everything_back(
    examples: Store, db: Path, tmp_path: Path
) -> None:
    # More runs than one executemany batch: rows already written must go too.
    runs = [simple_run(f"bulk-{i}", ("a", 0.5), ("b", 0.25)) for i in range(rows_module.BATCH + 5)]
    runs.append({"id": "last", "agents": [{"name": "a"}]})
    bad = write_jsonl(tmp_path / "bulk.jsonl", runs)
    before = dump(db)
    with pytest.raises(
        PPPError, match=rf"bulk.jsonl:{len(runs)}: \$\.agents\[0\]: technical_score is required"
    ):
        import_file(examples, bad)
    assert dump(db) == before


def test_skip_invalid_imports_the_good_runs_and_reports_each_bad_one(
    store: Store, tmp_path: Path
) -> None:
    path = tmp_path / "mixed.jsonl"
    path.write_text(
        "\n".join(
            [
                json.dumps(simple_run("good-1", ("a", 0.5))),
                "{this is not json",
                json.dumps(simple_run("dup", ("a", 0.5), ("a", 0.4))),
                "",
                json.dumps(simple_run("good-2", ("a", 0.5), ("b", 0.9), preferred_agent="b")),
                json.dumps({"id": "no-agents"}),
            ]
        )
        + "\n"
    )
    report = import_file(store, path, skip_invalid=True)
    assert report.added == 2
    assert report.marks == 1
    assert [line.split(": ", 1)[0] for line in report.invalid] == [
        f"{path}:2",
        f"{path}:3",
        f"{path}:6",
    ]
    assert "invalid JSON" in report.invalid[0]
    assert "$.agents[1].name: duplicate agent name 'a'" in report.invalid[1]
    assert "$: agents is required" in report.invalid[2]
    assert [info.id for info in store.run_infos()] == ["good-1", "good-2"]


def test_progress_advances_once_per_record_good_bad_or_already_there(
    examples: Store, tmp_path: Path
) -> None:
    path = tmp_path / "five.jsonl"
    path.write_text(
        EXAMPLES.read_text().splitlines()[0]  # already imported
        + "\n{broken\n"
        + json.dumps(simple_run("new-1", ("a", 0.5)))
        + "\n"
        + json.dumps({"id": "bad", "agents": []})
        + "\n"
        + json.dumps(simple_run("new-2", ("a", 0.5)))
        + "\n"
    )
    steps: list[int] = []
    report = import_file(examples, path, skip_invalid=True, progress=steps.append)
    assert (report.added, report.skipped, len(report.invalid)) == (2, 1, 2)
    # The CLI's bar is sized by the file's five records: it must reach the end.
    assert sum(steps) == 5


def test_importing_the_same_file_twice_adds_nothing(examples: Store, db: Path) -> None:
    before = dump(db)
    report = import_file(examples, EXAMPLES)
    assert (report.added, report.skipped) == (0, 3)
    assert dump(db) == before


def test_runs_without_an_id_get_a_stable_content_id(store: Store, tmp_path: Path) -> None:
    first = simple_run(None, ("gemini", 0.85), ("claude", 0.95), stage="plan", task="Add login")
    second = simple_run(None, ("gemini", 0.85), ("claude", 0.9), stage="plan", task="Add login")
    path = write_jsonl(tmp_path / "anon.jsonl", [first, second])
    assert import_file(store, path).added == 2
    ids = [info.id for info in store.run_infos()]
    assert ids == [content_id(first), content_id(second)]
    assert all(re.fullmatch(r"run-[0-9a-f]{16}", run_id) for run_id in ids)
    # The same content in another key order and another file is the same run.
    reordered = {key: first[key] for key in reversed(list(first))}
    again = write_jsonl(tmp_path / "again.jsonl", [reordered, second])
    report = import_file(store, again)
    assert (report.added, report.skipped) == (0, 2)
    assert store.count() == 2


def test_a_run_twice_in_one_import_is_added_once(store: Store, tmp_path: Path) -> None:
    path = write_jsonl(
        tmp_path / "twice.jsonl",
        [simple_run("r1", ("a", 0.5)), simple_run("r1", ("a", 0.9)), simple_run("r2", ("a", 1))],
    )
    report = import_file(store, path)
    assert (report.added, report.skipped) == (2, 1)
    assert store.get_run("r1").agents[0].technical == 0.5


def test_unknown_preferences_are_reported_once(store: Store, tmp_path: Path) -> None:
    run = simple_run("r1", ("a", 0.5), preferences=["json", "no_commas", "emoji_only"])
    run["agents"][0]["trajectory"] = {"violations": [{"preference": "Haiku"}]}
    report = import_file(store, write_jsonl(tmp_path / "p.jsonl", [run]))
    assert report.unknown_preferences == {"emoji_only", "Haiku"}


# --- marks -------------------------------------------------------------------------------------


def test_a_preferred_agent_in_the_input_becomes_an_import_mark(
    store: Store, tmp_path: Path
) -> None:
    path = write_jsonl(
        tmp_path / "marked.jsonl",
        [simple_run("r1", ("gemini", 0.85), ("claude", 0.95), preferred_agent="claude")],
    )
    report = import_file(store, path)
    assert report.marks == 1
    (mark,) = store.marks("r1")
    assert (mark.agent, mark.source) == ("claude", "import")
    assert store.run_infos()[0].preferred == "claude"
    assert store.get_run("r1").preferred_agent == "claude"


def test_marks_keep_every_change_in_order_with_its_time(examples: Store) -> None:
    examples.mark("seed-003", "claude")
    examples.mark("seed-003", "gpt", source="app")
    examples.mark("seed-003", None)
    examples.mark("seed-003", "gemini")
    history = examples.marks("seed-003")
    assert [(m.agent, m.source) for m in history] == [
        ("claude", "cli"),
        ("gpt", "app"),
        (None, "cli"),
        ("gemini", "cli"),
    ]
    stamps = [m.marked_at for m in history]
    assert all(re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", s) for s in stamps)
    assert stamps == sorted(stamps)
    assert examples.get_run("seed-003").preferred_agent == "gemini"
    # Other runs have no history of their own.
    assert examples.marks("seed-000") == []


def test_a_cleared_mark_leaves_the_run_unmarked(examples: Store) -> None:
    examples.mark("run-0042", "aider")
    examples.mark("run-0042", None)
    info = {i.id: i for i in examples.run_infos()}["run-0042"]
    assert info.preferred is None
    assert Scores.load(examples, Settings()).outcome.marked_runs == 0


def test_marking_an_unknown_run_or_agent_is_an_error_and_records_nothing(
    examples: Store,
) -> None:
    with pytest.raises(StoreError) as caught:
        examples.mark("run-9999", "claude")
    assert one_line(caught.value) == "unknown run id 'run-9999'"
    with pytest.raises(StoreError) as caught:
        examples.mark("seed-003", "llama")
    assert one_line(caught.value) == (
        "seed-003: no agent named 'llama'; the agents are claude, gemini, gpt"
    )
    assert examples.conn.execute("SELECT count(*) FROM preferred_marks").fetchone() == (0,)


# --- reading runs back -------------------------------------------------------------------------


ROUND_TRIP_RUN: dict[str, Any] = {
    "id": "run-rt",
    "spec_id": "SPEC-KIT-007",
    "stage": "implement",
    "task": "Add OAuth2 login to the API",
    "created_at": "2025-11-16T10:00:00Z",
    "preferences": ["json", "no_commas", "no_ask"],
    "selected_agent": "gemini",
    "preferred_agent": "claude",
    "iterations": [8.1, 8.7, 9.2, 9.1],
    "agents": [
        {
            "name": "gemini",
            "model": "gemini-2.5-pro",
            "technical_score": 0.85,
            "relevance": 0.9,
            "confidence": 0.95,
            "output": "final artifact text",
            "trajectory": {
                "turns": [
                    {
                        "prompt": "Implement it",
                        "response": "Done.",
                        "token_count": 812,
                        "latency_ms": 2300,
                        "timestamp": "2025-11-16T10:00:03Z",
                    },
                    {"response": "Anything else?"},
                ],
                "questions": [
                    {"text": "Which database: PostgreSQL or MySQL?", "effort": "LOW", "turn": 1},
                    {"text": "Should we investigate the legacy session store first?"},
                ],
                "violations": [
                    {"preference": "no_commas", "severity": "error", "turn": 1},
                    {"preference": "json", "severity": "major", "penalty": 0.2},
                    {"preference": "made_up", "severity": "warning"},
                    {"preference": "capital", "severity": "critical"},
                    {"preference": "json", "severity": "minor", "penalty": 0},
                ],
            },
        },
        {
            "name": "claude",
            "technical_score": 0.95,
            "trajectory": {
                "turns": [
                    {
                        "prompt": "Implement it",
                        "response": "I can do that. Should I add refresh tokens? Done.",
                    }
                ]
            },
        },
        {"name": "codex", "technical_score": 0.7, "trajectory": {}},
        {"name": "aider", "technical_score": 0.6},
        {"name": "gpt", "technical_score": 0.8, "trajectory": None},
    ],
}


def test_get_run_gives_back_the_run_as_imported(store: Store, tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "rt.jsonl", [ROUND_TRIP_RUN])
    (record,) = list(read_records(str(path)))
    expected = record.parse()
    import_file(store, path)
    got = store.get_run("run-rt")
    assert got == expected

    gemini, claude, codex, aider, gpt = got.agents
    assert gemini.trajectory is not None
    assert [q.source for q in gemini.trajectory.questions] == [Source.LABEL, Source.CLASSIFIER]
    assert gemini.trajectory.questions[0].effort is Effort.LOW
    assert gemini.trajectory.questions[0].turn == 1
    assert [(v.severity, v.penalty) for v in gemini.trajectory.violations] == [
        (Severity.ERROR, None),
        (Severity.MAJOR, 0.2),
        (Severity.WARNING, None),
        (Severity.CRITICAL, None),
        (Severity.MINOR, 0.0),
    ]
    assert gemini.trajectory.turns[0].token_count == 812
    assert gemini.trajectory.turns[0].latency_ms == 2300
    assert gemini.trajectory.turns[1].prompt == ""
    # Questions found in the turns, and the checkers' verdicts for the stated preferences.
    assert claude.trajectory is not None
    assert [(q.text, q.source, q.turn) for q in claude.trajectory.questions] == [
        ("Should I add refresh tokens?", Source.EXTRACTED, 1)
    ]
    # json: the question is not a JSON object; no_ask: it asked; commas: none to object to.
    assert [(v.preference, v.source) for v in claude.trajectory.violations] == [
        ("json", Source.CHECKER),
        ("no_ask", Source.CHECKER),
    ]
    # `{}` is an empty trajectory; absent and null are no trajectory at all.
    assert codex.trajectory == Trajectory()
    assert aider.trajectory is None and gpt.trajectory is None
    assert got.iterations == (8.1, 8.7, 9.2, 9.1)
    assert got.preferences == ("json", "no_commas", "no_ask")


def test_get_run_of_an_unknown_id_is_an_error(examples: Store) -> None:
    with pytest.raises(StoreError) as caught:
        examples.get_run("nope")
    assert one_line(caught.value) == "unknown run id 'nope'"


def test_run_infos_list_runs_by_id_and_filter_by_stage(examples: Store) -> None:
    infos = examples.run_infos()
    assert [(i.id, i.stage, i.agents) for i in infos] == [
        ("run-0042", "plan", 2),
        ("seed-000", "implement", 2),
        ("seed-003", "implement", 3),
    ]
    assert infos[0].spec_id == "SPEC-KIT-042"
    assert [i.id for i in examples.run_infos("plan")] == ["run-0042"]
    assert examples.run_infos("audit") == []
    assert examples.stages() == ["implement", "plan"]
    assert examples.count() == 3


# --- the array path agrees with rank_run ---------------------------------------------------------


def check_against_rank_run(store: Store, settings: Settings, stage: str | None = None) -> int:
    """Every run's finals, best agent, ranks and regret from the arrays equal rank_run's."""
    scores = Scores.load(store, settings, stage)
    arrays, outcome, columns = scores.arrays, scores.outcome, scores.columns
    final = finals(scores)
    rank_table = ranks(outcome, arrays, final)
    r_proact = columns.to_slots(columns.r_proact(settings), np.nan)
    r_pers = columns.to_slots(columns.r_pers(settings), np.nan)
    expected_ids = [info.id for info in store.run_infos(stage)]
    assert list(arrays.run_ids) == expected_ids
    for i, run_id in enumerate(arrays.run_ids):
        run = store.get_run(run_id)
        ranking = rank_run(run, settings)
        slot = {arrays.names[i, s]: s for s in np.flatnonzero(arrays.valid[i])}
        assert sorted(slot) == sorted(a.name for a in run.agents), run_id
        assert arrays.names[i, outcome.selected[i]] == ranking.best_agent, run_id
        for agent in ranking.agents:
            s = slot[agent.name]
            assert final[i, s] == pytest.approx(agent.final, abs=1e-12), (run_id, agent)
            assert rank_table[i, s] == agent.rank, (run_id, agent.name)
            if agent.r_proact is None:
                assert np.isnan(r_proact[i, s]) and np.isnan(r_pers[i, s])
                assert np.isnan(arrays.interaction[i, s])
            else:
                assert r_proact[i, s] == pytest.approx(agent.r_proact, abs=1e-12)
                assert r_pers[i, s] == pytest.approx(agent.r_pers, abs=1e-12)
                assert arrays.interaction[i, s] == pytest.approx(agent.interaction, abs=1e-12)
        if run.preferred_agent is None:
            assert np.isnan(outcome.regret[i]) and not outcome.agree[i]
        else:
            preferred = ranking.agent(run.preferred_agent)
            assert preferred is not None
            assert outcome.regret[i] == pytest.approx(
                ranking.best.final - preferred.final, abs=1e-12
            )
            assert outcome.agree[i] == (ranking.best_agent == run.preferred_agent)
    return len(arrays.run_ids)


def test_the_seed_examples_come_out_of_the_database_exactly(examples: Store) -> None:
    settings = Settings()
    assert check_against_rank_run(examples, settings) == 3
    scores = Scores.load(examples, settings)
    arrays, outcome = scores.arrays, scores.outcome

    def finals(run_id: str) -> dict[str, float]:
        row = list(arrays.run_ids).index(run_id)
        return {
            arrays.names[row, s]: round(float(outcome.final[row, s]), 9)
            for s in np.flatnonzero(arrays.valid[row])
        }

    # Seed 000: agent_b (0.9, no questions) beats agent_a (1.0, three high) 0.645 to 0.25.
    assert finals("seed-000") == {"agent_a": 0.25, "agent_b": 0.645}
    seed_000 = list(arrays.run_ids).index("seed-000")
    assert arrays.names[seed_000, outcome.selected[seed_000]] == "agent_b"
    # Seed 003 with a stated json preference: 0.625, 0.530 and 0.566 (agent 3's is major).
    assert finals("seed-003") == {"gemini": 0.625, "claude": 0.53, "gpt": 0.566}
    # run-0042: aider has no trajectory, so its final is its technical score.
    assert finals("run-0042")["aider"] == 0.78


def test_a_penalty_change_needs_no_reimport(examples: Store) -> None:
    # Seed 003's gpt has one major violation: 0.03 by default, 0.3 here.
    heavy = Settings(personalization=PersonalizationSettings(major_penalty=0.3))
    scores = Scores.load(examples, heavy)
    row = list(scores.arrays.run_ids).index("seed-003")
    slot = list(scores.arrays.names[row]).index("gpt")
    assert scores.outcome.final[row, slot] == pytest.approx(0.7 * 0.8 + 0.3 * (0.05 - 0.3))
    check_against_rank_run(examples, heavy)


def test_ties_rank_by_technical_then_name_in_both_paths(store: Store, tmp_path: Path) -> None:
    # Under 0.7/0.3 all four score 0.435: tech 0.63 with interaction -0.02, tech 0.6 with
    # +0.05 (no questions, nothing stated), and two agents without a trajectory at 0.435.
    run = {
        "id": "tie",
        "stage": "implement",
        "preferred_agent": "b",
        "agents": [
            {"name": "b", "technical_score": 0.435},
            {"name": "x", "technical_score": 0.6, "trajectory": {}},
            {"name": "a", "technical_score": 0.435},
            {
                "name": "y",
                "technical_score": 0.63,
                "trajectory": {"violations": [{"preference": "json", "penalty": 0.07}]},
            },
        ],
    }
    import_file(store, write_jsonl(tmp_path / "tie.jsonl", [run]))
    settings = Settings()
    ranking = rank_run(store.get_run("tie"), settings)
    assert [a.name for a in ranking.agents] == ["y", "x", "a", "b"]
    assert [round(a.final, 9) for a in ranking.agents] == [0.435] * 4
    assert ranking.margin == pytest.approx(0.0, abs=1e-12)
    check_against_rank_run(store, settings)
    scores = Scores.load(store, settings)
    table = ranks(scores.outcome, scores.arrays)
    by_name = {scores.arrays.names[0, s]: int(table[0, s]) for s in range(4)}
    assert by_name == {"y": 1, "x": 2, "a": 3, "b": 4}
    # The preferred agent b ties the winner: regret 0, but no agreement.
    assert scores.outcome.regret[0] == pytest.approx(0.0, abs=1e-12)
    assert not scores.outcome.agree[0]


def test_penalties_from_config_toml_apply_by_alias_and_to_unknown_names(
    store: Store, tmp_path: Path
) -> None:
    config = tmp_path / "config.toml"
    config.write_text("[ppp.penalties]\nno_commas = 0.2\nmy_custom_pref = 0.07\n")
    settings = load_settings(config)

    def agent(name: str, preference: str) -> dict[str, Any]:
        return {
            "name": name,
            "technical_score": 0.9,
            "trajectory": {"violations": [{"preference": preference}]},
        }

    run = {
        "id": "penalties",
        "preferences": ["no_commas"],
        "agents": [
            agent("alias", "no_commas"),
            agent("canonical", "commas"),
            agent("custom", "my_custom_pref"),
            agent("unknown", "Haiku"),
        ],
    }
    import_file(store, write_jsonl(tmp_path / "p.jsonl", [run]))
    scores = Scores.load(store, settings)
    finals = {
        scores.arrays.names[0, s]: round(float(scores.outcome.final[0, s]), 9) for s in range(4)
    }
    # 0.7 * 0.9 + 0.3 * (0.05 - penalty): commas under either name 0.2, the configured
    # unknown 0.07, an unconfigured unknown the default 0.05.
    assert finals == {"alias": 0.585, "canonical": 0.585, "custom": 0.624, "unknown": 0.63}
    assert scores.arrays.names[0, scores.outcome.selected[0]] == "unknown"
    check_against_rank_run(store, settings)


# --- random runs -------------------------------------------------------------------------------

AGENT_NAMES = ("claude", "gemini", "gpt", "codex", "aider", "Qwen", "llama")
PREFERENCE_NAMES = (*CATALOGUE, "no_commas", "my_custom_pref", "Lang_Ita")
STAGE_NAMES = (*STAGE_TUNED, "review", None)
QUESTION_TEXTS = (
    "Which database: PostgreSQL or MySQL?",
    "Should we investigate distributed session stores before proceeding with the login work?",
    "Tabs or spaces?",
    "Could you research which identity providers our customers use and summarise them?",
    "What should the error message say when the token has expired?",
)


def random_trajectory(rng: random.Random) -> dict[str, Any] | None:
    kind = rng.random()
    if kind < 0.15:
        return None
    if kind < 0.25:
        return {}
    trajectory: dict[str, Any] = {}
    if rng.random() < 0.8:
        trajectory["questions"] = [
            {"text": rng.choice(QUESTION_TEXTS), "turn": rng.randint(1, 3)}
            | ({"effort": rng.choice(["low", "medium", "high"])} if rng.random() < 0.8 else {})
            for _ in range(rng.choice([0, 0, 1, 1, 2, 3, 5]))
        ]
    else:
        trajectory["turns"] = [
            {
                "prompt": "go",
                "response": rng.choice(["Done.", "Done. " + rng.choice(QUESTION_TEXTS)]),
            }
            for _ in range(rng.randint(1, 3))
        ]
    if rng.random() < 0.75:
        violations = []
        for _ in range(rng.choice([0, 0, 1, 1, 2, 4])):
            violation: dict[str, Any] = {"preference": rng.choice(PREFERENCE_NAMES)}
            if rng.random() < 0.8:
                violation["severity"] = rng.choice(
                    ["error", "error", "warning", "minor", "major", "critical"]
                )
            if rng.random() < 0.2:
                violation["penalty"] = rng.choice([0, 0.01, 0.07, 0.25, round(rng.random(), 3)])
            violations.append(violation)
        trajectory["violations"] = violations
    return trajectory


def random_run(rng: random.Random, number: int) -> dict[str, Any]:
    names = rng.sample(AGENT_NAMES, rng.randint(1, 5))
    agents = []
    for name in names:
        technical = (
            rng.choice([0.5, 0.6, 0.7, 0.8, 0.85, 0.9, 1.0])
            if rng.random() < 0.5
            else round(rng.random(), rng.choice([2, 3, 6]))
        )
        agent: dict[str, Any] = {"name": name, "technical_score": technical}
        # Some failed agents (never the last, which the marks below may pick), drawn
        # without touching the random stream so the runs stay what they were.
        if name != names[-1] and (number * 7 + len(name) + names.index(name)) % 6 == 0:
            agent["failure"] = "empty output"
        trajectory = random_trajectory(rng)
        if trajectory is not None or rng.random() < 0.5:
            agent["trajectory"] = trajectory
        agents.append(agent)
    run: dict[str, Any] = {
        "stage": rng.choice(STAGE_NAMES),
        "task": rng.choice(["Add OAuth2 login to the API", "Write the README", None]),
        "preferences": rng.sample(PREFERENCE_NAMES, rng.choice([0, 0, 1, 1, 2, 3])),
        "agents": agents,
    }
    if rng.random() < 0.15:
        run["preferences"] = ["no_preference"]
    if rng.random() < 0.8:
        run["id"] = f"random-{number}"
    else:
        run["created_at"] = f"2025-11-{1 + number % 28:02d}T10:00:00Z"  # unique content
    if rng.random() < 0.7:
        run["preferred_agent"] = rng.choice(names)
        for agent in agents:  # a failed agent cannot be the preferred one
            if agent["name"] == run["preferred_agent"]:
                agent.pop("failure", None)
    return run


@pytest.fixture(scope="module")
def random_store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Store]:
    rng = random.Random(2025)
    runs = [random_run(rng, n) for n in range(400)]
    # Every shape of tie: the same agents twice, and equal technical scores.
    runs.append(
        {
            "id": "all-equal",
            "stage": "review",
            "agents": [{"name": n, "technical_score": 0.8} for n in ("b", "a", "c")],
            "preferred_agent": "c",
        }
    )
    folder = tmp_path_factory.mktemp("random")
    path = write_jsonl(folder / "random.jsonl", runs)
    with Store.open(folder / "random.db", create=True) as opened:
        report = import_file(opened, path)
        assert report.added == len(runs) and not report.invalid
        # A few marks changed and cleared after the import.
        infos = opened.run_infos()
        for info in infos[:40:3]:
            run = opened.get_run(info.id)
            opened.mark(info.id, run.agents[-1].name)
        for info in infos[1:40:5]:
            opened.mark(info.id, None)
        yield opened


RANDOM_SETTINGS = {
    "defaults": Settings(),
    "stage tables": Settings(stage_weights={**STAGE_TUNED, "review": Weights.pair(0.5, 0.5)}),
    "neutral, stage tables": Settings(
        missing_trajectory="neutral",
        stage_weights={"plan": Weights.pair(0.6, 0.4), "audit": Weights.pair(0.8, 0.2)},
    ),
    "ppp disabled": Settings(enabled=False, stage_weights=STAGE_TUNED),
    "penalties and constants": Settings(
        weights=Weights.pair(0.55, 0.45),
        penalties={"no_commas": 0.2, "lang_ita": 0.3, "my_custom_pref": 0.07, "json": 0.0},
        proactivity=ProactivitySettings(low_effort_bonus=0.1, medium_penalty=0.2, high_penalty=0.4),
        personalization=PersonalizationSettings(
            compliance_bonus=0.03,
            warning_penalty=0.04,
            minor_penalty=0.015,
            major_penalty=0.06,
            critical_penalty=0.2,
        ),
    ),
    "paper preset": preset("paper").apply(Settings()),
    "all technical": Settings(weights=Weights.pair(1.0, 0.0)),
    "all interaction": Settings(weights=Weights.pair(0.0, 1.0), missing_trajectory="neutral"),
}


@pytest.mark.parametrize("name", list(RANDOM_SETTINGS))
def test_random_runs_score_the_same_from_the_database_as_run_by_run(
    random_store: Store, name: str
) -> None:
    settings = RANDOM_SETTINGS[name]
    assert check_against_rank_run(random_store, settings) == 401


@pytest.mark.parametrize("stage", ["plan", "review", None])
def test_one_stages_columns_are_that_stages_rows_of_the_whole(
    random_store: Store, stage: str | None
) -> None:
    settings = RANDOM_SETTINGS["penalties and constants"]
    whole = Scores.load(random_store, settings)
    part = Scores.load(random_store, settings, stage)
    if stage is None:
        assert len(part.arrays) == len(whole.arrays)
        return
    mask = whole.arrays.stages == stage
    assert list(part.arrays.run_ids) == list(whole.arrays.run_ids[mask])
    assert check_against_rank_run(random_store, settings, stage) == int(mask.sum())
    width = part.arrays.names.shape[1]
    np.testing.assert_allclose(part.outcome.final, whole.outcome.final[mask][:, :width])
    assert part.outcome.mean_regret == pytest.approx(whole.lines.subset(mask).outcome().mean_regret)


def test_the_random_database_has_what_the_generator_asked_for(random_store: Store) -> None:
    # Guard against a generator that silently stops covering a case.
    conn = random_store.conn
    sources = {row[0] for row in conn.execute("SELECT DISTINCT source FROM trajectory_questions")}
    assert sources == {"label", "classifier", "extracted"}
    severities = {
        row[0] for row in conn.execute("SELECT DISTINCT severity FROM trajectory_violations")
    }
    assert severities == {"error", "warning", "minor", "major", "critical"}
    assert (
        conn.execute(
            "SELECT count(*) FROM trajectory_violations WHERE penalty IS NOT NULL"
        ).fetchone()[0]
        > 10
    )
    assert (
        conn.execute(
            "SELECT count(*) FROM trajectory_violations WHERE source = 'checker'"
        ).fetchone()[0]
        > 0
    )
    no_trajectory = conn.execute(
        "SELECT count(*) FROM agents a LEFT JOIN trajectories t ON t.id = a.id WHERE t.id IS NULL"
    ).fetchone()[0]
    assert no_trajectory > 20
    assert conn.execute("SELECT count(*) FROM runs WHERE id LIKE 'run-%'").fetchone()[0] > 20
    assert {"no_commas", "my_custom_pref"} <= {
        row[0] for row in conn.execute("SELECT DISTINCT preference FROM trajectory_violations")
    }
    marked = Scores.load(random_store, Settings()).outcome.marked_runs
    assert 150 < marked < 401
    assert os.path.exists(random_store.path)


def _table_rows(path: Path) -> dict[str, list[tuple[object, ...]]]:
    conn = sqlite3.connect(path)
    tables = {}
    for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'"):
        order = {"run_scores": "run_id", "marks": "run_id, reviewer"}.get(name, "rowid")
        rows = conn.execute(f"SELECT * FROM {name} ORDER BY {order}").fetchall()
        # imported_at / marked_at are times of the import itself.
        tables[name] = [
            tuple(
                v
                for v in row
                if not (isinstance(v, str) and v.endswith("Z") and v[:2] == "20" and "T" in v)
            )
            for row in rows
        ]
    conn.close()
    return tables


def test_parallel_parsing_writes_exactly_what_one_process_writes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Big JSON Lines imports parse in worker processes: same rows, same report."""
    from ppp_tui.storage import importer
    from ppp_tui.storage.demo import generate

    lines = [json.dumps(run) for run in generate(2400, seed=5)]
    # Duplicates spread across batches, and bad lines for --skip-invalid.
    lines += lines[10:20] + lines[1500:1510]
    lines.insert(700, "{not json")
    lines.insert(1800, json.dumps({"id": "bad", "agents": [{"name": "x", "technical_score": 2}]}))
    source = tmp_path / "runs.jsonl"
    source.write_text("\n".join(lines) + "\n")

    def run_import(path: Path) -> tuple[int, int, list[str]]:
        with Store.open(path, create=True) as store:
            report = store.import_records(read_records(str(source)), skip_invalid=True)
        return report.added, report.skipped, report.invalid

    parallel = run_import(tmp_path / "parallel.db")
    monkeypatch.setattr(importer, "_can_fork", lambda: False)
    single = run_import(tmp_path / "single.db")
    assert parallel == single
    assert parallel[0] == 2400 and parallel[1] == 20 and len(parallel[2]) == 2
    assert _table_rows(tmp_path / "parallel.db") == _table_rows(tmp_path / "single.db")


# --- run_scores: the packed columns --------------------------------------------------------


def _copy(store: Store, tmp_path: Path) -> Path:
    copy = tmp_path / "copy.db"
    target = sqlite3.connect(copy)
    store.conn.backup(target)
    target.close()
    return copy


def test_marked_only_loads_exactly_the_marked_rows_of_the_whole(random_store: Store) -> None:
    settings = RANDOM_SETTINGS["penalties and constants"]
    whole = Scores.load(random_store, settings)
    marked = Scores.load(random_store, settings, marked_only=True)
    mask = whole.arrays.marked
    assert list(marked.arrays.run_ids) == list(whole.arrays.run_ids[mask])
    assert marked.arrays.marked.all()
    assert marked.outcome.marked_runs == whole.outcome.marked_runs
    assert marked.outcome.mean_regret == pytest.approx(whole.outcome.mean_regret, abs=1e-12)
    assert marked.outcome.agreement == whole.outcome.agreement
    width = marked.arrays.names.shape[1]
    np.testing.assert_allclose(marked.outcome.final, whole.outcome.final[mask][:, :width])


def _describe_schema(conn: sqlite3.Connection) -> dict[str, Any]:
    """Every table's columns, foreign keys and indexes (by columns), and the triggers."""
    found: dict[str, Any] = {}
    for (table,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'"):
        columns = [row[1:] for row in conn.execute(f"PRAGMA table_info({table})")]
        keys = sorted(row[2:] for row in conn.execute(f"PRAGMA foreign_key_list({table})"))
        indexes = sorted(
            (row[2], tuple(c[2] for c in conn.execute(f"PRAGMA index_info('{row[1]}')")))
            for row in conn.execute(f"PRAGMA index_list({table})")
        )
        found[table] = (columns, keys, indexes)
    found["triggers"] = sorted(
        conn.execute("SELECT name, tbl_name FROM sqlite_master WHERE type = 'trigger'")
    )
    return found


def test_a_hand_written_version_1_database_migrates_to_the_schema_a_new_one_has(
    tmp_path: Path,
) -> None:
    # New databases are made with sqlite-utils; one made by the SQL of old must end up
    # with the same columns, types, defaults, keys, cascades and indexes.
    old = tmp_path / "old.db"
    conn = sqlite3.connect(old)
    conn.executescript((Path(__file__).parent / "data" / "schema1.sql").read_text())
    conn.execute("PRAGMA user_version = 1")
    conn.close()
    with Store.open(old) as migrated, Store.open(tmp_path / "new.db", create=True) as new:
        assert _describe_schema(migrated.conn) == _describe_schema(new.conn)
        agents = _describe_schema(new.conn)["agents"]
        assert ("runs", "run_id", "id", "NO ACTION", "CASCADE", "NONE") in agents[1]
        assert (1, ("run_id", "name")) in agents[2]  # an agent's name is unique in its run
        new.conn.execute(
            "INSERT INTO runs (id, task_type, agents, imported_at) VALUES ('r', 't', 0, 'x')"
        )
        new.conn.execute(
            "INSERT INTO agents (run_id, position, name, technical) VALUES ('r', 0, 'a', 1)"
        )
        with pytest.raises(sqlite3.IntegrityError):
            new.conn.execute(
                "INSERT INTO agents (run_id, position, name, technical) VALUES ('r', 1, 'a', 1)"
            )


def test_a_version_1_database_gets_its_packs_on_opening(
    random_store: Store, tmp_path: Path
) -> None:
    expected = random_store.conn.execute("SELECT * FROM run_scores ORDER BY run_id").fetchall()
    path = _copy(random_store, tmp_path)
    conn = sqlite3.connect(path)
    conn.execute("DROP TABLE run_scores")
    for (trigger,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'"):
        conn.execute(f"DROP TRIGGER {trigger}")
    conn.execute("PRAGMA user_version = 1")
    conn.commit()
    conn.close()
    with Store.open(path) as store:
        assert store.conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
        found = store.conn.execute("SELECT * FROM run_scores ORDER BY run_id").fetchall()
        assert found == expected and len(found) == store.count()
        assert check_against_rank_run(store, RANDOM_SETTINGS["penalties and constants"]) == 401


def test_agents_edited_outside_ppp_tui_are_read_from_agents(
    random_store: Store, tmp_path: Path
) -> None:
    path = _copy(random_store, tmp_path)
    conn = sqlite3.connect(path)
    # A run of 3+ agents whose last agent has violations: deleting its first agent leaves
    # a gap in the positions, so slots and positions part ways.
    run_id, _ = conn.execute(
        "SELECT run_id, max(position) FROM agents GROUP BY run_id"
        " HAVING count(*) >= 3 AND max(CASE WHEN violations > 0 THEN position END) = max(position)"
    ).fetchone()
    conn.execute("PRAGMA foreign_keys = ON")
    conn.execute("DELETE FROM agents WHERE run_id = ? AND position = 0", [run_id])
    conn.execute("DELETE FROM marks WHERE run_id = ?", [run_id])
    conn.execute("UPDATE agents SET technical = 0.123 WHERE id = (SELECT min(id) FROM agents)")
    conn.commit()
    stale = conn.execute(
        "SELECT count(*) FROM runs WHERE id NOT IN (SELECT run_id FROM run_scores)"
    ).fetchone()[0]
    conn.close()
    assert stale == 2  # the triggers dropped both runs' packs
    with Store.open(path) as store:
        for name in ("defaults", "penalties and constants"):
            assert check_against_rank_run(store, RANDOM_SETTINGS[name]) == 401
        run = store.get_run(run_id)
        assert len(run.agents) >= 2 and run.agents[-1].trajectory is not None


@pytest.mark.filterwarnings("ignore:invalid value:RuntimeWarning")  # nan rows, masked
def test_a_run_with_no_agents_left_loads_as_an_empty_row(examples: Store) -> None:
    examples.conn.execute("DELETE FROM agents WHERE run_id = 'seed-000'")
    scores = Scores.load(examples, Settings())
    row = list(scores.arrays.run_ids).index("seed-000")
    assert not scores.arrays.valid[row].any()
    assert len(scores.arrays.run_ids) == 3


@pytest.mark.parametrize("limit", [1, 37, 1000])
def test_the_first_runs_load_as_the_first_rows_of_the_whole(
    random_store: Store, limit: int
) -> None:
    settings = RANDOM_SETTINGS["penalties and constants"]
    whole = Scores.load(random_store, settings)
    first = Scores.load(random_store, settings, limit=limit)
    count = min(limit, len(whole.arrays))
    assert list(first.arrays.run_ids) == list(whole.arrays.run_ids[:count])
    assert [i.id for i in random_store.run_infos()][:count] == list(first.arrays.run_ids)
    width = first.arrays.names.shape[1]
    assert limit == 1 or first.columns.penalty.any()  # violations are summed
    np.testing.assert_allclose(first.outcome.final, whole.outcome.final[:count, :width])
    np.testing.assert_array_equal(first.outcome.selected, whole.outcome.selected[:count])
    np.testing.assert_allclose(
        first.columns.penalty, whole.columns.penalty[: len(first.columns.penalty)]
    )


@pytest.mark.parametrize("name", sorted(RANDOM_SETTINGS))
def test_the_first_page_without_numpy_matches_the_arrays(random_store: Store, name: str) -> None:
    # The app's first page (plain PPP formulas) shows what the whole load (arrays) shows.
    settings = RANDOM_SETTINGS[name]
    whole = Scores.load(random_store, settings)
    outcome = whole.lines.outcome(*whole.arrays.weights(settings))
    page = first_page(random_store, settings, 400)
    assert page is not None and page[1] == 401
    rows = page[0]
    # The runs list's first order: the newest first, then the runs without a time by id.
    infos = random_store.run_infos()
    newest = sorted(infos, key=_newest_first)
    assert [i.id for i in rows.infos] == [i.id for i in newest[:400]]
    assert rows.newest_first and rows.infos[0].created_at and not rows.infos[-1].created_at
    place = {run_id: k for k, run_id in enumerate(whole.arrays.run_ids)}
    at = np.array([place[i.id] for i in rows.infos])
    assert list(rows.selected) == list(whole.arrays.names[at, outcome.selected[at]])
    # The same arithmetic in the same order: the same bits, nan where unmarked.
    np.testing.assert_array_equal(np.array(rows.regret), outcome.regret[at])
    assert np.isfinite(outcome.regret[at]).sum() > 100


def _newest_first(info: RunInfo) -> tuple[bool, float]:
    """The runs list's first order, the plain way (a stable sort of runs by id)."""
    at = moment(info.created_at)
    return (at is None, -(at or 0.0))


def test_the_first_page_is_none_when_the_whole_database_fits(random_store: Store) -> None:
    assert first_page(random_store, Settings(), 401) is None


def test_the_newest_runs_come_first_then_those_without_a_time(tmp_path: Path) -> None:
    times = {
        "a": "2026-01-02T10:00:00Z",
        "b": None,
        "c": "yesterday",  # no time: with the runs without one, though it sorts after digits
        "d": "2026-01-03T08:00:00Z",
        "e": "2026-01-02T10:00:00Z",  # as new as a: by id
        "f": "2025-12-31",
    }
    agents = [{"name": "x", "technical_score": 0.5}]
    with Store.open(tmp_path / "t.db", create=True) as store:
        store.import_records(
            Record("t", None, "$", {"id": i, "created_at": t, "agents": agents})
            for i, t in times.items()
        )
        assert store.newest_ids(10) == ["d", "a", "e", "f", "b", "c"]
        assert store.newest_ids(5) == ["d", "a", "e", "f", "b"]
        assert store.newest_ids(2) == ["d", "a"]
        # The same order as the whole list's: by moment, the rest by id.
        infos = store.run_infos()
        assert [i.id for i in infos] == sorted(times)
        assert [i.id for i in sorted(infos, key=_newest_first)] == store.newest_ids(10)
        assert [i.id for i in store.run_infos(ids=["f", "b", "d"])] == ["f", "b", "d"]
        assert [r.id for r in store.first_runs(Settings(), ["f", "b", "d"])] == ["f", "b", "d"]


def test_an_import_lifts_the_insert_trigger_only_while_it_runs(
    examples: Store, tmp_path: Path
) -> None:
    triggers = {
        row[0]
        for row in examples.conn.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'")
    }
    assert triggers == {
        "run_scores_agent_insert",
        "run_scores_agent_update",
        "run_scores_agent_delete",
        "technical_changed",
        "effort_changed",
    }
    # An agent added to a run outside ppp-tui drops the run's pack; the run is read
    # from agents, new agent included.
    examples.conn.execute(
        "INSERT INTO agents (run_id, position, name, technical) VALUES ('seed-000', 9, 'late', 1.0)"
    )
    assert not examples.conn.execute(
        "SELECT 1 FROM run_scores WHERE run_id = 'seed-000'"
    ).fetchall()
    assert check_against_rank_run(examples, Settings()) == 3
    # A failed import leaves the trigger in place too.
    bad = write_jsonl(tmp_path / "bad.jsonl", [simple_run("x", ("a", 2.0))])
    with pytest.raises(PPPError):
        import_file(examples, bad)
    assert (
        examples.conn.execute(
            "SELECT count(*) FROM sqlite_master WHERE name = 'run_scores_agent_insert'"
        ).fetchone()[0]
        == 1
    )


@pytest.mark.parametrize(
    "values",
    [
        (),
        (7.5,),
        (6.0, 7.25, 0.1 + 0.2, -0.0, 1e22, 5e-324, -2.5e-300),
        (float("inf"), 1.0),
        (float("-inf"),),
        (float("nan"), 2.0),
        (1, 2.5),
        (True, 1.0),
    ],
)
def test_iterations_are_written_as_json_dumps_writes_them(values: tuple[Any, ...]) -> None:
    assert rows_module.floats_json(values) == json.dumps(values)
