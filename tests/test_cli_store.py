"""The database commands of SPEC 7 through click's CliRunner: shapes, numbers and exit codes."""

from __future__ import annotations

import csv
import io
import json
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import tomlkit
from click.testing import Result
from helpers import AGENT_KEYS, RANK_KEYS, documented_shapes, run_cli

from ppp_tui.core.settings import Weights
from ppp_tui.storage import database
from ppp_tui.storage.config import load_settings

EXAMPLES = Path(__file__).resolve().parent.parent / "examples" / "runs.jsonl"

RUNS_KEYS = {
    "id",
    "spec_id",
    "stage",
    "task",
    "task_type",
    "created_at",
    "agents",
    "selected",
    "preferred",
    "regret",
    "waiting_for_user",
}
REGRET_KEYS = {"weights", "marked_runs", "mean_regret", "agreement", "per_stage", "runs"} | {
    "reviewer",
    "all_reviewers",
}
REGRET_RUN_KEYS = {"run_id", "stage", "selected", "preferred", "regret"}
TUNE_KEYS = {
    "scope",
    "marked_runs",
    "technical",
    "interaction",
    "mean_regret",
    "agreement",
    "before",
    "cv",
    "curve",
    "ci",
}
TUNE_BEFORE_KEYS = {"technical", "interaction", "mean_regret", "agreement"}
TUNE_CV_KEYS = {"folds", "mean_regret", "agreement"}
TUNE_CURVE_KEYS = {"technical", "mean_regret", "agreement"}

# The export's columns, in order, as docs/json.md shows them.
EXPORT_COLUMNS = list(documented_shapes()["export"][0])

Invoke = Callable[..., Result]


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "runs.db"


@pytest.fixture
def config(tmp_path: Path) -> Path:
    # Empty: the defaults apply (a --config naming no file is an error for reading commands).
    path = tmp_path / "config.toml"
    path.write_text("")
    return path


@pytest.fixture
def ppp(db: Path, config: Path) -> Invoke:
    """`ppp-tui ARGS --db DB --config CONFIG`."""

    def call(*args: str, input: str | None = None) -> Result:
        return run_cli(*args, "--db", str(db), "--config", str(config), input=input)

    return call


@pytest.fixture
def imported(ppp: Invoke) -> Invoke:
    result = ppp("import", str(EXAMPLES))
    assert result.exit_code == 0, result.output
    return ppp


@pytest.fixture
def marked(imported: Invoke) -> Invoke:
    """Seed 000 and 003 marked against PPP's pick: agent_a and claude were preferred."""
    assert imported("prefer", "seed-000", "agent_a").exit_code == 0
    assert imported("prefer", "seed-003", "claude").exit_code == 0
    return imported


def as_json(result: Result) -> Any:
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def error_line(result: Result, code: int = 1) -> str:
    """The one-line message on standard error of a failed command."""
    assert result.exit_code == code, result.output
    assert result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    return lines[0]


# --- import ------------------------------------------------------------------------------------


def test_import_reports_what_it_added_and_a_second_import_adds_nothing(
    ppp: Invoke, db: Path
) -> None:
    first = ppp("import", str(EXAMPLES))
    assert first.exit_code == 0
    assert first.stdout.strip() == f"imported 3 runs into {db}"
    again = ppp("import", str(EXAMPLES))
    assert again.stdout.strip() == f"imported 0 runs into {db}; 3 already present"
    assert len(as_json(ppp("runs", "--json"))) == 3


def test_import_reads_standard_input(ppp: Invoke) -> None:
    lines = EXAMPLES.read_text().splitlines()
    marked_run = json.loads(lines[1]) | {"preferred_agent": "claude"}
    text = "\n".join([lines[0], json.dumps(marked_run)]) + "\n"
    result = ppp("import", "-", input=text)
    assert result.exit_code == 0, result.output
    assert "imported 2 runs" in result.stdout and "1 preferred mark" in result.stdout
    rows = {row["id"]: row for row in as_json(ppp("runs", "--json"))}
    assert set(rows) == {"seed-000", "seed-003"}
    assert rows["seed-003"]["preferred"] == "claude"
    # Gemini is PPP's pick: claude's 0.530 is 0.095 behind gemini's 0.625.
    assert rows["seed-003"]["selected"] == "gemini"
    assert rows["seed-003"]["regret"] == 0.095


def test_import_of_a_bad_file_exits_1_and_changes_nothing(
    imported: Invoke, db: Path, tmp_path: Path
) -> None:
    before = list(sqlite3.connect(db).iterdump())
    bad = tmp_path / "bad.jsonl"
    bad.write_text(
        '{"id": "new", "agents": [{"name": "a", "technical_score": 0.5}]}\n'
        '{"id": "bad", "agents": [{"name": "a", "technical_score": "high"}]}\n'
    )
    message = error_line(imported("import", str(bad)))
    assert message == (
        f"Error: {bad}:2: $.agents[0].technical_score: expected a number, got a string"
    )
    assert list(sqlite3.connect(db).iterdump()) == before


