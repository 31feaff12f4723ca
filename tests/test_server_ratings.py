"""Hand ratings and the judge's scores and efforts of runs a SQLite file and a team store
both hold move between them with `import`, both ways (storage/transfer_ratings.py): what
one side gave goes to the other, the same values meet again as nothing, and two
different values of the same kind stay, each on its side, and are counted."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from demo_files import demo_file, private_copy
from helpers import dump, run_cli

from ppp_tui.core.model import Effort
from ppp_tui.storage import judgments
from ppp_tui.storage.location import parse_server_url
from ppp_tui.storage.store import Store
from ppp_tui.storage.store_server import open_store

pytest.importorskip("psycopg", reason="the postgres extra (psycopg) is not installed")

import psycopg


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return demo_file(tmp_path_factory, "ratings", 60, seed=7, sessions=True)


@pytest.fixture
def train(demo: Path, pg_url: str, tmp_path: Path) -> Path:
    """The demo moved into the store, and a copy of the store taken back to a file."""
    old = private_copy(demo, tmp_path / "old.db")
    assert run_cli("import", str(old), "--db", pg_url).exit_code == 0
    copy = tmp_path / "train.db"
    assert run_cli("import", pg_url, "--db", str(copy)).exit_code == 0
    return copy


def _rate(db: str, run_id: str, agent: str, value: float, folder: Path) -> None:
    scores = folder / "scores.csv"
    scores.write_text(f"run_id,agent,technical\n{run_id},{agent},{value}\n", encoding="utf-8")
    result = run_cli("technical", str(scores), "--db", db)
    assert result.exit_code == 0, result.output


def _agent(where: str, run_id: str, name: str) -> tuple[float | None, str | None, str | None]:
    """(technical, its source, the judge's model) of an agent, in a file or the store."""
    target = parse_server_url(where) if "://" in where else Path(where)
    with open_store(target) as store:
        agent = store.get_run(run_id).agent(name)
    assert agent is not None
    return agent.technical, agent.technical_source, agent.judged_model


def _pick(db: Path) -> tuple[list[tuple[str, str]], tuple[str, str], tuple[int, int, str]]:
    """Agents given with their run (two), an unscored agent, and a question the
    classifier labelled (id, trajectory id, run id): what each test changes."""
    conn = sqlite3.connect(db)
    given = conn.execute(
        "SELECT run_id, name FROM agents WHERE technical_source IS NULL AND failure IS NULL"
        " ORDER BY run_id, position LIMIT 2"
    ).fetchall()
    unscored = conn.execute(
        "SELECT run_id, name FROM agents WHERE technical_source = 'unscored' LIMIT 1"
    ).fetchone()
    question = conn.execute(
        "SELECT q.id, q.trajectory_id, a.run_id FROM trajectory_questions AS q"
        " JOIN agents AS a ON a.id = q.trajectory_id"
        " WHERE q.source = 'classifier' AND q.effort != 'high' ORDER BY q.id LIMIT 1"
    ).fetchone()
    assert len(given) == 2 and unscored is not None and question is not None
    return given, unscored, question


def _same(pg_url: str, db: Path) -> None:
    with psycopg.connect(pg_url) as conn:
        assert dump(conn) == dump(sqlite3.connect(db))


def test_ratings_and_judged_efforts_made_on_the_train_go_to_the_store(
    train: Path, pg_url: str, tmp_path: Path
) -> None:
    (hand, _), unscored, (question, trajectory, question_run) = _pick(train)
    _rate(str(train), *hand, 0.9, tmp_path)
    with Store.open(train) as store:
        agent_id = next(
            row[0]
            for row in store.conn.execute(
                "SELECT id FROM agents WHERE run_id = ? AND name = ?", unscored
            )
        )
        judgments.save(
            store,
            [],
            efforts=[(question, trajectory, Effort.HIGH, "qwen2.5:7b", "v1")],
            scores=[(agent_id, 0.65, "qwen2.5:7b")],
        )
    runs = len(dump(sqlite3.connect(train))["runs"])
    result = run_cli("import", str(train), "--db", pg_url)
    assert result.exit_code == 0, result.output
    server = parse_server_url(pg_url)
    assert result.stdout == (
        f"{train}: 0 runs copied with their marks into {server}; {runs} already there,"
        " 0 marks merged into them; 2 ratings and 1 judged effort brought into them\n"
    )
    assert _agent(pg_url, *hand) == (0.9, "hand", None)
    assert _agent(pg_url, *unscored) == (0.65, "judged", "qwen2.5:7b")
    _same(pg_url, train)  # the effort, the question counts and the packed scores too
    for args in (("show", question_run, "--json"), ("rank", hand[0], "--json")):
        assert run_cli(*args, "--db", pg_url).stdout == run_cli(*args, "--db", str(train)).stdout
    again = run_cli("import", str(train), "--db", pg_url)
    assert again.stdout.endswith("0 marks merged into them\n")  # nothing moves twice


def test_a_rating_made_on_the_store_goes_to_the_copy(
    train: Path, pg_url: str, tmp_path: Path
) -> None:
    (first, _), _, _ = _pick(train)
    _rate(pg_url, *first, 0.25, tmp_path)
    result = run_cli("import", pg_url, "--db", str(train))
    assert "; 1 rating and 0 judged efforts brought into them" in result.stdout
    assert _agent(str(train), *first) == (0.25, "hand", None)
    _same(pg_url, train)


def test_two_different_hand_ratings_stay_each_on_its_side(
    train: Path, pg_url: str, tmp_path: Path
) -> None:
    (agent, other), _, _ = _pick(train)
    _rate(str(train), *agent, 0.8, tmp_path)
    _rate(pg_url, *agent, 0.3, tmp_path)
    _rate(str(train), *other, 0.5, tmp_path)  # and one the store lacks: it moves
    into_store = run_cli("import", str(train), "--db", pg_url).stdout
    assert into_store.endswith(
        "; 1 rating and 0 judged efforts brought into them;"
        " 1 given differently on each side, left as they were\n"
    )
    back = run_cli("import", pg_url, "--db", str(train)).stdout
    assert back.endswith("; 1 given differently on each side, left as they were\n")
    assert _agent(str(train), *agent) == (0.8, "hand", None)
    assert _agent(pg_url, *agent) == (0.3, "hand", None)
    assert _agent(pg_url, *other) == (0.5, "hand", None)


def test_a_hand_rating_outranks_the_judges_score_both_ways(
    train: Path, pg_url: str, tmp_path: Path
) -> None:
    _, unscored, _ = _pick(train)
    with Store.open(train) as store:
        (agent_id,) = store.conn.execute(
            "SELECT id FROM agents WHERE run_id = ? AND name = ?", unscored
        ).fetchone()
        judgments.save(store, [], scores=[(agent_id, 0.65, "qwen2.5:7b")])
    _rate(pg_url, *unscored, 0.4, tmp_path)
    into_store = run_cli("import", str(train), "--db", pg_url).stdout
    assert into_store.endswith(" already there, 0 marks merged into them\n")
    assert _agent(pg_url, *unscored) == (0.4, "hand", None)
    back = run_cli("import", pg_url, "--db", str(train)).stdout
    assert back.endswith("; 1 rating and 0 judged efforts brought into them\n")
    assert _agent(str(train), *unscored) == (0.4, "hand", None)
    _same(pg_url, train)
