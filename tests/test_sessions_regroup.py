"""Grouping runs read from sessions after the import, and ungrouping them: the command
line, what follows the agents (marks, their history, ratings by hand), what a later
import does with the grouping, and bad input."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from click.testing import Result
from helpers import run_cli
from judge_server import Messages, Server, effort_by_keyword, serving
from transcripts import TASK, claude_lines, codex_lines, write_lines

from ppp_tui.core.model import HAND
from ppp_tui.core.sessions.grouping import agent_names, keys_run_id
from ppp_tui.core.sessions.model import Session, SessionTurn, Tool
from ppp_tui.storage import demo as demo_module
from ppp_tui.storage.demo import write_demo
from ppp_tui.storage.store import Store

# A folder no longer on this machine: the sessions' repository is its name.
CWD = "/gone/ledger"
CODEX_TASK = "Please add a --json option to export."
GROUPED = keys_run_id(["claude-code:s1", "codex:c1"])


@pytest.fixture
def two_tools(tmp_path: Path) -> tuple[Path, Path, Path]:
    """One task done by Claude Code and by Codex CLI, asked in other words: import keeps
    them apart (two runs)."""
    claude = write_lines(
        tmp_path / "claude" / "s1.jsonl", claude_lines("s1", CWD, "claude-opus-4-5")
    )
    codex = write_lines(
        tmp_path / "codex" / "rollout-c1.jsonl", codex_lines("c1", CWD, prompt=CODEX_TASK)
    )
    return claude, codex, tmp_path / "runs.db"


@pytest.fixture
def imported(two_tools: tuple[Path, Path, Path]) -> tuple[Path, Path, Path, dict[str, str]]:
    """The two sessions imported: their files, the database and each session's run."""
    claude, codex, db = two_tools
    _import(db, claude, codex)
    return claude, codex, db, _runs(db)


def _import(db: Path, *files: Path) -> Result:
    result = run_cli("import", *map(str, files), "--db", str(db))
    assert result.exit_code == 0, result.output
    return result


def _runs(db: Path) -> dict[str, str]:
    """Each session's run, by session id."""
    found = {}
    with Store.open(db) as store:
        for info in store.run_infos():
            for agent in store.get_run(info.id).agents:
                found.update(dict.fromkeys(agent.sessions, info.id))
    return found


def _marks(db: Path, *marks: tuple[str, str, str, str]) -> None:
    """(run, agent, reviewer, time) marks, from a file as `prefer --file` reads it."""
    path = db.with_name("marks.csv")
    rows = "".join(f"{run},{agent},{who},{at}\n" for run, agent, who, at in marks)
    path.write_text(f"run_id,agent,reviewer,at\n{rows}", encoding="utf-8")
    result = run_cli("prefer", "--file", str(path), "--db", str(db))
    assert result.exit_code == 0, result.output


def _rate(db: Path, run: str, agent: str, technical: float) -> None:
    path = db.with_name("rating.csv")
    path.write_text(f"run_id,agent,technical\n{run},{agent},{technical}\n", encoding="utf-8")
    assert run_cli("technical", str(path), "--db", str(db)).exit_code == 0


def _grow(path: Path, session: str, prompt: str) -> None:
    """The Claude Code session went on: a second prompt, at 11:00."""
    lines = claude_lines(session, CWD, "claude-opus-4-5", start="2026-03-02T11:00")
    for line in lines:
        line["uuid"] += "-2"
        if line["type"] == "assistant":
            line["message"] = dict(line["message"], id=line["message"]["id"] + "-2")
    lines[0]["message"] = {"role": "user", "content": prompt}
    with path.open("a", encoding="utf-8") as handle:
        handle.writelines(json.dumps(line) + "\n" for line in lines)


def _contents(db: Path) -> list[str]:
    """Every row of the database, the search index's included."""
    conn = sqlite3.connect(db)
    try:
        return list(conn.iterdump())
    finally:
        conn.close()


