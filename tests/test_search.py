"""Full-text search of the runs: what matches, in which order, and what never raises."""

from __future__ import annotations

import json
import sqlite3
import time
from pathlib import Path
from typing import Any

import pytest
from helpers import opened
from textual.widgets import Select

from ppp_tui.core.settings import Settings
from ppp_tui.storage import search as search_module
from ppp_tui.storage.files import read_records
from ppp_tui.storage.store import Store
from ppp_tui.storage.technical import Score


def _run(run_id: str, task: str, output: str = "", question: str = "", **extra: Any) -> str:
    agent: dict[str, Any] = {"name": "a", "technical_score": 0.5, "output": output}
    if question:
        agent["trajectory"] = {"questions": [{"text": question, "effort": "low"}]}
    run = {"id": run_id, "task": task, "agents": [agent, {"name": "b", "technical_score": 0.4}]}
    return json.dumps({**run, **extra}) + "\n"


def _import(store: Store, tmp_path: Path, *lines: str) -> None:
    source = tmp_path / f"runs-{len(list(tmp_path.iterdir()))}.jsonl"
    source.write_text("".join(lines), encoding="utf-8")
    store.import_records(read_records(str(source)))


@pytest.fixture
def store(tmp_path: Path) -> Any:
    with Store.open(tmp_path / "runs.db", create=True) as opened:
        _import(
            opened,
            tmp_path,
            _run("r1", "Add OAuth2 login", output="Wrote the webhook verifier."),
            _run("r2", "Fix the upload crash", question="Which storage bucket holds uploads?"),
            _run("r3", "Webhook retries", output="Webhook webhook webhook: retries with backoff."),
            _run("r4", "Document the CLI", spec_id="SPEC-KIT-042"),
        )
        yield opened


def test_a_word_only_in_an_agent_output_finds_its_run(store: Store) -> None:
    assert store.search("verifier") == ["r1"]


def test_a_word_only_in_a_question_finds_its_run(store: Store) -> None:
    assert store.search("bucket") == ["r2"]


def test_runs_are_ranked_most_relevant_first(store: Store) -> None:
    # r3 says webhook in its task and four times in its output; r1 once in its output.
    assert store.search("webhook") == ["r3", "r1"]


def test_the_last_word_matches_as_a_prefix_while_typing(store: Store) -> None:
    assert store.search("webh") == ["r3", "r1"]
    assert store.search("upload cr") == ["r2"]
    # A space after a word: that word is complete.
    assert store.search("webh ") == []


def test_every_word_must_match(store: Store) -> None:
    assert store.search("webhook retries") == ["r3"]


def test_run_and_spec_ids_are_searched(store: Store) -> None:
    assert store.search("r4") == ["r4"]
    assert store.search("SPEC-KIT-042") == ["r4"]
    assert store.search("spec-kit") == ["r4"]


@pytest.mark.parametrize(
    "text",
    [
        '"',
        '""',
        'a"b',
        "*",
        "-",
        "-x",
        ":",
        "a:b",
        "(",
        ")",
        "NEAR(a b)",
        "AND",
        "OR",
        "NOT x",
        "^",
        "{a}",
        "'",
        "\\",
        "a+b",
        "webhook*",
        "col:webhook",
        "\x00",
        "é",
        "🙂",
    ],
)
def test_fts_syntax_characters_are_only_text(store: Store, text: str) -> None:
    assert isinstance(store.search(text), list)


def test_an_empty_query_matches_nothing(store: Store) -> None:
    assert store.search("") == [] and store.search("   ") == []


def test_runs_imported_later_are_found(store: Store, tmp_path: Path) -> None:
    assert store.search("zeppelin") == []
    _import(store, tmp_path, _run("r5", "Zeppelin parking", output="zeppelin"))
    assert store.search("zeppelin") == ["r5"]
    assert store.search("verifier") == ["r1"]


def test_technical_scores_leave_the_index_consistent(store: Store) -> None:
    assert store.search("bucket") == ["r2"]
    store.set_technical([Score("r2", "a", 0.9, "t.csv:2")])
    assert store.search("bucket") == ["r2"]
    assert store.agent_columns(Settings()).technical.tolist()[2] == 0.9


def test_a_database_locked_by_another_process_is_searched_by_substring(
    tmp_path: Path,
) -> None:
    path = tmp_path / "locked.db"
    with Store.open(path, create=True) as store:
        _import(store, tmp_path, _run("r1", "Add OAuth2 login", output="verifier"))
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")  # an import in another process, say
    try:
        with Store.open(path) as store:
            # No index can be built: the task, id and spec id are searched as text.
            assert store.search("auth2 log") == ["r1"]
            assert store.search("verifier") == []
            assert not search_module.has_index(store.conn)
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    with Store.open(path) as store:
        assert store.search("verifier") == ["r1"]


