"""Fixtures shared by several test modules: the demo databases, the app's held load, and
the judge's fake endpoint."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pg_server
import pytest
from demo_files import demo_file, private_copy
from helpers import HeldLoad
from judge_server import Server, serving

from ppp_tui.storage.reviewers import REVIEWER_ENV

# The reviewer every test (and every process a test starts) marks as, unless it says
# otherwise: set before any fixture, the session's demo database included, is made.
REVIEWER = "tester"
os.environ[REVIEWER_ENV] = REVIEWER


@pytest.fixture(autouse=True)
def _reviewer(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every test starts as the reviewer "tester", whatever git or the login say, and
    with no current reviewer left over from an earlier test's command."""
    from ppp_tui.storage import reviewers

    monkeypatch.setenv(reviewers.REVIEWER_ENV, REVIEWER)
    monkeypatch.setattr(reviewers, "_current", [])


@pytest.fixture
def utc_clock(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Local time is UTC (agents' names may carry a session's start in local time)."""
    import time

    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


@pytest.fixture(scope="session")
def demo_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A 300-run demo database, made once; copy it (`db`) before changing it."""
    return demo_file(tmp_path_factory, "demo", 300, seed=3)


@pytest.fixture
def db(demo_db: Path, tmp_path: Path) -> Path:
    """A private copy of the demo database: tests mark runs."""
    return private_copy(demo_db, tmp_path / "runs.db")


@pytest.fixture
def examples_db(tmp_path: Path) -> Path:
    """examples/runs.jsonl imported into a new database."""
    from helpers import run_cli

    path = tmp_path / "runs.db"
    examples = Path(__file__).resolve().parent.parent / "examples" / "runs.jsonl"
    assert run_cli("import", str(examples), "--db", str(path)).exit_code == 0
    return path


@pytest.fixture
def held_load(monkeypatch: pytest.MonkeyPatch) -> Iterator[HeldLoad]:
    """The app's whole-database load waits for the returned event (50 runs show first)."""
    from ppp_tui.app import app as app_module
    from ppp_tui.app.workspace import Workspace

    monkeypatch.setattr(app_module, "PREVIEW_RUNS", 50)
    release = HeldLoad()
    load = Workspace.load

    def held(self: Workspace) -> None:
        release.wait(timeout=10)
        load(self)

    monkeypatch.setattr(Workspace, "load", held)
    yield release
    release.set()


# -- the judge ---------------------------------------------------------------------


@pytest.fixture(scope="session")
def judge_demo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small demo database with the session runs (their agents are unscored)."""
    return demo_file(tmp_path_factory, "judge", 24, seed=5, sessions=True)


@pytest.fixture
def judge_db(judge_demo: Path, tmp_path: Path) -> Path:
    return private_copy(judge_demo, tmp_path / "runs.db")


@pytest.fixture
def fast_retries(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """The judge's pauses between tries are recorded, not slept; no proxy stands in the
    way, and no key is read from the caller's environment."""
    from ppp_tui.judging import client as judge_client

    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    pauses: list[float] = []

    def pause(self: judge_client.Client, seconds: float) -> None:
        pauses.append(seconds)
        if self.stop.is_set():
            raise judge_client.Stopped

    monkeypatch.setattr(judge_client.Client, "_pause", pause)
    monkeypatch.setattr(judge_client, "BACKOFF_BASE_S", 0.01)
    return pauses


@pytest.fixture
def server() -> Iterator[Server]:
    """The judge's fake chat-completions endpoint (judge_server.py)."""
    with serving() as running:
        yield running


@pytest.fixture(scope="session")
def pg_cluster() -> Iterator[str]:
    """A PostgreSQL superuser's URL: the server .ci/run started ($PPP_TUI_TEST_PG_URL),
    else a throwaway cluster of this session's own (pg_server.py), stopped at the end.
    Skipped, saying why, without psycopg or the server's binaries."""
    pytest.importorskip("psycopg", reason="the postgres extra (psycopg) is not installed")
    given = os.environ.get(pg_server.URL_ENV)
    if given:
        yield given
        return
    if pg_server.bindir() is None:
        pytest.skip("no PostgreSQL server binaries (initdb, pg_ctl); .ci/run installs them")
    cluster = pg_server.start()
    try:
        yield cluster.url
    finally:
        pg_server.stop(cluster.folder)


@pytest.fixture
def pg_url(pg_cluster: str) -> Iterator[str]:
    """The URL of a new, empty database on the test server, dropped after the test."""
    with pg_server.new_database(pg_cluster, "ppp_test") as url:
        yield url