def test_import_skip_invalid_reports_each_bad_line(ppp: Invoke, tmp_path: Path) -> None:
    mixed = tmp_path / "mixed.jsonl"
    mixed.write_text(
        EXAMPLES.read_text().splitlines()[0] + "\n"
        "not json at all\n"
        '{"id": "x", "agents": [{"name": "a", "technical_score": 0.5}], "preferred_agent": "b"}\n'
    )
    result = ppp("import", str(mixed), "--skip-invalid")
    assert result.exit_code == 0
    assert "imported 1 run into" in result.stdout and "2 invalid skipped" in result.stdout
    skipped = [line for line in result.stderr.splitlines() if line.startswith("skipped")]
    assert len(skipped) == 2
    assert f"{mixed}:2: invalid JSON" in skipped[0]
    assert f"{mixed}:3: $.preferred_agent: 'b' is not one of the run's agents" in skipped[1]


def test_import_warns_about_unknown_preferences(ppp: Invoke, tmp_path: Path) -> None:
    path = tmp_path / "prefs.json"
    path.write_text(
        json.dumps(
            {
                "id": "p",
                "preferences": ["json", "emoji_only"],
                "agents": [{"name": "a", "technical_score": 0.5}],
            }
        )
    )
    result = ppp("import", str(path))
    assert result.exit_code == 0
    assert "warning: unknown preference(s) emoji_only" in result.stderr


def test_import_of_a_missing_file_exits_1_without_creating_the_database(
    ppp: Invoke, db: Path, tmp_path: Path
) -> None:
    message = error_line(ppp("import", str(tmp_path / "nope.jsonl")))
    assert message == f"Error: {tmp_path / 'nope.jsonl'}: no such file"
    assert not db.exists()


# --- runs and rank -----------------------------------------------------------------------------


def test_runs_json_lists_every_run_with_its_pick_and_mark(marked: Invoke) -> None:
    rows = as_json(marked("runs", "--json"))
    assert [set(row) for row in rows] == [RUNS_KEYS] * 3
    # Listed by run id.
    assert [(r["id"], r["selected"], r["preferred"], r["regret"]) for r in rows] == [
        # codex's question breaks the run's no_ask preference: 0.7 * 0.82 < aider's 0.78.
        ("run-0042", "aider", None, None),
        ("seed-000", "agent_b", "agent_a", 0.395),
        ("seed-003", "gemini", "claude", 0.095),
    ]
    assert rows[0]["spec_id"] == "SPEC-KIT-042" and rows[0]["agents"] == 2
    # Runs imported from files are over: none waits for the user.
    assert [r["waiting_for_user"] for r in rows] == [False] * 3
    plan = as_json(marked("runs", "--stage", "plan", "--json"))
    assert [r["id"] for r in plan] == ["run-0042"]
    # A stage no run has is an error naming the stages there are, in pipeline order.
    assert error_line(marked("runs", "--stage", "audit", "--json")) == (
        "Error: no stage 'audit'; known stages: plan, implement"
    )


def test_runs_table_has_a_row_per_run(imported: Invoke) -> None:
    result = imported("runs")
    assert result.exit_code == 0
    assert len(result.stdout.strip().splitlines()) == 4  # header + 3
    assert "3 runs" in result.stderr


def test_rank_json_is_the_spec_document(imported: Invoke) -> None:
    document = as_json(imported("rank", "seed-003", "--json"))
    assert set(document) == (RANK_KEYS | {"flips", "regions"})
    assert [set(agent) for agent in document["agents"]] == [AGENT_KEYS] * 3
    assert document["weights"] == {"technical": 0.7, "interaction": 0.3}
    assert document["best_agent"] == "gemini"
    assert document["confidence"] == 0.625
    assert document["margin"] == 0.059
    assert [(a["name"], a["rank"], a["final"]) for a in document["agents"]] == [
        ("gemini", 1, 0.625),
        ("gpt", 2, 0.566),
        ("claude", 3, 0.53),
    ]
    gpt = document["agents"][1]
    assert (gpt["r_proact"], gpt["r_pers"], gpt["violations"]) == (0.05, -0.03, 1)


def test_rank_under_another_weight_and_a_run_without_trajectory(imported: Invoke) -> None:
    document = as_json(imported("rank", "seed-000", "--technical", "1", "--json"))
    assert document["best_agent"] == "agent_a"
    assert document["weights"] == {"technical": 1.0, "interaction": 0.0}
    plan = as_json(imported("rank", "run-0042", "--json"))
    aider = next(a for a in plan["agents"] if a["name"] == "aider")
    assert aider["has_trajectory"] is False
    assert aider["interaction"] is None and aider["final"] == 0.78


