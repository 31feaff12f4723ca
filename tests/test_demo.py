"""The demo data set: deterministic, valid SPEC 1 runs with everything the app can show."""

from __future__ import annotations

import io
import json
import os
import random
import re
import subprocess
import sys
import threading
from collections import Counter
from collections.abc import Mapping
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from helpers import table_rows

from ppp_tui.core import model
from ppp_tui.core.arrays import ScoreArrays
from ppp_tui.core.early_stop import analyse
from ppp_tui.core.effort import answered_by
from ppp_tui.core.errors import PPPError
from ppp_tui.core.preferences import is_known
from ppp_tui.core.relevance import TaskType, task_type
from ppp_tui.core.runs import makers, run_from_dict
from ppp_tui.core.scoring import rank_run
from ppp_tui.core.settings import STAGES, Settings
from ppp_tui.core.tuning import tune
from ppp_tui.storage import demo
from ppp_tui.storage.demo import draw, generator, writer
from ppp_tui.storage.files import read_records
from ppp_tui.storage.store import Store

Json = dict[str, Any]


@pytest.fixture(scope="module")
def raw() -> list[Json]:
    return list(demo.generate(demo.DEMO_SIZE, seed=0))


@pytest.fixture(scope="module")
def parsed(raw: list[Json]) -> list[model.Run]:
    return [run_from_dict(run) for run in raw]


def agents(raw: list[Json]) -> list[Json]:
    return [agent for run in raw for agent in run["agents"]]


def test_same_seed_same_runs_and_another_seed_other_runs() -> None:
    first = list(demo.generate(300, seed=5))
    assert first == list(demo.generate(300, seed=5))
    assert json.dumps(first) == json.dumps(list(demo.generate(300, seed=5)))
    other = list(demo.generate(300, seed=6))
    assert other != first
    assert [r["task"] for r in other] != [r["task"] for r in first]


def test_output_does_not_depend_on_hash_randomisation() -> None:
    code = (
        "import json; from ppp_tui.storage import demo;"
        " print(json.dumps(list(demo.generate(150, 4))))"
    )
    env = {**os.environ, "PYTHONHASHSEED": "123"}
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    ).stdout
    assert json.loads(out) == list(demo.generate(150, 4))


def test_default_size_and_edge_counts() -> None:
    assert demo.DEMO_SIZE == 2000
    assert list(demo.generate(0)) == []
    assert len(list(demo.generate(1, seed=3))) == 1
    with pytest.raises(ValueError):
        list(demo.generate(-1))


def test_runs_are_json_and_read_back_as_import_would(raw: list[Json], tmp_path: Path) -> None:
    assert len(raw) == demo.DEMO_SIZE
    path = tmp_path / "demo.jsonl"
    path.write_text("\n".join(json.dumps(run) for run in raw) + "\n", encoding="utf-8")
    read = [record.parse() for record in read_records(str(path))]
    assert [run.id for run in read] == [run["id"] for run in raw]


def test_every_run_parses_and_selected_is_the_default_pick(
    raw: list[Json], parsed: list[model.Run]
) -> None:
    settings = Settings()
    for run in parsed:
        assert run.selected_agent == rank_run(run, settings).best_agent
    assert len({run.id for run in parsed}) == len(parsed)
    assert all(re.fullmatch(r"demo-\d{6}", run["id"]) for run in raw)
    assert raw[0]["id"] == "demo-000001"


def test_generate_parsed_pairs_each_run_with_its_parse() -> None:
    pairs = list(demo.generate_parsed(200, seed=9))
    assert [raw for raw, _ in pairs] == list(demo.generate(200, seed=9))
    for raw, run in pairs:
        assert run == run_from_dict(raw)


