"""Who marked: reviewers on marks, whose marks count, marks from a file or another
database, and the migration of marks made before reviewers were recorded."""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from helpers import run_cli

from ppp_tui.cli import cli
from ppp_tui.storage import reviewers
from ppp_tui.storage.database import StoreError
from ppp_tui.storage.reviewers import Scope
from ppp_tui.storage.store import Store

EXAMPLES = Path(__file__).parent.parent / "examples" / "runs.jsonl"
DATA = Path(__file__).parent / "data"


run = run_cli


@pytest.fixture
def db(examples_db: Path) -> Path:
    return examples_db


def ppp(db: Path, *args: str, env: dict[str, str] | None = None) -> Result:
    return run(*args, "--db", str(db), env=env)


def _old_database(tmp_path: Path) -> Path:
    """A database ppp-tui wrote before reviewers (schema 2: two runs, one mark)."""
    path = tmp_path / "old.db"
    conn = sqlite3.connect(path)
    conn.executescript((DATA / "schema2.sql").read_text())
    conn.execute("PRAGMA user_version = 2")
    conn.commit()
    conn.close()
    return path


def document(result: Result) -> Any:
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


# -- who the reviewer is -------------------------------------------------------------


def test_the_reviewer_comes_from_the_option_then_the_environment_then_config_then_git(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(reviewers, "_git_user", lambda: "Git User")
    monkeypatch.setattr(reviewers, "_login", lambda: "login")
    monkeypatch.setenv(reviewers.REVIEWER_ENV, "from-env")
    assert reviewers.resolve("  ana ", "configured") == ("ana", "--reviewer")
    assert reviewers.resolve(None, "configured") == ("from-env", "$PPP_TUI_REVIEWER")
    monkeypatch.delenv(reviewers.REVIEWER_ENV)
    assert reviewers.resolve(None, "configured") == ("configured", "config.toml")
    assert reviewers.resolve(None, None) == ("Git User", "git user.name")
    monkeypatch.setattr(reviewers, "_git_user", lambda: None)
    assert reviewers.resolve(None, None) == ("login", "login name")


@pytest.mark.parametrize("name", ["", "   ", "a\x1b[2Jb", "tab\there", "x" * 101])
def test_a_bad_reviewer_name_is_refused(name: str) -> None:
    with pytest.raises(StoreError):
        reviewers.checked(name)


def test_unknown_in_parentheses_names_the_unknown_reviewer() -> None:
    assert reviewers.checked("(unknown)") == reviewers.UNKNOWN
    assert reviewers.shown(reviewers.UNKNOWN) == "(unknown)"


def test_the_config_names_the_reviewer_and_a_wrong_one_is_one_line(
    db: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(reviewers.REVIEWER_ENV)
    config = tmp_path / "config.toml"
    config.write_text('[ppp]\nreviewer = "carol"\n')
    result = ppp(db, "prefer", "seed-003", "claude", "--config", str(config))
    assert result.stdout == "seed-003: carol's preferred agent is claude\n"
    config.write_text("[ppp]\nreviewer = 3\n")
    result = ppp(db, "prefer", "seed-003", "gpt", "--config", str(config))
    assert result.exit_code == 1
    assert result.output.strip().endswith("ppp.reviewer: expected a name, got 3")
    # config validate knows the key (no "unknown key" warning).
    config.write_text('[ppp]\nreviewer = "carol"\n')
    assert "unknown" not in run("config", "validate", "--config", str(config)).output


# -- one current mark per reviewer ---------------------------------------------------


def test_each_reviewer_has_a_current_mark_and_the_history_keeps_everyone(db: Path) -> None:
    assert ppp(db, "prefer", "seed-003", "claude", "--reviewer", "ana").exit_code == 0
    assert ppp(db, "prefer", "seed-003", "gpt", "--reviewer", "ben").exit_code == 0
    changed = ppp(db, "prefer", "seed-003", "gemini", "--reviewer", "ana")
    assert changed.stdout == "seed-003: ana's preferred agent is gemini (was claude)\n"
    with Store.open(db) as store:
        assert store.current_marks("seed-003") == {"ana": "gemini", "ben": "gpt"}
        assert [(m.reviewer, m.agent) for m in store.marks("seed-003")] == [
            ("ana", "claude"),
            ("ben", "gpt"),
            ("ana", "gemini"),
        ]
        store.scope = Scope("ben")
        assert store.get_run("seed-003").preferred_agent == "gpt"
        assert store.preferred_agents()["seed-003"] == "gpt"
        store.scope = Scope("tester")  # the tests' own reviewer marked nothing
        assert store.get_run("seed-003").preferred_agent is None
    shown = document(ppp(db, "show", "seed-003", "--json", "--reviewer", "ana"))
    assert shown["preferred_agent"] == "gemini"
    assert shown["marks"] == {"ana": "gemini", "ben": "gpt"}
    cleared = ppp(db, "prefer", "seed-003", "--clear", "--reviewer", "ana")
    assert cleared.stdout == "seed-003: ana's preferred mark cleared (was gemini)\n"
    with Store.open(db) as store:
        assert store.current_marks("seed-003") == {"ben": "gpt"}


def test_whose_marks_count_in_regret(db: Path) -> None:
    ppp(db, "prefer", "seed-003", "claude", "--reviewer", "ana")
    ppp(db, "prefer", "seed-000", "agent_a", "--reviewer", "ana")
    ppp(db, "prefer", "seed-003", "gemini", "--reviewer", "ben")
    ana = document(ppp(db, "regret", "--json", "--reviewer", "ana"))
    ben = document(ppp(db, "regret", "--json", "--reviewer", "ben"))
    every = document(ppp(db, "regret", "--json", "--all-reviewers"))
    assert (ana["reviewer"], ana["all_reviewers"], ana["marked_runs"]) == ("ana", False, 2)
    assert (ben["marked_runs"], ben["runs"][0]["preferred"]) == (1, "gemini")
    # Each reviewer's mark is one observation: seed-003 counts twice.
    assert (every["reviewer"], every["all_reviewers"], every["marked_runs"]) == (None, True, 3)
    assert sorted((r["run_id"], r["reviewer"], r["preferred"]) for r in every["runs"]) == [
        ("seed-000", "ana", "agent_a"),
        ("seed-003", "ana", "claude"),
        ("seed-003", "ben", "gemini"),
    ]
    by_run = {(r["run_id"], r["reviewer"]): r["regret"] for r in every["runs"]}
    for who, figures in (("ana", ana), ("ben", ben)):
        for row in figures["runs"]:
            assert by_run[row["run_id"], who] == row["regret"]
    mean = sum(by_run.values()) / 3
    assert every["mean_regret"] == pytest.approx(mean, abs=1e-9)  # JSON: 10 decimals
    both = ppp(db, "regret", "--reviewer", "ana", "--all-reviewers")
    assert both.exit_code == 2 and "not both" in both.output


def test_no_marks_of_mine_says_whose_there_are(db: Path) -> None:
    ppp(db, "prefer", "seed-003", "claude", "--reviewer", "ana")
    text = ppp(db, "regret")
    assert text.exit_code == 0
    assert text.stdout == (
        "no marked runs by tester (marks by ana 1); use --reviewer NAME or --all-reviewers\n"
    )
    for command in ("tune", "ab", "leaderboard"):
        result = ppp(db, command)
        assert result.exit_code == 1
        assert "marks by ana 1" in result.output and "--all-reviewers" in result.output
    assert ppp(db, "tune", "--all-reviewers").exit_code == 0
    assert document(ppp(db, "leaderboard", "--json", "--reviewer", "ana"))["reviewer"] == "ana"
    assert document(ppp(db, "ab", "--json", "--all-reviewers"))["all_reviewers"] is True


# -- marks made before reviewers -----------------------------------------------------


def test_old_marks_migrate_as_the_unknown_reviewers(tmp_path: Path) -> None:
    path = _old_database(tmp_path)
    with Store.open(path) as store:
        columns = {row[1] for row in store.conn.execute("PRAGMA table_info(runs)")}
        assert "preferred_agent" not in columns  # the current marks live in `marks` now
        assert store.current_marks("old-1") == {"": "a"}
        assert [(m.reviewer, m.agent, m.source) for m in store.marks("old-1")] == [
            ("", "a", "import")
        ]
        assert store.conn.execute("SELECT marked_at FROM marks").fetchall() == [
            ("2026-11-24T06:02:51Z",)
        ]
    shown = document(ppp(path, "show", "old-1", "--json"))
    assert shown["preferred_agent"] is None and shown["marks"] == {"(unknown)": "a"}
    unknown = document(ppp(path, "regret", "--json", "--reviewer", "(unknown)"))
    assert (unknown["reviewer"], unknown["marked_runs"]) == ("(unknown)", 1)
    hint = ppp(path, "regret")
    assert "marks by (unknown) 1" in hint.stdout


# -- many marks at once --------------------------------------------------------------


def test_prefer_file_records_csv_marks_in_one_go_and_skips_exact_repeats(
    db: Path, tmp_path: Path
) -> None:
    marks = tmp_path / "marks.csv"
    marks.write_text(
        "run_id,agent,reviewer,at\n"
        "seed-003,claude,ana,2026-11-01T10:00:00Z\n"
        "seed-003,gpt,ana,2026-11-01T09:00:00+00:00\n"  # older: history only
        "seed-000,agent_b,ben,2026-11-02T12:00:00+01:00\n"
        "seed-003,gemini,ben,\n"
    )
    result = ppp(db, "prefer", "--file", str(marks))
    assert result.stdout == f"{marks}: 4 marks recorded\n"
    with Store.open(db) as store:
        assert store.current_marks("seed-003") == {"ana": "claude", "ben": "gemini"}
        history = [(m.reviewer, m.agent, m.marked_at, m.source) for m in store.marks("seed-003")]
        assert ("ana", "gpt", "2026-11-01T09:00:00Z", "file") in history
        assert store.marks("seed-000")[0].marked_at == "2026-11-02T11:00:00Z"
    again = ppp(db, "prefer", "--file", str(marks))
    assert again.stdout == f"{marks}: 0 marks recorded; 4 exact repeats skipped\n"


def test_prefer_file_reads_json_lines(db: Path, tmp_path: Path) -> None:
    marks = tmp_path / "marks.jsonl"
    marks.write_text(
        json.dumps({"run_id": "run-0042", "agent": "aider", "reviewer": "ana"})
        + "\n\n"
        + json.dumps({"run_id": "seed-000", "agent": "agent_a", "reviewer": "(unknown)"})
        + "\n"
    )
    assert ppp(db, "prefer", "--file", str(marks)).stdout == f"{marks}: 2 marks recorded\n"
    with Store.open(db) as store:
        assert store.current_marks("run-0042") == {"ana": "aider"}
        assert store.current_marks("seed-000") == {"": "agent_a"}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("run_id,agent,reviewer\nseed-003,nobody,ana\n", "seed-003: no agent named 'nobody'"),
        ("run_id,agent,reviewer\nnope,claude,ana\n", "unknown run id 'nope'"),
        ("run_id,agent,reviewer\nseed-003,claude,\n", ":3: reviewer is missing or empty"),
        ("run_id,agent\nseed-003,claude\n", "the CSV header lacks reviewer"),
        ("run_id,agent,reviewer,at\nseed-003,claude,ana,yesterday\n", "at 'yesterday' is not"),
        ('{"run_id": "seed-003", "agent": "claude"}\n', ":1: reviewer is missing or empty"),
        ('{"run_id": "seed-003", "agent": "claude", "reviewer": "a\\u001b[2J"}\n', "control"),
        ('{"run_id": "seed-003"\n', ":1: not a JSON object"),
        ("", "no marks in the file"),
    ],
)
def test_a_bad_marks_file_is_one_line_and_records_nothing(
    db: Path, tmp_path: Path, text: str, message: str
) -> None:
    marks = tmp_path / "marks.csv"
    # A good mark first: the bad line after it must still leave the database untouched.
    good = "run_id,agent,reviewer\nseed-000,agent_a,ana\n"
    marks.write_text(text if not text.startswith("run_id,agent,reviewer\n") else good + text[22:])
    result = ppp(db, "prefer", "--file", str(marks))
    assert result.exit_code == 1
    assert message in result.output and len(result.output.strip().splitlines()) == 1
    assert "\x1b" not in result.output
    with Store.open(db) as store:
        assert store.conn.execute("SELECT count(*) FROM preferred_marks").fetchone()[0] == 0


