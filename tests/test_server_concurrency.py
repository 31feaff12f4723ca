"""Several reviewers at once on one PostgreSQL team store: processes marking, rating by
hand and importing at the same time all succeed, and nothing any of them wrote is lost."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import run_cli, write_config
from judge_server import Server

from ppp_tui.storage.demo import write_demo

pytest.importorskip("psycopg", reason="the postgres extra (psycopg) is not installed")

import psycopg

EXAMPLES = Path(__file__).resolve().parent.parent / "examples" / "runs.jsonl"
REVIEWERS = 4
MARKS_EACH = 5


def _start(*args: str, reviewer: str) -> subprocess.Popen[str]:
    env = {**os.environ, "PPP_TUI_REVIEWER": reviewer}
    return subprocess.Popen(
        [sys.executable, "-m", "ppp_tui", *args],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _reviewers(url: str, commands: list[list[str]]) -> list[subprocess.Popen[str]]:
    """A process for each list of commands, run one after the other on the store at
    `url` as reviewer-0, reviewer-1...; all the processes at once."""
    return [
        subprocess.Popen(
            [
                "sh",
                "-c",
                " && ".join(f"{sys.executable} -m ppp_tui {c} --db '{url}'" for c in each),
            ],
            env={**os.environ, "PPP_TUI_REVIEWER": f"reviewer-{k}"},
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for k, each in enumerate(commands)
    ]


def test_reviewers_marking_rating_and_importing_at_once_lose_nothing(
    pg_url: str, tmp_path: Path
) -> None:
    first, second = tmp_path / "first.db", tmp_path / "second.db"
    write_demo(first, 60, seed=1)
    # Runs of other ids in the second file: an import that adds while others mark.
    assert run_cli("import", str(EXAMPLES), "--db", str(second)).exit_code == 0
    with sqlite3.connect(second) as conn:
        (others,) = conn.execute("SELECT count(*) FROM runs").fetchone()
    with sqlite3.connect(first) as conn:
        (runs,) = conn.execute("SELECT count(*) FROM runs").fetchone()
    assert run_cli("import", str(first), "--db", pg_url).exit_code == 0
    with psycopg.connect(pg_url) as db:
        pairs = db.execute(
            "SELECT run_id, min(name) FROM agents WHERE failure IS NULL"
            " GROUP BY run_id ORDER BY run_id LIMIT %s",
            [MARKS_EACH],
        ).fetchall()
        rated = db.execute(
            "SELECT run_id, name FROM agents WHERE failure IS NULL ORDER BY run_id DESC LIMIT 2"
        ).fetchall()
    scores = tmp_path / "scores.json"
    scores.write_text(json.dumps([{"run_id": r, "agent": a, "technical": 0.25} for r, a in rated]))
    # Every reviewer marks the same runs, each in a process of its own, one mark per
    # command; a hand rating and an import run alongside.
    marking = [f"prefer {run_id} {agent}" for run_id, agent in pairs]
    processes = _reviewers(pg_url, [marking] * REVIEWERS)
    processes.append(_start("import", str(second), "--db", pg_url, reviewer="importer"))
    processes.append(_start("technical", str(scores), "--db", pg_url, reviewer="rater"))
    for process in processes:
        _, err = process.communicate(timeout=300)
        assert process.returncode == 0, err
        assert err == ""
    with psycopg.connect(pg_url) as db:
        marks = db.execute(
            "SELECT count(*) FROM marks WHERE reviewer LIKE 'reviewer-%%'"
        ).fetchone()
        history = db.execute(
            "SELECT count(*) FROM preferred_marks WHERE reviewer LIKE 'reviewer-%%'"
        ).fetchone()
        assert marks == history == (REVIEWERS * MARKS_EACH,)
        assert db.execute("SELECT count(*) FROM runs").fetchone() == (runs + others,)
        technical = db.execute(
            "SELECT technical, technical_source FROM agents WHERE (run_id, name) IN"
            " (SELECT * FROM unnest(%s::text[], %s::text[]))",
            [[r for r, _ in rated], [a for _, a in rated]],
        ).fetchall()
        assert technical == [(0.25, "hand"), (0.25, "hand")]


@pytest.mark.usefixtures("fast_retries")
def test_grouping_judging_and_marking_at_once_lose_nothing(
    pg_url: str, tmp_path: Path, server: Server
) -> None:
    source = tmp_path / "demo.db"
    write_demo(source, 40, seed=2, sessions=True)
    assert run_cli("import", str(source), "--db", pg_url).exit_code == 0
    with psycopg.connect(pg_url) as db:
        row = db.execute(
            "SELECT id FROM runs WHERE revision IS NOT NULL AND agents > 1 ORDER BY id LIMIT 1"
        ).fetchone()
        assert row is not None
        grouped = str(row[0])
        pairs = db.execute(
            "SELECT run_id, min(name) FROM agents WHERE failure IS NULL"
            " AND run_id LIKE 'demo-%%' GROUP BY run_id ORDER BY run_id LIMIT %s",
            [MARKS_EACH],
        ).fetchall()
    # Runs of one session each, to group again while the others write.
    ungrouped = run_cli("ungroup", grouped, "--db", pg_url)
    assert ungrouped.exit_code == 0, ungrouped.output
    alone = [line.split()[0] for line in ungrouped.stdout.splitlines()[1:]]
    assert len(alone) >= 2
    config = write_config(tmp_path / "config.toml", server, concurrency=2)
    server.delay_s = 0.02
    regroup = [
        f"group {alone[0]} {alone[1]} --name together",
        "ungroup together",
        f"group {alone[0]} {alone[1]} --name together",
    ]
    marking = [f"prefer {run_id} {agent}" for run_id, agent in pairs]
    processes = _reviewers(pg_url, [regroup, marking, marking])
    processes += [
        _start("judge", "--json", "--db", pg_url, "--config", str(config), reviewer="judge")
        for _ in range(2)
    ]
    outputs = []
    for process in processes:
        out, err = process.communicate(timeout=300)
        assert process.returncode == 0, err
        assert err == ""
        outputs.append(out)
    judged = [json.loads(out) for out in outputs[-2:]]
    with psycopg.connect(pg_url) as db:
        assert db.execute("SELECT agents FROM runs WHERE id = 'together'").fetchone() == (2,)
        assert db.execute(
            "SELECT count(*) FROM runs WHERE id = ANY(%s)", [alone[:2]]
        ).fetchone() == (0,)
        marks = db.execute(
            "SELECT count(*) FROM marks WHERE reviewer LIKE 'reviewer-%%'"
        ).fetchone()
        assert marks == (2 * MARKS_EACH,)
        left = db.execute(
            "SELECT count(*) FROM trajectory_questions WHERE source IN ('classifier', 'extracted')"
        ).fetchone()
        assert left == (0,)
        assert db.execute("SELECT count(*) FROM judge_claims").fetchone() == (0,)
    # Each prompt paid once, whichever run asked it.
    assert server.count == sum(document["requests"] for document in judged) > 0