def test_an_index_whose_rows_vanished_is_rebuilt(store: Store) -> None:
    assert store.search("webhook") == ["r3", "r1"]
    with store.conn:
        store.conn.execute("DELETE FROM runs WHERE id = 'r4'")  # an outside edit
    assert store.search("r4") == []
    assert store.search("webhook") == ["r3", "r1"]


def test_broad_queries_list_task_matches_first(
    store: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _import(
        store,
        tmp_path,
        _run("q1", "Tidy up", question="Which webhook?"),
        _run("o1", "Tidy up", output="webhook"),
    )
    monkeypatch.setattr(search_module, "RANK_LIMIT", 1)
    # Too many rows to rank: ids, specs and tasks first, then outputs, then questions.
    assert store.search("webhook") == ["r3", "o1", "r1", "q1"]


def test_match_expression_quotes_every_word() -> None:
    assert search_module.match_expression('say "hi" NEAR') == '"say" AND """hi""" AND "NEAR"*'
    assert search_module.match_expression("done ") == '"done"'
    assert search_module.match_expression(" \t") is None


# --- the runs screen's `/` search ----------------------------------------------------------


async def _until(pilot: Any, done: Any, seconds: float = 10.0) -> None:
    deadline = time.monotonic() + seconds
    while not done():
        assert time.monotonic() < deadline, "not within the time allowed"
        await pilot.pause(0.05)


@pytest.fixture
def app_db(tmp_path: Path) -> Path:
    path = tmp_path / "app.db"
    with Store.open(path, create=True) as store:
        _import(
            store,
            tmp_path,
            _run("r1", "Add OAuth2 login", output="Wrote the webhook verifier.", stage="plan"),
            _run("r2", "Fix the upload crash", question="Which storage bucket?", stage="plan"),
            _run("r3", "Webhook retries", output="Webhook webhook: backoff.", stage="implement"),
            _run("r4", "Document the CLI", spec_id="SPEC-KIT-042"),
        )
    return path


async def test_typing_a_word_only_in_an_agent_output_shows_its_run(
    app_db: Path, tmp_path: Path
) -> None:
    from ppp_tui.app.screens.runs import RunsScreen

    async with opened(app_db, tmp_path, (120, 30)) as (app, pilot):
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, RunsScreen)
        table = screen.table
        await pilot.press("slash", *"verif")  # as typed: "verif" is a prefix of "verifier"
        await _until(pilot, lambda: len(table.order) == 1)
        assert table.current_run() == "r1"
        assert "1 of 4 runs" in str(screen.query_one("#runs-status").render())
        # The most relevant first: r3 says webhook three times, r1 once.
        await pilot.press(*["backspace"] * 5, *"webhook")
        await _until(pilot, lambda: [table.rows.infos[i].id for i in table.order] == ["r3", "r1"])
        assert table.current_run() == "r3"
        # Combined with the stage menu.
        screen.query_one("#stage-filter", Select).value = "plan"
        await _until(pilot, lambda: [table.rows.infos[i].id for i in table.order] == ["r1"])
        screen.query_one("#stage-filter", Select).clear()
        await _until(pilot, lambda: len(table.order) == 2)
        # Syntax characters are only text; escape shows every run again.
        await pilot.press(*' "(*:-')
        await _until(pilot, lambda: len(table.order) == 0)
        await pilot.press("escape")
        await _until(pilot, lambda: len(table.order) == 4)


def test_a_demo_that_replaces_an_indexed_database_is_searched_afresh(tmp_path: Path) -> None:
    from ppp_tui.storage.demo import write_demo

    path = tmp_path / "runs.db"
    with Store.open(path, create=True) as store:
        _import(store, tmp_path, _run("r1", "Zeppelin parking", output="zeppelin"))
        assert store.search("zeppelin") == ["r1"]
        assert store.search_index_current()
    write_demo(path, 30, seed=3, replace=True)  # built beside, then renamed over it
    with Store.open(path) as store:
        assert store.search_index_current()  # made with the demo: its own runs only
        assert store.search("zeppelin") == []
        first = store.run_infos()[0]
        assert first.task is not None
        assert first.id in store.search(first.task)
        assert store.search(first.id) == [first.id]
        assert store.search_index_current()


def test_the_first_search_can_skip_indexing(store: Store) -> None:
    # Before the index exists, a search without building it matches by substring.
    assert not store.search_index_current()
    assert store.search("auth2", build=False) == ["r1"]
    assert store.search("verifier", build=False) == []
    assert store.search("verifier") == ["r1"]
    assert store.search("verifier", build=False) == ["r1"]