def test_timestamps_are_ordered_iso_and_spread_over_about_ninety_days(raw: list[Json]) -> None:
    stamps = [run["created_at"] for run in raw]
    assert all(re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", s) for s in stamps)
    assert stamps == sorted(stamps)
    first = datetime.fromisoformat(stamps[0].replace("Z", "+00:00"))
    last = datetime.fromisoformat(stamps[-1].replace("Z", "+00:00"))
    assert 80 <= (last - first).days <= 90
    turn_stamps = [
        turn["timestamp"]
        for agent in agents(raw)
        for turn in agent.get("trajectory", {}).get("turns", [])
    ]
    assert turn_stamps and all(s.endswith("Z") for s in turn_stamps)


def test_all_stages_some_without_stage_and_spec_ids(raw: list[Json]) -> None:
    stages = Counter(run.get("stage") for run in raw)
    assert set(STAGES) < set(stages)
    assert 0 < stages[None] < 0.1 * len(raw)
    spec_ids = [run["spec_id"] for run in raw if "spec_id" in run]
    assert all(re.fullmatch(r"SPEC-KIT-\d{3,}", s) for s in spec_ids)
    assert 20 < len(set(spec_ids)) < len(raw)


def test_task_texts_cover_every_task_type(parsed: list[model.Run]) -> None:
    types = Counter(task_type(run.task) for run in parsed)
    assert set(types) == set(TaskType)
    assert min(types.values()) > 0.03 * len(parsed)
    assert len({run.task for run in parsed}) > 500


def test_agents_are_realistic(raw: list[Json]) -> None:
    names = Counter(agent["name"] for agent in agents(raw))
    assert {"claude-code", "codex", "gemini-cli", "aider", "cursor", "copilot"} <= set(names)
    assert all(2 <= len(run["agents"]) <= 5 for run in raw)
    for agent in agents(raw):
        assert agent["model"]
        assert 0.0 <= agent["relevance"] <= 1.0
        assert 0.0 <= agent["confidence"] <= 1.0
        assert 0.0 <= agent["technical_score"] <= 1.0
    assert any(agent["relevance"] < 0.5 for agent in agents(raw))


def test_agents_have_their_own_character(parsed: list[model.Run]) -> None:
    high: Counter[str] = Counter()
    asked: Counter[str] = Counter()
    technical: dict[str, list[float]] = {}
    for run in parsed:
        for agent in run.agents:
            technical.setdefault(agent.name, []).append(agent.technical)
            if agent.trajectory is not None:
                asked[agent.name] += len(agent.trajectory.questions)
                high[agent.name] += agent.trajectory.effort_counts()[2]
    mean = {name: sum(values) / len(values) for name, values in technical.items()}
    # claude-code: technically the strongest, and the most high-effort questions.
    assert max(mean, key=mean.__getitem__) == "claude-code"
    assert max(high, key=high.__getitem__) == "claude-code"
    assert asked["codex"] < asked["claude-code"] / 2


def test_trajectories_absent_empty_and_full(raw: list[Json]) -> None:
    all_agents = agents(raw)
    absent = sum("trajectory" not in agent for agent in all_agents)
    empty = sum(agent.get("trajectory") == {} for agent in all_agents)
    assert 0.03 * len(all_agents) < absent < 0.2 * len(all_agents)
    assert 0 < empty < absent


def test_questions_of_every_effort_labelled_classified_and_extracted(
    raw: list[Json], parsed: list[model.Run]
) -> None:
    efforts: Counter[model.Effort] = Counter()
    sources: Counter[model.Source] = Counter()
    from_context = 0
    for run in parsed:
        for agent in run.agents:
            if agent.trajectory is None:
                continue
            for question in agent.trajectory.questions:
                efforts[question.effort] += 1
                sources[question.source] += 1
                if question.source is not model.Source.LABEL and answered_by(
                    question.text, run.task
                ):
                    from_context += 1
    assert set(efforts) == set(model.Effort)
    assert all(count > 0.1 * sum(efforts.values()) for count in efforts.values())
    assert set(sources) >= {model.Source.LABEL, model.Source.CLASSIFIER, model.Source.EXTRACTED}
    assert from_context > 10  # questions whose answer is in the task text
    texts = {q["text"] for a in agents(raw) for q in a.get("trajectory", {}).get("questions", [])}
    assert len(texts) > 300


def test_preferences_and_violations(raw: list[Json], parsed: list[model.Run]) -> None:
    counts = Counter(len(run.get("preferences", [])) for run in raw)
    assert {0, 1, 2, 3} <= set(counts)
    stated = [p for run in raw for p in run.get("preferences", [])]
    assert "no_preference" in stated
    assert all(is_known(p) for p in stated)
    violated: Counter[str] = Counter()
    severities: Counter[str] = Counter()
    penalties = 0
    for agent in agents(raw):
        for violation in agent.get("trajectory", {}).get("violations", []):
            violated[violation["preference"]] += 1
            severities[violation.get("severity", "error")] += 1
            penalties += "penalty" in violation
    assert len(violated) >= 4
    assert set(severities) == {"error", "warning", "minor", "major", "critical"}
    assert penalties > 0
    # Some agents leave their violations to the rule checkers.
    checked = {
        v.preference
        for run in parsed
        for agent in run.agents
        if agent.trajectory is not None
        for v in agent.trajectory.violations
        if v.source is model.Source.CHECKER
    }
    assert len(checked) >= 3


def test_iterations_improve_plateau_and_regress(parsed: list[model.Run]) -> None:
    series = [run.iterations for run in parsed if run.iterations]
    assert len(series) > 0.4 * len(parsed)
    assert all(3 <= len(s) <= 8 for s in series)
    reasons = Counter(analyse(s).reason for s in series)
    assert {"plateau", "regression", "completed"} <= set(reasons)


def test_about_forty_percent_of_runs_have_a_preferred_agent(parsed: list[model.Run]) -> None:
    share = sum(run.preferred_agent is not None for run in parsed) / len(parsed)
    assert 0.35 < share < 0.45


def test_preferred_follows_the_hidden_weights(parsed: list[model.Run]) -> None:
    hidden = demo.hidden_settings()
    marked = [run for run in parsed if run.preferred_agent is not None]
    agree = sum(rank_run(run, hidden).best_agent == run.preferred_agent for run in marked)
    assert agree > 0.85 * len(marked)


def test_tuning_recovers_the_hidden_weight(parsed: list[model.Run]) -> None:
    settings = Settings()
    arrays = ScoreArrays.from_runs(parsed, settings)
    tuning = tune(arrays.lines(settings), current=0.7)
    assert tuning is not None
    assert abs(tuning.technical - demo.HIDDEN_TECHNICAL) < 0.1
    assert tuning.mean_regret < tuning.before_mean_regret


def test_write_demo_builds_a_database_and_keeps_a_full_one(tmp_path: Path) -> None:
    path = tmp_path / "demo.db"
    report = demo.write_demo(path, 300, seed=2)
    expected = list(demo.generate(300, seed=2))
    assert report.added == 300
    assert report.marks == sum("preferred_agent" in run for run in expected)
    with Store.open(path) as store:
        assert store.count() == 300
        assert store.get_run("demo-000042") == run_from_dict(expected[41])
    with pytest.raises(PPPError, match="--replace"):
        demo.write_demo(path, 10, seed=2)
    steps: list[int] = []
    demo.write_demo(path, 20, seed=3, replace=True, progress=steps.append)
    assert sum(steps) == 20
    with Store.open(path) as store:
        assert store.count() == 20


@pytest.mark.parametrize("runs", [400, 300])
def test_the_bulk_loaded_demo_is_the_database_an_ordinary_import_makes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, runs: int
) -> None:
    import sqlite3

    # 400 runs: the indexes are made between the first chunk and the last two; 300: two
    # chunks, one per worker, the indexes after both.
    monkeypatch.setattr(generator, "CHUNK", 150)
    monkeypatch.setattr(writer, "_workers", lambda: 2)
    bulk, plain = tmp_path / "bulk.db", tmp_path / "plain.db"
    demo.write_demo(bulk, runs, seed=5)  # chunk workers writing into a scratch file
    monkeypatch.setattr(writer, "_workers", lambda: 1)
    demo.write_demo(plain, runs, seed=5)  # one process, an ordinary import
    assert table_rows(bulk) == table_rows(plain)
    schema = "SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY type, name"
    conn = sqlite3.connect(bulk)
    try:
        # Every index is there again, the file is in WAL mode on its own, and whole.
        assert conn.execute(schema).fetchall() == sqlite3.connect(plain).execute(schema).fetchall()
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        assert conn.execute("PRAGMA foreign_key_check").fetchall() == []
    finally:
        conn.close()
    assert not Path(f"{bulk}-wal").exists() or Path(f"{bulk}-wal").stat().st_size == 0
    with Store.open(bulk) as store, Store.open(plain) as other:
        assert store.conn.execute("PRAGMA foreign_keys").fetchone()[0] == 1
        assert store.count() == runs
        # Full-text search builds its index on the bulk loaded database as on any other.
        found = store.search("rate limit")
        assert found and found == other.search("rate limit")
        assert store.search_index_current()


