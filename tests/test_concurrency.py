"""Nothing is lost when several processes use the same files at once, or one is killed:
racing first imports, `demo --replace` killed at any moment, concurrent config.toml saves."""

from __future__ import annotations

import json
import multiprocessing
import os
import signal
import sqlite3
import time
import tomllib
from multiprocessing.synchronize import Barrier
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from ppp_tui.cli import cli
from ppp_tui.core.errors import PPPError
from ppp_tui.core.settings import Weights
from ppp_tui.storage import swap
from ppp_tui.storage.config_write import save_weights
from ppp_tui.storage.demo import write_demo
from ppp_tui.storage.store import RETIRED_ID, Store

FORK = multiprocessing.get_context("fork")


def _run(index: int) -> str:
    if index % 4 == 3:  # a bad file: its import fails, and must take nothing with it
        return json.dumps({"id": f"bad-{index}", "agents": []})
    agents = [{"name": "a", "technical_score": 0.5}, {"name": "b", "technical_score": 0.75}]
    return json.dumps({"id": f"run-{index}", "preferred_agent": "b", "agents": agents})


def _import(db: Path, source: Path, start: Barrier, results: Any) -> None:
    start.wait()
    result = CliRunner().invoke(cli, ["import", str(source), "--db", str(db)])
    results.put((source.name, result.exit_code, result.stderr))


@pytest.mark.parametrize("attempt", range(2))
def test_racing_first_imports_keep_every_committed_run(tmp_path: Path, attempt: int) -> None:
    db = tmp_path / "runs.db"
    sources = []
    for index in range(8):
        source = tmp_path / f"in{index}.json"
        source.write_text(_run(index))
        sources.append(source)
    start = FORK.Barrier(len(sources))
    results = FORK.Queue()
    workers = [FORK.Process(target=_import, args=(db, s, start, results)) for s in sources]
    for worker in workers:
        worker.start()
    outcomes = sorted(results.get(timeout=30) for _ in workers)
    for worker in workers:
        worker.join(timeout=30)
    good = {f"run-{i}" for i in range(8) if i % 4 != 3}
    assert [(name, code) for name, code, _ in outcomes] == [
        (f"in{i}.json", 1 if i % 4 == 3 else 0) for i in range(8)
    ]
    errors = [message for _, code, message in outcomes if code]
    assert all("agents must hold at least one agent" in m for m in errors), errors
    with Store.open(db) as store:
        assert {info.id for info in store.run_infos()} == good
        assert all(info.preferred == "b" for info in store.run_infos())
    # No scratch database of a failed or losing import is left behind.
    assert not [p.name for p in tmp_path.iterdir() if p.name.startswith(".runs.db")]


def _open_and_import(db: Path, index: int, start: Barrier, results: Any) -> None:
    start.wait()
    try:
        with Store.open(db, create=True) as store:
            records = [_record(index)]
            results.put(("ok", store.import_records(records).added))
    except PPPError as error:
        results.put(("error", str(error)))


def _record(index: int) -> Any:
    from ppp_tui.storage.files import Record

    return Record("<test>", None, "$", json.loads(_run(index)))


