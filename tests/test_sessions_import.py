"""Sessions into runs: grouping, stable ids, re-imports that update, and what users see.

The transcripts here are written line by line the way each agent writes its own (the
readers' own tests hold the full fixtures, under tests/data/sessions/).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from transcripts import TASK
from transcripts import claude_lines as _claude_lines
from transcripts import write_lines as _write

from ppp_tui.cli import cli
from ppp_tui.core.sessions.agents import selection_text, session_agent
from ppp_tui.core.sessions.grouping import READING, Grouping, agent_names, group, run_id
from ppp_tui.core.sessions.model import Ask, Session, SessionTurn, Step, StepKind, TestRun, Tool
from ppp_tui.storage.sessions.discover import (
    default_places,
    normalise_remote,
    recognise,
    repository_of,
)
from ppp_tui.storage.store import Store

DATA = Path(__file__).parent / "data" / "sessions"


def _run(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args))


def _repository(root: Path) -> tuple[Path, Path]:
    """A git repository with an origin remote and a worktree of it, as git lays them out."""
    main = root / "ledger"
    (main / ".git" / "worktrees" / "ledger-json").mkdir(parents=True)
    (main / ".git" / "config").write_text(
        '[core]\n\tbare = false\n[remote "origin"]\n\turl = git@github.com:acme/Ledger.git\n'
        "\tfetch = +refs/heads/*:refs/remotes/origin/*\n",
        encoding="utf-8",
    )
    worktree = root / "ledger-json"
    worktree.mkdir()
    gitdir = main / ".git" / "worktrees" / "ledger-json"
    (worktree / ".git").write_text(f"gitdir: {gitdir}\n", encoding="utf-8")
    (gitdir / "commondir").write_text("../..\n", encoding="utf-8")
    return main, worktree


@pytest.fixture
def two_sessions(tmp_path: Path) -> tuple[Path, Path, Path]:
    """Two Claude Code sessions of one task, in a repository and in a worktree of it."""
    main, worktree = _repository(tmp_path / "src")
    first = _write(
        tmp_path / "projects" / "a" / "s1.jsonl",
        _claude_lines("s1", str(main), "claude-opus-4-5"),
    )
    second = _write(
        tmp_path / "projects" / "b" / "s2.jsonl",
        _claude_lines(
            "s2",
            str(worktree / "src"),
            "claude-sonnet-4-5",
            start="2026-03-02T13:00",
            prompt=f"  {TASK}\n",
            tests="===== 13 passed in 0.41s =====",
        ),
    )
    return first, second, tmp_path / "runs.db"


def test_a_repository_is_its_remote_and_worktrees_share_it(tmp_path: Path) -> None:
    main, worktree = _repository(tmp_path)
    assert repository_of(str(main)) == "github.com/acme/ledger"
    assert repository_of(str(worktree / "deep" / "folder")) == "github.com/acme/ledger"
    # A folder no longer on this machine stands for itself by its name.
    assert repository_of("/nowhere/at/all/shop-api") == "shop-api"
    assert normalise_remote("https://user@GitHub.com/acme/ledger.git/") == "github.com/acme/ledger"


def test_two_sessions_of_one_task_in_two_worktrees_are_one_run(
    two_sessions: tuple[Path, Path, Path],
) -> None:
    first, second, db = two_sessions
    result = _run("import", str(first), str(second), "--db", str(db))
    assert result.exit_code == 0, result.output
    assert "imported 2 sessions" in result.stdout and "1 new run;" in result.stdout
    with Store.open(db) as store:
        (info,) = store.run_infos()
        run = store.get_run(info.id)
    assert run.id == run_id([_session("s1"), _session("s2")])
    assert run.task == TASK
    # Two sessions of one tool: each named after its model.
    assert [a.name for a in run.agents] == [
        "claude-code/claude-opus-4-5",
        "claude-code/claude-sonnet-4-5",
    ]
    assert [a.technical_source for a in run.agents] == [
        "pytest: 12 passed, 1 failed",
        "pytest: 13 passed, 0 failed",
    ]
    assert run.agents[0].technical == pytest.approx(12 / 13)
    (question,) = run.agents[0].trajectory.questions  # type: ignore[union-attr]
    assert (question.answer, question.seconds_to_answer, question.options) == (
        "JSON Lines",
        20.0,
        ("One document", "JSON Lines"),
    )


def _imported_and_marked(first: Path, second: Path, db: Path) -> str:
    """The two sessions imported into `db` (one run) and the run marked: its id."""
    assert _run("import", str(first), str(second), "--db", str(db)).exit_code == 0
    with Store.open(db) as store:
        rid = store.run_infos()[0].id
    assert _run("prefer", rid, "claude-code/claude-sonnet-4-5", "--db", str(db)).exit_code == 0
    return rid


def test_importing_again_adds_nothing_and_a_grown_session_updates_its_run(
    two_sessions: tuple[Path, Path, Path],
) -> None:
    first, second, db = two_sessions
    rid = _imported_and_marked(first, second, db)
    rating = first.parent / "rating.csv"
    rating.write_text(f"run_id,agent,technical\n{rid},claude-code/claude-opus-4-5,0.4\n")
    assert _run("technical", str(rating), "--db", str(db)).exit_code == 0

    again = _run("import", str(first), str(second), "--db", str(db), "--stage", "implement")
    assert "0 new runs; 1 unchanged" in again.stdout
    with Store.open(db) as store:
        assert store.get_run(rid).stage == "implement"  # the stage given is set
    with Store.open(db) as store:
        assert store.search("json lines") == [rid]  # the full-text index is built

    # The first session went on: a second prompt, and a test run that now passes.
    lines = _claude_lines("s1", "/x", "claude-opus-4-5", start="2026-03-02T11:00")
    asked = "Should the README show a jq example?"
    text = json.dumps(lines).replace("Should --json print one document or JSON Lines?", asked)
    follow_up = [dict(line, uuid=f"{line['uuid']}-2") for line in json.loads(text)]
    follow_up[0]["message"] = {"role": "user", "content": "Now document it in the README."}
    for line in follow_up:
        if line["type"] == "assistant":
            line["message"] = dict(line["message"], id=line["message"]["id"] + "-2")
    with first.open("a", encoding="utf-8") as handle:
        handle.writelines(json.dumps(line) + "\n" for line in follow_up)
    grown = _run("import", str(first), str(second), "--db", str(db))
    assert "0 new runs; 1 updated" in grown.stdout, grown.output
    with Store.open(db) as store:
        run = store.get_run(rid)
        marks = store.marks(rid)
    opus = run.agent("claude-code/claude-opus-4-5")
    assert opus is not None and opus.trajectory is not None
    assert [t.prompt for t in opus.trajectory.turns] == [TASK, "Now document it in the README."]
    # The mark and its history, and the rating by hand, outlive the update.
    assert run.preferred_agent == "claude-code/claude-sonnet-4-5"
    assert [m.agent for m in marks] == ["claude-code/claude-sonnet-4-5"]
    assert (opus.technical, opus.technical_source) == (0.4, "hand")
    # The replaced rows left the full-text index with the rows that replaced them.
    with Store.open(db) as store:
        for table in ("runs", "agents", "trajectory_questions"):
            store.conn.execute(f"INSERT INTO {table}_fts({table}_fts) VALUES ('integrity-check')")
        assert store.search("json lines") == [rid]
        assert store.search("jq example") == [rid]
        assert store.search("ledger") == []


def test_runs_read_under_older_rules_are_read_again(
    two_sessions: tuple[Path, Path, Path],
) -> None:
    first, second, db = two_sessions
    rid = _imported_and_marked(first, second, db)
    with Store.open(db) as store:
        # As an older version wrote it: no rules version, and a question found in text
        # that the agent wrote before a tool call.
        (text,) = store.conn.execute("SELECT revision FROM runs WHERE id = ?", (rid,)).fetchone()
        old = json.loads(text)
        del old["reading"]
        store.conn.execute("UPDATE runs SET revision = ? WHERE id = ?", (json.dumps(old), rid))
        store.conn.execute(
            "UPDATE trajectory_questions SET text = 'Where is it defined?'"
            " WHERE asked_with = 'tool'"
        )
        store.conn.commit()
    again = _run("import", str(first), str(second), "--db", str(db))
    assert "0 new runs; 1 updated" in again.stdout, again.output
    with Store.open(db) as store:
        run = store.get_run(rid)
        (text,) = store.conn.execute("SELECT revision FROM runs WHERE id = ?", (rid,)).fetchone()
    assert json.loads(text)["reading"] == READING
    texts = {q.text for a in run.agents if a.trajectory for q in a.trajectory.questions}
    assert "Where is it defined?" not in texts
    assert "Should --json print one document or JSON Lines?" in texts
    assert run.preferred_agent == "claude-code/claude-sonnet-4-5"  # the mark stays
    # Read under the current rules, the same sessions are unchanged.
    assert "1 unchanged" in _run("import", str(first), str(second), "--db", str(db)).stdout


def test_grouping_can_be_turned_off_forced_or_narrowed(
    two_sessions: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    first, second, db = two_sessions
    apart = _run("import", str(first), str(second), "--db", str(db), "--one-run-per-session")
    assert "2 new runs" in apart.stdout
    narrow = tmp_path / "narrow.db"
    # Three hours apart: a one-hour window keeps them apart too.
    assert (
        "2 new runs"
        in _run("import", str(first), str(second), "--db", str(narrow), "--window", "1").stdout
    )
    named = tmp_path / "named.db"
    result = _run(
        "import",
        str(first),
        str(second),
        "--db",
        str(named),
        "--run",
        "json-flag",
        "--stage",
        "implement",
    )
    assert result.exit_code == 0, result.output
    with Store.open(named) as store:
        run = store.get_run("json-flag")
    assert run.stage == "implement" and len(run.agents) == 2


def test_run_moves_sessions_out_of_the_runs_they_were_in(
    two_sessions: tuple[Path, Path, Path],
) -> None:
    first, second, db = two_sessions
    assert (
        "2 new runs"
        in _run("import", str(first), str(second), "--db", str(db), "--one-run-per-session").stdout
    )
    with Store.open(db) as store:
        old = [info.id for info in store.run_infos()]
    with Store.open(db) as store:
        first_run = next(i for i in old if store.get_run(i).agents[0].sessions == ("s1",))
    assert _run("prefer", first_run, "claude-code", "--db", str(db)).exit_code == 0
    rating = first.parent / "rating.csv"
    rating.write_text(f"run_id,agent,technical\n{first_run},claude-code,0.3\n")
    assert _run("technical", str(rating), "--db", str(db)).exit_code == 0
    moved = _run("import", str(first), "--db", str(db), "--run", "json-flag")
    assert "1 new run; 1 left with no session and removed" in moved.stdout, moved.output
    # The moved session's mark, its history and its rating by hand come with it.
    with Store.open(db) as store:
        run = store.get_run("json-flag")
        assert run.preferred_agent == "claude-code"
        assert [m.agent for m in store.marks("json-flag")] == ["claude-code"]
        assert (run.agents[0].technical, run.agents[0].technical_source) == (0.3, "hand")
    both = _run("import", str(first), str(second), "--db", str(db), "--run", "json-flag")
    assert "0 new runs; 1 updated; 1 left with no session and removed" in both.stdout
    with Store.open(db) as store:
        assert [info.id for info in store.run_infos()] == ["json-flag"]
        assert len(store.get_run("json-flag").agents) == 2
    # Importing again finds each session in its new run.
    assert (
        "0 new runs; 1 unchanged" in _run("import", str(first), str(second), "--db", str(db)).stdout
    )
    empty = _run("import", str(first), "--db", str(db), "--run", " ")
    assert empty.exit_code == 1 and "--run: a run's name cannot be empty" in empty.stderr


def test_a_folder_is_every_session_under_it_and_odd_files_are_one_line_each(
    two_sessions: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    first, _, db = two_sessions
    (first.parent / "notes.json").write_text('{"hello": "world"}', encoding="utf-8")
    (first.parent / "agent-1.meta.json").write_text('{"agentType": "x"}', encoding="utf-8")
    result = _run("import", str(tmp_path / "projects"), "--db", str(db))
    assert result.exit_code == 0, result.output
    assert "notes.json: not a session transcript (skipped)" in result.stderr
    assert "meta.json" not in result.stderr  # sidecars are no transcripts: not even looked at
    assert "imported 2 sessions" in result.stdout
    # Named on the command line, a file that is none of the formats is an error, and the
    # others still import.
    other = tmp_path / "other.db"
    named = _run("import", str(first), str(first.parent / "agent-1.meta.json"), "--db", str(other))
    assert named.exit_code == 1
    assert "agent-1.meta.json: a sub-agent's metadata file, not a transcript" in named.stderr
    assert "imported 1 session" in named.stdout


def test_forcing_a_format_on_a_file_of_another_is_one_line(tmp_path: Path) -> None:
    text = tmp_path / "runs.jsonl"
    text.write_text('{"agents": [{"name": "a", "technical_score": 1}]}\n', encoding="utf-8")
    result = _run("import", "--format", "codex", str(text), "--db", str(tmp_path / "r.db"))
    assert result.exit_code == 1
    assert result.stderr.count("\n") <= 3 and "Traceback" not in result.output
    assert not (tmp_path / "r.db").exists()  # nothing to write: no database made


def test_run_files_and_sessions_are_imported_by_separate_commands(
    two_sessions: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    first, _, db = two_sessions
    runs = tmp_path / "runs.jsonl"
    runs.write_text('{"agents": [{"name": "a", "technical_score": 1}]}\n', encoding="utf-8")
    result = _run("import", str(first), str(runs), "--db", str(db))
    assert result.exit_code == 1
    assert "runs.jsonl: not a session transcript" in result.stderr
    assert not db.exists()


def test_agents_looks_in_the_three_default_places(
    two_sessions: tuple[Path, Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, _, db = two_sessions
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path))  # holds projects/
    monkeypatch.delenv("CODEX_HOME", raising=False)
    monkeypatch.delenv("GEMINI_CLI_HOME", raising=False)
    places = default_places()
    assert places[Tool.CODEX] == tmp_path / "home" / ".codex" / "sessions"
    result = _run("import", "--agents", "--db", str(db))
    assert result.exit_code == 0, result.output
    assert f"claude-code: 2 files in {tmp_path / 'projects'}" in result.stderr
    assert f"codex: nothing at {tmp_path / 'home' / '.codex' / 'sessions'}" in result.stderr
    assert "imported 2 sessions" in result.stdout
    # With nothing in any of the three places: the error alone, and no database made.
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "nowhere"))
    empty = _run("import", "--agents", "--db", str(tmp_path / "empty.db"))
    assert empty.exit_code == 1
    assert empty.stdout == ""
    assert empty.stderr.endswith("error: no session transcripts found\n")
    assert not (tmp_path / "empty.db").exists()


def test_show_prints_each_question_with_its_answer(
    two_sessions: tuple[Path, Path, Path],
) -> None:
    first, second, db = two_sessions
    _run("import", str(first), str(second), "--db", str(db))
    with Store.open(db) as store:
        rid = store.run_infos()[0].id
    document = json.loads(_run("show", rid, "--json", "--db", str(db)).stdout)
    opus = document["agents"][0]
    assert opus["models"] == ["claude-opus-4-5"] and opus["sessions"] == ["s1"]
    assert opus["technical_source"] == "pytest: 12 passed, 1 failed"
    assert opus["questions"] == [
        {
            "text": "Should --json print one document or JSON Lines?",
            "effort": "low",
            "effort_source": "classified",
            "judged_model": None,
            "asked_with": "tool",
            "options": ["One document", "JSON Lines"],
            "answer": "JSON Lines",
            "dismissed": False,
            "seconds_to_answer": 20.0,
            "turn": 1,
        }
    ]
    text = _run("show", rid, "--db", str(db)).stdout
    assert "technical: 0.923 (pytest: 12 passed, 1 failed)" in text
    assert "options: One document | JSON Lines" in text
    assert "JSON Lines · 20 s" in text
    unknown = _run("show", "no-such-run", "--db", str(db))
    assert unknown.exit_code == 1 and "unknown run id 'no-such-run'" in unknown.stderr


# -- the pure steps ------------------------------------------------------------------


def _session(
    sid: str,
    tool: Tool = Tool.CLAUDE_CODE,
    prompt: str = TASK,
    started: str | None = "2026-03-02T10:00:00Z",
    models: tuple[str, ...] = ("claude-opus-4-5",),
    tests: TestRun | None = None,
) -> Session:
    return Session(
        tool=tool,
        id=sid,
        path=f"{sid}.jsonl",
        started=started,
        repository="github.com/acme/ledger",
        models=list(models),
        turns=[SessionTurn(prompt, started)],
        tests=tests,
    )


def test_sessions_group_by_prompt_repository_and_window() -> None:
    a = _session("a")
    b = _session("b", Tool.CODEX, prompt=TASK.replace(" ", "  "), started="2026-03-02T20:00:00Z")
    late = _session("c", Tool.GEMINI_CLI, started="2026-03-04T10:00:00Z")
    other = _session("d", prompt="Fix the flaky upload test.")

    def repository(session: Session) -> str | None:
        return session.repository

    groups = group([late, other, b, a], repository, Grouping())
    assert [[s.id for s in members] for members in groups] == [["a", "b"], ["d"], ["c"]]
    assert len(group([a, b], repository, Grouping(window_hours=2))) == 2
    assert [[s.id for s in m] for m in group([b, a], repository, Grouping(run="x"))] == [["a", "b"]]


def test_names_are_the_tools_and_two_of_one_tool_take_their_models(utc_clock: None) -> None:
    sessions = [
        _session("a"),
        _session("b", models=("claude-sonnet-4-5",)),
        _session("c", models=("claude-sonnet-4-5",), started="2026-03-02T13:05:00Z"),
        _session("d", Tool.CODEX, models=()),
    ]
    # Two of one model: their starts tell them apart.
    assert agent_names(sessions) == [
        "claude-code/claude-opus-4-5",
        "claude-code@03-02 10:00",
        "claude-code@03-02 13:05",
        "codex",
    ]
    # A name another agent of the run holds stays with it, and the tool's name alone
    # is for the only agent of a tool.
    assert agent_names([_session("e", Tool.CODEX)], taken=["codex"]) == ["codex/claude-opus-4-5"]
    assert agent_names([_session("f", Tool.CODEX)], taken=["codex/gpt-5"]) == [
        "codex/claude-opus-4-5"
    ]


def test_a_session_is_an_agent_with_tool_asks_and_text_questions() -> None:
    session = _session("a", tests=TestRun(41, 2, "pytest: 41 passed, 2 failed"))
    session.turns[0].steps = [
        Step(StepKind.THINKING, "Should I ask which database? They said Postgres."),
        Step(StepKind.TOOL, "Read: app/db.py"),
        Step(StepKind.ASK, "Which schema should the new table go in?"),
        Step(StepKind.TEXT, "Done. Do you want me to add a migration test as well?"),
    ]
    session.turns[0].asks = [
        Ask(
            "Which schema should the new table go in?",
            ["public", "billing"],
            dismissed=True,
            seconds=8.5,
        )
    ]
    agent = session_agent(session, "claude-code", TASK)
    assert agent.technical == pytest.approx(41 / 43)
    assert agent.trajectory is not None
    (turn,) = agent.trajectory.turns
    assert turn.response == "Done. Do you want me to add a migration test as well?"
    assert turn.steps[0] == ("thinking", "Should I ask which database? They said Postgres.")
    asked, written = agent.trajectory.questions
    # Thinking is never read for questions; the tool's ask and the text's question are.
    assert (asked.asked_with.value, asked.dismissed, asked.seconds_to_answer) == ("tool", True, 8.5)
    assert (written.asked_with.value, written.text) == (
        "text",
        "Do you want me to add a migration test as well?",
    )
    unscored = session_agent(_session("b"), "codex", TASK)
    assert (unscored.technical_source, unscored.unscored) == ("unscored", True)


def test_a_question_with_options_is_read_as_a_selection() -> None:
    question = "Where should the generated diagrams go?"
    assert selection_text(question, ["docs/architecture/", "docs/generated/"]) == (
        "Where should the generated diagrams go (A or B)?"
    )
    from ppp_tui.core.effort import classify_effort

    assert classify_effort(question).value == "medium"
    assert classify_effort(selection_text(question, ["a", "b", "c"])).value == "low"


def test_content_not_names_tells_the_formats_apart() -> None:
    assert (
        recognise(b'{"timestamp":"t","type":"session_meta","payload":{"id":"x"}}\n') is Tool.CODEX
    )
    assert recognise(b'{"sessionId":"s","projectHash":"h","kind":"main"}\n') is Tool.GEMINI_CLI
    assert (
        recognise(b'[\n  {\n    "role": "user",\n    "parts": [{"text": "hi"}]') is Tool.GEMINI_CLI
    )
    assert (
        recognise(b'{"type":"user","sessionId":"s","message":{"content":"hi"}}\n')
        is Tool.CLAUDE_CODE
    )
    assert recognise(b'{"id": "run-1", "agents": []}\n') is None
    assert recognise(b"# not json") is None


def test_an_unscored_agent_shows_no_number_and_ranks_as_configured(tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    lines = _claude_lines("s1", "/gone/ledger", "claude-opus-4-5", tests="no tests here")
    codex_file = tmp_path / "codex.jsonl"
    _write(
        codex_file,
        [
            {
                "timestamp": "2026-03-02T10:01:00Z",
                "type": "session_meta",
                "payload": {
                    "id": "c1",
                    "timestamp": "2026-03-02T10:01:00Z",
                    "cwd": "/gone/ledger",
                    "originator": "codex_cli_rs",
                    "cli_version": "0.60.0",
                },
            },
            {
                "timestamp": "2026-03-02T10:01:01Z",
                "type": "turn_context",
                "payload": {"cwd": "/gone/ledger", "model": "gpt-5.1-codex"},
            },
            {
                "timestamp": "2026-03-02T10:01:02Z",
                "type": "response_item",
                "payload": {
                    "type": "message",
                    "role": "user",
                    "content": [{"type": "input_text", "text": TASK}],
                },
            },
            {
                "timestamp": "2026-03-02T10:01:30Z",
                "type": "response_item",
                "payload": {
                    "type": "message",
                    "role": "assistant",
                    "content": [{"type": "output_text", "text": "Done."}],
                },
            },
        ],
    )
    claude_file = _write(tmp_path / "claude.jsonl", lines)
    assert _run("import", str(claude_file), str(codex_file), "--db", str(db)).exit_code == 0
    with Store.open(db) as store:
        rid = store.run_infos()[0].id
    ranked = json.loads(_run("rank", rid, "--json", "--db", str(db)).stdout)
    by_name = {a["name"]: a for a in ranked["agents"]}
    assert by_name["codex"]["technical"] is None
    assert by_name["codex"]["technical_source"] == "unscored"
    # codex asked nothing (+0.05), claude-code asked a low-effort question (+0.05): with
    # both unscored at 0.5 they tie on the final and the name decides.
    assert [a["name"] for a in ranked["agents"]] == ["claude-code", "codex"]
    table = _run("rank", rid, "--db", str(db)).stdout
    assert "unscored" in table and "0.500" not in table
    config = tmp_path / "config.toml"
    config.write_text("[ppp]\nunscored_technical = 0.0\n", encoding="utf-8")
    export = json.loads(
        _run("export", "--format", "json", "--db", str(db), "--config", str(config)).stdout
    )
    assert [row["technical"] for row in export] == [None, None]
    bad = tmp_path / "bad.toml"
    bad.write_text("[ppp]\nunscored_technical = 2\n", encoding="utf-8")
    refused = _run("rank", rid, "--db", str(db), "--config", str(bad))
    assert refused.exit_code == 1
    assert "ppp.unscored_technical: expected a number in [0, 1], got 2" in refused.stderr
