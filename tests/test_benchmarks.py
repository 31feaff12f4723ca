"""Every benchmark runs as shipped, from a fresh clone, in its small mode, and leaves
nothing behind: no file in its temporary folder, its working folder or the home folder.

Each script runs as a process with the interpreter of the tests, in an empty working
folder, with TMPDIR, HOME and the XDG folders pointed at empty folders of its own so that
whatever it leaves there shows. The figures it prints are not checked (no timings here).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"

# Each benchmark's small mode: arguments that make it finish in a few seconds. A new
# benchmark needs a line here (test_every_benchmark_has_a_small_mode).
SMALL: dict[str, tuple[str, ...]] = {
    "bench_app.py": ("--runs", "300", "--steps", "3", "--pairs", "1"),
    "bench_changes.py": ("--edits", "200", "--repeat", "1"),
    "bench_demo.py": ("--runs", "200"),
    "bench_demo_chunk.py": ("--chunks", "1"),
    "bench_long_text.py": ("--sizes", "0.01,0.02"),
    "bench_next.py": ("--runs", "300", "--seeds", "2", "--budget", "60", "--big", "2000"),
    "bench_rank.py": (),
    "bench_regret.py": ("--runs", "500", "--resamples", "10"),
    "bench_search.py": ("--runs", "300"),
    "bench_sessions.py": ("--mb", "0.2", "--repeat", "1"),
    "bench_step.py": ("--runs", "1000", "--steps", "20"),
    "bench_store.py": ("--runs", "200", "--import-repeat", "1", "--repeat", "1"),
    "bench_team_app.py": ("--runs", "300", "--pairs", "1"),
    "bench_team_store.py": ("--runs", "200", "--repeat", "1"),
    "bench_tune2d.py": ("--runs", "1000", "--resamples", "2"),
    "bench_watch.py": ("--appends", "5", "--idle", "1", "--mb", "0.5", "--grow", "2"),
    "classifier_eval.py": (),
    # The project's own transcripts (the real ones it is labelled for are not shipped).
    "questions_realdata.py": ("--realdata", str(BENCHMARKS.parent / "tests/data/sessions")),
    "judge_faults.py": ("--only", "echo-key-401,deep-200,gzip-bomb", "--bomb-mb", "8"),
}


def scripts() -> list[str]:
    """The benchmarks: every script in benchmarks/ but the shared modules (`_*.py`)."""
    return sorted(path.name for path in BENCHMARKS.glob("*.py") if not path.name.startswith("_"))


def sandbox(root: Path) -> tuple[dict[str, str], list[Path]]:
    """An environment whose temporary, home and XDG folders are new empty folders under
    `root` (and no PPP_TUI_* settings of the caller's), and those folders."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("PPP_TUI_")}
    tmp, home = root / "tmp", root / "home"
    folders = [tmp, home]
    for name in ("TMPDIR", "TMP", "TEMP"):
        env[name] = str(tmp)
    env["HOME"] = str(home)
    for name in ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME"):
        folder = root / name.lower()
        env[name] = str(folder)
        folders.append(folder)
    for folder in folders:
        folder.mkdir()
    return env, folders


def leftovers(folders: list[Path]) -> list[str]:
    return sorted(str(path) for folder in folders for path in folder.rglob("*"))


def test_every_benchmark_has_a_small_mode() -> None:
    missing = sorted(set(scripts()) - set(SMALL))
    assert not missing, f"give SMALL the arguments that make these quick: {missing}"
    assert scripts() == sorted(SMALL)


@pytest.mark.parametrize("script", sorted(SMALL))
def test_benchmark_runs_and_cleans_up(script: str, tmp_path: Path) -> None:
    env, folders = sandbox(tmp_path)
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    done = subprocess.run(
        [sys.executable, str(BENCHMARKS / script), *SMALL[script]],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, f"{script} exit {done.returncode}:\n{done.stderr[-3000:]}"
    assert done.stdout.strip(), f"{script} printed nothing"
    assert leftovers([cwd, *folders]) == []


@pytest.mark.skipif(not hasattr(signal, "SIGTERM") or os.name == "nt", reason="POSIX signals")
def test_scratch_folder_is_removed_when_terminated(tmp_path: Path) -> None:
    """A benchmark stopped by SIGTERM mid-run still removes its temporary folder."""
    env, folders = sandbox(tmp_path)
    code = (
        "import sys, time\n"
        f"sys.path.insert(0, {str(BENCHMARKS)!r})\n"
        "from _common import scratch\n"
        "with scratch('ppp-bench-test-') as folder:\n"
        "    (folder / 'big.db').write_bytes(b'x' * 1000)\n"
        "    print(folder, flush=True)\n"
        "    time.sleep(60)\n"
    )
    with subprocess.Popen(
        [sys.executable, "-c", code], env=env, stdout=subprocess.PIPE, text=True
    ) as process:
        assert process.stdout is not None
        folder = Path(process.stdout.readline().strip())
        assert (folder / "big.db").is_file()
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=30) == 128 + signal.SIGTERM
    assert not folder.exists()
    assert leftovers(folders) == []