def test_prefer_file_takes_no_run_arguments(db: Path, tmp_path: Path) -> None:
    result = ppp(db, "prefer", "seed-003", "--file", str(tmp_path / "x.csv"))
    assert result.exit_code == 2 and "--file takes no RUN_ID" in result.output


# -- marks from another database -----------------------------------------------------


def test_another_databases_marks_merge_by_run_id_and_only_once(db: Path, tmp_path: Path) -> None:
    other = tmp_path / "other.db"
    assert run("import", str(EXAMPLES), "--db", str(other)).exit_code == 0
    ppp(other, "prefer", "seed-003", "gpt", "--reviewer", "ana")
    ppp(other, "prefer", "seed-003", "claude", "--reviewer", "ana")
    ppp(other, "prefer", "run-0042", "aider", "--reviewer", "ben")
    # A run only the other database has: its mark stays behind.
    extra = tmp_path / "extra.jsonl"
    run_obj = json.loads(EXAMPLES.read_text().splitlines()[0])
    run_obj["id"] = "only-there"
    extra.write_text(json.dumps(run_obj) + "\n")
    assert run("import", str(extra), "--db", str(other)).exit_code == 0
    ppp(other, "prefer", "only-there", "agent_a", "--reviewer", "ana")
    # Here, ben marked run-0042 later than the other database's mark.
    ppp(db, "prefer", "run-0042", "codex", "--reviewer", "ben")
    with Store.open(db) as store:
        store.conn.execute("UPDATE preferred_marks SET marked_at = '2999-01-01T00:00:00Z'")
        store.conn.execute("UPDATE marks SET marked_at = '2999-01-01T00:00:00Z'")

    merged = ppp(db, "import", str(other))
    assert merged.stdout == (
        f"{other}: 3 marks merged (1 mark left out, its run or agent not in this database)\n"
    )
    with Store.open(db) as store:
        assert store.current_marks("seed-003") == {"ana": "claude"}
        assert [m.agent for m in store.marks("seed-003")] == ["gpt", "claude"]
        # ben's own later mark stays current; the merged one joins the history.
        assert store.current_marks("run-0042") == {"ben": "codex"}
        assert [m.agent for m in store.marks("run-0042")] == ["aider", "codex"]  # by time
        before = store.conn.execute("SELECT count(*) FROM preferred_marks").fetchone()[0]
    again = ppp(db, "import", str(other))
    assert again.stdout == (
        f"{other}: 0 marks merged (3 already here;"
        " 1 mark left out, its run or agent not in this database)\n"
    )
    with Store.open(db) as store:
        assert store.conn.execute("SELECT count(*) FROM preferred_marks").fetchone()[0] == before


