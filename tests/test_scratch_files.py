"""No scratch file outlives its process: `demo --replace` and a config save stopped by
SIGINT or SIGTERM remove theirs at once; one killed outright (SIGKILL) leaves its files,
and the next run removes them, but never those of a process still at work, nor any file
not named as ppp-tui names its own."""

from __future__ import annotations

import hashlib
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from ppp_tui.core.settings import Weights
from ppp_tui.storage import scratch, swap
from ppp_tui.storage.config_leftovers import remove_leftovers
from ppp_tui.storage.config_write import save_weights

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="signals and flock as on Linux"
)

# A demo big enough to be still building when it is signalled (a few seconds here).
BIG = "20000"
TIMEOUT_S = 60.0
PAIR = "[ppp.weights]\ntechnical = 0.7\ninteraction = 0.3\n"


def _scratch_names(db: Path) -> list[str]:
    pattern = re.compile(
        rf"\.{re.escape(db.name)}\.[0-9a-f]{{12}}\.tmp(|-wal|-shm|-journal|\.lock)"
    )
    return sorted(name for name in os.listdir(db.parent) if pattern.fullmatch(name))


def _env(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PPP_TUI_")}
    env.update(XDG_CONFIG_HOME=str(tmp_path / "xdg-config"), XDG_DATA_HOME=str(tmp_path / "xdg"))
    return env


def _demo(tmp_path: Path, db: Path, runs: str, *more: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "ppp_tui", "demo", "--runs", runs, "--db", str(db), *more],
        env=_env(tmp_path),
        cwd=tmp_path,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )


def _wait_for(found: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + TIMEOUT_S
    while not found():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.005)


