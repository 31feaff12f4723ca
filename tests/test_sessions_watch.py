"""`ppp-tui import --watch`, run as the user runs it (a process of its own): sessions
followed as they are written, a line for each change, a clean stop on ctrl+c and
SIGTERM, and a database that stays whole with two watchers, an import beside them, or
a watcher killed.
"""

from __future__ import annotations

import json
import os
import queue
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any

import pytest
from helpers import check_consistent
from transcripts import ask_claude_lines, claude_lines, codex_lines

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")

TIMEOUT = 30.0


class Watcher:
    """A `ppp-tui import --watch` process and the lines it wrote so far."""

    def __init__(self, db: Path | str, *names: Path) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "ppp_tui", "import", "--watch", *map(str, names), f"--db={db}"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, "NO_COLOR": "1"},
        )
        self.out: queue.Queue[str] = queue.Queue()
        self.err: list[str] = []
        self.lines: list[str] = []
        assert self.process.stdout is not None and self.process.stderr is not None
        self._threads = [
            threading.Thread(target=self._pump, args=(self.process.stdout, self.out.put)),
            threading.Thread(target=self._pump, args=(self.process.stderr, self.err.append)),
        ]
        for thread in self._threads:
            thread.start()
        self.wait_err("for changes")

    @staticmethod
    def _pump(stream: IO[str], put: Callable[[str], None]) -> None:
        for line in stream:
            put(line.rstrip("\n"))

    def wait_err(self, text: str) -> None:
        deadline = time.monotonic() + TIMEOUT
        while not any(text in line for line in self.err):
            assert self.process.poll() is None, self.err
            assert time.monotonic() < deadline, self.err
            time.sleep(0.02)

    def next_line(self) -> str:
        line = self.out.get(timeout=TIMEOUT)
        self.lines.append(line)
        return line

    def quiet(self, seconds: float = 0.6) -> list[str]:
        """The lines written until none came for `seconds`."""
        lines = []
        while True:
            try:
                lines.append(self.out.get(timeout=seconds))
            except queue.Empty:
                return lines

    def stop(self, signum: int = signal.SIGTERM) -> int:
        self.process.send_signal(signum)
        code = self.process.wait(timeout=TIMEOUT)
        for thread in self._threads:
            thread.join(timeout=TIMEOUT)
        return code


@pytest.fixture
def watchers() -> Iterator[list[Watcher]]:
    started: list[Watcher] = []
    yield started
    for watcher in started:
        if watcher.process.poll() is None:
            watcher.process.kill()
            watcher.process.wait()


def _append(path: Path, lines: list[dict[str, Any]], end: bytes = b"\n") -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("ab") as handle:
        handle.write(b"".join(json.dumps(line).encode() + end for line in lines))


def _rows(db: Path, sql: str) -> list[tuple[Any, ...]]:
    conn = sqlite3.connect(db)
    try:
        return conn.execute(sql).fetchall()
    finally:
        conn.close()


def _steps(db: Path) -> dict[str, int]:
    """Each run's steps, summed over its agents' turns."""
    rows = _rows(
        db,
        "SELECT a.run_id, t.steps FROM agents a JOIN trajectory_turns t ON t.trajectory_id = a.id",
    )
    steps: dict[str, int] = {}
    for run_id, text in rows:
        steps[run_id] = steps.get(run_id, 0) + len(json.loads(text))
    return steps