def test_merging_a_database_into_itself_or_with_other_files_is_refused(
    db: Path, tmp_path: Path
) -> None:
    itself = ppp(db, "import", str(db))
    assert itself.exit_code == 2 and "is the database itself" in itself.output
    mixed = ppp(db, "import", str(db), str(EXAMPLES))
    assert mixed.exit_code == 2 and "in a command of their own" in mixed.output


@pytest.mark.parametrize(
    ("at", "message"),
    [
        ("0001-01-01T00:00:00+05:00", "is not an ISO 8601 time"),
        ("9999-12-31T23:59:59-05:00", "is not an ISO 8601 time"),
        ("2999-01-01T00:00:00Z", "is in the future"),
    ],
)
def test_a_time_out_of_range_or_to_come_is_one_line(
    db: Path, tmp_path: Path, at: str, message: str
) -> None:
    marks = tmp_path / "marks.jsonl"
    marks.write_text(
        json.dumps({"run_id": "seed-003", "agent": "gpt", "reviewer": "ana", "at": at}) + "\n"
    )
    result = ppp(db, "prefer", "--file", str(marks))
    assert result.exit_code == 1 and f"{marks}:1: at {at!r} {message}" in result.output


def test_marks_file_lines_name_where_they_are_and_odd_files_are_refused(
    db: Path, tmp_path: Path
) -> None:
    marks = tmp_path / "marks.csv"
    marks.write_text("run_id,agent,reviewer\nseed-003,claude,ana\nnope,claude,ana\n")
    result = ppp(db, "prefer", "--file", str(marks))
    assert result.output.strip() == f"Error: {marks}:3: unknown run id 'nope'"
    marks.write_text("run_id,agent,reviewer,reviewer\nseed-003,claude,ana,ben\n")
    assert "names reviewer twice" in ppp(db, "prefer", "--file", str(marks)).output
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    assert "not a regular file" in ppp(db, "prefer", "--file", str(fifo)).output
    both = ppp(db, "prefer", "--file", str(marks), "--reviewer", "ana")
    assert both.exit_code == 2 and "leave out --reviewer" in both.output
    with Store.open(db) as store:
        assert store.conn.execute("SELECT count(*) FROM preferred_marks").fetchone()[0] == 0


