"""Fixtures shared by the app's Pilot tests."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers import HeldLoad

from ppp_tui.storage.demo import write_demo
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
    path = tmp_path_factory.mktemp("demo") / "demo.db"
    write_demo(path, 300, seed=3)
    return path


@pytest.fixture
def db(demo_db: Path, tmp_path: Path) -> Path:
    """A private copy of the demo database: tests mark runs."""
    copy = tmp_path / "runs.db"
    copy.write_bytes(demo_db.read_bytes())
    return copy


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