def test_a_watch_follows_growth_new_sessions_and_deletions(
    tmp_path: Path, watchers: list[Watcher]
) -> None:
    folder, db = tmp_path / "projects", tmp_path / "runs.db"
    first = folder / "p" / "s1.jsonl"
    lines = claude_lines("s1", "/nowhere/repo", "claude-opus-4-5")
    _append(first, lines[:2])  # the prompt and an ask, not answered yet
    watcher = Watcher(db, folder)
    watchers.append(watcher)
    assert watcher.lines == [] and "imported 1 session: 1 new run" in watcher.next_line()
    (run_id,) = [row[0] for row in _rows(db, "SELECT id FROM runs")]
    line = watcher.next_line()
    assert line.split()[1:3] == ["new", run_id]
    assert "⚑ Add a --json flag" in line  # its dialog waits for an answer
    asked = _rows(db, "SELECT answer FROM trajectory_questions")
    assert asked == [(None,)]
    # The answer, then the rest: the run updated in place, its id kept.
    _append(first, lines[2:])
    line = watcher.next_line()
    assert line.split()[1:3] == ["updated", run_id]
    assert "⚑" not in line
    watcher.quiet()
    assert _rows(db, "SELECT answer FROM trajectory_questions") == [("JSON Lines",)]
    assert _steps(db) == {run_id: 3}
    # A line still being written changes nothing until it is whole.
    more = {
        **lines[-1],
        "uuid": "s1-a4",
        "message": {**lines[-1]["message"], "id": "msg_s1_4",
                    "content": [{"type": "text", "text": "Shall I also update the docs?"}]},
    }  # fmt: skip
    encoded = json.dumps(more).encode()
    with first.open("ab") as handle:
        handle.write(encoded[:30])
    assert watcher.quiet() == []
    assert _steps(db) == {run_id: 3}
    with first.open("ab") as handle:
        handle.write(encoded[30:] + b"\n")
    assert watcher.next_line().split()[1:3] == ["updated", run_id]
    assert _steps(db) == {run_id: 4}
    # A new session of another task: a run of its own.
    _append(folder / "q" / "c1.jsonl", codex_lines("c1", "/nowhere/other", prompt="Fix the bug"))
    line = watcher.next_line()
    assert line.split()[1] == "new" and "Fix the bug" in line
    assert len(_rows(db, "SELECT id FROM runs")) == 2
    # A session deleted: what was imported of it stays.
    before = _rows(db, "SELECT * FROM trajectory_turns ORDER BY id")
    first.unlink()
    assert watcher.quiet(1.0) == []
    assert _rows(db, "SELECT * FROM trajectory_turns ORDER BY id") == before
    assert watcher.stop() == 0
    assert "stopped watching" in watcher.err[-1]
    assert not [line for line in watcher.err if "Traceback" in line]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["projects", "runs.db"]


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_a_watch_stops_cleanly(tmp_path: Path, watchers: list[Watcher], signum: int) -> None:
    session = tmp_path / "s1.jsonl"
    _append(session, ask_claude_lines())
    watcher = Watcher(tmp_path / "runs.db", session)  # a file named, not a folder
    watchers.append(watcher)
    watcher.quiet()
    assert watcher.stop(signum) == 0
    assert watcher.err[-1] == "stopped watching"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["runs.db", "s1.jsonl"]
    assert _rows(tmp_path / "runs.db", "PRAGMA integrity_check") == [("ok",)]


