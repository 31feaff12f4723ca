"""Two `ppp-tui judge` runs at once pay once: the prompts one is asking are claimed, and
the other leaves them to it. A killed run's claims are taken over, at once when its
process is gone, after a silence from anywhere; the data stays right throughout.
"""

from __future__ import annotations

import json
import signal
import socket
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from helpers import (
    check_consistent,
    classified_count,
    judge_process,
    judged_together,
    judged_while_another_asks,
    question_rows,
    run_judge,
    wait_for,
    write_config,
)
from judge_server import Server

from ppp_tui.core.judge import EFFORT_PROMPT_VERSION
from ppp_tui.storage import judge_claims

pytestmark = pytest.mark.usefixtures("fast_retries")


def claims(db: Path) -> list[tuple[str, str, int]]:
    conn = sqlite3.connect(db)
    try:
        return conn.execute("SELECT input_hash, host, pid FROM judge_claims").fetchall()
    finally:
        conn.close()


def all_judged(db: Path) -> bool:
    return all(row[4] in ("judged", "label") for row in question_rows(db))


def test_a_second_run_leaves_what_the_first_is_asking_to_it(
    judge_db: Path, tmp_path: Path, server: Server
) -> None:
    config = write_config(tmp_path / "config.toml", server, concurrency=2)
    total = classified_count(judge_db)
    requests = json.loads(run_judge(judge_db, config, "--dry-run", "--json").stdout)["requests"]
    first, taken = judged_while_another_asks(judge_db, config, server)
    assert taken["requests"] == 0 and taken["questions"]["taken"] == total
    assert first["requests"] == requests
    assert server.count == requests  # each prompt paid once
    assert all_judged(judge_db) and claims(judge_db) == []
    check_consistent(judge_db)
    assert run_judge(judge_db, config).exit_code == 0 and server.count == requests  # cached


def test_two_runs_started_together_send_each_prompt_once(
    judge_db: Path, tmp_path: Path, server: Server
) -> None:
    config = write_config(tmp_path / "config.toml", server, concurrency=2)
    requests = json.loads(run_judge(judge_db, config, "--dry-run", "--json").stdout)["requests"]
    server.delay_s = 0.1
    documents = judged_together(judge_db, config)
    assert server.count == requests
    assert sum(document["requests"] for document in documents) == requests
    assert all_judged(judge_db) and claims(judge_db) == []
    check_consistent(judge_db)


def test_a_killed_run_leaves_no_question_claimed(
    judge_db: Path, tmp_path: Path, server: Server
) -> None:
    config = write_config(tmp_path / "config.toml", server, concurrency=2)
    requests = json.loads(run_judge(judge_db, config, "--dry-run", "--json").stdout)["requests"]
    server.hold = threading.Event()
    killed = judge_process(judge_db, config)
    wait_for(lambda: server.count >= 1)
    assert len(claims(judge_db)) == requests
    killed.send_signal(signal.SIGKILL)
    killed.wait(timeout=30)
    sent = server.count
    server.hold.set()
    # Its process is gone: its claims are taken over at once.
    result = run_judge(judge_db, config, "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["requests"] == requests
    assert server.count == sent + requests
    assert all_judged(judge_db) and claims(judge_db) == []
    check_consistent(judge_db)


def test_a_live_claim_is_left_and_a_silent_one_taken_over(
    judge_db: Path, tmp_path: Path, server: Server
) -> None:
    config = write_config(tmp_path / "config.toml", server)
    dry = json.loads(run_judge(judge_db, config, "--dry-run", "--json").stdout)
    from ppp_tui.core.judge import effort_prompt

    rows = [row for row in question_rows(judge_db) if row[4] != "label"]
    conn = sqlite3.connect(judge_db)
    tasks = dict(
        conn.execute("SELECT t.id, runs.task FROM trajectories t JOIN runs ON runs.id = t.run_id")
    )
    hashes = sorted({effort_prompt(row[2], tasks[row[1]]).input_hash for row in rows})
    live, silent = hashes[0], hashes[1]
    now = time.time()
    # Another machine's runs: one at work, one silent for longer than a claim lasts.
    for pid, input_hash, seen in (
        (1, live, now),
        (2, silent, now - judge_claims.STALE_AFTER_S - 1),
    ):
        conn.execute(
            "INSERT INTO judge_claims VALUES (?, ?, ?, ?, ?, ?, ?)",
            (
                "judge-model",
                EFFORT_PROMPT_VERSION,
                input_hash,
                f"elsewhere:{pid}:t",
                "elsewhere",
                pid,
                seen,
            ),
        )
    # A process of this host that is gone: its claim goes at once, however recent.
    gone = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True
    )
    conn.execute(
        "INSERT INTO judge_claims VALUES (?, ?, ?, ?, ?, ?, ?)",
        (
            "judge-model",
            EFFORT_PROMPT_VERSION,
            hashes[2],
            "gone",
            socket.gethostname(),
            int(gone.stdout),
            now,
        ),
    )
    conn.commit()
    conn.close()
    sharing = sum(1 for row in rows if effort_prompt(row[2], tasks[row[1]]).input_hash == live)
    result = run_judge(judge_db, config, "--json")
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    assert document["questions"]["taken"] == sharing
    assert document["requests"] == dry["requests"] - 1 == server.count
    assert claims(judge_db) == [(live, "elsewhere", 1)]  # not ours to drop
    text = run_judge(judge_db, config)
    assert "left to another judge run asking the same at the same time" in text.stdout
    check_consistent(judge_db)


def test_a_failing_run_drops_its_claims(judge_db: Path, tmp_path: Path, server: Server) -> None:
    config = write_config(tmp_path / "config.toml", server)
    server.faults = ["ok", "ok", "401"]
    result = run_judge(judge_db, config)
    assert result.exit_code == 1
    assert claims(judge_db) == []
    assert run_judge(judge_db, config).exit_code == 0 and all_judged(judge_db)
