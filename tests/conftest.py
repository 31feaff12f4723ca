"""Fixtures shared by the app's Pilot tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from ppp_tui.storage.demo import write_demo


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
