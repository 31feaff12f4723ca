"""What `ppp-tui judge` makes of a real server's answers (judge_server.py plays it).

A cap on the answer's length is sent; an answer cut off at it is no answer and is never
cached; a prompt longer than the model's context is skipped and counted, the rest
judged; only an answer that is the label (or the number) counts; `--evaluate` measures
the judge on the questions it answered; a model the server does not serve is said once;
a dry run after a run says the cache answers the rest.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner
from helpers import (
    check_consistent,
    classified_count,
    one_line_error,
    question_rows,
    run_judge,
    write_config,
)
from judge_server import Messages, Server

from ppp_tui.cli import cli
from ppp_tui.core.judge import parse_effort, parse_score

pytestmark = pytest.mark.usefixtures("fast_retries")


def cached_rows(db: Path) -> int:
    conn = sqlite3.connect(db)
    try:
        return int(conn.execute("SELECT count(*) FROM judgments").fetchone()[0])
    finally:
        conn.close()


def distinct_prompts(db: Path, config: Path) -> int:
    planned = json.loads(run_judge(db, config, "--dry-run", "--json").stdout)
    return int(planned["requests"])


# -- the request -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("keys", "sent"), [({}, 16), ({"max_tokens": 24}, 24), ({"max_tokens": 0}, None)]
)
def test_a_cap_on_the_answer_is_sent(
    judge_db: Path, tmp_path: Path, server: Server, keys: dict[str, int], sent: int | None
) -> None:
    config = write_config(tmp_path / "config.toml", server, **keys)
    assert run_judge(judge_db, config, "--limit", "3").exit_code == 0
    assert server.requests and all(body.get("max_tokens") == sent for body in server.requests)


def test_a_bad_cap_is_one_line(judge_db: Path, tmp_path: Path, server: Server) -> None:
    config = write_config(tmp_path / "config.toml", server, max_tokens=-1)
    assert "ppp.judge.max_tokens: expected a whole number from 0" in one_line_error(
        run_judge(judge_db, config)
    )
    assert server.count == 0


# -- the answers -------------------------------------------------------------------


def test_an_answer_cut_off_at_the_cap_is_none_and_never_cached(
    judge_db: Path, tmp_path: Path, server: Server
) -> None:
    config = write_config(tmp_path / "config.toml", server)
    # Read whole, "HIGH" would count: stopped at max_tokens, it may be the start of
    # "HIGH or MEDIUM ...", so it is no answer.
    server.answer = lambda messages: "HIGH"
    total = classified_count(judge_db)
    requests = distinct_prompts(judge_db, config)
    server.faults = ["length"] * requests
    before = question_rows(judge_db)
    result = run_judge(judge_db, config, "--json")
    assert result.exit_code == 0, result.output
    questions = json.loads(result.stdout)["questions"]
    assert questions["cut_off"] == questions["unparseable"] == total
    assert questions["judged"] == 0
    assert question_rows(judge_db) == before and cached_rows(judge_db) == 0
    # Not cached: the next run asks again, and the text says why nothing was kept.
    server.faults = ["length"] * requests
    text = run_judge(judge_db, config)
    assert server.count == 2 * requests
    assert f"{total} answers named no effort" in text.stdout
    assert "stopped at ppp.judge.max_tokens (16) before it ended: not kept" in text.stdout
    # Answered whole, the same answer counts.
    assert run_judge(judge_db, config).exit_code == 0
    assert server.count == 3 * requests
    assert all(row[3] == "high" for row in question_rows(judge_db) if row[4] != "label")
    check_consistent(judge_db)


def test_a_prompt_longer_than_the_context_is_skipped_and_the_rest_judged(
    judge_db: Path, tmp_path: Path, server: Server
) -> None:
    config = write_config(tmp_path / "config.toml", server)
    total = classified_count(judge_db)
    requests = distinct_prompts(judge_db, config)
    server.faults = ["context"]  # the first prompt sent
    result = run_judge(judge_db, config, "--json")
    assert result.exit_code == 0, result.output
    questions = json.loads(result.stdout)["questions"]
    assert questions["too_long"] >= 1
    assert questions["judged"] == total - questions["too_long"]
    assert server.count == requests
    # The next run asks only for the skipped one (the server takes it this time).
    again = run_judge(judge_db, config)
    assert again.exit_code == 0, again.output
    assert server.count == requests + 1
    assert f"{total:,} of {total:,} classified questions judged" in again.stdout
    check_consistent(judge_db)


def test_the_skipped_prompt_is_said_in_the_text(
    judge_db: Path, tmp_path: Path, server: Server
) -> None:
    config = write_config(tmp_path / "config.toml", server)
    server.faults = ["context"]
    result = run_judge(judge_db, config)
    assert result.exit_code == 0, result.output
    assert "skipped: the prompt is longer than the model's context" in result.stdout


@pytest.mark.parametrize(
    "answer",
    [
        "The task was to update the existing tests, not LOW.",
        "LIGHT, MEDIUM",
        "LOW, MEDIUM",
        "LOW or HIGH",
        "LOW. HIGH.",
        "not LOW",
        "a low-effort question",
        "Classify: I think it depends",
        "LOW: the user answers at once.\nMEDIUM: answering needs information.",
    ],
)
def test_an_answer_that_only_mentions_a_label_is_unparseable(answer: str) -> None:
    assert parse_effort(answer) is None


@pytest.mark.parametrize(
    ("answer", "effort"),
    [
        ("Effort: HIGH", "high"),
        ("The effort is medium.", "medium"),
        ("The effort required to answer this question is MEDIUM.", "medium"),
        ("Medium effort.", "medium"),
        ("HIGH. The user has to read production logs.", "high"),
        ("LOW - an option is offered", "low"),
        ("Classification: **LOW**", "low"),
    ],
)
def test_an_answer_that_is_the_label_counts(answer: str, effort: str) -> None:
    found = parse_effort(answer)
    assert found is not None and found.value == effort


@pytest.mark.parametrize(
    ("answer", "score"),
    [
        ("The fix covers 1 of the 3 failing cases and leaves the rest.", None),
        ("Done in 2 steps: 1. read 2. write", None),
        ("0.8 - mostly done", 0.8),
        ("Score = 0.9.", 0.9),
        ("0.7/1", 0.7),
        ("9" * 5000, None),
    ],
)
def test_only_an_answer_that_is_the_number_is_a_score(answer: str, score: float | None) -> None:
    assert parse_score(answer) == score


def test_an_incidental_label_in_an_answer_changes_nothing(
    judge_db: Path, tmp_path: Path, server: Server
) -> None:
    config = write_config(tmp_path / "config.toml", server)
    server.answer = lambda messages: "The task was to update the existing tests, not LOW."
    before = question_rows(judge_db)
    result = run_judge(judge_db, config, "--json")
    assert json.loads(result.stdout)["questions"]["unparseable"] == classified_count(judge_db)
    assert question_rows(judge_db) == before


# -- evaluating --------------------------------------------------------------------


def test_evaluate_measures_the_judge_on_what_it_answered(
    judge_db: Path, tmp_path: Path, server: Server
) -> None:
    config = write_config(tmp_path / "config.toml", server)
    server.answer = lambda messages: "I would rather not say."
    result = run_judge(judge_db, config, "--evaluate", "--json")
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    assert document["answered"] == 0 and document["unparseable"] == document["questions"] > 0
    assert document["judge"] is None and document["classifier_on_answered"] is None
    # The old figure: every unanswered question as the classifier's label.
    assert document["judge_or_classifier"]["accuracy"] == document["classifier"]["accuracy"]
    text = run_judge(judge_db, config, "--evaluate")
    lines = text.stdout.splitlines()
    assert (
        lines[1]
        == f"answered: 0 of {document['questions']} ({document['questions']} named no effort)"
    )
    assert "the judge gave no effort: nothing to measure it by" in text.stdout


def test_evaluate_says_the_answered_count_and_their_accuracy_first(
    judge_db: Path, tmp_path: Path, server: Server
) -> None:
    config = write_config(tmp_path / "config.toml", server)
    rows = [row for row in question_rows(judge_db) if row[4] == "label"]
    labels = {row[2].strip(): row[3] for row in rows}

    def half(messages: Messages) -> str:
        """The right label for questions that say "?" at the end, no answer otherwise."""
        question = messages[-1]["content"].split("Question the agent asked:\n", 1)[1]
        question = question.rsplit("\n\nClassify", 1)[0].strip()
        return str(labels[question]).upper() if question.endswith("?") else "unsure"

    server.answer = half
    document = json.loads(run_judge(judge_db, config, "--evaluate", "--json").stdout)
    answered = sum(1 for row in rows if row[2].strip().endswith("?"))
    assert 0 < answered < len(rows)
    assert document["answered"] == answered
    assert document["judge"]["accuracy"] == 1.0  # right on every one it answered
    assert (
        document["classifier_on_answered"]["per_class"]["low"]["support"]
        + sum(
            document["classifier_on_answered"]["per_class"][level]["support"]
            for level in ("medium", "high")
        )
        == answered
    )
    text = run_judge(judge_db, config, "--evaluate").stdout.splitlines()
    assert (
        text[1] == f"answered: {answered} of {len(rows)} ({len(rows) - answered} named no effort)"
    )
    assert text[2] == f"on the {answered} answered:"
    assert text[3].split() == ["judge", "classifier"]
    assert text[4].split()[:2] == ["accuracy", "1.000"]


# -- the model's name --------------------------------------------------------------


def test_a_model_the_server_does_not_list_is_said_once(
    judge_db: Path, tmp_path: Path, server: Server
) -> None:
    config = write_config(tmp_path / "config.toml", server, concurrency=3)
    server.served_model, server.echo_model = "SmolLM2-135M-Instruct.gguf", True
    result = run_judge(judge_db, config)
    assert result.exit_code == 0, result.output
    warnings = result.stderr.strip().splitlines()
    assert warnings == [
        f"warning: {server.base_url} does not serve the model 'judge-model' (it lists"
        " 'SmolLM2-135M-Instruct.gguf'); its answers are kept as ppp.judge.model's:"
        " is the name right?"
    ]


def test_a_reply_naming_another_model_is_said_once(
    judge_db: Path, tmp_path: Path, server: Server
) -> None:
    config = write_config(tmp_path / "config.toml", server, concurrency=3)
    server.served_model = "other-model"
    server.served_model_listed = False
    result = run_judge(judge_db, config)
    assert result.exit_code == 0, result.output
    warnings = result.stderr.strip().splitlines()
    assert len(warnings) == 1
    assert "was asked for the model 'judge-model' and answers as 'other-model'" in warnings[0]


@pytest.mark.parametrize(
    ("named", "listed"), [("judge-model", True), ("judge-model-2024-07-18", False)]
)
def test_the_model_asked_for_is_no_news(
    judge_db: Path, tmp_path: Path, server: Server, named: str, listed: bool
) -> None:
    config = write_config(tmp_path / "config.toml", server)
    server.served_model, server.served_model_listed = named, listed
    result = run_judge(judge_db, config)
    assert result.exit_code == 0 and result.stderr == "", result.output


# -- a dry run after a run ---------------------------------------------------------


def test_a_dry_run_after_a_run_says_the_cache_answers(
    judge_db: Path, tmp_path: Path, server: Server
) -> None:
    config = write_config(tmp_path / "config.toml", server)
    total = classified_count(judge_db)
    assert run_judge(judge_db, config, "--technical").exit_code == 0
    dry = run_judge(judge_db, config, "--dry-run")
    assert dry.stdout.startswith("dry run: 0 requests")
    assert f"{total:,} classified questions, all answered from the cache" in dry.stdout
    document = json.loads(run_judge(judge_db, config, "--dry-run", "--json").stdout)
    assert document["requests"] == 0 and document["questions"]["cached"] == total
    shown = CliRunner().invoke(cli, ["config", "show", "--config", str(config)])
    assert "max_tokens = 16" in shown.stdout
