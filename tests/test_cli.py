"""The command line (SPEC 7) through click's CliRunner."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from helpers import AGENT_KEYS, RANK_KEYS

from ppp_tui.cli import cli

EXAMPLES = Path(__file__).resolve().parent.parent / "examples" / "runs.jsonl"


def run(*args: str, input: str | None = None) -> Result:
    return CliRunner().invoke(cli, list(args), input=input)


def test_score_json_is_one_rank_document_per_run() -> None:
    result = run("score", str(EXAMPLES), "--json")
    assert result.exit_code == 0, result.output
    documents = [json.loads(line) for line in result.output.splitlines()]
    assert len(documents) == 3
    first = documents[0]
    assert set(first) == RANK_KEYS
    assert set(first["agents"][0]) == AGENT_KEYS
    assert first["best_agent"] == "agent_b"
    assert first["confidence"] == 0.645
    assert first["margin"] == pytest.approx(0.395)
    assert first["weights"] == {"technical": 0.7, "interaction": 0.3}
    assert first["agents"][1]["questions"] == {"low": 0, "medium": 0, "high": 3}
    seed_003 = documents[1]
    assert [a["name"] for a in seed_003["agents"]] == ["gemini", "gpt", "claude"]
    assert [a["final"] for a in seed_003["agents"]] == [0.625, 0.566, 0.53]


def test_score_without_trajectory_has_null_interaction() -> None:
    result = run("score", str(EXAMPLES), "--json")
    last = json.loads(result.output.splitlines()[2])
    aider = next(a for a in last["agents"] if a["name"] == "aider")
    assert aider["interaction"] is None and aider["r_proact"] is None and aider["r_pers"] is None
    assert aider["final"] == 0.78
    assert aider["has_trajectory"] is False


def test_score_with_another_technical_weight() -> None:
    result = run("score", str(EXAMPLES), "--technical", "1.0", "--json")
    first = json.loads(result.output.splitlines()[0])
    assert first["best_agent"] == "agent_a"
    assert first["weights"] == {"technical": 1.0, "interaction": 0.0}


def test_score_reads_standard_input_and_prints_a_table() -> None:
    result = run("score", "-", input=EXAMPLES.read_text())
    assert result.exit_code == 0
    assert "best: agent_b (0.645" in result.output
    assert "no trajectory, low relevance" in result.output


def test_bad_run_is_one_line_with_file_line_and_path(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text(
        EXAMPLES.read_text().splitlines()[0]
        + "\n"
        + '{"agents": [{"name": "x", "technical_score": 1.5}]}\n'
    )
    result = run("score", str(bad))
    assert result.exit_code == 1
    assert (
        "bad.jsonl:2: $.agents[0].technical_score: technical_score must be in [0, 1], got 1.5"
        in result.output
    )
    assert "Traceback" not in result.output


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{not json", "invalid JSON"),
        ('{"agents": []}', "$.agents: agents must hold at least one agent"),
        (
            '{"agents": [{"name": "a", "technical_score": 0.5},'
            ' {"name": "a", "technical_score": 0.4}]}',
            "duplicate agent name 'a'",
        ),
        (
            '{"agents": [{"name": "a", "technical_score": 0.5, "trajectory":'
            ' {"questions": [{"text": "Why?", "effort": "huge"}]}}]}',
            "effort must be one of low, medium, high",
        ),
    ],
)
def test_bad_input_exits_1(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "run.json"
    path.write_text(content)
    result = run("score", str(path))
    assert result.exit_code == 1
    assert message in result.output


def test_missing_file_and_usage_errors() -> None:
    assert run("score", "/nonexistent/runs.json").exit_code == 1
    assert run("score", str(EXAMPLES), "--technical", "1.5").exit_code == 2
    assert run("frobnicate").exit_code == 2


def test_classify_json_shape() -> None:
    result = run(
        "classify",
        "Which database: PostgreSQL or MySQL?",
        "Tabs or spaces, and could you also find out which editor settings the other teams use?",
        "--json",
    )
    assert result.exit_code == 0
    documents = json.loads(result.output)
    assert [set(d) for d in documents] == [{"question", "effort", "parts"}] * 2
    assert documents[0]["effort"] == "low"
    assert documents[1]["effort"] == "high"
    assert [p["effort"] for p in documents[1]["parts"]] == ["low", "high"]


def test_classify_reads_standard_input_and_uses_context() -> None:
    result = run(
        "classify",
        "--context",
        "Cache the catalog in Redis with a 10-minute TTL.",
        input="What TTL should the cached entries have?\nHow should we handle errors?\n",
    )
    assert result.exit_code == 0
    lines = result.output.splitlines()
    assert lines[0].startswith("low") and "answered by the task text" in lines[0]
    assert lines[1].startswith("medium")


@pytest.mark.parametrize(
    "command",
    [[], ["technical"], ["rank"], ["regret"], ["tune"], ["config"], ["config", "init"]],
)
def test_help_names_no_internal_documents_and_keeps_its_indentation(command: list[str]) -> None:
    result = CliRunner().invoke(cli, [*command, "--help"])
    assert result.exit_code == 0
    assert "SPEC" not in result.output and "seed 0" not in result.output.lower()
    # Body paragraphs are indented by exactly two spaces (a stray newline in an
    # example once pushed the whole `technical` help four columns right).
    assert "\n      FILE" not in result.output


def test_example_config_names_no_internal_documents() -> None:
    from ppp_tui.storage.config_write import example_config

    text = example_config()
    assert "SPEC" not in text and "seeds'" not in text
    assert "printf" not in text


def test_a_leading_utf8_byte_order_mark_is_not_content(tmp_path: Path) -> None:
    runs = tmp_path / "runs.jsonl"
    body = b'{"id": "r1", "agents": [{"name": "a", "technical_score": 0.5}]}\n'
    runs.write_bytes(b"\xef\xbb\xbf" + body)
    result = CliRunner().invoke(cli, ["score", str(runs), "--json"])
    assert result.exit_code == 0, result.output
    assert '"r1"' in result.output
    db = str(tmp_path / "x.db")
    assert CliRunner().invoke(cli, ["import", str(runs), "--db", db]).exit_code == 0
    scores = tmp_path / "scores.csv"  # Excel's "CSV UTF-8" starts with a byte order mark
    scores.write_bytes(b"\xef\xbb\xbfrun_id,agent,technical\r\nr1,a,0.75\r\n")
    result = CliRunner().invoke(cli, ["technical", str(scores), "--db", db])
    assert result.exit_code == 0, result.output
    assert "set 1 technical score in 1 run" in result.output


def test_runs_prints_every_spec_kit_id_whole_so_rank_can_take_it(tmp_path: Path) -> None:
    db = str(tmp_path / "sk.db")
    example = Path(__file__).parent.parent / "examples" / "spec-kit-consensus.db"
    assert CliRunner().invoke(cli, ["import", str(example), "--db", db]).exit_code == 0
    listed = CliRunner().invoke(cli, ["runs", "--db", db])
    assert listed.exit_code == 0, listed.output
    ids = [line.split()[0] for line in listed.output.splitlines()[1:] if line.startswith("spec")]
    assert ids and all(not run_id.endswith("…") for run_id in ids)
    assert CliRunner().invoke(cli, ["rank", ids[0], "--db", db]).exit_code == 0