def test_group_makes_one_run_and_marks_and_ratings_follow_the_agents(
    two_tools: tuple[Path, Path, Path],
) -> None:
    claude, codex, db = two_tools
    assert "2 new runs" in _import(db, claude, codex).stdout
    before = _runs(db)
    first, second = before["s1"], before["c1"]
    _marks(
        db,
        (first, "claude-code", "tester", "2026-03-03T09:00:00Z"),
        (second, "codex", "ana", "2026-03-03T09:05:00Z"),
    )
    _rate(db, second, "codex", 0.3)
    with Store.open(db) as store:
        assert store.search("json lines") == [first]  # the question Claude Code asked

    result = run_cli("group", first, second, "--db", str(db))
    assert result.exit_code == 0, result.output
    # The id import gives these two sessions as one run.
    assert result.stdout == f"grouped 2 runs into {GROUPED} (2 agents: claude-code, codex)\n"
    with Store.open(db) as store:
        assert [info.id for info in store.run_infos()] == [GROUPED]
        run = store.get_run(GROUPED)
        assert [a.name for a in run.agents] == ["claude-code", "codex"]
        # The run that started first gives the task and the start.
        assert run.task == TASK and run.created_at == "2026-03-02T10:00:00.000Z"
        assert store.current_marks(GROUPED) == {"ana": "codex", "tester": "claude-code"}
        assert [(m.agent, m.reviewer) for m in store.marks(GROUPED)] == [
            ("claude-code", "tester"),
            ("codex", "ana"),
        ]
        claude_agent, codex_agent = run.agents
        assert (codex_agent.technical, codex_agent.technical_source) == (0.3, HAND)
        assert claude_agent.technical_source == "pytest: 12 passed, 1 failed"
        assert claude_agent.trajectory is not None
        (question,) = claude_agent.trajectory.questions
        assert question.answer == "JSON Lines"
        # The index forgot the two runs and holds the new one, agents and questions too.
        for table in ("runs", "agents", "trajectory_questions"):
            store.conn.execute(f"INSERT INTO {table}_fts({table}_fts) VALUES ('integrity-check')")
        assert store.search("json lines") == [GROUPED]
        assert store.search(first) == [] and store.search(GROUPED) == [GROUPED]
    # The whole-database figures (packed scores) see one run of two agents.
    (listed,) = json.loads(run_cli("runs", "--json", "--db", str(db)).stdout)
    assert (listed["id"], listed["agents"], listed["preferred"]) == (GROUPED, 2, "claude-code")
    ranked = json.loads(run_cli("rank", GROUPED, "--json", "--db", str(db)).stdout)
    assert {a["name"]: a["technical"] for a in ranked["agents"]}["codex"] == 0.3


def test_import_keeps_the_grouping_and_updates_it_in_place(
    imported: tuple[Path, Path, Path, dict[str, str]], tmp_path: Path
) -> None:
    claude, codex, db, ids = imported
    _marks(db, (ids["c1"], "codex", "tester", "2026-03-03T09:00:00Z"))
    _rate(db, ids["c1"], "codex", 0.3)
    assert run_cli("group", ids["s1"], ids["c1"], "--db", str(db)).exit_code == 0

    again = _import(db, claude, codex)
    assert "0 new runs; 1 unchanged" in again.stdout
    # The Claude Code session went on: its agent is read again, inside the grouped run.
    _grow(claude, "s1", "Now document it in the README.")
    grown = _import(db, claude, codex)
    assert "0 new runs; 1 updated" in grown.stdout, grown.output
    with Store.open(db) as store:
        run = store.get_run(GROUPED)
        assert [info.id for info in store.run_infos()] == [GROUPED]
    claude_agent, codex_agent = run.agents
    assert claude_agent.trajectory is not None
    assert [t.prompt for t in claude_agent.trajectory.turns] == [
        TASK,
        "Now document it in the README.",
    ]
    assert (codex_agent.name, codex_agent.technical, codex_agent.technical_source) == (
        "codex",
        0.3,
        HAND,
    )
    assert run.preferred_agent == "codex"

    # A new session of the task of either run that was grouped joins the grouped run.
    later = write_lines(
        tmp_path / "codex" / "rollout-c2.jsonl",
        codex_lines("c2", CWD, start="2026-03-02T15:00", prompt=f" {CODEX_TASK}\n"),
    )
    joined = _import(db, claude, codex, later)
    assert "0 new runs; 1 updated; 1 unchanged" not in joined.stdout
    assert "0 new runs; 1 updated" in joined.stdout, joined.output
    with Store.open(db) as store:
        run = store.get_run(GROUPED)
    # The agents there keep their names; the new one is told apart by its model.
    assert [a.name for a in run.agents] == ["claude-code", "codex", "codex/gpt-5.1-codex"]
    assert _import(db, claude, codex, later).stdout.count("unchanged") == 1


