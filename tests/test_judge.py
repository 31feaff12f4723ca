"""`ppp-tui judge` against a local chat-completions server (judge_server.py).

What is stored and cached, what is retried, what a fault does (one line naming the
endpoint, exit 1, earlier judgments kept, a later run continues), the key never shown or
stored, labels from the data untouched, a hand rating winning over a judged score.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from helpers import (
    SECRET,
    UNSAFE,
    check_consistent,
    classified_count,
    one_line_error,
    question_rows,
    run_judge,
    write_config,
)
from judge_server import Messages, Server, serving

from ppp_tui.cli import cli
from ppp_tui.core.effort import classify_effort
from ppp_tui.core.evaluation import evaluate
from ppp_tui.core.judge import (
    EFFORT_PROMPT_VERSION,
    effort_prompt,
    parse_effort,
    parse_score,
    technical_prompt,
)
from ppp_tui.core.model import Effort
from ppp_tui.judging import client as judge_client

pytestmark = pytest.mark.usefixtures("fast_retries")


@pytest.fixture
def db(judge_db: Path) -> Path:
    return judge_db


# -- prompts and answers -----------------------------------------------------------


@pytest.mark.parametrize(
    ("answer", "effort"),
    [
        ("LOW", Effort.LOW),
        ("medium", Effort.MEDIUM),
        ("**High**.", Effort.HIGH),
        ("Effort: medium", Effort.MEDIUM),
        ("  'LOW'\n", Effort.LOW),
        ("<think>low or high? the user must dig logs</think>\nHIGH", Effort.HIGH),
        ("HIGH (not low)", Effort.HIGH),
        ("I cannot tell", None),
        ("", None),
        ("low or high", None),
        ("lowest", None),
    ],
)
def test_answers_are_read_tolerantly(answer: str, effort: Effort | None) -> None:
    assert parse_effort(answer) is effort


@pytest.mark.parametrize(
    ("answer", "score"),
    [
        ("0.7", 0.7),
        ("Score: 0.75 out of 1", 0.75),
        ("1", 1.0),
        ("80%", 0.8),
        ("<think>maybe 3</think> 0.25", 0.25),
        ("7", None),
        ("none", None),
        ("-0.5", None),  # below 0: no score
    ],
)
def test_scores_are_read_tolerantly(answer: str, score: float | None) -> None:
    assert parse_score(answer) == score


def test_the_prompts_follow_the_definitions_and_hash_their_input() -> None:
    prompt = effort_prompt("Which port?", "Serve on port 8080")
    text = "\n".join(content for _, content in prompt.messages)
    assert "Output ONLY one word: LOW, MEDIUM, or HIGH" in text
    assert "Serve on port 8080" in text and "Which port?" in text
    assert all(word in text for word in ("LOW:", "MEDIUM:", "HIGH:", "beyond the task text"))
    assert prompt.version == EFFORT_PROMPT_VERSION
    assert prompt.input_hash == effort_prompt("Which port?", "Serve on port 8080").input_hash
    assert prompt.input_hash != effort_prompt("Which port?", "Serve on 80").input_hash
    graded = technical_prompt("Add a cache", "Done: added an LRU cache")
    assert "Add a cache" in graded.messages[1][1] and "LRU cache" in graded.messages[1][1]


# -- configuration -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("table", "expected"),
    [
        ('model = "m"', "ppp.judge: base_url is missing"),
        ('base_url = "http://x/v1"', "ppp.judge: model is missing"),
        ('base_url = "localhost:11434"\nmodel = "m"', "ppp.judge.base_url: expected an http"),
        ('base_url = "http://[bad/v1"\nmodel = "m"', "ppp.judge.base_url: expected an http"),
        ('base_url = "http://h:99999/v1"\nmodel = "m"', "ppp.judge.base_url: expected an http"),
        ('base_url = "http://x/v1"\nmodel = ""', "ppp.judge.model: expected the model"),
        ('base_url = "http://x/v1"\nmodel = "m"\nconcurrency = 0', "ppp.judge.concurrency"),
        ('base_url = "http://x/v1"\nmodel = "m"\nconcurrency = true', "ppp.judge.concurrency"),
        ('base_url = "http://x/v1"\nmodel = "m"\ntimeout_s = -1', "ppp.judge.timeout_s"),
        ('base_url = "http://x/v1"\nmodel = "m"\ntimeout_s = nan', "ppp.judge.timeout_s"),
        ('base_url = "http://x/v1"\nmodel = "m"\napi_key_env = "A B"', "ppp.judge.api_key_env"),
    ],
)
def test_a_bad_judge_table_is_one_line(
    db: Path, tmp_path: Path, server: Server, table: str, expected: str
) -> None:
    config = tmp_path / "config.toml"
    config.write_text(f"[ppp]\n[ppp.judge]\n{table}\n", encoding="utf-8")
    line = one_line_error(run_judge(db, config))
    assert expected in line
    # Every command reads the file: `config validate` says the same.
    validate = CliRunner().invoke(cli, ["config", "validate", "--config", str(config)])
    assert expected in one_line_error(validate)
    assert server.count == 0


def test_a_key_in_config_toml_is_refused_without_being_shown(db: Path, tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text(
        f'[ppp.judge]\nbase_url = "http://x/v1"\nmodel = "m"\napi_key = "{SECRET}"\n',
        encoding="utf-8",
    )
    result = run_judge(db, config)
    line = one_line_error(result)
    assert "api_key_env" in line and SECRET not in result.output


def test_without_a_judge_table_no_request_is_sent(db: Path, tmp_path: Path, server: Server) -> None:
    config = write_config(tmp_path / "config.toml", None)
    for args in ((), ("--dry-run",), ("--evaluate",), ("--technical",)):
        line = one_line_error(run_judge(db, config, *args))
        assert "no [ppp.judge] table" in line
    assert server.count == 0


def test_config_show_names_the_variable_never_the_key(tmp_path: Path, server: Server) -> None:
    config = write_config(tmp_path / "config.toml", server, api_key_env="MY_JUDGE_KEY")
    env = {"MY_JUDGE_KEY": SECRET}
    shown = CliRunner().invoke(cli, ["config", "show", "--json", "--config", str(config)], env=env)
    assert shown.exit_code == 0, shown.output
    judge = json.loads(shown.stdout)["judge"]
    assert judge == {
        "base_url": server.base_url,
        "model": "judge-model",
        "api_key_env": "MY_JUDGE_KEY",
        "concurrency": 1,
        "timeout_s": 5.0,
        "max_tokens": 16,
    }
    text = CliRunner().invoke(cli, ["config", "show", "--config", str(config)], env=env)
    assert "[ppp.judge]" in text.stdout and SECRET not in text.output
    valid = CliRunner().invoke(cli, ["config", "validate", "--config", str(config)], env=env)
    assert valid.exit_code == 0 and "warning" not in valid.output


# -- judging -----------------------------------------------------------------------


def test_judging_stores_labels_and_keeps_the_data_labels(
    db: Path, tmp_path: Path, server: Server
) -> None:
    config = write_config(tmp_path / "config.toml", server, concurrency=4)
    before = question_rows(db)
    labelled = [row for row in before if row[4] == "label"]
    classified = [row for row in before if row[4] != "label"]
    assert labelled and classified
    distinct = {effort_prompt_key(db, row) for row in classified}

    result = run_judge(db, config)
    assert result.exit_code == 0, result.output
    assert server.count == len(distinct)
    after = question_rows(db)
    assert [row for row in after if row[4] == "label"] == labelled
    judged = [row for row in after if row[0] in {r[0] for r in classified}]
    for row in judged:
        assert row[4] == "judged" and row[5] == "judge-model" and row[6] == EFFORT_PROMPT_VERSION
        expected = {"HIGH": "high", "low.": "low", "**Medium**": "medium"}
        question = next(r for r in classified if r[0] == row[0])
        assert row[3] == expected[server.answer(messages_of(db, question))]
    assert f"{len(classified)} of {len(classified)} classified questions judged" in result.stdout
    check_consistent(db)

    # Again: everything comes from the cache, nothing changes.
    again = run_judge(db, config, "--json")
    assert again.exit_code == 0, again.output
    document = json.loads(again.stdout)
    assert server.count == len(distinct)
    assert document["requests"] == 0 and document["questions"]["cached"] == len(classified)
    assert document["questions"]["changed"] == 0
    assert question_rows(db) == after

    # --refresh asks again.
    refreshed = run_judge(db, config, "--refresh")
    assert refreshed.exit_code == 0, refreshed.output
    assert server.count == 2 * len(distinct)
    assert question_rows(db) == after


def effort_prompt_key(db: Path, row: tuple[Any, ...]) -> str:
    return effort_prompt(row[2], task_of(db, row[1])).input_hash


def task_of(db: Path, trajectory_id: int) -> str | None:
    conn = sqlite3.connect(db)
    try:
        found = conn.execute(
            "SELECT runs.task FROM trajectories t JOIN runs ON runs.id = t.run_id WHERE t.id = ?",
            (trajectory_id,),
        ).fetchone()
        return None if found is None else found[0]
    finally:
        conn.close()


def messages_of(db: Path, row: tuple[Any, ...]) -> Messages:
    prompt = effort_prompt(row[2], task_of(db, row[1]))
    return [{"role": role, "content": content} for role, content in prompt.messages]


def test_show_the_dashboard_and_rank_see_the_judged_efforts(
    db: Path, tmp_path: Path, server: Server
) -> None:
    from ppp_tui.analysis.dashboard import Dashboard
    from ppp_tui.core.settings import Settings
    from ppp_tui.storage.store import Store

    config = write_config(tmp_path / "config.toml", server)
    assert run_judge(db, config).exit_code == 0
    conn = sqlite3.connect(db)
    run_id, agent = conn.execute(
        "SELECT t.run_id, a.name FROM trajectory_questions q JOIN trajectories t"
        " ON t.id = q.trajectory_id JOIN agents a ON a.id = t.id"
        " WHERE q.source = 'judged' AND q.effort = 'high' LIMIT 1"
    ).fetchone()
    conn.close()
    shown = CliRunner().invoke(cli, ["show", run_id, "--json", "--db", str(db)])
    document = json.loads(shown.stdout)
    questions = [q for a in document["agents"] for q in a["questions"]]
    judged = [q for q in questions if q["effort_source"] == "judged"]
    assert judged and all(q["judged_model"] == "judge-model" for q in judged)
    text = CliRunner().invoke(cli, ["show", run_id, "--db", str(db)])
    assert "judged;" in text.stdout
    with Store.open(db) as store:
        ranked = store.get_run(run_id)
        figures = Dashboard.load(store, Settings())
    agent_of = ranked.agent(agent)
    assert agent_of is not None and agent_of.trajectory is not None
    rank = CliRunner().invoke(cli, ["rank", run_id, "--json", "--db", str(db)])
    row = next(a for a in json.loads(rank.stdout)["agents"] if a["name"] == agent)
    low, medium, high = agent_of.trajectory.effort_counts()
    assert row["questions"] == {"low": low, "medium": medium, "high": high}
    mix = {counts.label: counts for counts in figures.effort}
    assert mix["judged"].total == classified_total(db)


def classified_total(db: Path) -> int:
    return sum(1 for row in question_rows(db) if row[4] == "judged")


def test_dry_run_sends_nothing_and_counts_what_a_run_sends(
    db: Path, tmp_path: Path, server: Server
) -> None:
    config = write_config(tmp_path / "config.toml", server)
    before = question_rows(db)
    dry = run_judge(db, config, "--dry-run", "--technical", "--json")
    assert dry.exit_code == 0, dry.output
    planned = json.loads(dry.stdout)
    assert server.count == 0 and question_rows(db) == before
    assert planned["dry_run"] is True and planned["estimated_tokens"] > 0
    text = run_judge(db, config, "--dry-run")
    assert text.stdout.startswith("dry run: ") and "nothing sent" in text.stdout
    real = run_judge(db, config, "--technical", "--json")
    assert real.exit_code == 0, real.output
    assert server.count == planned["requests"] == json.loads(real.stdout)["requests"]


def test_the_scope_options_limit_the_questions(db: Path, tmp_path: Path, server: Server) -> None:
    config = write_config(tmp_path / "config.toml", server)
    conn = sqlite3.connect(db)
    run_id, in_run = conn.execute(
        "SELECT t.run_id, count(*) FROM trajectory_questions q JOIN trajectories t"
        " ON t.id = q.trajectory_id WHERE q.source != 'label' GROUP BY t.run_id"
        " ORDER BY t.run_id LIMIT 1"
    ).fetchone()
    conn.close()
    one = json.loads(run_judge(db, config, "--run", run_id, "--dry-run", "--json").stdout)
    assert one["questions"]["total"] == in_run
    first = json.loads(run_judge(db, config, "--limit", "1", "--dry-run", "--json").stdout)
    assert first["questions"]["total"] <= in_run
    assert "unknown run id" in one_line_error(run_judge(db, config, "--run", "no-such-run"))
    assert "no stage" in one_line_error(run_judge(db, config, "--stage", "no-such-stage"))
    assert server.count == 0


def test_an_unparseable_answer_keeps_the_classified_effort(
    db: Path, tmp_path: Path, server: Server
) -> None:
    config = write_config(tmp_path / "config.toml", server)
    server.answer = lambda messages: "I would need to \x1b[2J think about it"
    before = question_rows(db)
    result = run_judge(db, config, "--json")
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    assert document["questions"]["unparseable"] == classified_count(db)
    assert document["questions"]["judged"] == 0
    assert question_rows(db) == before
    text = run_judge(db, config)
    assert "named no effort: the classified effort is kept" in text.stdout
    assert not UNSAFE.search(text.output)


def test_up_to_concurrency_requests_are_in_flight(db: Path, tmp_path: Path, server: Server) -> None:
    config = write_config(tmp_path / "config.toml", server, concurrency=3)
    server.delay_s = 0.05
    result = run_judge(db, config, "--limit", "8")
    assert result.exit_code == 0, result.output
    assert server.count > 3
    # Never more than `concurrency` (how many overlap depends on the scheduler).
    assert 1 <= server.most_in_flight <= 3, server.most_in_flight


def test_the_requests_have_a_progress_bar(
    db: Path, tmp_path: Path, server: Server, monkeypatch: pytest.MonkeyPatch
) -> None:
    from contextlib import contextmanager

    from ppp_tui.cli import judging

    bars: list[tuple[int, str, int]] = []
    steps: list[int] = []

    @contextmanager
    def bar(total: int, label: str, minimum: int = 500) -> Iterator[Any]:
        bars.append((total, label, minimum))
        yield steps.append

    monkeypatch.setattr(judging, "progress_bar", bar)
    config = write_config(tmp_path / "config.toml", server)
    result = run_judge(db, config, "--json")
    assert result.exit_code == 0, result.output
    requests = json.loads(result.stdout)["requests"]
    assert bars == [(requests, "judging", 1)] and steps == [1] * requests
    assert run_judge(db, config).exit_code == 0  # all cached: no bar
    assert len(bars) == 1


def test_the_run_screen_says_an_effort_was_judged() -> None:
    from ppp_tui.app.widgets.run_texts import question_cells
    from ppp_tui.core.model import Question, Source

    judged = Question("Which logs?", Effort.HIGH, 2, Source.JUDGED, judged_model="m")
    assert question_cells(judged, False)[:3] == ("2", "high", "judged")
    classified = Question("Which logs?", Effort.HIGH, 2, Source.CLASSIFIER)
    assert question_cells(classified, False)[2] == "classified"


# -- the key -----------------------------------------------------------------------


def test_the_key_is_sent_but_never_shown_or_stored(
    db: Path, tmp_path: Path, server: Server
) -> None:
    config = write_config(tmp_path / "config.toml", server, api_key_env="JUDGE_KEY")
    env = {"JUDGE_KEY": SECRET}
    outputs = [
        run_judge(db, config, "--technical", env=env),
        run_judge(db, config, "--evaluate", "--json", env=env),
        run_judge(db, config, "--dry-run", env=env),
    ]
    server.faults = ["401"]
    outputs.append(run_judge(db, config, "--refresh", env=env))
    assert outputs[-1].exit_code == 1
    assert server.count > 0
    assert all(h.get("Authorization") == f"Bearer {SECRET}" for h in server.headers)
    for result in outputs:
        assert SECRET not in result.output
    for path in tmp_path.iterdir():
        assert SECRET.encode() not in path.read_bytes(), path
    # Without the variable set, no Authorization header is sent at all.
    count = server.count
    assert run_judge(db, config, "--refresh").exit_code == 0
    assert all("Authorization" not in h for h in server.headers[count:])


# -- faults ------------------------------------------------------------------------


def test_429_and_500_are_tried_again_honouring_retry_after(
    db: Path, tmp_path: Path, server: Server, fast_retries: list[float]
) -> None:
    config = write_config(tmp_path / "config.toml", server)
    server.faults = ["429", "500", "500"]
    result = run_judge(db, config, "--json")
    assert result.exit_code == 0, result.output
    planned = json.loads(result.stdout)["requests"]
    assert server.count == planned + 3
    # Retry-After: 7 is honoured; the 500s back off from the base, doubling.
    assert fast_retries == [7.0, 0.02, 0.04]
    assert all(row[4] == "judged" for row in question_rows(db) if row[4] != "label")


def test_retry_after_is_capped_and_read_as_a_date() -> None:
    import httpx

    assert judge_client.pause_before(1, 600.0) == judge_client.MAX_WAIT_S
    assert judge_client.pause_before(3, None) == judge_client.BACKOFF_BASE_S * 4
    date = httpx.Headers({"Retry-After": "Wed, 21 Oct 2015 07:28:00 GMT"})
    assert judge_client.retry_after(date) == 0.0  # a date in the past: no wait
    assert judge_client.retry_after(httpx.Headers({"Retry-After": "x"})) is None
    assert judge_client.retry_after(httpx.Headers()) is None


def test_a_lasting_5xx_stops_with_one_line(db: Path, tmp_path: Path, server: Server) -> None:
    config = write_config(tmp_path / "config.toml", server)
    server.faults = ["500"] * judge_client.STATUS_TRIES
    line = one_line_error(run_judge(db, config))
    assert server.base_url in line and "500" in line and "try again later" in line
    assert server.count == judge_client.STATUS_TRIES


def test_a_timeout_stops_the_command_keeps_what_came_and_a_later_run_continues(
    db: Path, tmp_path: Path, server: Server
) -> None:
    config = write_config(tmp_path / "config.toml", server, timeout_s=0.3)
    server.slow_s = 1.5
    total = classified_count(db)
    answered = 5
    server.faults = ["ok"] * answered + ["slow"] * judge_client.TRANSPORT_TRIES
    line = one_line_error(run_judge(db, config))
    assert server.base_url in line and "no answer within 0.3 s" in line
    assert "kept" in line and "run the command again" in line
    kept = [row for row in question_rows(db) if row[4] == "judged"]
    assert 0 < len(kept) <= answered + 1  # concurrency 1: those before the failure
    check_consistent(db)
    sent = server.count
    # The later run asks only for the rest.
    resumed = run_judge(db, config, "--json")
    assert resumed.exit_code == 0, resumed.output
    document = json.loads(resumed.stdout)
    assert document["questions"]["cached"] >= len(kept)
    assert server.count - sent == document["requests"]
    assert classified_total(db) == total
    check_consistent(db)


def test_a_dropped_connection_is_tried_again(db: Path, tmp_path: Path, server: Server) -> None:
    config = write_config(tmp_path / "config.toml", server)
    server.faults = ["drop"]
    result = run_judge(db, config, "--json")
    assert result.exit_code == 0, result.output
    assert server.count == json.loads(result.stdout)["requests"] + 1
    server.faults = ["drop"] * judge_client.TRANSPORT_TRIES
    line = one_line_error(run_judge(db, config, "--refresh"))
    assert server.base_url in line and "closed without a complete reply" in line


def test_an_unreachable_endpoint_is_one_line(db: Path, tmp_path: Path) -> None:
    with serving() as gone:
        url = gone.base_url
    config = tmp_path / "config.toml"
    config.write_text(f'[ppp.judge]\nbase_url = "{url}"\nmodel = "m"\n', encoding="utf-8")
    before = question_rows(db)
    line = one_line_error(run_judge(db, config))
    assert url in line and "cannot connect" in line
    assert question_rows(db) == before


@pytest.mark.parametrize(
    ("fault", "expected"),
    [
        ("html", "the reply is not JSON"),
        ("nochoices", "the reply has no choices"),
        ("401", "refused the request (401 Unauthorized): bad key ␛[2J"),
    ],
)
def test_a_reply_outside_the_protocol_is_one_line(
    db: Path, tmp_path: Path, server: Server, fault: str, expected: str
) -> None:
    config = write_config(tmp_path / "config.toml", server)
    server.faults = [fault]
    before = question_rows(db)
    line = one_line_error(run_judge(db, config))
    assert server.base_url in line and expected in line
    assert server.count == 1
    assert question_rows(db) == before


def test_a_wrong_path_names_the_setting(db: Path, tmp_path: Path, server: Server) -> None:
    config = write_config(tmp_path / "config.toml", server, base_url=server.base_url + "/x")
    line = one_line_error(run_judge(db, config))
    assert "404" in line and "no such path" in line and "ppp.judge.base_url" in line


# -- technical scores --------------------------------------------------------------


def technical_rows(db: Path) -> dict[tuple[str, str], tuple[Any, ...]]:
    conn = sqlite3.connect(db)
    try:
        rows = conn.execute(
            "SELECT run_id, name, technical, technical_source, judged_model FROM agents"
        ).fetchall()
        return {(r[0], r[1]): r[2:] for r in rows}
    finally:
        conn.close()


def grade(messages: Messages) -> str:
    if "Classify the effort" in messages[-1]["content"]:
        return "LOW"
    return "Score: 0.65"


def test_technical_scores_unscored_agents_and_a_hand_rating_wins(
    db: Path, tmp_path: Path, server: Server
) -> None:
    config = write_config(tmp_path / "config.toml", server)
    server.answer = grade
    before = technical_rows(db)
    unscored = [key for key, row in before.items() if row[1] == "unscored"]
    assert len(unscored) >= 2
    hand, *others = unscored
    ratings = tmp_path / "hand.csv"
    ratings.write_text(f"run_id,agent,technical\n{hand[0]},{hand[1]},0.9\n", encoding="utf-8")
    rated = CliRunner().invoke(cli, ["technical", str(ratings), "--db", str(db)])
    assert rated.exit_code == 0, rated.output

    result = run_judge(db, config, "--technical", "--json")
    assert result.exit_code == 0, result.output
    technical = json.loads(result.stdout)["technical"]
    after = technical_rows(db)
    assert after[hand] == (0.9, "hand", None)
    judged = [key for key in others if after[key][1] == "judged"]
    assert technical["judged"] == len(judged) > 0
    assert technical["judged"] + technical["no_output"] == technical["total"] == len(others)
    for key in judged:
        assert after[key] == (0.65, "judged", "judge-model")
    for key, row in before.items():
        if key not in unscored:
            assert after[key] == row  # test runs and given scores are never judged
    check_consistent(db)
    conn = sqlite3.connect(db)
    nan = conn.execute(
        "SELECT count(*) FROM agents WHERE technical_source = 'unscored'"
    ).fetchone()[0]
    conn.close()
    assert nan == technical["no_output"]
    shown = CliRunner().invoke(cli, ["show", judged[0][0], "--db", str(db)])
    assert "judged by judge-model" in shown.stdout

    # A hand rating given later wins, and judging again (even --refresh) leaves it.
    ratings.write_text(
        f"run_id,agent,technical\n{judged[0][0]},{judged[0][1]},0.2\n", encoding="utf-8"
    )
    assert CliRunner().invoke(cli, ["technical", str(ratings), "--db", str(db)]).exit_code == 0
    assert run_judge(db, config, "--technical", "--refresh").exit_code == 0
    assert technical_rows(db)[judged[0]] == (0.2, "hand", None)
    check_consistent(db)


# -- evaluating --------------------------------------------------------------------


def test_evaluate_compares_the_judge_with_the_classifier_on_the_labels(
    db: Path, tmp_path: Path, server: Server
) -> None:
    config = write_config(tmp_path / "config.toml", server, concurrency=3)
    rows = question_rows(db)
    labelled = [row for row in rows if row[4] == "label"]
    # An oracle that knows every label: accuracy 1.
    labels = {effort_prompt_key(db, row): row[3] for row in labelled}

    def oracle(messages: Messages) -> str:
        from ppp_tui.core.judge import Prompt

        prompt = Prompt(EFFORT_PROMPT_VERSION, tuple((m["role"], m["content"]) for m in messages))
        return str(labels[prompt.input_hash]).upper()

    server.answer = oracle
    result = run_judge(db, config, "--evaluate", "--json")
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    assert document["questions"] == len(labelled)
    assert document["judge"]["accuracy"] == 1.0 and document["unparseable"] == 0
    expected = [Effort(row[3]) for row in labelled]
    rules = evaluate(expected, [classify_effort(row[2], task_of(db, row[1])) for row in labelled])
    assert document["classifier"]["accuracy"] == pytest.approx(rules.accuracy, abs=1e-9)
    assert document["classifier"]["macro_f1"] == pytest.approx(rules.macro_f1, abs=1e-9)
    for e in Effort:
        for p in Effort:
            assert document["classifier"]["confusion"][e.value][p.value] == rules.confusion[e, p]
            assert document["judge"]["confusion"][e.value][p.value] == (
                expected.count(e) if e is p else 0
            )
    assert question_rows(db) == rows  # nothing relabelled
    sent = server.count
    text = run_judge(db, config, "--evaluate")
    assert text.exit_code == 0 and server.count == sent  # cached
    assert "accuracy" in text.stdout and "macro F1" in text.stdout
    assert "confusion" in text.stdout


def test_the_json_documents_are_the_documented_shapes(
    db: Path, tmp_path: Path, server: Server
) -> None:
    from helpers import documented_shapes
    from test_docs import _differences

    shapes = documented_shapes()
    config = write_config(tmp_path / "config.toml", server)
    judged = json.loads(run_judge(db, config, "--technical", "--json").stdout)
    evaluated = json.loads(run_judge(db, config, "--evaluate", "--json").stdout)
    dry = json.loads(run_judge(db, config, "--evaluate", "--dry-run", "--json").stdout)
    assert not list(_differences(shapes["judge"], judged, "judge"))
    assert not list(_differences(shapes["judge-evaluate"], evaluated, "judge-evaluate"))
    assert not list(_differences(shapes["judge-evaluate"], dry, "judge-evaluate"))


# -- the schema --------------------------------------------------------------------


def test_the_migration_is_idempotent(db: Path) -> None:
    from ppp_tui.storage.schema import MIGRATIONS, SCHEMA_VERSION, _add_judge

    assert _add_judge in MIGRATIONS and len(MIGRATIONS) == SCHEMA_VERSION
    conn = sqlite3.connect(db)
    try:
        _add_judge(conn)  # again, on a database that has it all
        _add_judge(conn)
        columns = {row[1] for row in conn.execute("PRAGMA table_info(trajectory_questions)")}
        assert {"judged_model", "judged_prompt"} <= columns
        assert "judged_model" in {row[1] for row in conn.execute("PRAGMA table_info(agents)")}
        assert conn.execute("SELECT count(*) FROM judgments").fetchone()[0] == 0
    finally:
        conn.close()
