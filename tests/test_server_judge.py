"""The judge on a PostgreSQL team store: the same judgments, efforts and scores as on the
SQLite file it was copied from, and two judge runs at once (two machines, say) pay once
for each prompt: the claims live in the store, as they do in the file."""

from __future__ import annotations

import json
import signal
import sqlite3
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers import (
    dump,
    judge_process,
    judged_together,
    judged_while_another_asks,
    run_judge,
    run_ok,
    wait_for,
    write_config,
)
from judge_server import Messages, Server, effort_by_keyword

from ppp_tui.core.judge import EFFORT_PROMPT_VERSION
from ppp_tui.storage import judge_claims

psycopg = pytest.importorskip("psycopg", reason="the postgres extra (psycopg) is not installed")

pytestmark = pytest.mark.usefixtures("fast_retries")


def _judged(messages: Messages) -> str:
    """An effort by keyword, or a technical score."""
    if "Classify the effort" in messages[-1]["content"]:
        return effort_by_keyword(messages)
    return "Score: 0.4"


@pytest.fixture
def store(judge_db: Path, pg_url: str) -> str:
    """A team store holding a copy of the judge's demo database."""
    run_ok("import", str(judge_db), "--db", pg_url)
    return pg_url


def _rows(conn: Any) -> dict[str, list[tuple[Any, ...]]]:
    """Every table's rows (`dump`), the judgments without the second they were made."""
    rows = dump(conn)
    rows["judgments"] = sorted(row[:-1] for row in rows["judgments"])
    return rows


def _server_rows(url: str) -> dict[str, list[tuple[Any, ...]]]:
    with psycopg.connect(url) as conn:
        return _rows(conn)


def _claims(url: str) -> list[tuple[Any, ...]]:
    with psycopg.connect(url) as conn:
        rows: list[tuple[Any, ...]] = conn.execute(
            "SELECT input_hash, host, pid FROM judge_claims"
        ).fetchall()
        return rows


def _left_to_judge(rows: dict[str, list[tuple[Any, ...]]]) -> int:
    """The questions a judge may label that it has not (sources `dump` gives as JSON)."""
    return sum(
        1 for row in rows["trajectory_questions"] if '"classifier"' in row or '"extracted"' in row
    )


def test_judging_a_server_writes_what_it_writes_in_the_file(
    judge_db: Path, store: str, tmp_path: Path, server: Server
) -> None:
    config = write_config(tmp_path / "config.toml", server, concurrency=2)
    server.answer = _judged
    said = []
    for args in (
        ("--dry-run", "--technical"),
        ("--technical", "--json"),
        ("--evaluate", "--limit", "6"),
        ("--technical",),  # all from the cache
        ("--refresh", "--limit", "3", "--json"),
    ):
        sent = server.count
        on_file = run_judge(judge_db, config, *args)
        asked = server.count - sent
        on_server = run_judge(store, config, *args)
        assert (on_server.exit_code, on_server.stderr) == (0, ""), on_server.output
        assert on_server.stdout == on_file.stdout, args
        assert server.count - sent == 2 * asked  # each engine asked as much
        said.append(on_file.stdout)
    assert "questions: 0 of" not in said[3] and "from the cache" in said[3]
    on_server_rows = _server_rows(store)
    assert on_server_rows == _rows(sqlite3.connect(judge_db))
    assert _left_to_judge(on_server_rows) == 0
    assert sum('"judged"' in row for row in on_server_rows["agents"]) == 2
    assert _claims(store) == []


def test_two_runs_at_once_on_a_server_send_each_prompt_once(
    store: str, tmp_path: Path, server: Server
) -> None:
    config = write_config(tmp_path / "config.toml", server, concurrency=2)
    dry = json.loads(run_judge(store, config, "--dry-run", "--json").stdout)
    requests = dry["requests"]
    assert requests > 10
    server.delay_s = 0.05
    documents = judged_together(store, config)
    assert server.count == requests
    assert sum(document["requests"] for document in documents) == requests
    assert (
        sum(document["questions"]["judged"] for document in documents)
        == (dry["questions"]["total"])
    )
    assert _left_to_judge(_server_rows(store)) == 0 and _claims(store) == []