def _processes_on(db: Path) -> list[int]:
    """The processes (a demo's chunk workers among them) with `db` on their command line."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                argv = Path(f"/proc/{entry}/cmdline").read_bytes().split(b"\0")
                state = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[0]
            except OSError:
                continue
            if os.fsencode(db) in argv and state != "Z":
                found.append(int(entry))
    return found


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _unrelated(folder: Path) -> dict[str, str]:
    """Files beside the database that look like ours but are not: they must stay."""
    files = {
        "notes.txt": "mine",
        ".demo.db.notours.tmp": "not a scratch name",
        ".demo.db.0123456789AB.tmp": "capitals: not ours",
        ".demo.db.0123456789ab.tmp.bak": "a suffix we never use",
        ".demo.db.0123456789ab.tmpx": "neither",
        "demo.db.0123456789ab.tmp": "no leading dot",
        ".other.db.0123456789ab.tmp": "another database's",
        ".other.db.0123456789ab.tmp.lock": "another database's",
    }
    for name, text in files.items():
        (folder / name).write_text(text)
        os.utime(folder / name, (1, 1))  # older than any age rule
    return files


@pytest.fixture
def old_db(tmp_path: Path) -> Iterator[Path]:
    db = tmp_path / "demo.db"
    done = _demo(tmp_path, db, "50")
    assert done.wait(TIMEOUT_S) == 0, done.stderr.read() if done.stderr else ""
    yield db


def _signalled_mid_build(tmp_path: Path, db: Path, signum: int) -> subprocess.Popen[bytes]:
    """A `demo --replace` signalled once its scratch database exists; returns it ended."""
    before = set(_scratch_names(db))
    process = _demo(tmp_path, db, BIG, "--replace")
    _wait_for(
        lambda: any(not n.endswith(".lock") for n in set(_scratch_names(db)) - before),
        "the scratch database",
    )
    assert process.poll() is None, "the demo ended before it could be signalled"
    process.send_signal(signum)
    process.wait(TIMEOUT_S)
    return process


# --- demo --replace ------------------------------------------------------------------------


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_an_interrupted_or_terminated_demo_removes_its_scratch_at_once(
    tmp_path: Path, old_db: Path, signum: int
) -> None:
    unrelated = _unrelated(tmp_path)
    old = _digest(old_db)
    process = _signalled_mid_build(tmp_path, old_db, signum)
    stderr = process.stderr.read().decode() if process.stderr else ""
    assert "Traceback" not in stderr, stderr
    if signum == signal.SIGTERM:
        assert process.returncode == 128 + signal.SIGTERM  # as a shell reports it
    else:
        assert process.returncode == 1 and "Aborted!" in stderr
    assert _digest(old_db) == old
    assert _scratch_names(old_db) == []
    assert not (tmp_path / "demo.db-wal").exists()
    assert _processes_on(old_db) == []  # no chunk worker goes on writing
    for name, text in unrelated.items():
        assert (tmp_path / name).read_text() == text


def test_a_killed_demos_scratch_is_removed_by_the_next_run(tmp_path: Path, old_db: Path) -> None:
    unrelated = _unrelated(tmp_path)
    old = _digest(old_db)
    left: list[str] = []
    for _ in range(3):
        _signalled_mid_build(tmp_path, old_db, signal.SIGKILL)
        assert _digest(old_db) == old
        # The killed build's files are there, and only its own: each build removed those
        # of the build killed before it.
        assert not set(left) & set(_scratch_names(old_db))
        left = _scratch_names(old_db)
        assert sum(n.endswith(".lock") for n in left) == 1, left
        assert sum((tmp_path / n).stat().st_size for n in left) > 0

    done = _demo(tmp_path, old_db, "60", "--replace")
    assert done.wait(TIMEOUT_S) == 0, done.stderr.read() if done.stderr else ""
    assert _scratch_names(old_db) == []
    assert _digest(old_db) != old  # the new demo is in place
    for name, text in unrelated.items():
        assert (tmp_path / name).read_text() == text


_HOLDER = """
import os, sys, time
from pathlib import Path
from ppp_tui.storage import swap
name = swap.scratch_beside(Path(sys.argv[1]))
Path(name).write_bytes(b"x" * 4096)
os.utime(name, (1, 1))  # untouched for ages: only its owner being alive keeps it
print(name, flush=True)
sys.stdin.read()  # until the test lets go
swap.discard(name)
"""


def _started(
    tmp_path: Path, script: str, path: Path, stdin: int | None = None, stderr: int | None = None
) -> tuple[subprocess.Popen[str], str]:
    """Another Python process running `script` on `path` (its output a pipe; its input
    and errors `stdin` and `stderr`), and the first line it printed."""
    process = subprocess.Popen(
        [sys.executable, "-c", script, str(path)],
        env=_env(tmp_path),
        stdin=stdin,
        stdout=subprocess.PIPE,
        stderr=stderr,
        text=True,
    )
    assert process.stdout is not None
    return process, process.stdout.readline()


def _holder(tmp_path: Path, db: Path) -> tuple[subprocess.Popen[str], Path]:
    """Another process with a scratch file beside `db`, alive until its stdin closes."""
    process, line = _started(tmp_path, _HOLDER, db, stdin=subprocess.PIPE)
    return process, Path(line.strip())


def test_a_live_processs_scratch_is_never_removed(tmp_path: Path, old_db: Path) -> None:
    holder, held = _holder(tmp_path, old_db)
    try:
        assert held.exists() and Path(f"{held}.lock").exists()
        done = _demo(tmp_path, old_db, "60", "--replace")
        assert done.wait(TIMEOUT_S) == 0, done.stderr.read() if done.stderr else ""
        assert scratch.remove_orphans(old_db) == []  # in this process too
        assert held.read_bytes() == b"x" * 4096
        assert Path(f"{held}.lock").exists()
    finally:
        if holder.stdin is not None:
            holder.stdin.close()
        holder.wait(TIMEOUT_S)
    assert holder.returncode == 0
    assert _scratch_names(old_db) == []  # removed by its owner


def test_a_dead_holders_scratch_goes_once_it_is_dead(tmp_path: Path) -> None:
    db = tmp_path / "demo.db"
    holder, held = _holder(tmp_path, db)
    try:
        assert scratch.remove_orphans(db) == []
    finally:
        holder.kill()
        holder.wait(TIMEOUT_S)
    assert held.exists()
    assert scratch.remove_orphans(db) == [held]
    assert _scratch_names(db) == []


def test_a_concurrent_demo_keeps_its_scratch(tmp_path: Path) -> None:
    # Two demos of the same new database at once, the second started while the first is
    # writing its scratch file (its cleanup looks at the first one's files): one puts its
    # database in place, the other finds it there; neither loses its scratch file.
    db = tmp_path / "other.db"
    slow = _demo(tmp_path, db, "60000")
    _wait_for(lambda: bool(_scratch_names(db)), "the first demo's scratch database")
    quick = _demo(tmp_path, db, "60")
    outcomes = []
    for process in (quick, slow):
        process.wait(TIMEOUT_S)
        assert process.stderr is not None
        outcomes.append((process.returncode, process.stderr.read().decode()))
    assert sorted(code for code, _ in outcomes) == [0, 1], outcomes
    lost = next(stderr for code, stderr in outcomes if code == 1)
    assert lost.strip().endswith("created by another process meanwhile; not replaced"), lost
    assert _scratch_names(db) == []


def test_lockless_scratch_files_go_only_once_untouched_for_a_while(tmp_path: Path) -> None:
    # Scratch files of an older ppp-tui, without a lock file: the age rule of before.
    db = tmp_path / "runs.db"
    fresh = tmp_path / ".runs.db.00000000000a.tmp"
    old = tmp_path / ".runs.db.00000000000b.tmp"
    for path in (fresh, old, Path(f"{old}-wal")):
        path.write_bytes(b"x")
    os.utime(old, (1, 1))
    os.utime(f"{old}-wal", (1, 1))
    assert scratch.remove_orphans(db) == [old]
    assert sorted(p.name for p in tmp_path.iterdir()) == [fresh.name]


def test_a_lock_file_left_alone_is_removed(tmp_path: Path) -> None:
    # Killed between removing the database and its lock file.
    db = tmp_path / "runs.db"
    name = swap.scratch_beside(db)
    lock = Path(f"{name}.lock")
    os.close(scratch._HELD.pop(name)[0])  # as if its process had died
    assert lock.exists()
    again = swap.scratch_beside(db)
    assert again != name
    assert not lock.exists()
    swap.discard(again)
    assert list(tmp_path.iterdir()) == []


def test_a_terminated_handler_is_restored_and_ignored_stays_ignored() -> None:
    before = signal.getsignal(signal.SIGTERM)
    with scratch.signals_end_as_exit():
        assert signal.getsignal(signal.SIGTERM) is not before
        with pytest.raises(SystemExit) as ended:
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(5)  # the handler runs before this ends
        assert ended.value.code == 128 + signal.SIGTERM
    assert signal.getsignal(signal.SIGTERM) is before
    previous = signal.signal(signal.SIGHUP, signal.SIG_IGN)
    try:
        with scratch.signals_end_as_exit():
            assert signal.getsignal(signal.SIGHUP) is signal.SIG_IGN
    finally:
        signal.signal(signal.SIGHUP, previous)


# --- config.toml saves -----------------------------------------------------------------------

# A save that stops just before its rename, its temporary file written, until signalled.
_SAVER = """
import os, sys, time
from pathlib import Path
from ppp_tui.core.settings import Weights
from ppp_tui.storage import config_write