def test_marks_come_from_standard_input_with_a_dash(db: Path) -> None:
    result = CliRunner().invoke(
        cli,
        ["prefer", "--file", "-", "--db", str(db)],
        input="run_id,agent,reviewer\nseed-003,gpt,ana\n",
    )
    assert result.stdout == "-: 1 mark recorded\n"
    with Store.open(db) as store:
        assert store.current_marks("seed-003") == {"ana": "gpt"}


def test_unknown_in_config_names_the_unknown_reviewer(
    db: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(reviewers.REVIEWER_ENV)
    config = tmp_path / "config.toml"
    config.write_text('[ppp]\nreviewer = "(unknown)"\n')
    result = ppp(db, "prefer", "seed-003", "gpt", "--config", str(config))
    assert result.stdout == "seed-003: (unknown)'s preferred agent is gpt\n"


def test_two_databases_merged_into_each_other_agree(db: Path, tmp_path: Path) -> None:
    other = tmp_path / "other.db"
    other.write_bytes(db.read_bytes())
    for path, agent in ((db, "claude"), (other, "gpt")):
        marks = tmp_path / f"{agent}.csv"
        marks.write_text(f"run_id,agent,reviewer,at\nseed-003,{agent},zoe,2026-01-01T00:00:00Z\n")
        assert ppp(path, "prefer", "--file", str(marks)).exit_code == 0
    before = tmp_path / "before.db"
    before.write_bytes(db.read_bytes())
    assert ppp(db, "import", str(other)).exit_code == 0
    assert ppp(other, "import", str(before)).exit_code == 0
    with Store.open(db) as first, Store.open(other) as second:
        assert first.current_marks("seed-003") == second.current_marks("seed-003")


def test_several_databases_merge_in_one_transaction(db: Path, tmp_path: Path) -> None:
    other = tmp_path / "other.db"
    other.write_bytes(db.read_bytes())
    ppp(other, "prefer", "seed-003", "gpt", "--reviewer", "ana")
    broken = tmp_path / "broken.db"
    conn = sqlite3.connect(broken)
    conn.executescript(
        "CREATE TABLE runs (id TEXT); CREATE TABLE agents (id INTEGER);"
        " CREATE TABLE preferred_marks (id INTEGER);"
    )
    conn.close()
    result = ppp(db, "import", str(other), str(broken))
    assert result.exit_code == 1 and "cannot read its marks" in result.output
    with Store.open(db) as store:
        assert store.current_marks("seed-003") == {}  # the first one's marks did not stay


def test_folds_and_resamples_take_a_run_whole() -> None:
    import numpy as np

    from ppp_tui.core.arrays import group_draw, group_folds, run_groups

    ids = np.array(["r1", "r1", "r2", "r3", "r3", "r3"], dtype=object)
    inverse, runs = run_groups(ids)
    assert inverse.tolist() == [0, 0, 1, 2, 2, 2] and runs == 3
    folds = group_folds((inverse, runs), 3, seed=4)
    assert folds[0] == folds[1] and folds[3] == folds[4] == folds[5]
    assert sorted(set(folds.tolist())) == [0, 1, 2]
    rng = np.random.default_rng(1)
    for _ in range(20):
        counts = group_draw((inverse, runs), rng)
        assert counts[0] == counts[1] and counts[3] == counts[4] == counts[5]
        assert counts[[0, 2, 3]].sum() == 3  # as many draws as runs
    # One row per run, sorted: the rows' own folds and resamples, as before.
    unique = np.array(["a", "b", "c", "d"], dtype=object)
    groups = run_groups(unique)
    assert (group_folds(groups, 2, 7) == np.random.default_rng(7).permutation(4) % 2).all()
    assert (
        group_draw(groups, np.random.default_rng(3))
        == np.bincount(np.random.default_rng(3).integers(0, 4, size=4), minlength=4)
    ).all()


def test_every_reviewers_marks_tune_and_rank_with_runs_kept_whole(db: Path) -> None:
    for who, agent in (("ana", "claude"), ("ben", "claude"), ("cy", "gpt")):
        ppp(db, "prefer", "seed-003", agent, "--reviewer", who)
    ppp(db, "prefer", "seed-000", "agent_a", "--reviewer", "ana")
    ppp(db, "prefer", "run-0042", "aider", "--reviewer", "ben")
    tuned = document(ppp(db, "tune", "--json", "--all-reviewers"))
    assert tuned["marked_runs"] == 5
    board = document(ppp(db, "leaderboard", "--json", "--all-reviewers"))
    assert board["marked_runs"] == 5 and board["all_reviewers"] is True
    text = ppp(db, "regret", "--all-reviewers").stdout
    assert "5 marks by every reviewer (each one observation)" in text


def test_reviewers_lists_everyone_and_rename_gives_marks_to_another(db: Path) -> None:
    ppp(db, "prefer", "seed-003", "claude", "--reviewer", "ana")
    ppp(db, "prefer", "seed-003", "gpt", "--reviewer", "ana")
    ppp(db, "prefer", "seed-000", "agent_a", "--reviewer", "ana")
    ppp(db, "prefer", "seed-003", "gemini", "--reviewer", "tester")  # later than ana's
    listed = document(ppp(db, "reviewers", "--json"))
    assert [(r["reviewer"], r["marked_runs"], r["marks"], r["current"]) for r in listed] == [
        ("ana", 2, 3, False),
        ("tester", 1, 1, True),
    ]
    assert "* tester" in ppp(db, "reviewers").stdout
    renamed = ppp(db, "reviewers", "--rename", "ana", "tester")
    assert renamed.stdout == (
        "3 marks of ana are tester's now; 1 run both had marked: the later mark stays\n"
    )
    with Store.open(db) as store:
        assert store.current_marks("seed-003") == {"tester": "gemini"}
        assert store.current_marks("seed-000") == {"tester": "agent_a"}
        assert {m.reviewer for m in store.marks("seed-003")} == {"tester"}
    nobody = ppp(db, "reviewers", "--rename", "ana", "ben")
    assert nobody.exit_code == 1 and "no marks by ana" in nobody.output


def test_old_marks_are_claimed_with_rename(tmp_path: Path) -> None:
    path = _old_database(tmp_path)
    assert ppp(path, "reviewers", "--rename", "(unknown)", "tester").exit_code == 0
    assert document(ppp(path, "regret", "--json"))["marked_runs"] == 1