def test_reading_an_existing_database_does_not_import_sqlite_utils(store: Store) -> None:
    # sqlite-utils (and the numpy it imports) makes and migrates schemas and builds the
    # search index; `rank` and the app's first page open a current database without it.
    import subprocess
    import sys

    script = (
        "import sys; from pathlib import Path; from ppp_tui.storage.store import Store\n"
        "with Store.open(Path(sys.argv[1])) as s: s.get_run('r1'); s.run_infos()\n"
        "print('sqlite_utils' in sys.modules)"
    )
    result = subprocess.run(
        [sys.executable, "-c", script, str(store.path)], capture_output=True, text=True
    )
    assert result.stdout.split() == ["False"], result.stderr


def test_runs_search_lists_the_matches_most_relevant_first(store: Store) -> None:
    from click.testing import CliRunner

    from ppp_tui.cli import cli

    config = store.path.parent / "config.toml"
    config.write_text("", encoding="utf-8")  # the default settings

    def listed(*args: str) -> list[str]:
        result = CliRunner().invoke(
            cli,
            ["runs", *args, "--json", "--db", str(store.path)],
            env={"PPP_TUI_CONFIG": str(config)},
        )
        assert result.exit_code == 0, result.output
        return [row["id"] for row in json.loads(result.stdout)]

    assert listed("--search", "webhook") == ["r3", "r1"]
    assert listed("--search", "bucket") == ["r2"]
    assert listed("--search", '"(*') == []
    assert listed() == ["r1", "r2", "r3", "r4"]


# --- the first screenful, and stopping a search nobody waits for ---------------------------


def test_the_first_matches_begin_the_whole_answer(
    store: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _import(
        store,
        tmp_path,
        *(
            _run(f"t{k:02}", "Tidy webhook" if k % 3 == 0 else "Tidy up", output="webhook")
            for k in range(30)
        ),
        *(_run(f"q{k:02}", "Tidy up", question="Which webhook?") for k in range(10)),
    )
    for text in ("webhook", "web", "w", "tidy w", "zzz", "r4"):
        whole = store.search(text)
        first, complete = store.search_first(text, limit=5)
        # Few rows match: the whole answer, as quick to give (ranked).
        assert complete and first == whole, text
    # Too many rows to rank: the groups in turn, each by run id, whether a group's
    # first runs are found by walking the runs in id order (dense) or from its rows.
    monkeypatch.setattr(search_module, "RANK_LIMIT", 1)
    for dense in (0, 1_000):
        monkeypatch.setattr(search_module, "DENSE", dense)
        whole = store.search("webhook")
        assert whole[:3] == ["r3", "t00", "t03"]  # ids and tasks first
        assert whole[-10:] == [f"q{k:02}" for k in range(10)]  # questions last
        for limit in (1, 5, 12, 20, 40, 44, 100):
            first, complete = store.search_first("webhook", limit=limit)
            assert first == whole[:limit], (dense, limit)
            assert complete == (limit > len(whole)), (dense, limit)


def test_a_search_nobody_waits_for_stops(store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(search_module, "CHECK_EVERY", 1)  # these statements are short
    asked = []

    def cancelled() -> bool:
        asked.append(True)
        return len(asked) > 1  # wanted when it starts; typed past as it runs

    with pytest.raises(search_module.Cancelled):
        store.search("w", cancelled=cancelled)
    assert len(asked) > 1  # asked before it starts, then as SQLite runs it
    # The connection is as it was: the next search runs to its end.
    assert store.search("webhook", cancelled=lambda: False) == ["r3", "r1"]
    assert store.search("webhook") == ["r3", "r1"]


async def test_a_broad_search_shows_its_first_runs_then_all_of_them(
    app_db: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ppp_tui.app.screens.runs import RunsScreen

    monkeypatch.setattr(search_module, "RANK_LIMIT", 1)  # every search is a broad one
    monkeypatch.setattr(search_module, "PAGE", 1)  # a screenful of one run
    shown: list[tuple[str, list[str], bool]] = []
    show = RunsScreen._show_matches

    def spy(
        screen: RunsScreen, text: str, stage: str | None, found: list[str], complete: bool = True
    ) -> None:
        shown.append((text, list(found), complete))
        show(screen, text, stage, found, complete)

    monkeypatch.setattr(RunsScreen, "_show_matches", spy)
    async with opened(app_db, tmp_path, (120, 30)) as (app, pilot):
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, RunsScreen)
        table = screen.table
        await pilot.press("slash", *"webhook")
        await _until(pilot, lambda: [table.rows.infos[i].id for i in table.order] == ["r3", "r1"])
        await _until(pilot, lambda: "2 of 4 runs" in str(screen.query_one("#runs-status").render()))
    # The first run by itself first (its task matches), then both.
    assert ("webhook", ["r3"], False) in shown
    assert shown[-1] == ("webhook", ["r3", "r1"], True)