def stuck(source, target):
    print("written", flush=True)
    time.sleep(120)

config_write.os.replace = stuck
config_write.save_weights(Path(sys.argv[1]), Weights.pair(0.6, 0.4))
"""


def _temporary_names(config: Path) -> list[str]:
    pattern = re.compile(rf"\.{re.escape(config.name)}\.[0-9a-f]{{12}}\.tmp")
    return sorted(name for name in os.listdir(config.parent) if pattern.fullmatch(name))


def _stuck_save(tmp_path: Path, config: Path) -> subprocess.Popen[str]:
    process, line = _started(tmp_path, _SAVER, config, stderr=subprocess.PIPE)
    assert line == "written\n"
    assert len(_temporary_names(config)) == 1
    return process


def _config_beside(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    config = tmp_path / "config.toml"
    config.write_text(PAIR)
    unrelated = {
        ".config.toml.notours.tmp": "someone else's",
        ".config.toml.0123456789ab.tmp.bak": "a suffix we never use",
        ".other.toml.0123456789ab.tmp": "another file's",
    }
    for name, text in unrelated.items():
        (tmp_path / name).write_text(text)
    return config, unrelated


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_an_interrupted_save_removes_its_temporary_file(tmp_path: Path, signum: int) -> None:
    config, unrelated = _config_beside(tmp_path)
    process = _stuck_save(tmp_path, config)
    process.send_signal(signum)
    process.wait(TIMEOUT_S)
    # ctrl+c: Python ends by SIGINT itself (no click here to print "Aborted!").
    assert process.returncode == (128 + signum if signum == signal.SIGTERM else -signum)
    assert _temporary_names(config) == []
    assert config.read_text() == PAIR
    for name, text in unrelated.items():
        assert (tmp_path / name).read_text() == text


def test_a_killed_saves_temporary_file_is_removed_later_not_while_it_lives(
    tmp_path: Path,
) -> None:
    config, unrelated = _config_beside(tmp_path)
    process = _stuck_save(tmp_path, config)
    try:
        remove_leftovers(config)  # its writer is alive and holds the lock: kept
        assert len(_temporary_names(config)) == 1
    finally:
        process.kill()
        process.wait(TIMEOUT_S)
    assert len(_temporary_names(config)) == 1  # what a kill leaves
    remove_leftovers(config)  # as a process reading the config may
    assert _temporary_names(config) == []

    process = _stuck_save(tmp_path, config)
    process.kill()
    process.wait(TIMEOUT_S)
    save_weights(config, Weights.pair(0.6, 0.4))  # the next save removes it too
    assert _temporary_names(config) == []
    assert "technical = 0.6" in config.read_text()
    for name, text in unrelated.items():
        assert (tmp_path / name).read_text() == text


def test_leftovers_are_left_alone_without_a_lock_file(tmp_path: Path) -> None:
    # No save has run here: nothing is created, nothing removed, nothing raised.
    config = tmp_path / "config.toml"
    remove_leftovers(config)
    remove_leftovers(tmp_path / "missing" / "config.toml")
    assert list(tmp_path.iterdir()) == []