def test_rank_lists_the_flip_points_over_the_technical_weight(imported: Invoke) -> None:
    # seed-003: claude (0.95, one high-effort question) overtakes gemini where
    # 0.95w - 0.45(1-w) = 0.85w + 0.1(1-w): w = 11/13; gpt never ranks first.
    document = as_json(imported("rank", "seed-003", "--json"))
    assert document["flips"] == [
        {"from": 0.0, "to": round(11 / 13, 10), "agent": "gemini"},
        {"from": round(11 / 13, 10), "to": 1.0, "agent": "claude"},
    ]
    # The intervals cover every weight, whatever weight the run is ranked under.
    other = as_json(imported("rank", "seed-003", "--technical", "0.95", "--json"))
    assert other["best_agent"] == "claude" and other["flips"] == document["flips"]
    # run-0042: aider has no trajectory (a flat 0.78); codex's 0.82w catches it at 39/41.
    plan = as_json(imported("rank", "run-0042", "--json"))
    assert [(f["agent"], f["to"]) for f in plan["flips"]] == [
        ("aider", round(39 / 41, 10)),
        ("codex", 1.0),
    ]
    text = imported("rank", "seed-003")
    assert text.exit_code == 0
    assert "  flips: gemini 0.00-0.85, claude 0.85-1.00\n" in text.stdout


def test_rank_lists_each_agents_region_of_the_weight_triangle(imported: Invoke) -> None:
    # seed-003: gemini (0.85, no question, compliant: +0.05/+0.05) against claude (0.95,
    # a high-effort question: -0.5/+0.05): claude - gemini = 0.1 w_t - 0.55 w_p, so with
    # w_t = 1 - (w_p + w_s) / 2 claude ranks first where 0.6 w_p + 0.05 w_s <= 0.1.
    document = as_json(imported("rank", "seed-003", "--json"))
    regions = {r["agent"]: r for r in document["regions"]}
    assert set(regions) == {"gemini", "claude"}
    assert sum(r["area"] for r in regions.values()) == pytest.approx(2.0)
    assert regions["claude"]["area"] == pytest.approx(0.5 * (0.1 / 0.6) * 2.0)
    claude = sorted((v["proactivity"], v["personalization"]) for v in regions["claude"]["vertices"])
    assert claude == [(0.0, 0.0), (0.0, 2.0), (pytest.approx(0.1 / 0.6), 0.0)]
    for region in document["regions"]:
        for vertex in region["vertices"]:
            total = vertex["technical"] + (vertex["proactivity"] + vertex["personalization"]) / 2
            assert total == pytest.approx(1.0)


def test_rank_of_an_unknown_run_exits_1(imported: Invoke) -> None:
    assert error_line(imported("rank", "run-9999")) == "Error: unknown run id 'run-9999'"


def test_commands_on_a_missing_database_exit_1_without_creating_it(ppp: Invoke, db: Path) -> None:
    for args in (
        ["runs"],
        ["rank", "seed-000"],
        ["regret"],
        ["tune"],
        ["export"],
        ["prefer", "seed-000", "agent_a"],
    ):
        message = error_line(ppp(*args))
        assert message.startswith(f"Error: {db}: no database here"), args
        assert "ppp-tui import" in message
    assert not db.exists()


def test_a_database_that_is_not_sqlite_is_exit_1(ppp: Invoke, db: Path) -> None:
    db.write_bytes(b"PK\x03\x04" + bytes(range(256)) * 16)
    message = error_line(ppp("runs", "--json"))
    assert "not a usable SQLite database" in message