def _import(folder: Path, db: Path) -> None:
    """`ppp-tui import FOLDER`, as from another shell."""
    imported = subprocess.run(
        [sys.executable, "-m", "ppp_tui", "import", str(folder), "--db", str(db)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert imported.returncode == 0, imported.stderr


def _grow(folder: Path, sessions: int, appends: int) -> dict[str, int]:
    """`sessions` Claude Code sessions of different tasks, each growing by `appends`
    answers of the agent, written in turns; the steps each ends with, by session."""
    for k in range(appends):
        for s in range(sessions):
            path = folder / f"p{s % 3}" / f"s{s}.jsonl"
            if k == 0:
                _append(path, claude_lines(f"s{s}", "/nowhere/repo", "m", prompt=f"Task {s}")[:1])
            line = {
                "sessionId": f"s{s}",
                "cwd": "/nowhere/repo",
                "type": "assistant",
                "uuid": f"s{s}-a{k}",
                "timestamp": "2026-03-02T10:00:05.000Z",
                "message": {"id": f"m{s}-{k}", "role": "assistant", "model": "m",
                            "content": [{"type": "text", "text": f"step {k}"}]},
            }  # fmt: skip
            _append(path, [line])
        time.sleep(0.01)
    return {f"s{s}": appends for s in range(sessions)}


def test_two_watchers_and_an_import_never_lose_or_double_a_run(
    tmp_path: Path, watchers: list[Watcher]
) -> None:
    folder, db = tmp_path / "projects", tmp_path / "runs.db"
    _append(folder / "p0" / "seed.jsonl", ask_claude_lines(session="seed"))
    watchers.append(Watcher(db, folder))
    watchers.append(Watcher(db, folder))
    writer = threading.Thread(target=_grow, args=(folder, 12, 25))
    writer.start()
    time.sleep(0.3)
    _import(folder, db)
    writer.join()
    for watcher in watchers:
        watcher.quiet(1.5)
    for watcher in watchers:
        assert watcher.stop() == 0
        assert not [line for line in watcher.err if line.startswith("error:")], watcher.err
    runs = _rows(db, "SELECT id, task FROM runs ORDER BY task")
    expected = sorted([*(f"Task {s}" for s in range(12)), "Fix the bug"])
    assert sorted(task for _, task in runs) == expected
    steps = _steps(db)
    by_task = {task: steps.get(run_id, 0) for run_id, task in runs}
    assert all(by_task[f"Task {s}"] == 25 for s in range(12)), by_task
    check_consistent(db)


def test_a_killed_watcher_leaves_the_database_whole(
    tmp_path: Path, watchers: list[Watcher]
) -> None:
    folder, db = tmp_path / "projects", tmp_path / "runs.db"
    _append(folder / "p0" / "seed.jsonl", ask_claude_lines(session="seed"))
    watcher = Watcher(db, folder)
    watchers.append(watcher)
    writer = threading.Thread(target=_grow, args=(folder, 8, 40))
    writer.start()
    deadline = time.monotonic() + TIMEOUT
    while len(watcher.lines) < 6 and time.monotonic() < deadline:
        watcher.next_line()  # writes under way
    watcher.process.kill()
    watcher.process.wait(timeout=TIMEOUT)
    writer.join()
    assert _rows(db, "PRAGMA integrity_check") == [("ok",)]
    check_consistent(db)
    # What was written stands; an import finishes the job, nothing doubled.
    _import(folder, db)
    runs = _rows(db, "SELECT id, task FROM runs")
    assert len(runs) == 9
    steps = _steps(db)
    assert sorted(steps[run_id] for run_id, task in runs if task != "Fix the bug") == [40] * 8
    check_consistent(db)


def test_nothing_to_watch_is_an_error(tmp_path: Path) -> None:
    from helpers import run_cli

    env = {"HOME": str(tmp_path), "CLAUDE_CONFIG_DIR": "", "CODEX_HOME": "", "GEMINI_CLI_HOME": ""}
    result = run_cli("import", "--agents", "--watch", "--db", str(tmp_path / "runs.db"), env=env)
    assert result.exit_code == 1
    assert "codex: nothing at" in result.stderr
    assert result.stderr.splitlines()[-1] == (
        "Error: nothing to watch: no folder of sessions is there"
    )
    for args in (["-"], [str(tmp_path), "--format", "codex"]):
        usage = run_cli("import", *args, "--watch", "--db", str(tmp_path / "runs.db"))
        assert usage.exit_code == 2 and "--watch follows session files and folders" in usage.output


def test_a_watch_into_a_team_store_follows_sessions_and_outlives_a_dropped_connection(
    tmp_path: Path, watchers: list[Watcher], pg_url: str
) -> None:
    """The same lines as into a file; the server ending the watcher's connection is one
    line, said once however often the write is tried again, and the next change is
    written on a new connection."""
    import psycopg

    from ppp_tui.storage.location import parse_server_url

    folder = tmp_path / "projects"
    first = folder / "p" / "s1.jsonl"
    lines = claude_lines("s1", "/nowhere/repo", "claude-opus-4-5")
    _append(first, lines[:2])
    watcher = Watcher(pg_url, folder)
    watchers.append(watcher)
    assert "imported 1 session: 1 new run" in watcher.next_line()
    with psycopg.connect(pg_url, autocommit=True) as conn:
        ((run_id,),) = conn.execute("SELECT id FROM runs").fetchall()
        assert watcher.next_line().split()[1:3] == ["new", run_id]
        # The server drops the watcher's connection (as a restart would).
        ended = conn.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
            " WHERE datname = current_database() AND pid <> pg_backend_pid()"
        ).fetchall()
        assert ended and all(row[0] for row in ended)
        _append(first, lines[2:])
        assert watcher.next_line().split()[1:3] == ["updated", run_id]
        assert conn.execute("SELECT answer FROM trajectory_questions").fetchall() == [
            ("JSON Lines",)
        ]
    lost = [line for line in watcher.err if "tried again with the next change" in line]
    assert len(lost) == 1 and "the connection to the server was lost" in lost[0], watcher.err
    assert all(secret not in "".join(watcher.err) for secret in parse_server_url(pg_url).passwords)
    assert watcher.stop() == 0
    assert not [line for line in watcher.err if "Traceback" in line]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["projects"]


def test_a_refused_write_is_said_once_until_it_is_written_or_refused_otherwise(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A write tried again every second (a team store's server away, a lock held long)
    says its reason once, not every second; another reason, or the same one after a
    write went through, is said again."""
    from ppp_tui.core.errors import PPPError
    from ppp_tui.core.sessions.grouping import Grouping
    from ppp_tui.storage.sessions import watching
    from ppp_tui.storage.sessions.importing import SessionReport

    outcomes = ["away", "away", "away", "locked", "locked", None, "away"]

    def write(*args: Any) -> None:
        reason = outcomes.pop(0)
        if reason is not None:
            raise PPPError(f"the store is {reason}")

    monkeypatch.setattr(watching, "write_sessions", write)
    watcher = watching.Watcher(None, watching.Places.of([]), Grouping())  # type: ignore[arg-type]
    said = []
    while outcomes:
        report = SessionReport()
        watcher.waiting["a session read"] = None  # type: ignore[assignment]
        watcher._write([], report)
        said.append(report.errors)
    suffix = " (tried again with the next change)"
    assert said == [
        [f"the store is away{suffix}"], [], [], [f"the store is locked{suffix}"], [], [],
        [f"the store is away{suffix}"],
    ]  # fmt: skip
    assert watcher.waiting  # the last one waits for the next change