def test_ungroup_gives_each_session_its_run_back_with_its_marks(
    imported: tuple[Path, Path, Path, dict[str, str]],
) -> None:
    claude, codex, db, ids = imported
    assert run_cli("group", ids["s1"], ids["c1"], "--db", str(db)).exit_code == 0
    _marks(
        db,
        (GROUPED, "claude-code", "tester", "2026-03-03T09:00:00Z"),
        (GROUPED, "codex", "tester", "2026-03-03T10:00:00Z"),
        (GROUPED, "claude-code", "ana", "2026-03-03T11:00:00Z"),
    )
    assert (
        run_cli("prefer", GROUPED, "--clear", "--reviewer", "ana", "--db", str(db)).exit_code == 0
    )
    _rate(db, GROUPED, "claude-code", 0.9)

    result = run_cli("ungroup", GROUPED, "--db", str(db))
    assert result.exit_code == 0, result.output
    assert result.stdout == (
        f"ungrouped {GROUPED} into 2 runs:\n  {ids['s1']}  claude-code\n  {ids['c1']}  codex\n"
    )
    with Store.open(db) as store:
        assert sorted(info.id for info in store.run_infos()) == sorted(ids.values())
        first, second = store.get_run(ids["s1"]), store.get_run(ids["c1"])
        assert (first.task, second.task) == (TASK, CODEX_TASK)
        assert store.current_marks(first.id) == {}
        assert store.current_marks(second.id) == {"tester": "codex"}
        # Each history entry went with its agent; ana's clearing with the mark it cleared.
        assert [(m.agent, m.reviewer) for m in store.marks(first.id)] == [
            ("claude-code", "tester"),
            ("claude-code", "ana"),
            (None, "ana"),
        ]
        assert [(m.agent, m.reviewer) for m in store.marks(second.id)] == [("codex", "tester")]
        assert (first.agents[0].technical, first.agents[0].technical_source) == (0.9, HAND)
        assert store.search("json lines") == [first.id]
        assert store.search(GROUPED) == []
    # Each session is found in its run again: nothing new, nothing regrouped.
    assert "0 new runs; 2 unchanged" in _import(db, claude, codex).stdout


def test_a_name_is_kept_and_a_reviewer_keeps_the_latest_of_two_marks(
    imported: tuple[Path, Path, Path, dict[str, str]],
) -> None:
    claude, codex, db, ids = imported
    _marks(
        db,
        (ids["s1"], "claude-code", "tester", "2026-03-03T12:00:00Z"),
        (ids["c1"], "codex", "tester", "2026-03-03T09:00:00Z"),
    )
    result = run_cli("group", ids["c1"], ids["s1"], "--name", "json-flag", "--db", str(db))
    assert result.exit_code == 0, result.output
    assert "note: tester had marked more than one of these runs" in result.stdout
    with Store.open(db) as store:
        assert [info.id for info in store.run_infos()] == ["json-flag"]
        assert store.current_marks("json-flag") == {"tester": "claude-code"}
        assert [m.agent for m in store.marks("json-flag")] == ["codex", "claude-code"]
        assert store.search("json-flag") == ["json-flag"]
    # Named after one of the runs: that id stays, with the first run's task.
    assert run_cli("ungroup", "json-flag", "--db", str(db)).exit_code == 0
    ids = _runs(db)
    named = run_cli("group", ids["s1"], ids["c1"], "--name", ids["c1"], "--db", str(db))
    assert named.exit_code == 0, named.output
    with Store.open(db) as store:
        assert [info.id for info in store.run_infos()] == [ids["c1"]]
        assert store.get_run(ids["c1"]).task == TASK
        assert store.search("export json") == [ids["c1"]]
        assert store.search(ids["s1"]) == []
    assert "0 new runs; 1 unchanged" in _import(db, claude, codex).stdout


