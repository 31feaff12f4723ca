"""What a new user meets first on the command line: demo sessions, stage filters, weights
given on the command line, an explicit config.toml, tables, classify and the CSV export."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from helpers import run_cli

from ppp_tui.cli import classifying as cli_module
from ppp_tui.cli import cli
from ppp_tui.core.stages import NO_STAGE, listing, ordered
from ppp_tui.storage import demo as demo_module
from ppp_tui.storage.demo import generate, write_demo
from ppp_tui.storage.demo import generator as demo_generator
from ppp_tui.storage.demo import writer as demo_writer
from ppp_tui.storage.store import Store

ALL_STAGES = "plan, tasks, implement, validate, audit, unlock, (no stage)"


@pytest.fixture
def empty_config(tmp_path: Path) -> Path:
    path = tmp_path / "config.toml"
    path.write_text("")
    return path


@pytest.fixture
def opened(monkeypatch: pytest.MonkeyPatch) -> list[tuple[Path, Path]]:
    """The (database, config) pairs the app was opened with; the app itself never runs."""
    from ppp_tui.app import app as app_module

    calls: list[tuple[Path, Path]] = []

    def fake_init(self: Any, db: Path, config: Path, *args: Any, **kwargs: Any) -> None:
        calls.append((Path(db), Path(config)))

    monkeypatch.setattr(app_module.PPPApp, "__init__", fake_init)
    monkeypatch.setattr(app_module.PPPApp, "run", lambda self, *a, **k: None)
    return calls


def _mark_another(db: Path, run_id: str = "demo-000001") -> str:
    """Mark an agent of `run_id` other than its preferred one; return its name."""
    with Store.open(db) as store:
        run = store.get_run(run_id)
    agent = next(a.name for a in run.agents if a.name != run.preferred_agent)
    assert run_cli("prefer", run_id, agent, "--db", str(db)).exit_code == 0
    return agent


# --- one stage order, everywhere ---------------------------------------------------------------


def test_stages_are_in_pipeline_order_then_by_name_then_no_stage() -> None:
    stages = ["zeta", "audit", None, "plan", "alpha", "unlock", "tasks", "plan"]
    assert ordered(stages) == ["plan", "tasks", "audit", "unlock", "alpha", "zeta", None]
    assert listing(["validate", None, "implement"]) == "implement, validate, (no stage)"
    assert listing([]) == "none"


@pytest.mark.parametrize(
    "command", [["runs"], ["runs", "--json"], ["regret"], ["regret", "--json"], ["tune"]]
)
def test_an_unknown_stage_is_an_error_listing_the_known_ones(
    db: Path, empty_config: Path, command: list[str]
) -> None:
    result = run_cli(*command, "--stage", "nosuch", "--db", str(db), "--config", str(empty_config))
    assert result.exit_code == 1
    assert result.stderr == f"Error: no stage 'nosuch'; known stages: {ALL_STAGES}\n"
    assert result.stdout == ""


@pytest.mark.parametrize("selector", ["", NO_STAGE])
def test_runs_without_a_stage_are_selected_by_an_empty_or_no_stage_filter(
    db: Path, empty_config: Path, selector: str
) -> None:
    where = ("--db", str(db), "--config", str(empty_config))
    rows = json.loads(run_cli("runs", "--stage", selector, "--json", *where).stdout)
    with Store.open(db) as store:
        expected = sorted(info.id for info in store.run_infos() if info.stage is None)
    assert expected and sorted(row["id"] for row in rows) == expected
    assert {row["stage"] for row in rows} == {None}
    text = run_cli("runs", "--stage", selector, *where)
    assert text.exit_code == 0 and f"{len(expected)} runs" in text.stderr
    document = json.loads(run_cli("regret", "--stage", selector, "--json", *where).stdout)
    assert list(document["per_stage"]) == [NO_STAGE]
    assert {run["stage"] for run in document["runs"]} <= {None}


def test_the_no_stage_filter_help_and_tune_refusal(db: Path, empty_config: Path) -> None:
    assert '"(no stage)"' in run_cli("runs", "--help").stdout
    result = run_cli("tune", "--stage", "", "--db", str(db), "--config", str(empty_config))
    assert result.exit_code == 2 and "tune them without --stage" in result.stderr


def test_regret_lists_its_stages_in_pipeline_order(db: Path, empty_config: Path) -> None:
    _mark_another(db)  # at least one mark
    document = json.loads(
        run_cli("regret", "--json", "--db", str(db), "--config", str(empty_config)).stdout
    )
    assert ", ".join(document["per_stage"]) == ALL_STAGES


# --- --technical ---------------------------------------------------------------------------------


@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "1.5", "-0.1", "x"])
def test_technical_out_of_range_or_not_a_number_is_a_usage_error(
    db: Path, empty_config: Path, value: str
) -> None:
    result = run_cli(
        "rank", "demo-000001", "--technical", value, "--db", str(db), "--config", str(empty_config)
    )
    assert result.exit_code == 2
    assert "Invalid value for '--technical'" in result.stderr
    assert "ppp.weights" not in result.stderr


def test_technical_at_the_ends_is_accepted(db: Path, empty_config: Path) -> None:
    for value in ("0", "1", "0.6"):
        result = run_cli(
            "rank", "demo-000001", "--technical", value, "--json", "--db", str(db),
            "--config", str(empty_config),
        )  # fmt: skip
        assert json.loads(result.stdout)["weights"]["technical"] == float(value)


# --- an explicit config.toml must exist to be read ------------------------------------------


@pytest.mark.parametrize(
    "command",
    [
        ["runs"],
        ["regret"],
        ["rank", "demo-000001"],
        ["tune"],
        ["export"],
        ["config", "show"],
        ["config", "validate"],
    ],
)
def test_a_missing_explicit_config_is_an_error_for_reading_commands(
    db: Path, tmp_path: Path, command: list[str]
) -> None:
    missing = tmp_path / "missing.toml"
    result = run_cli(*command, "--db", str(db), "--config", str(missing))
    assert result.exit_code == 1
    assert result.stderr.startswith(f"Error: {missing}: no such config file;")
    assert result.stderr.count("\n") == 1
    assert not missing.exists()
    # The same through the environment.
    by_env = run_cli(*command, "--db", str(db), env={"PPP_TUI_CONFIG": str(missing)})
    assert by_env.exit_code == 1 and "no such config file" in by_env.stderr


def test_score_refuses_a_missing_explicit_config(tmp_path: Path) -> None:
    examples = Path(__file__).resolve().parent.parent / "examples" / "runs.jsonl"
    result = run_cli("score", str(examples), "--config", str(tmp_path / "none.toml"))
    assert result.exit_code == 1 and "no such config file" in result.stderr


def test_config_init_and_tune_write_create_a_missing_explicit_config(
    db: Path, tmp_path: Path
) -> None:
    made = tmp_path / "made.toml"
    assert run_cli("config", "init", "--config", str(made)).exit_code == 0 and made.exists()
    tuned = tmp_path / "tuned.toml"
    _mark_another(db)
    result = run_cli("tune", "--per-stage", "--write", "--db", str(db), "--config", str(tuned))
    assert result.exit_code == 0, result.output
    assert tuned.exists() and f"saved to {tuned}" in result.stderr


def test_config_validate_warns_about_unknown_keys_and_preferences(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    text = (
        "[ppp]\nenabeld = true\n\n[ppp.weights]\ntechnical = 0.6\ninteraction = 0.4\n"
        "colour = 1\n\n[ppp.weights.plan]\ntechnical = 0.5\ninteraction = 0.5\ntech = 1\n\n"
        "[ppp.proactivity]\nhigh_penalty = 0.4\nhuge_penalty = 1.0\n\n"
        "[ppp.penalties]\nno_commas = 0.1\nlang_klingon = 0.2\n\n[other]\nx = 1\n"
    )
    path.write_text(text)
    result = run_cli("config", "validate", "--config", str(path))
    assert result.exit_code == 0
    assert result.stdout.startswith(f"{path}: valid (global 0.6/0.4, 1 stage table)")
    assert result.stderr.splitlines() == [
        f"warning: {path}: unknown key 'other' (not read by ppp-tui)",
        f"warning: {path}: unknown key 'ppp.enabeld' (not read by ppp-tui)",
        f"warning: {path}: unknown key 'ppp.weights.colour' (not read by ppp-tui)",
        f"warning: {path}: unknown key 'ppp.weights.plan.tech' (not read by ppp-tui)",
        f"warning: {path}: unknown key 'ppp.proactivity.huge_penalty' (not read by ppp-tui)",
        f"warning: {path}: unknown preference 'ppp.penalties.lang_klingon'"
        " (not in the catalogue; kept)",
    ]
    assert path.read_text() == text  # kept as it was


def test_config_validate_escapes_control_characters_in_key_names(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text('[ppp]\n"bad\\u001b[31m" = 1\n')
    result = run_cli("config", "validate", "--config", str(path))
    assert result.exit_code == 0 and "\x1b" not in result.output
    assert "unknown key 'ppp.bad\\x1b[31m'" in result.stderr


# --- demo sessions -----------------------------------------------------------------------------


@pytest.mark.parametrize("command", ["browse", "serve"])
def test_demo_with_db_refuses_a_database_holding_runs(
    command: str, tmp_path: Path, opened: list[tuple[Path, Path]]
) -> None:
    db = tmp_path / "mine.db"
    write_demo(db, 7, seed=5)
    before = db.read_bytes()
    result = run_cli(command, "--demo", "--db", str(db))
    assert result.exit_code == 1
    assert result.stderr.splitlines()[-1] == (
        f"Error: {db}: already holds 7 runs; use --replace to write a fresh demo database"
    )
    assert db.read_bytes() == before and not opened
    assert "generating" not in result.stderr  # nothing is said to be made that is not


def test_browse_demo_with_db_and_replace_writes_the_demo_with_its_config_beside(
    tmp_path: Path, opened: list[tuple[Path, Path]]
) -> None:
    db = tmp_path / "mine.db"
    write_demo(db, 7, seed=5)
    result = run_cli("browse", "--demo", "--db", str(db), "--replace")
    assert result.exit_code == 0, result.output
    assert opened == [(db, tmp_path / "mine.config.toml")]
    with Store.open(db) as store:
        assert store.count() == demo_module.DEMO_SIZE + demo_module.SESSION_RUNS
    assert f"demo config: {tmp_path / 'mine.config.toml'}" in result.stderr
    assert f"demo database: {db} ({demo_module.DEMO_SIZE} runs generated," in result.stderr


def test_replace_without_demo_is_a_usage_error(tmp_path: Path) -> None:
    result = run_cli("browse", "--replace", "--db", str(tmp_path / "x.db"))
    assert result.exit_code == 2 and "--replace goes with --demo" in result.stderr


def test_browse_demo_reuses_one_cached_database_and_keeps_its_own_config(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, opened: list[tuple[Path, Path]]
) -> None:
    cache = tmp_path / "cache"
    monkeypatch.setenv("XDG_CACHE_HOME", str(cache))
    monkeypatch.setenv("PPP_TUI_CONFIG", "")
    monkeypatch.chdir(tmp_path)
    (tmp_path / "config.toml").write_text("")  # the user's own: never the demo's
    demo_db = cache / "ppp-tui" / "demo.db"
    demo_config = cache / "ppp-tui" / "demo.config.toml"

    first = run_cli("browse", "--demo")
    assert first.exit_code == 0, first.output
    assert opened[-1] == (demo_db, demo_config)
    assert f"generating {demo_module.DEMO_SIZE} demo runs into {demo_db}" in first.stderr
    assert f"demo config: {demo_config}" in first.stderr

    # Every other command takes --demo too: the same database, and its own settings,
    # never the user's config.toml (which asks for another weight here).
    (tmp_path / "config.toml").write_text("[ppp.weights]\ntechnical = 0.2\ninteraction = 0.8\n")
    ranked = run_cli("rank", "demo-000042", "--demo", "--json")
    assert ranked.exit_code == 0, ranked.output
    assert json.loads(ranked.stdout)["run_id"] == "demo-000042"
    assert "generating" not in ranked.stderr  # reused, quietly
    mine = json.loads(run_cli("rank", "demo-000042", "--db", str(demo_db), "--json").stdout)
    theirs = json.loads(ranked.stdout)
    assert mine["weights"] != theirs["weights"]
    refused = run_cli("show", "demo-000042", "--demo", "--db", str(tmp_path / "other.db"))
    assert refused.exit_code == 2 and "give --demo or --db, not both" in refused.stderr
    (tmp_path / "config.toml").write_text("")

    marked = _mark_another(demo_db)
    second = run_cli("browse", "--demo")
    assert second.exit_code == 0 and "generating" not in second.stderr
    assert f"demo database: {demo_db} (reused" in second.stderr
    with Store.open(demo_db) as store:
        assert store.get_run("demo-000001").preferred_agent == marked  # the marks stay

    # A database made by an older generator is made again.
    monkeypatch.setattr(demo_module, "GENERATOR_VERSION", demo_module.GENERATOR_VERSION + 1)
    third = run_cli("browse", "--demo")
    assert "generating" in third.stderr
    with Store.open(demo_db) as store:
        assert store.get_run("demo-000001").preferred_agent != marked
        assert store.count() == demo_module.DEMO_SIZE + demo_module.SESSION_RUNS

    # An explicit --config wins over the demo's own.
    mine = tmp_path / "mine.toml"
    run_cli("browse", "--demo", "--config", str(mine))
    assert opened[-1] == (demo_db, mine)


# --- tables and classify -------------------------------------------------------------------------


def _long_named_db(tmp_path: Path) -> Path:
    run = {
        "id": "a-run-with-a-rather-long-identifier",
        "stage": "implement",
        "task": "Add rate limiting",
        "selected_agent": "an-agent-with-a-very-long-name",
        "preferred_agent": "an-agent-with-a-very-long-name",
        "agents": [
            {"name": "an-agent-with-a-very-long-name", "technical_score": 0.9},
            {"name": "short", "technical_score": 0.5},
        ],
    }
    source = tmp_path / "runs.jsonl"
    source.write_text(json.dumps(run) + "\n")
    db = tmp_path / "long.db"
    assert run_cli("import", str(source), "--db", str(db)).exit_code == 0
    return db


def test_long_names_are_cut_with_an_ellipsis_on_a_terminal_and_whole_in_a_pipe(
    tmp_path: Path, empty_config: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ppp_tui.cli import tables

    db = _long_named_db(tmp_path)
    where = ("--db", str(db), "--config", str(empty_config))
    piped = run_cli("runs", *where).stdout.splitlines()[1]
    assert piped.startswith("a-run-with-a-rather-long-identifier ")
    assert " an-agent-with-a-very-long-name an-agent-with-a-very-long-name " in piped
    monkeypatch.setattr(tables, "terminal_width", lambda: 60)
    line = run_cli("runs", *where).stdout.splitlines()[1]
    assert line.startswith("a-run-with-a-rather-long-identifier ")  # ids stay whole
    assert len(line) <= 60 and " an-agen… an-agen…  0.000" in line  # names cut first
    ranked = run_cli("rank", "a-run-with-a-rather-long-identifier", *where).stdout
    row = next(line for line in ranked.splitlines() if line.startswith("  1  "))
    assert row.startswith("  1  an-agent-with-a-very-… ") and len(row) <= 60


def test_classify_with_no_question_on_a_terminal_says_it_reads_standard_input(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(cli_module, "_stdin_is_terminal", lambda: True)
    result = run_cli("classify", input="Which port should it listen on?\n")
    assert result.stderr == "reading questions from standard input, one per line; ctrl+d ends\n"
    assert result.stdout.startswith("medium")


def test_classify_from_a_pipe_prints_no_hint() -> None:
    result = run_cli("classify", input="Which port should it listen on?\n")
    assert result.stderr == "" and result.stdout.startswith("medium")


@pytest.mark.parametrize("question", ["", "   "])
def test_classify_an_empty_question_is_a_usage_error(question: str) -> None:
    result = run_cli("classify", "Which port?", question)
    assert result.exit_code == 2
    assert "QUESTION is empty" in result.stderr and result.stdout == ""


@pytest.mark.parametrize("args", [(), ("config",)])
def test_a_group_without_a_command_prints_its_help_line_by_line(args: tuple[str, ...]) -> None:
    result = run_cli(*args)
    assert result.exit_code in (0, 2)  # click 8.2 on: 2, as for any usage error
    assert "\u240a" not in result.output  # newlines are the help's own, not shown as symbols
    assert result.output.startswith("Usage: ")
    assert "\nCommands:\n" in result.output


# --- the demo's speed path makes the same runs ---------------------------------------------------


def test_the_demo_made_in_chunks_by_workers_is_the_generated_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(demo_generator, "CHUNK", 400)
    monkeypatch.setattr(demo_writer, "_workers", lambda: 2)
    db = tmp_path / "demo.db"
    report = write_demo(db, 1000, seed=4)
    raw = list(generate(1000, seed=4))
    assert report.added == 1000
    assert report.marks == sum(r.get("preferred_agent") is not None for r in raw)
    with Store.open(db) as store:
        infos = store.run_infos()
        assert [i.id for i in infos] == [r["id"] for r in raw]
        assert [i.preferred for i in infos] == [r.get("preferred_agent") for r in raw]
        for r in raw[::97]:
            run = store.get_run(r["id"])
            assert run.selected_agent == r["selected_agent"]
            assert [a.name for a in run.agents] == [a["name"] for a in r["agents"]]
            assert run.task == r["task"] and run.created_at == r["created_at"]
    # Each chunk opens its own specs: no spec id is shared across chunks.
    chunk_of: dict[str, int] = {}
    for index, r in enumerate(raw):
        if "spec_id" in r:
            assert chunk_of.setdefault(r["spec_id"], index // 400) == index // 400


def test_the_default_demo_is_one_chunk_and_the_sequential_path(tmp_path: Path) -> None:
    assert demo_module.DEMO_SIZE <= demo_module.CHUNK
    first = next(generate(1, seed=0))
    assert first["id"] == "demo-000001"
    copy = tmp_path / "copy.db"
    write_demo(copy, 50, seed=0)
    shutil.rmtree(tmp_path / "none", ignore_errors=True)
    with Store.open(copy) as store:
        assert [i.id for i in store.run_infos()][:2] == ["demo-000001", "demo-000002"]


def test_tables_and_stage_lists_escape_control_characters(
    tmp_path: Path, empty_config: Path
) -> None:
    run = {
        "id": "e1",
        "stage": "pl\u001b[31man",
        "agents": [{"name": "a\u001b[2Jb", "technical_score": 0.5}],
    }
    source = tmp_path / "esc.jsonl"
    source.write_text(json.dumps(run) + "\n")
    db = tmp_path / "esc.db"
    assert run_cli("import", str(source), "--db", str(db)).exit_code == 0
    where = ["--db", str(db), "--config", str(empty_config)]
    # color=True: click passes escape sequences through, as on a terminal.
    table = CliRunner().invoke(cli, ["runs", *where], color=True)
    assert "\x1b" not in table.output and " pl␛[31man " in table.stdout
    assert "a␛[2Jb" in table.stdout
    listed = CliRunner().invoke(cli, ["runs", "--stage", "nosuch", *where], color=True)
    assert listed.exit_code == 1 and "\x1b" not in listed.output
    assert listed.stderr == "Error: no stage 'nosuch'; known stages: pl␛[31man\n"