def test_a_second_run_leaves_what_the_first_is_asking_to_it(
    store: str, tmp_path: Path, server: Server
) -> None:
    config = write_config(tmp_path / "config.toml", server, concurrency=2)
    dry = json.loads(run_judge(store, config, "--dry-run", "--json").stdout)
    claimed: list[int] = []
    first, taken = judged_while_another_asks(
        store, config, server, lambda: claimed.append(len(_claims(store)))
    )
    assert claimed == [dry["requests"]]  # in the store while the first asked
    assert taken["requests"] == 0 and taken["questions"]["taken"] == dry["questions"]["total"]
    assert first["requests"] == dry["requests"] == server.count
    assert _left_to_judge(_server_rows(store)) == 0 and _claims(store) == []


def test_a_killed_run_s_claims_are_taken_over(store: str, tmp_path: Path, server: Server) -> None:
    config = write_config(tmp_path / "config.toml", server, concurrency=2)
    requests = json.loads(run_judge(store, config, "--dry-run", "--json").stdout)["requests"]
    server.hold = threading.Event()
    killed = judge_process(store, config)
    wait_for(lambda: server.count >= 1)
    killed.send_signal(signal.SIGKILL)
    killed.wait(timeout=30)
    assert len(_claims(store)) == requests  # left behind
    # As if it ran on another machine: its process cannot be looked at from here, so
    # its claims stand until they have been silent for longer than a claim lasts.
    with psycopg.connect(store) as conn:
        conn.execute("UPDATE judge_claims SET host = 'elsewhere'")
    sent = server.count
    server.hold.set()
    result = run_judge(store, config, "--json")
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    assert document["requests"] == 0 and document["questions"]["taken"] > 0
    assert server.count == sent and len(_claims(store)) == requests
    # Silent for longer than a claim lasts: taken over.
    with psycopg.connect(store) as conn:
        conn.execute("UPDATE judge_claims SET seen_at = seen_at - %s", [judge_claims.STALE_AFTER_S])
        model, version = conn.execute(
            "SELECT DISTINCT model, prompt_version FROM judge_claims"
        ).fetchone()
    assert (model, version) == ("judge-model", EFFORT_PROMPT_VERSION)
    result = run_judge(store, config, "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["requests"] == requests
    assert _left_to_judge(_server_rows(store)) == 0 and _claims(store) == []


@pytest.fixture
def row_writer(store: str, pg_cluster: str) -> Iterator[str]:
    """The store's URL for a role that may read and write its rows, and nothing more
    (no right to create a table): a reviewer's role on a shared server."""
    role = f"reviewer_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(store, autocommit=True) as conn:
        conn.execute(f"CREATE ROLE {role} LOGIN PASSWORD 'row-writer'")
        conn.execute(f"REVOKE CREATE ON SCHEMA public FROM PUBLIC, {role}")
        conn.execute(f"GRANT USAGE ON SCHEMA public TO {role}")
        conn.execute(
            f"GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO {role}"
        )
        conn.execute(f"GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA public TO {role}")
    head, tail = store.split("://", 1)
    yield f"{head}://{role}:row-writer@{tail.split('@', 1)[1]}"
    with psycopg.connect(store, autocommit=True) as conn:
        conn.execute(f"DROP OWNED BY {role}")
        conn.execute(f"DROP ROLE {role}")


def test_a_reviewer_who_may_only_write_rows_judges(
    row_writer: str, tmp_path: Path, server: Server
) -> None:
    config = write_config(tmp_path / "config.toml", server)
    result = run_judge(row_writer, config, "--json")
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    assert document["requests"] == server.count > 0
    assert _left_to_judge(_server_rows(row_writer)) == 0 and _claims(row_writer) == []