def test_schema_creation_racing_on_an_empty_file_happens_once(tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    db.touch()  # created by someone, with no schema yet: every opener creates it
    start = FORK.Barrier(6)
    results = FORK.Queue()
    workers = [
        FORK.Process(target=_open_and_import, args=(db, i, start, results))
        for i in (0, 1, 2, 4, 5, 6)  # good runs only
    ]
    for worker in workers:
        worker.start()
    outcomes = [results.get(timeout=30) for _ in workers]
    for worker in workers:
        worker.join(timeout=30)
    assert outcomes == [("ok", 1)] * 6
    with Store.open(db) as store:
        assert store.count() == 6


# --- demo --replace killed at any moment -------------------------------------------------------


def _demo(db: Path, runs: int) -> None:
    write_demo(db, runs, seed=runs, replace=True)


def test_demo_replace_killed_at_any_moment_leaves_the_old_or_the_new_database(
    tmp_path: Path,
) -> None:
    db = tmp_path / "demo.db"
    write_demo(db, 40, seed=1)
    started = time.perf_counter()
    _demo(db, 400)
    took = time.perf_counter() - started
    held, kept_old = 400, 0
    attempts = 8
    for attempt in range(attempts):
        runs = 401 + attempt  # each build's count tells it apart
        worker = FORK.Process(target=_demo, args=(db, runs))
        worker.start()
        # Kills spread from the start to about the end of a build, swap included.
        worker.join(timeout=took * attempt / (attempts - 1))
        if worker.is_alive():
            assert worker.pid is not None
            os.kill(worker.pid, signal.SIGKILL)
        worker.join()
        with Store.open(db) as store:
            count = store.count()
            assert store.conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        assert count in (held, runs), (attempt, count)
        kept_old += count == held
        held = count
    assert kept_old  # some kills landed before the swap
    _demo(db, 500)  # and the leftovers of the killed builds are in nobody's way
    with Store.open(db) as store:
        assert store.count() == 500


def test_demo_replace_is_refused_while_another_process_has_the_database_open(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(swap, "_REPLACE_TIMEOUT_S", 0.1)
    db = tmp_path / "demo.db"
    write_demo(db, 30, seed=1)
    with Store.open(db) as reader:
        with pytest.raises(PPPError, match=r"open in another process \(the app\?\); close it"):
            write_demo(db, 20, seed=2, replace=True)
        assert reader.count() == 30
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".demo.db")] == []
    write_demo(db, 20, seed=2, replace=True)
    with Store.open(db) as store:
        assert store.count() == 20


def test_a_process_opening_the_old_database_during_the_swap_opens_the_new_one(
    tmp_path: Path,
) -> None:
    db = tmp_path / "demo.db"
    write_demo(db, 30, seed=1)
    early = sqlite3.connect(db)  # opened before the swap, read after it
    write_demo(db, 20, seed=2, replace=True)
    assert early.execute("PRAGMA application_id").fetchone()[0] == RETIRED_ID
    early.close()
    with Store.open(db) as store:
        assert store.count() == 20


def test_a_database_left_retired_by_a_killed_replacement_is_taken_back(tmp_path: Path) -> None:
    db = tmp_path / "demo.db"
    write_demo(db, 30, seed=1)
    conn = sqlite3.connect(db)
    conn.execute(f"PRAGMA application_id = {RETIRED_ID}")
    conn.commit()
    conn.close()
    with Store.open(db) as store:
        assert store.count() == 30
        assert store.conn.execute("PRAGMA application_id").fetchone()[0] == 0


# --- config.toml saved by several writers at once ---------------------------------------------


def _save_stages(config: Path, writer: int, saves: int, start: Barrier) -> None:
    start.wait()
    for k in range(saves):
        technical = round(0.5 + 0.01 * k, 2)
        save_weights(config, stages={f"w{writer}_{k}": Weights.pair(technical, 1 - technical)})


def test_concurrent_config_saves_never_undo_each_other(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text(
        "# shared by three writers\n[ppp.weights]\ntechnical = 0.7\ninteraction = 0.3\n"
    )
    writers, saves = 3, 10
    start = FORK.Barrier(writers)
    workers = [
        FORK.Process(target=_save_stages, args=(config, w, saves, start)) for w in range(writers)
    ]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(timeout=60)
    assert [worker.exitcode for worker in workers] == [0] * writers
    tables = tomllib.loads(config.read_text())["ppp"]["weights"]
    expected = {f"w{w}_{k}" for w in range(writers) for k in range(saves)}
    assert expected <= set(tables), sorted(expected - set(tables))
    assert tables["w2_9"] == {"technical": 0.59, "interaction": pytest.approx(0.41)}
    assert config.read_text().startswith("# shared by three writers\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == [".config.toml.lock", "config.toml"]