def test_chunks_are_written_in_their_order_whichever_is_made_first(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import time

    def first_chunk_late(seed: int, times: Any, chunk: int) -> Any:
        if chunk == 0:
            time.sleep(1.0)  # the second worker has chunk 1 ready long before
        return generator._chunk_models(seed, times, chunk)

    monkeypatch.setattr(generator, "CHUNK", 150)
    monkeypatch.setattr(writer, "_workers", lambda: 2)
    monkeypatch.setattr(writer, "_chunk_models", first_chunk_late)
    odd = tmp_path / "a folder ?#%20 named oddly"  # the workers' URI must name it exactly
    late, plain = odd / "late.db", tmp_path / "plain.db"
    demo.write_demo(late, 300, seed=4)
    monkeypatch.setattr(writer, "_workers", lambda: 1)
    demo.write_demo(plain, 300, seed=4)
    # Written as soon as made, chunk 1's agents and trajectories would take ids 1, 2...
    assert table_rows(late) == table_rows(plain)


def test_a_chunk_worker_that_cannot_write_ends_the_demo_in_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import sqlite3

    from click.testing import CliRunner

    from ppp_tui.cli import cli
    from ppp_tui.storage import database, store

    db = tmp_path / "demo.db"
    demo.write_demo(db, 30, seed=1)
    written = db.read_bytes()

    def disk_full(path: Path, tables: Any) -> None:
        if tables[0][0][0] == "demo-000301":  # the third chunk, after the indexes
            raise database.database_error(path, sqlite3.OperationalError("disk is full"))
        real(path, tables)

    real = store.bulk_write
    monkeypatch.setattr(store, "bulk_write", disk_full)
    monkeypatch.setattr(generator, "CHUNK", 150)
    monkeypatch.setattr(writer, "_workers", lambda: 2)
    children = set(_children(os.getpid()))
    result = CliRunner().invoke(cli, ["demo", "--runs", "600", "--db", str(db), "--replace"])
    assert result.exit_code == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: "), result.stderr
    assert lines[0].endswith("database error: disk is full")
    assert "Traceback" not in result.output
    # The old database as it was, no scratch file left, no worker left behind.
    assert db.read_bytes() == written
    assert sorted(path.name for path in tmp_path.iterdir()) == ["demo.db"]
    assert not [pid for pid in _children(os.getpid()) if pid not in children and _running(pid)]


def test_a_bulk_writer_never_creates_a_missing_database(tmp_path: Path) -> None:
    from ppp_tui.storage.rows import Rows
    from ppp_tui.storage.store import bulk_write

    rows = Rows("2026-01-01T00:00:00Z", 0)
    for _, run in demo.generate_parsed(3, seed=1):
        rows.add(run)
    gone = tmp_path / "gone.db"  # a scratch file thrown away meanwhile
    with pytest.raises(PPPError, match=r"gone\.db: database error: unable to open"):
        bulk_write(gone, rows.take())
    assert list(tmp_path.iterdir()) == []


# --- the same demo, however fast it is made --------------------------------------------------


def _export_digest(tmp_path: Path, runs: int, seed: int) -> str:
    """The first 16 hex digits of the SHA-256 of `ppp-tui export --format json` of a demo
    database made by `ppp-tui demo` (default settings: no config file anywhere), its
    generated runs' rows written compactly."""
    import hashlib

    binary = Path(sys.executable).parent / "ppp-tui"
    env = {k: v for k, v in os.environ.items() if not k.startswith("PPP_TUI_")}
    env.update(XDG_CONFIG_HOME=str(tmp_path / "config"), XDG_DATA_HOME=str(tmp_path / "data"))
    db = str(tmp_path / f"demo-{runs}-{seed}.db")

    def run(*args: str) -> bytes:
        return subprocess.run(
            [str(binary), *args], env=env, cwd=tmp_path, capture_output=True, check=True
        ).stdout

    run("demo", "--runs", str(runs), "--seed", str(seed), "--db", db)
    rows = json.loads(run("export", "--format", "json", "--db", db))
    # The generated runs only: the three runs read from sessions come on top, the same
    # whatever the size and seed.
    generated = [row for row in rows if not row["run_id"].startswith("session-")]
    assert len(rows) - len(generated) == 7  # their agents: 3 + 2 + 2
    text = json.dumps(generated, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


@pytest.mark.parametrize(
    ("runs", "seed", "digest"),
    [(2000, 0, "d4dc6e4b8ec35955"), (10_000, 7, "8427b6ee33842dc3")],
)
def test_the_demo_data_stays_the_same(tmp_path: Path, runs: int, seed: int, digest: str) -> None:
    # The default demo (one process) and a demo made by chunk workers: a faster
    # generator must give the very same scores, row for row.
    assert _export_digest(tmp_path, runs, seed) == digest


def test_each_run_built_beside_its_raw_dict_is_its_parse() -> None:
    # The generator builds each Run directly instead of parsing its dict back: the two
    # must not differ even in a value's type (an Effort or a str, an int or a float).
    for raw, run in demo.generate_parsed(2500, seed=12):
        assert repr(run) == repr(run_from_dict(raw))
        assert run.selected_agent == rank_run(run, Settings()).best_agent


def test_the_runs_made_without_raw_objects_are_the_runs_made_with_them() -> None:
    # A demo's chunk workers make only the Runs (no raw dicts): from the same draws.
    times = draw._timestamps(random.Random("12:time"), 2 * generator.CHUNK)
    for chunk in (0, 1):
        with_raw = [run for _, run in generator._chunk_runs(12, times, chunk)]
        alone = list(generator._chunk_models(12, times, chunk))
        assert len(alone) == generator.CHUNK
        assert [repr(run) for run in alone] == [repr(run) for run in with_raw]


@pytest.mark.parametrize("seed", [0, 7, 41])
def test_bulk_drawn_times_are_the_times_drawn_one_by_one(
    seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    import random

    for count in (0, 1, 3, 1000, 25_000):
        bulk = draw._bulk_timestamps(random.Random(f"{seed}:time"), count)
        monkeypatch.setattr(draw, "_BULK_TIMES", count + 1)
        assert draw._timestamps(random.Random(f"{seed}:time"), count) == bulk
        monkeypatch.undo()
    assert draw._BULK_TIMES <= 25_000  # a 100k demo draws them in bulk


# --- a writing process killed outright takes its chunk workers with it ----------------------


def _children(pid: int) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(entry))
    return found


def _running(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _write_demo_logged(db: Path, log: Path) -> None:
    descriptor = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    os.dup2(descriptor, 1)
    os.dup2(descriptor, 2)
    writer._workers = lambda: 2  # in a forked child: gone with it
    demo.write_demo(db, 3 * demo.CHUNK, seed=2)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="chunk workers fork on Linux")
def test_chunk_workers_of_a_killed_demo_end_at_once_and_say_nothing(tmp_path: Path) -> None:
    import multiprocessing
    import signal
    import time

    log = tmp_path / "output.txt"
    writer = multiprocessing.get_context("fork").Process(
        target=_write_demo_logged, args=(tmp_path / "demo.db", log)
    )
    writer.start()
    assert writer.pid is not None
    deadline = time.monotonic() + 30
    while len(workers := _children(writer.pid)) < 2 and time.monotonic() < deadline:
        time.sleep(0.02)
    assert len(workers) == 2
    time.sleep(0.15)  # both are in the middle of a chunk
    os.kill(writer.pid, signal.SIGKILL)
    writer.join()
    killed = time.monotonic()
    while any(map(_running, workers)) and time.monotonic() < killed + 10:
        time.sleep(0.02)
    # Before, each finished its chunk and printed a BrokenPipeError traceback.
    assert not any(map(_running, workers))
    assert time.monotonic() - killed < 2
    assert log.read_text() == ""


# --- how the demo is made fast ---------------------------------------------------------------


def test_a_template_without_slots_is_still_unescaped() -> None:
    import random

    from ppp_tui.storage.demo.tables import _template

    rng = random.Random(0)
    assert draw._fill(rng, _template("Keep {{braces}} as they are."), {}) == (
        "Keep {braces} as they are."
    )
    assert draw._fill(rng, _template("Nothing to fill."), {}) == "Nothing to fill."
    assert rng.random() == random.Random(0).random()  # no draw for either


def test_the_fast_model_constructors_make_what_the_classes_make() -> None:
    from dataclasses import fields

    turn_values = ("Go.", "Done?", 10, 20, "2025-09-01T00:00:00Z")
    question_values = ("Which port?", model.Effort.HIGH, 2, model.Source.CLASSIFIER)
    violation_values = ("json", model.Severity.MAJOR, 1.5, 3, model.Source.CHECKER)
    trajectory_values = (
        (model.Turn(*turn_values),),
        (model.Question(*question_values),),
        (model.Violation(*violation_values),),
        ("joke",),
    )
    agent_values = ("claude", 0.5, model.Trajectory(*trajectory_values), "opus", 0.6, 0.7, "Done.")
    run_values = (
        "demo-000001",
        (model.Agent(*agent_values),),
        "SPEC-KIT-001",
        "plan",
        "Add a flag.",
        "2025-09-01T00:00:00Z",
        ("json",),
        "claude",
        "claude",
        (7.5, 8.0),
    )
    cases: list[tuple[Any, type, tuple[Any, ...]]] = [
        (makers.new_turn, model.Turn, turn_values),
        (makers.new_question, model.Question, question_values),
        (makers.new_violation, model.Violation, violation_values),
        (makers.new_trajectory, model.Trajectory, trajectory_values),
        (makers.new_agent, model.Agent, agent_values),
        (makers.new_run, model.Run, run_values),
    ]
    for make, cls, values in cases:
        fast, made = make(*values), cls(*values)
        assert type(fast) is cls
        assert fast == made and repr(fast) == repr(made) and hash(fast) == hash(made)
        # Every field set, in order: a field added to the model fails here.
        assert list(vars(fast)) == [field.name for field in fields(cls)]


def test_task_types_of_ascii_texts_are_the_case_insensitive_cues_counts() -> None:
    from ppp_tui.core import relevance

    def reference(task: str) -> TaskType:
        # The cues matched case-insensitively in the text itself.
        best, best_hits = TaskType.GENERAL, 0.0
        for kind, pattern in relevance._patterns():
            hits = len(pattern.findall(task)) * relevance._CUE_WEIGHT.get(kind, 1.0)
            if hits > best_hits:
                best, best_hits = kind, hits
        return best

    for _, cues in relevance._CUES:
        assert cues == cues.lower()  # lower-case cues: what the case-matching patterns need
    tasks = sorted({str(raw["task"]) for raw in demo.generate(3000, seed=9)})
    tasks += [
        "FIX the crash IN the Parser",
        "Speed Up the SLOW query; Refactor later",
        "Document the API Reference and Write Up the Guide",
        "Add Error Handling",
        "Errors handling, ERRORS, Doesn't Work",
        "Fix the café's crash",  # not ASCII: the case-insensitive patterns themselves
        "Optimi\u017fe the \u017flow path",  # a long s matches an s case-insensitively
    ]
    counted = Counter(reference(task) for task in tasks)
    assert len(counted) == len(TaskType)
    for task in [*tasks, *(t.upper() for t in tasks), *(t.title() for t in tasks)]:
        assert task_type(task) is reference(task), task


def _all_templates() -> list[Any]:
    from ppp_tui.storage.demo import tables

    found: list[Any] = []

    def walk(value: object) -> None:
        if isinstance(value, tables._Template):
            found.append(value)
        elif isinstance(value, tuple):
            for item in value:
                walk(item)
        elif isinstance(value, Mapping):
            for item in value.values():
                walk(item)

    for name in dir(tables):
        walk(getattr(tables, name))
    return found


def test_every_template_fills_as_format_map_would() -> None:
    from ppp_tui.storage.demo.tables import _template

    templates = _all_templates()
    assert len(templates) > 150
    templates.append(_template("100% of `{file}` is {{kept}}; {a} again: {a}, {b}%"))
    for template in templates:
        # Values with % and braces in them must come out as they are.
        values = {slot: f"<{slot} 5% {{x}}>" for slot in template.slots}
        expected = template.text.format_map(values)
        if template.fields is None:
            assert template.pattern == expected
        else:
            assert template.pattern % template.fields(values) == expected
    for text in ("{file!r}", "{file:>10}", "{}"):
        with pytest.raises(ValueError, match="only named, plain slots"):
            _template(text)


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.mark.skipif(sys.platform != "linux", reason="the demo forks its workers on Linux")
def test_the_progress_bar_leaves_the_demo_free_to_fork_its_workers(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """On a terminal the bar is drawn, by the steps, without a thread of its own: the
    demo forks its workers only from a process with no other thread, so a refresh thread
    had it make every run in one process (twice as long on two cores)."""
    from ppp_tui.cli import common

    terminal = _Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    monkeypatch.setattr(os, "sched_getaffinity", lambda _pid: {0, 1}, raising=False)
    threads = threading.active_count()
    with common.progress_bar(100_000, "generating") as step:
        assert step is not None
        assert threading.active_count() == threads
        assert writer._workers() == 2
        step(40_000)
    assert "generating" in terminal.getvalue()
    assert "40000/100000" in terminal.getvalue()