def test_two_agents_of_one_tool_are_told_apart_by_model_or_start(
    tmp_path: Path, utc_clock: None
) -> None:
    db = tmp_path / "runs.db"
    same = [
        write_lines(tmp_path / f"{sid}.jsonl", claude_lines(sid, CWD, "claude-opus-4-5", start, p))
        for sid, start, p in (
            ("s1", "2026-03-02T10:00", TASK),
            ("s2", "2026-03-02T13:07", CODEX_TASK),
        )
    ]
    _import(db, *same)
    ids = _runs(db)
    _marks(db, (ids["s2"], "claude-code", "tester", "2026-03-03T09:00:00Z"))
    assert run_cli("group", ids["s1"], ids["s2"], "--db", str(db)).exit_code == 0
    grouped = keys_run_id(["claude-code:s1", "claude-code:s2"])
    with Store.open(db) as store:
        run = store.get_run(grouped)
        assert [a.name for a in run.agents] == [
            "claude-code@03-02 10:00",
            "claude-code@03-02 13:07",
        ]
        # The mark follows its agent under the new name.
        assert store.current_marks(grouped) == {"tester": "claude-code@03-02 13:07"}
    # Names stay as given when a session grows.
    _grow(same[0], "s1", "Now document it in the README.")
    assert "1 updated" in _import(db, *same).stdout
    with Store.open(db) as store:
        assert [a.name for a in store.get_run(grouped).agents] == [
            "claude-code@03-02 10:00",
            "claude-code@03-02 13:07",
        ]
    assert run_cli("ungroup", grouped, "--db", str(db)).exit_code == 0
    with Store.open(db) as store:
        assert store.current_marks(ids["s2"]) == {"tester": "claude-code"}

    other = tmp_path / "models.db"
    sonnet = write_lines(
        tmp_path / "s3.jsonl",
        claude_lines("s3", CWD, "claude-sonnet-4-5", "2026-03-02T13:00", CODEX_TASK),
    )
    _import(other, same[0], sonnet)
    ids = _runs(other)
    assert run_cli("group", ids["s1"], ids["s3"], "--db", str(other)).exit_code == 0
    with Store.open(other) as store:
        (info,) = store.run_infos()
        assert [a.name for a in store.get_run(info.id).agents] == [
            "claude-code/claude-opus-4-5",
            "claude-code/claude-sonnet-4-5",
        ]


def _session(
    sid: str, started: str | None, models: tuple[str, ...] = ("claude-opus-4-5",)
) -> Session:
    return Session(
        Tool.CLAUDE_CODE,
        sid,
        f"{sid}.jsonl",
        started,
        models=list(models),
        turns=[SessionTurn(TASK)],
    )


def test_names_carry_the_start_in_local_time(monkeypatch: pytest.MonkeyPatch) -> None:
    import time

    monkeypatch.setenv("TZ", "JST-9")
    time.tzset()
    try:
        sessions = [
            _session("a", "2026-03-02T10:00:00Z"),
            _session("b", "2026-03-02T10:00:30Z"),  # the same minute: a number
            _session("c", "2026-03-02T23:30:00Z"),
            _session("d", None),
        ]
        assert agent_names(sessions) == [
            "claude-code@03-02 19:00",
            "claude-code#2",
            "claude-code@03-03 08:30",
            "claude-code#3",
        ]
    finally:
        monkeypatch.undo()
        time.tzset()


