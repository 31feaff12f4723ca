"""Demo databases for fixtures: one written into a new temporary folder, and a test's
private copy of one."""

from __future__ import annotations

from pathlib import Path

import pytest

from ppp_tui.storage.demo import write_demo


def demo_file(
    factory: pytest.TempPathFactory,
    folder: str,
    runs: int,
    seed: int,
    *,
    sessions: bool = False,
    name: str = "demo.db",
) -> Path:
    """A demo database of `runs` runs (`seed`; with the session runs if `sessions`),
    written as `name` in a new temporary folder named after `folder`."""
    path = factory.mktemp(folder) / name
    write_demo(path, runs, seed=seed, sessions=sessions)
    return path


def private_copy(source: Path, copy: Path) -> Path:
    """`source` copied to `copy`, for a test that changes it."""
    copy.write_bytes(source.read_bytes())
    return copy