def test_a_locked_database_is_one_line_and_readers_still_read(
    imported: Invoke, db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(database, "BUSY_TIMEOUT_S", 0.2)
    holder = sqlite3.connect(db, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        message = error_line(
            imported("import", "-", input='{"agents": [{"name": "a", "technical_score": 1}]}')
        )
        assert message == f"Error: {db}: the database is locked by another process; try again"
        assert "locked" in error_line(imported("prefer", "seed-000", "agent_a"))
        # WAL: the runs list still reads while another process writes.
        assert len(as_json(imported("runs", "--json"))) == 3
    finally:
        holder.execute("ROLLBACK")
        holder.close()


def test_score_never_touches_the_database(ppp: Invoke, db: Path) -> None:
    result = ppp("score", str(EXAMPLES), "--json")
    assert result.exit_code == 0
    assert len(result.stdout.splitlines()) == 3
    assert not db.exists()


def test_the_spec_kit_database_itself_is_not_taken_for_a_ppp_tui_database(
    ppp: Invoke, tmp_path: Path
) -> None:
    # A user who passes spec-kit's consensus.db as --db (instead of importing it with
    # --format spec-kit) is told what it is, and the file is not touched.
    speckit = tmp_path / "consensus.db"
    speckit.write_bytes((EXAMPLES.parent / "spec-kit-consensus.db").read_bytes())
    before = speckit.read_bytes()
    for args in (["runs"], ["import", str(EXAMPLES)]):
        message = error_line(run_cli(*args, "--db", str(speckit)))
        assert message.startswith(f"Error: {speckit}: not a ppp-tui database"), message
        assert "agent_outputs" in message and "consensus_runs" in message
    assert speckit.read_bytes() == before


# --- prefer ------------------------------------------------------------------------------------


def test_prefer_changes_and_clears_the_mark(imported: Invoke, db: Path) -> None:
    first = imported("prefer", "seed-003", "claude")
    assert first.stdout.strip() == "seed-003: tester's preferred agent is claude"
    second = imported("prefer", "seed-003", "gpt")
    assert second.stdout.strip() == "seed-003: tester's preferred agent is gpt (was claude)"
    cleared = imported("prefer", "seed-003", "--clear")
    assert cleared.stdout.strip() == "seed-003: tester's preferred mark cleared (was gpt)"
    conn = sqlite3.connect(db)
    history = conn.execute(
        "SELECT agent, source FROM preferred_marks WHERE run_id = 'seed-003' ORDER BY id"
    ).fetchall()
    assert history == [("claude", "cli"), ("gpt", "cli"), (None, "cli")]
    assert as_json(imported("regret", "--json"))["marked_runs"] == 0


def test_prefer_usage_and_input_errors(imported: Invoke) -> None:
    both = imported("prefer", "seed-003", "claude", "--clear")
    assert both.exit_code == 2 and "not both" in both.stderr
    neither = imported("prefer", "seed-003")
    assert neither.exit_code == 2
    assert error_line(imported("prefer", "nope", "claude")) == "Error: unknown run id 'nope'"
    assert error_line(imported("prefer", "seed-003", "llama")) == (
        "Error: seed-003: no agent named 'llama'; the agents are claude, gemini, gpt"
    )


# --- regret ------------------------------------------------------------------------------------


def test_regret_json_is_the_spec_document(marked: Invoke) -> None:
    document = as_json(marked("regret", "--json"))
    assert set(document) == REGRET_KEYS
    assert document["weights"] == {"technical": 0.7, "interaction": 0.3}
    # seed-000: agent_b 0.645 over agent_a 0.25; seed-003: gemini 0.625 over claude 0.53.
    assert document["marked_runs"] == 2
    assert document["mean_regret"] == 0.245
    assert document["agreement"] == 0.0
    assert [set(row) for row in document["runs"]] == [REGRET_RUN_KEYS] * 2
    assert document["runs"] == [
        {
            "run_id": "seed-000",
            "stage": "implement",
            "selected": "agent_b",
            "preferred": "agent_a",
            "regret": 0.395,
        },
        {
            "run_id": "seed-003",
            "stage": "implement",
            "selected": "gemini",
            "preferred": "claude",
            "regret": 0.095,
        },
    ]
    assert set(document["per_stage"]) == {"implement", "plan"}
    implement = document["per_stage"]["implement"]
    assert (implement["marked_runs"], implement["mean_regret"], implement["agreement"]) == (
        2,
        0.245,
        0.0,
    )
    assert document["per_stage"]["plan"]["marked_runs"] == 0


def test_regret_of_one_stage_uses_that_stages_table(marked: Invoke, config: Path) -> None:
    config.write_text("[ppp.weights.implement]\ntechnical = 0.5\ninteraction = 0.5\n")
    document = as_json(marked("regret", "--stage", "implement", "--json"))
    # Under 0.5/0.5 seed-000 is agent_b 0.475 vs agent_a -0.25 and seed-003 gemini 0.475
    # vs claude 0.25.
    assert document["marked_runs"] == 2
    assert document["mean_regret"] == 0.475
    assert document["per_stage"]["implement"]["weights"] == {
        "technical": 0.5,
        "interaction": 0.5,
    }
    # The document's weights are the ones its runs were scored under.
    assert document["weights"] == {"technical": 0.5, "interaction": 0.5}


def test_regret_over_all_stages_shows_the_global_pair_and_each_stages_own(
    marked: Invoke, config: Path
) -> None:
    config.write_text(
        "[ppp.weights]\ntechnical = 0.8\ninteraction = 0.2\n\n"
        "[ppp.weights.implement]\ntechnical = 0.5\ninteraction = 0.5\n\n"
        "[ppp.weights.plan]\ntechnical = 0.6\ninteraction = 0.4\n"
    )
    document = as_json(marked("regret", "--json"))
    assert document["weights"] == {"technical": 0.8, "interaction": 0.2}
    assert document["per_stage"]["implement"]["weights"] == {"technical": 0.5, "interaction": 0.5}
    assert document["per_stage"]["plan"]["weights"] == {"technical": 0.6, "interaction": 0.4}
    assert document["mean_regret"] == 0.475


def test_regret_text_without_marks_says_how_to_mark(imported: Invoke) -> None:
    result = imported("regret")
    assert result.exit_code == 0
    assert "ppp-tui prefer RUN AGENT" in result.stdout


# --- tune --------------------------------------------------------------------------------------


def test_tune_json_finds_the_exact_weight_where_the_preferred_agents_win(marked: Invoke) -> None:
    document = as_json(marked("tune", "--json"))
    assert set(document) == TUNE_KEYS
    assert set(document["before"]) == TUNE_BEFORE_KEYS
    assert set(document["cv"]) == TUNE_CV_KEYS
    assert all(set(point) == TUNE_CURVE_KEYS for point in document["curve"])
    assert document["scope"] == "global"
    assert document["marked_runs"] == 2
    # agent_a's 2.5w - 1.5 meets agent_b's 0.85w + 0.05 at w = 31/33 (the tie goes to the
    # higher technical score); claude overtakes gemini earlier, at w = 11/13. Nearest to
    # 0.7 with zero regret: 31/33.
    assert document["technical"] == pytest.approx(31 / 33, abs=1e-9)
    assert document["interaction"] == pytest.approx(2 / 33, abs=1e-9)
    assert document["mean_regret"] == 0.0
    assert document["agreement"] == 1.0
    assert document["before"] == {
        "technical": 0.7,
        "interaction": 0.3,
        "mean_regret": 0.245,
        "agreement": 0.0,
    }
    assert document["cv"]["folds"] == 2
    curve = document["curve"]
    assert curve[0] == {"technical": 0.0, "mean_regret": 1.05, "agreement": 0.0}
    assert curve[70]["technical"] == 0.7 and curve[70]["mean_regret"] == 0.245
    assert curve[-1] == {"technical": 1.0, "mean_regret": 0.0, "agreement": 1.0}
    # Bootstrap resamples of the two runs: seed-003 drawn twice (about a quarter of
    # them) tunes to 11/13, where claude overtakes gemini; any other to 31/33.
    assert document["ci"] == [round(11 / 13, 10), round(31 / 33, 10)]


def test_tune_per_stage_is_a_list_of_documents(marked: Invoke) -> None:
    assert marked("prefer", "run-0042", "aider").exit_code == 0
    documents = as_json(marked("tune", "--per-stage", "--json"))
    assert isinstance(documents, list)
    assert [d["scope"] for d in documents] == ["plan", "implement"]
    assert all(set(d) == TUNE_KEYS for d in documents)
    assert [d["marked_runs"] for d in documents] == [1, 2]
    one = as_json(marked("tune", "--stage", "implement", "--json"))
    assert one == documents[1]


def test_tune_per_stage_write_notes_each_stage_with_its_own_figures(
    marked: Invoke, config: Path
) -> None:
    assert marked("prefer", "run-0042", "aider").exit_code == 0
    documents = as_json(marked("tune", "--per-stage", "--json"))
    assert marked("tune", "--per-stage", "--write").exit_code == 0
    document = tomlkit.parse(config.read_text())
    for tuned in documents:
        table = document["ppp"]["weights"][tuned["scope"]]
        note = table["technical"].trivia.comment
        runs = tuned["marked_runs"]
        assert f"from {runs} marked run{'s' * (runs != 1)}" in note
        assert f"-> {tuned['mean_regret']:.4f}" in note


def test_tune_without_marks_exits_1_with_one_line(imported: Invoke) -> None:
    message = error_line(imported("tune"))
    assert message.startswith("Error: no marked runs to tune on")
    message = error_line(imported("tune", "--stage", "plan", "--json"))
    assert "no marked runs in stage 'plan'" in message


def test_tune_stage_and_per_stage_together_is_a_usage_error(marked: Invoke) -> None:
    result = marked("tune", "--stage", "plan", "--per-stage")
    assert result.exit_code == 2
    assert "exclude each other" in result.stderr


def test_tune_write_saves_a_valid_config_that_regret_then_uses(
    marked: Invoke, config: Path
) -> None:
    before = as_json(marked("regret", "--json"))
    tuned = as_json(marked("tune", "--write", "--json"))
    assert config.exists()
    validate = marked("config", "validate")
    assert validate.exit_code == 0 and "valid" in validate.stdout
    settings = load_settings(config)
    # The file keeps 6 decimals, the pair summing to exactly 1.
    assert settings.weights.technical == pytest.approx(tuned["technical"], abs=5e-7)
    after = as_json(marked("regret", "--json"))
    assert after["weights"]["technical"] == round(tuned["technical"], 6)
    assert after["mean_regret"] <= before["mean_regret"]
    assert after["mean_regret"] == tuned["mean_regret"] == 0.0
    assert after["agreement"] == 1.0


def test_tune_write_keeps_the_users_comments_and_other_tables(marked: Invoke, config: Path) -> None:
    config.write_text(
        "# my team's settings\n"
        "[ppp]\n"
        "enabled = true  # keep PPP on\n"
        "\n"
        "[ppp.weights]\n"
        "technical = 0.7\n"
        "interaction = 0.3\n"
        "\n"
        "# stricter about json\n"
        "[ppp.penalties]\n"
        "json = 0.05\n"
        "\n"
        "[tool.mine]\n"
        'colour = "blue"\n'
    )
    result = marked("tune", "--write")
    assert result.exit_code == 0, result.output
    text = config.read_text()
    for kept in (
        "# my team's settings",
        "enabled = true  # keep PPP on",
        "# stricter about json",
        "json = 0.05",
        '[tool.mine]\ncolour = "blue"',
    ):
        assert kept in text
    assert "technical = 0.7\n" not in text
    assert load_settings(config).weights.technical == pytest.approx(31 / 33)
    assert marked("config", "validate").exit_code == 0


def test_tune_with_stage_tables_reports_the_regret_regret_reports(
    marked: Invoke, config: Path
) -> None:
    # The implement runs are governed by their own table, not by the global pair: what
    # tune calls "before" must be what `regret` reports now for the runs it tuned, and
    # after --write `regret` must show what tune promised.
    config.write_text(
        "[ppp.weights]\ntechnical = 0.7\ninteraction = 0.3\n\n"
        "[ppp.weights.implement]\ntechnical = 0.5\ninteraction = 0.5\n"
    )
    # run-0042 (plan, no table of its own): codex's 0.82w catches aider's flat 0.78 at
    # w = 39/41, so the global pair has something to learn.
    assert marked("prefer", "run-0042", "codex").exit_code == 0
    now = as_json(marked("regret", "--json"))
    tuned = as_json(marked("tune", "--write", "--json"))
    governed = [row for row in now["runs"] if row["stage"] != "implement"]
    covered = now["runs"] if tuned["marked_runs"] == now["marked_runs"] else governed
    assert tuned["marked_runs"] == len(covered)
    assert tuned["before"]["mean_regret"] == pytest.approx(
        sum(row["regret"] for row in covered) / len(covered)
    )
    assert tuned["technical"] >= 39 / 41 - 1e-9
    after = as_json(marked("regret", "--json"))
    regret_after = {row["run_id"]: row["regret"] for row in after["runs"]}
    assert tuned["mean_regret"] == pytest.approx(
        sum(regret_after[row["run_id"]] for row in covered) / len(covered)
    )


def test_a_global_tune_when_every_marked_run_has_a_stage_table_says_so(
    marked: Invoke, config: Path
) -> None:
    # Both marked runs are implement runs, scored under [ppp.weights.implement]: the global
    # pair decides none of them, so tuning it (and writing it) would change nothing.
    text = "[ppp.weights.implement]\ntechnical = 0.5\ninteraction = 0.5\n"
    config.write_text(text)
    message = error_line(marked("tune", "--write"))
    assert "--per-stage" in message or "--stage" in message
    assert config.read_text() == text
    stage = as_json(marked("tune", "--stage", "implement", "--json"))
    assert stage["before"]["technical"] == 0.5 and stage["before"]["mean_regret"] == 0.475


def test_tune_write_of_one_stage_adds_that_stages_table(marked: Invoke, config: Path) -> None:
    tuned = as_json(marked("tune", "--stage", "implement", "--write", "--json"))
    settings = load_settings(config)
    assert settings.stage_weights["implement"].technical == pytest.approx(
        tuned["technical"], abs=5e-7
    )
    assert settings.weights.technical == 0.7
    after = as_json(marked("regret", "--json"))
    assert after["per_stage"]["implement"]["weights"]["technical"] == round(tuned["technical"], 6)
    assert after["per_stage"]["implement"]["mean_regret"] == tuned["mean_regret"]


def test_tune_text_output(marked: Invoke) -> None:
    result = marked("tune")
    assert result.exit_code == 0
    assert result.stdout.startswith("global: 2 marked runs; technical 0.7 -> 0.9394")
    assert "mean regret 0.2450 -> 0.0000" in result.stdout
    assert (
        "  95% interval of the tuned weight: 0.8462-0.9394 (200 bootstrap resamples)\n"
        in result.stdout
    )


# --- export ------------------------------------------------------------------------------------


def test_export_csv_has_a_header_and_a_row_per_agent(marked: Invoke) -> None:
    result = marked("export")
    assert result.exit_code == 0
    rows = list(csv.DictReader(io.StringIO(result.stdout)))
    assert list(rows[0]) == EXPORT_COLUMNS
    assert len(rows) == 7  # 2 + 3 + 2 agents
    gpt = next(r for r in rows if r["run_id"] == "seed-003" and r["agent"] == "gpt")
    assert (gpt["rank"], gpt["final"], gpt["penalty"], gpt["violations"]) == (
        "2",
        "0.566",
        "0.03",
        "1",
    )
    aider = next(r for r in rows if r["agent"] == "aider")
    # Booleans are written as JSON writes them, not as Python's True/False.
    assert aider["interaction"] == "" and aider["has_trajectory"] == "false"
    claude = next(r for r in rows if r["agent"] == "claude")
    assert (claude["preferred"], claude["selected"]) == ("true", "false")


def test_export_o_is_short_for_out(marked: Invoke, tmp_path: Path) -> None:
    short, long = tmp_path / "short.csv", tmp_path / "long.csv"
    assert marked("export", "-o", str(short)).exit_code == 0
    assert marked("export", "--out", str(long)).exit_code == 0
    assert short.read_text() == long.read_text() == marked("export").stdout


def test_export_json_parses_and_agrees_with_rank(marked: Invoke, tmp_path: Path) -> None:
    out = tmp_path / "scores.json"
    result = marked("export", "--format", "json", "--out", str(out))
    assert result.exit_code == 0
    assert f"exported 7 rows to {out}" in result.stderr
    rows = json.loads(out.read_text())
    assert len(rows) == 7 and all(list(row) == EXPORT_COLUMNS for row in rows)
    rank = as_json(marked("rank", "seed-000", "--json"))
    exported = {r["agent"]: r for r in rows if r["run_id"] == "seed-000"}
    for agent in rank["agents"]:
        row = exported[agent["name"]]
        assert (row["rank"], row["final"], row["interaction"]) == (
            agent["rank"],
            agent["final"],
            agent["interaction"],
        )
    assert exported["agent_b"]["selected"] is True
    assert exported["agent_a"]["preferred"] is True


def test_export_gives_the_three_weights_each_run_was_scored_under(
    marked: Invoke, config: Path
) -> None:
    """A stage table off the pair form: its runs give its proactivity and personalization
    (and their mean as the interaction weight); the other runs the global pair."""
    stages = {row["stage"] for row in as_json(marked("export", "--format", "json"))}
    stage = sorted(s for s in stages if s)[0]
    config.write_text(
        f"[ppp.weights.{stage}]\ntechnical = 0.5\nproactivity = 0.2\npersonalization = 0.8\n"
    )
    rows = as_json(marked("export", "--format", "json"))
    weights = {
        (
            row["weight_technical"],
            row["weight_proactivity"],
            row["weight_personalization"],
            row["weight_interaction"],
        )
        for row in rows
        if row["stage"] == stage
    }
    assert weights == {(0.5, 0.2, 0.8, 0.5)}
    others = {
        (row["weight_technical"], row["weight_proactivity"], row["weight_personalization"])
        for row in rows
        if row["stage"] != stage
    }
    assert others == {(0.7, 0.3, 0.3)}


def test_export_to_a_folder_that_does_not_exist_is_one_line(marked: Invoke, tmp_path: Path) -> None:
    out = tmp_path / "no" / "such" / "scores.csv"
    message = error_line(marked("export", "--out", str(out)))
    assert message.startswith(f"Error: {out}: cannot write")
    assert not out.exists()


# --- config ------------------------------------------------------------------------------------


def test_config_init_writes_a_file_validate_accepts_and_refuses_to_overwrite(
    ppp: Invoke, config: Path
) -> None:
    config.unlink()
    result = ppp("config", "init")
    assert result.exit_code == 0 and config.exists()
    validate = ppp("config", "validate")
    assert validate.exit_code == 0
    assert "valid (global 0.7/0.3, 6 stage tables)" in validate.stdout
    config.write_text(config.read_text() + "# mine\n")
    refused = error_line(ppp("config", "init"))
    assert "already exists" in refused and "--force" in refused
    assert config.read_text().endswith("# mine\n")
    assert ppp("config", "init", "--force").exit_code == 0
    assert "# mine" not in config.read_text()


def test_an_invalid_config_names_the_table_and_every_command_exits_1(
    imported: Invoke, config: Path
) -> None:
    config.write_text("[ppp.weights.plan]\ntechnical = 0.5\ninteraction = 0.6\n")
    expected = (
        f"Error: {config}: ppp.weights.plan: weights must sum to 1.0,"
        " got technical=0.5 + interaction=0.6 = 1.1"
    )
    for args in (["config", "validate"], ["regret"], ["runs"], ["rank", "seed-000"], ["tune"]):
        assert error_line(imported(*args)) == expected, args


def test_tune_write_never_overwrites_an_invalid_config(marked: Invoke, config: Path) -> None:
    text = "[ppp.weights]\ntechnical = 0.7\ninteraction = 0.2\n"
    config.write_text(text)
    result = marked("tune", "--write")
    assert result.exit_code == 1
    assert config.read_text() == text


def test_config_show_json_reports_the_paths_in_use(ppp: Invoke, db: Path, config: Path) -> None:
    document = as_json(ppp("config", "show", "--json"))
    assert document["path"] == str(config) and document["db"] == str(db)
    assert document["exists"] is True  # empty: the defaults apply
    assert document["weights"] == {"technical": 0.7, "interaction": 0.3}


# --- where the database and config.toml are ----------------------------------------------------


def test_the_environment_names_the_database_and_the_config(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = tmp_path / "env" / "runs.db"
    config = tmp_path / "env.toml"
    config.write_text("[ppp.weights]\ntechnical = 1.0\ninteraction = 0.0\n")
    monkeypatch.setenv("PPP_TUI_DB", str(db))
    monkeypatch.setenv("PPP_TUI_CONFIG", str(config))
    monkeypatch.chdir(tmp_path)
    assert run_cli("import", str(EXAMPLES)).exit_code == 0
    assert db.exists()
    # Pure technical weights: agent_a (1.0) beats agent_b (0.9).
    document = as_json(run_cli("rank", "seed-000", "--json"))
    assert document["best_agent"] == "agent_a"
    assert document["weights"] == {"technical": 1.0, "interaction": 0.0}
    shown = as_json(run_cli("config", "show", "--json"))
    assert (shown["path"], shown["db"]) == (str(config), str(db))
    # The flags win over the environment.
    other = tmp_path / "other.db"
    assert error_line(run_cli("runs", "--db", str(other))).startswith(f"Error: {other}:")
    (tmp_path / "empty.toml").write_text("")
    flagged = as_json(
        run_cli("rank", "seed-000", "--config", str(tmp_path / "empty.toml"), "--json")
    )
    assert flagged["best_agent"] == "agent_b"


# --- no tracebacks anywhere --------------------------------------------------------------------


@pytest.mark.parametrize(
    "args",
    [
        ["runs", "--json"],
        ["runs", "--stage", "nope"],
        ["rank", "seed-003"],
        ["rank", "seed-003", "--technical", "2"],
        ["regret"],
        ["regret", "--json", "--stage", "plan"],
        ["tune"],
        ["tune", "--per-stage"],
        ["export", "--format", "xml"],
        ["prefer", "seed-003"],
        ["config", "show"],
        ["config", "validate"],
        ["score", str(EXAMPLES)],
        ["classify", "Tabs or spaces?"],
        ["import", "/nonexistent.jsonl"],
    ],
)
def test_no_command_prints_a_traceback(imported: Invoke, args: list[str]) -> None:
    result = imported(*args)
    assert result.exit_code in (0, 1, 2)
    assert "Traceback" not in result.output
    if result.exit_code == 1:
        assert len(result.stderr.strip().splitlines()) == 1


def test_a_stage_named_global_is_tuned_into_its_own_table(ppp: Invoke, tmp_path: Path) -> None:
    """`tune --per-stage --write` on runs of a stage called "global" writes
    [ppp.weights.global], and leaves the global weights ([ppp.weights]) alone."""
    asker = {
        "name": "asker",
        "technical_score": 0.95,
        "trajectory": {"questions": [{"text": "Which port?", "effort": "high"}]},
    }
    quiet = {"name": "quiet", "technical_score": 0.8, "trajectory": {}}
    runs = [
        {"id": f"g{i}", "stage": "global", "agents": [asker, quiet], "preferred_agent": "asker"}
        for i in range(3)
    ]
    source = tmp_path / "global.jsonl"
    source.write_text("".join(json.dumps(run) + "\n" for run in runs))
    assert ppp("import", str(source)).exit_code == 0
    documents = as_json(ppp("tune", "--per-stage", "--json"))
    assert [d["scope"] for d in documents] == ["global"]
    assert ppp("tune", "--per-stage", "--write").exit_code == 0
    weights = tomlkit.parse((tmp_path / "config.toml").read_text())["ppp"]["weights"]
    assert set(weights) == {"global"}
    settings = load_settings(tmp_path / "config.toml")
    assert settings.weights == Weights.pair(0.7, 0.3)  # the global weights untouched
    assert settings.stage_weights["global"].technical == round(documents[0]["technical"], 6)


def test_three_weights_in_config_rank_regret_and_validate(marked: Invoke, config: Path) -> None:
    config.write_text("[ppp.weights]\ntechnical = 0.5\nproactivity = 0.2\npersonalization = 0.8\n")
    document = as_json(marked("rank", "seed-003", "--json"))
    assert document["weights"] == {
        "technical": 0.5,
        "interaction": 0.5,
        "proactivity": 0.2,
        "personalization": 0.8,
    }
    for agent in document["agents"]:
        expected = 0.5 * agent["technical"]
        if agent["has_trajectory"]:
            expected += 0.2 * agent["r_proact"] + 0.8 * agent["r_pers"]
        else:
            expected = agent["technical"]  # the technical-only fallback
        assert agent["final"] == pytest.approx(expected, abs=1e-12)
    assert "  weights 0.50/0.20/0.80" in marked("rank", "seed-003").stdout
    assert marked("regret").stdout.startswith("weights 0.50/0.20/0.80: 2 marked runs")
    validated = marked("config", "validate")
    assert validated.stdout.endswith(": valid (global 0.5/0.2/0.8, 0 stage tables)\n")