def test_bad_input_is_one_line_and_changes_nothing(
    two_tools: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    claude, codex, db = two_tools
    _import(db, claude, codex)
    plain = tmp_path / "plain.jsonl"
    plain.write_text('{"id": "plain", "agents": [{"name": "a", "technical_score": 1}]}\n')
    assert run_cli("import", str(plain), "--db", str(db)).exit_code == 0
    ids = _runs(db)
    first, second = ids["s1"], ids["c1"]
    contents = _contents(db)
    cases = [
        (("group", first, "nope"), 1, "unknown run id 'nope'"),
        (("group", first), 2, "give two runs or more to group"),
        (("group", first, first), 2, "give two runs or more to group"),
        (
            ("group", first, "plain"),
            1,
            "run 'plain' was not read from agents' sessions: only such runs can be grouped",
        ),
        (
            ("group", first, second, "--name", "plain"),
            1,
            "run 'plain' exists already: choose another name",
        ),
        (("group", first, second, "--name", " "), 1, "a run's name cannot be empty"),
        (("ungroup", first), 1, f"run {first!r} holds one session: there is nothing to ungroup"),
        (("ungroup", "nope"), 1, "unknown run id 'nope'"),
        (("ungroup", "plain"), 1, "run 'plain' was not read from agents' sessions"),
    ]
    for args, code, message in cases:
        result = run_cli(*args, "--db", str(db))
        assert result.exit_code == code, (args, result.output)
        assert message in result.stderr, (args, result.stderr)
        # One line; a usage error has click's usage lines above it.
        assert result.stderr.count("\n") == (4 if code == 2 else 1), args
        assert not result.stdout, args
        assert _contents(db) == contents, args
    missing = run_cli("group", first, second, "--db", str(tmp_path / "none.db"))
    assert missing.exit_code == 1 and not (tmp_path / "none.db").exists()


def test_demo_runs_read_from_sessions_group_and_ungroup(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setattr(demo_module, "DEMO_SIZE", 20)
    first = run_cli("ungroup", "nope", "--demo")
    assert first.exit_code == 1 and "generating 20 demo runs" in first.stderr
    demo = tmp_path / "cache" / "ppp-tui" / "demo.db"
    with Store.open(demo) as store:
        rows = store.conn.execute("SELECT id FROM runs WHERE revision IS NOT NULL ORDER BY id")
        sessions = [row[0] for row in rows]
        agents = {rid: [a.name for a in store.get_run(rid).agents] for rid in sessions}
    assert len(sessions) == demo_module.SESSION_RUNS
    grouped = run_cli("group", *sessions[:2], "--demo")
    assert grouped.exit_code == 0, grouped.output
    assert "generating" not in grouped.stderr  # the same demo, reused quietly
    new = grouped.stdout.split(" into ")[1].split(" ")[0]
    with Store.open(demo) as store:
        assert store.count() == 20 + demo_module.SESSION_RUNS - 1
        names = [a.name for a in store.get_run(new).agents]
    assert len(names) == len(agents[sessions[0]]) + len(agents[sessions[1]])
    assert len(set(names)) == len(names)
    # Ungrouped, each session is a run of its own.
    assert run_cli("ungroup", new, "--demo").exit_code == 0
    with Store.open(demo) as store:
        rows = store.conn.execute("SELECT id FROM runs WHERE revision IS NOT NULL")
        assert len(list(rows)) == len(names) + 1
        assert store.count() == 20 + len(names) + 1


def _judged(messages: Messages) -> str:
    """The judge's answer: an effort for a question, else a technical score."""
    if "Question the agent asked:" in messages[-1]["content"]:
        return effort_by_keyword(messages)
    return "0.8"


def test_what_a_judge_gave_follows_the_agents(tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    write_demo(db, 12, seed=5, sessions=True)
    config = tmp_path / "config.toml"
    with serving(Server(answer=_judged)) as server:
        config.write_text(
            f'[ppp.judge]\nbase_url = "{server.base_url}"\nmodel = "judge-model"\n',
            encoding="utf-8",
        )
        judged = run_cli("judge", "--technical", "--db", str(db), "--config", str(config))
        assert judged.exit_code == 0, judged.output
    query = (
        "SELECT a.id, a.technical, a.technical_source, a.judged_model, q.id, q.effort,"
        " q.source, q.judged_model FROM agents AS a JOIN runs ON runs.id = a.run_id"
        " LEFT JOIN trajectory_questions AS q ON q.trajectory_id = a.id"
        " WHERE runs.revision IS NOT NULL ORDER BY a.id, q.id"
    )
    with Store.open(db) as store:
        before = store.conn.execute(query).fetchall()
        sessions = [
            r[0] for r in store.conn.execute("SELECT id FROM runs WHERE revision IS NOT NULL")
        ]
    assert any(row[2] == "judged" and row[3] == "judge-model" for row in before)
    assert any(row[6] == "judged" and row[7] == "judge-model" for row in before)
    assert run_cli("group", *sessions, "--db", str(db)).exit_code == 0
    with Store.open(db) as store:
        assert store.conn.execute(query).fetchall() == before
