"""The Claude Code transcript reader, on fixtures written the way Claude Code writes them.

`tests/data/sessions/claude-code/` holds an invented session (`3f2a9c1e-....jsonl`:
several lines per message.id, a line written twice, tool results with toolUseResult,
asks answered / free-text / multi-select / dismissed / malformed / pending, sidechain
lines, a local and an answered slash command, a compaction, a line that is not JSON, an
unknown line type, a last line still being written), an old-style sub-agent file beside
it (`agent-7c1e9a2b.jsonl`) and a new-style one (`<session>/subagents/agent-*.jsonl` with
its `.meta.json`). Bad shapes are written to temporary files.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ppp_tui.core.sessions.model import (
    Ask,
    Session,
    SessionError,
    SessionWarnings,
    StepKind,
    Tool,
)
from ppp_tui.storage.sessions.claude_code import read_claude_code

DATA = Path(__file__).parent / "data" / "sessions" / "claude-code"
SID = "3f2a9c1e-5b7d-4e8a-9c0f-1a2b3c4d5e6f"
MAIN = DATA / f"{SID}.jsonl"
SUBAGENT = DATA / SID / "subagents" / "agent-a4f0c2e9b7d1386e5.jsonl"
META = DATA / SID / "subagents" / "agent-a4f0c2e9b7d1386e5.meta.json"
BESIDE = DATA / "agent-7c1e9a2b.jsonl"


def _read(path: Path) -> tuple[Session, list[str]]:
    warnings = SessionWarnings()
    session = read_claude_code(str(path), warnings)
    return session, warnings.lines


def _steps(session: Session, turn: int) -> list[tuple[str, str]]:
    return [(step.kind.value, step.text) for step in session.turns[turn].steps]


def _write(path: Path, *lines: dict[str, Any] | str) -> Path:
    text = [line if isinstance(line, str) else json.dumps(line) for line in lines]
    path.write_text("\n".join(text) + "\n", encoding="utf-8")
    return path


def _user(content: Any, **extra: Any) -> dict[str, Any]:
    line = {"type": "user", "sessionId": "s-1", "message": {"role": "user", "content": content}}
    return line | extra


def _assistant(mid: str, *blocks: dict[str, Any], **extra: Any) -> dict[str, Any]:
    message = {"id": mid, "role": "assistant", "model": "claude-sonnet-4-5", "content": blocks}
    return {"type": "assistant", "sessionId": "s-1", "message": message} | extra


def _result(tool_id: str, content: Any, is_error: bool = False, **extra: Any) -> dict[str, Any]:
    block = {"type": "tool_result", "tool_use_id": tool_id, "content": content}
    return _user([block | {"is_error": True}] if is_error else [block], **extra)


def _bash(tool_id: str, command: str) -> dict[str, Any]:
    return {"type": "tool_use", "id": tool_id, "name": "Bash", "input": {"command": command}}


# -- the main session -------------------------------------------------------------------


def test_session_fields() -> None:
    session, _ = _read(MAIN)
    assert session.tool is Tool.CLAUDE_CODE
    assert session.id == SID
    assert session.path == str(MAIN)
    assert session.started == "2026-03-02T09:14:05.101Z"  # the queue-operation line's
    assert session.cwd == "/home/dev/ledger"
    assert session.branch == "fix/empty-amounts"
    assert session.repository is None
    # the sub-agent's model (sidechain lines) counts; "<synthetic>" does not
    assert session.models == ["claude-opus-4-6", "claude-haiku-4-5-20251001"]
    assert session.size == MAIN.stat().st_size


def test_prompts_are_what_the_person_typed() -> None:
    session, _ = _read(MAIN)
    assert [(turn.prompt, turn.timestamp) for turn in session.turns] == [
        # not: the caveat (isMeta), /model and its output (a local command)
        (
            "The CSV importer crashes on empty amounts. Fix it and run the tests.",
            "2026-03-02T09:14:10.500Z",
        ),
        # the <ide_selection> block before it dropped, the image ignored
        ("Should zero amounts be flagged instead?", "2026-03-02T09:16:02.300Z"),
        # not: "[Request interrupted by user for tool use]"
        ("Use a warning on stderr, not an error.", "2026-03-02T09:17:40.000Z"),
        # not: the compaction summary; a slash command the agent answered is a prompt
        ("/review the importer change", "2026-03-02T09:31:00.000Z"),
    ]
    assert session.first_prompt() == session.turns[0].prompt


def test_steps_merge_the_lines_of_one_message() -> None:
    session, _ = _read(MAIN)
    # msg_01Hq7vX2a is three lines (thinking, text, tool_use), its text line written twice;
    # the Task's sidechain lines are no steps of the session
    assert _steps(session, 0) == [
        ("thinking", "The importer probably calls Decimal() on an empty string."),
        ("text", "Let me reproduce the crash first."),
        ("tool", "Bash: pytest -q tests/test_import.py"),
        ("tool", "Read: /home/dev/ledger/ledger/importer.py"),
        ("tool", "Edit: /home/dev/ledger/ledger/importer.py"),
        ("tool", "Task: Check the other importers"),
        ("tool", "Bash: cd /home/dev/ledger && pytest -q"),  # two lines folded to one
        ("text", "Fixed: an empty amount now imports as zero. All 12 tests pass."),
    ]
    assert session.turns[0].response() == (
        "Let me reproduce the crash first.\n\n"
        "Fixed: an empty amount now imports as zero. All 12 tests pass."
    )
    assert _steps(session, 3) == [
        ("thinking", ""),  # redacted thinking
        ("text", "The change is small and covered by a test.\x1b[31m [x]"),  # kept as written
        ("ask", "Commit it now?"),
        ("ask", "Push to origin too?"),
    ]


def test_asks_and_their_answers() -> None:
    session, _ = _read(MAIN)
    assert session.turns[0].asks == []
    assert session.turns[1].asks == [
        Ask(
            "How should an empty amount be reported?",
            ["Warn on import", "Reject the row", "Import silently"],
            header="Reporting",
            answer="Warn on import",
            seconds=41.75,
        ),
        Ask(
            "Which of these should also apply?",
            ["Add a --strict flag", "Log the row number", "Count them in the summary"],
            header="Extras",
            multi_select=True,
            answer="Add a --strict flag, Count them in the summary",
            seconds=41.75,
        ),
        Ask(  # typed in place of an option ("Other")
            "Which column holds the amount?",
            ["Amount", "Value"],
            header="Column",
            answer='only flag them when the header says "Betrag"',
            seconds=30.0,
        ),
        Ask(  # the dialog closed without an answer
            "Should the warning go to stderr or to the log file?",
            ["stderr", "Log file"],
            header="Output",
            dismissed=True,
            seconds=6.5,
        ),
    ]
    ask_steps = [text for kind, text in _steps(session, 1) if kind == "ask"]
    assert ask_steps == [ask.text for ask in session.turns[1].asks]
    # A malformed call ({"question": ...}) came back as a tool error: no dialog reached
    # the user, so it is no question of theirs, only a tool step.
    assert session.turns[2].asks == []
    assert ("tool", "AskUserQuestion (failed): Do you also want a CHANGELOG entry?") in _steps(
        session, 2
    )
    assert not [kind for kind, _ in _steps(session, 2) if kind == "ask"]
    assert session.turns[3].asks == [
        # the answer only in the result's text (no toolUseResult)
        Ask("Commit it now?", ["Yes", "No"], header="Commit", answer="Yes", seconds=3.0),
        # no result yet
        Ask("Push to origin too?", ["Push", "Keep local"], header="Push"),
    ]


def test_test_evidence_is_the_last_run() -> None:
    session, _ = _read(MAIN)
    # 1 failed/11 passed, then the sub-agent's 20 passed, then 12 passed
    assert session.tests is not None
    assert (session.tests.passed, session.tests.failed) == (12, 0)


def test_warnings_name_the_line() -> None:
    _, warnings = _read(MAIN)
    assert warnings == [
        f"{MAIN}:28: not JSON, skipped",
        f"{MAIN}:55: cut short (the session may still be being written)",
        f"{MAIN}:29: unknown line type 'hologram-sync': 2 lines skipped",
    ]


def test_progress_gets_every_byte() -> None:
    seen: list[int] = []
    read_claude_code(str(MAIN), SessionWarnings(), seen.append)
    assert len(seen) == 55
    assert sum(seen) == MAIN.stat().st_size


# -- sub-agents -------------------------------------------------------------------------


def test_subagent_in_its_own_folder() -> None:
    session, warnings = _read(SUBAGENT)
    assert warnings == []
    assert session.id == SID  # the parent's, so the import merges it
    assert session.started == "2026-03-02T09:20:00.000Z"
    assert [turn.prompt for turn in session.turns] == [
        "Write a regression test for empty amounts in tests/test_import.py and run the suite."
    ]
    assert _steps(session, 0) == [
        ("thinking", "A parametrised test covers blank and whitespace cells."),
        ("tool", "Write: /home/dev/ledger/tests/test_empty.py"),
        ("tool", "Bash: pytest -q"),
        ("text", "The new test passes; two old failures are unrelated."),
    ]
    assert session.tests is not None
    assert (session.tests.passed, session.tests.failed) == (30, 2)


def test_subagent_beside_the_session() -> None:
    session, warnings = _read(BESIDE)
    assert warnings == []
    assert session.id == "9d8e7f6a-1b2c-4d3e-8f4a-5b6c7d8e9f0a"
    assert session.models == ["claude-haiku-4-5-20251001"]
    assert session.first_prompt() == (
        "Find every place that parses a date from the CSV and list them."
    )
    assert _steps(session, 0) == [
        ("tool", "Grep: strptime\\("),
        ("text", "One place: ledger/importer.py line 14."),
    ]
    assert session.tests is None


def test_answers_given_before_asking_to_clarify_are_kept(tmp_path: Path) -> None:
    asked = {
        "questions": [
            {
                "question": "Defer or condense now?",
                "header": "When",
                "options": [
                    {"label": "Defer until Stop", "description": ""},
                    {"label": "Condense now", "description": ""},
                ],
                "multiSelect": False,
            },
            {
                "question": "How do hooks know?",
                "header": "How",
                "options": [
                    {"label": "A lock file", "description": ""},
                    {"label": "An env var", "description": ""},
                ],
                "multiSelect": False,
            },
        ]
    }
    rejected = (
        "The user doesn't want to proceed with this tool use. The tool use was rejected (eg."
        " if it was a file edit, the new_string was NOT written to the file). To tell you how"
        " to proceed, the user said:\nThe user wants to clarify these questions.\n\n"
        '    Questions asked:\n- "Defer or condense now?"\n  Answer: Defer until Stop\n'
        '- "How do hooks know?"\n  (No answer provided)\n'
    )
    lines = [
        {
            "type": "user",
            "sessionId": "c1",
            "uuid": "u1",
            "timestamp": "2026-02-01T10:00:00Z",
            "message": {"role": "user", "content": "Plan the hooks."},
        },
        {
            "type": "assistant",
            "sessionId": "c1",
            "uuid": "a1",
            "timestamp": "2026-02-01T10:00:05Z",
            "message": {
                "id": "m1",
                "role": "assistant",
                "model": "claude-opus-4-6",
                "content": [
                    {"type": "tool_use", "id": "t1", "name": "AskUserQuestion", "input": asked}
                ],
            },
        },
        {
            "type": "user",
            "sessionId": "c1",
            "uuid": "u2",
            "timestamp": "2026-02-01T10:01:05Z",
            "message": {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": "t1",
                        "is_error": True,
                        "content": rejected,
                    }
                ],
            },
            "toolUseResult": "Error: The user doesn't want to proceed with this tool use.",
        },
    ]
    path = tmp_path / "c1.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    first, second = read_claude_code(str(path), SessionWarnings()).turns[0].asks
    assert (first.answer, first.dismissed, first.seconds) == ("Defer until Stop", False, 60.0)
    assert (second.answer, second.dismissed) == (None, True)


def test_a_sub_agent_transcript_says_so(tmp_path: Path) -> None:
    warnings = SessionWarnings()
    assert read_claude_code(str(SUBAGENT), warnings).subagent
    assert read_claude_code(str(BESIDE), warnings).subagent
    assert not read_claude_code(str(MAIN), warnings).subagent  # sidechain lines, but not only
    renamed = tmp_path / "copied.jsonl"
    renamed.write_bytes(BESIDE.read_bytes())
    assert read_claude_code(str(renamed), warnings).subagent  # every line a sidechain line


def test_subagent_folder_names_the_parent_when_the_lines_do_not(tmp_path: Path) -> None:
    folder = tmp_path / "0a0b0c0d-1111-4222-8333-444455556666" / "subagents"
    folder.mkdir(parents=True)
    path = _write(
        folder / "agent-a1b2c3.jsonl",
        _user("Count the TODOs", isSidechain=True, sessionId="agent-a1b2c3"),
        _assistant("m1", {"type": "text", "text": "Three."}, isSidechain=True),
    )
    session, _ = _read(path)
    assert session.id == "0a0b0c0d-1111-4222-8333-444455556666"
    assert session.turns[0].prompt == "Count the TODOs"


def test_meta_sidecar_is_no_session() -> None:
    with pytest.raises(SessionError) as error:
        _read(META)
    assert str(error.value) == (
        f"{META}: no conversation in it "
        "(not a Claude Code transcript: no line has a type or a message)"
    )


# -- evidence -----------------------------------------------------------------------


def test_sidechain_results_count_as_evidence(tmp_path: Path) -> None:
    path = _write(
        tmp_path / "s.jsonl",
        _user("run the tests"),
        _assistant("m1", {"type": "tool_use", "id": "t1", "name": "Task", "input": {}}),
        _assistant("m2", _bash("t2", "pytest"), isSidechain=True),
        _result("t2", "===== 1 failed, 4 passed in 0.1s =====", isSidechain=True),
    )
    session, _ = _read(path)
    assert session.tests is not None
    assert (session.tests.passed, session.tests.failed) == (4, 1)
    assert _steps(session, 0) == [("tool", "Task")]


def test_file_reads_are_no_evidence(tmp_path: Path) -> None:
    path = _write(
        tmp_path / "s.jsonl",
        _user("why did CI fail?"),
        _assistant("m1", _bash("t1", "pytest")),
        _result("t1", [{"type": "text", "text": "===== 2 failed, 8 passed in 1s ====="}]),
        _assistant("m2", {"type": "tool_use", "id": "t2", "name": "Read", "input": {}}),
        _result("t2", "ci.log: ===== 9 passed in 1s ====="),
    )
    session, _ = _read(path)
    assert session.tests is not None
    assert (session.tests.passed, session.tests.failed) == (8, 2)


def test_only_the_tail_of_a_huge_output_is_searched(tmp_path: Path) -> None:
    early = "===== 1 passed in 0.1s =====\n" + "x" * 20_000
    path = _write(
        tmp_path / "s.jsonl",
        _user("go"),
        _assistant("m1", _bash("t1", "pytest")),
        _result("t1", early),
    )
    assert _read(path)[0].tests is None


# -- shapes -------------------------------------------------------------------------


def test_lines_written_twice_count_once(tmp_path: Path) -> None:
    prompt = _user("hello", uuid="u-1")
    reply = _assistant("m1", {"type": "text", "text": "Hi."})
    tool = _assistant("m1", _bash("t1", "ls"))
    path = _write(tmp_path / "s.jsonl", prompt, reply, reply, tool, prompt, tool)
    session, _ = _read(path)
    assert [turn.prompt for turn in session.turns] == ["hello"]
    assert _steps(session, 0) == [("text", "Hi."), ("tool", "Bash: ls")]


def test_forks_are_read_in_file_order(tmp_path: Path) -> None:
    path = _write(
        tmp_path / "s.jsonl",
        _user("Start", uuid="a", parentUuid=None),
        _assistant("m1", {"type": "text", "text": "Reply 1"}, uuid="b", parentUuid="a"),
        _user("Rewound", uuid="c", parentUuid="a"),
        _assistant("m2", {"type": "text", "text": "Reply 2"}, uuid="d", parentUuid="c"),
    )
    session, _ = _read(path)
    assert [(t.prompt, t.response()) for t in session.turns] == [
        ("Start", "Reply 1"),
        ("Rewound", "Reply 2"),
    ]


def test_steps_before_any_prompt_get_an_empty_one(tmp_path: Path) -> None:
    path = _write(tmp_path / "s.jsonl", _assistant("m1", {"type": "text", "text": "Resumed."}))
    session, _ = _read(path)
    assert [(t.prompt, t.response()) for t in session.turns] == [("", "Resumed.")]
    assert session.id == "s-1"


def test_slash_commands(tmp_path: Path) -> None:
    path = _write(
        tmp_path / "s.jsonl",
        _user("<command-name>/init</command-name>\n<command-message>init</command-message>"),
        _user("Analyze this codebase and write CLAUDE.md", isMeta=True),
        _assistant("m1", {"type": "text", "text": "Writing CLAUDE.md."}),
        _user("<command-name>clear</command-name><command-args></command-args>"),
        _user("<local-command-stdout></local-command-stdout>"),
        _user("<bash-input>ls</bash-input>"),
        _user("<task-notification>\n<status>completed</status>\n</task-notification>\nmore"),
        _user([{"type": "text", "text": "<system-reminder>Be brief.</system-reminder>\nthanks"}]),
    )
    session, _ = _read(path)
    assert [(t.prompt, t.response()) for t in session.turns] == [
        ("/init", "Writing CLAUDE.md."),
        ("thanks", ""),
    ]


def test_tool_lines_are_folded(tmp_path: Path) -> None:
    def tool(name: str, args: Any) -> dict[str, Any]:
        return {"type": "tool_use", "id": f"t-{name}", "name": name, "input": args}

    path = _write(
        tmp_path / "s.jsonl",
        _user("go"),
        _assistant(
            "m1",
            tool("Bash", {"command": "echo " + "a" * 300, "description": "Say a lot"}),
            tool("Grep", {"pattern": "TODO", "path": "src"}),
            tool("TodoWrite", {"todos": [{"content": "a"}, {"content": "b"}]}),
            tool("mcp__context7__get-library-docs", {"context7CompatibleLibraryID": "/x/y"}),
            tool("WebSearch", None),
            {"type": "tool_use", "id": "t-none", "input": {"query": "q"}},
        ),
    )
    steps = _steps(_read(path)[0], 0)
    assert steps[0] == ("tool", "Bash: echo " + "a" * 108 + "…")
    assert len(steps[0][1]) == 120
    assert steps[1:] == [
        ("tool", "Grep: TODO"),
        ("tool", "TodoWrite: 2 todos"),
        ("tool", "mcp__context7__get-library-docs: /x/y"),
        ("tool", "WebSearch"),
        ("tool", "?: q"),
    ]


def test_ask_answers_in_other_shapes(tmp_path: Path) -> None:
    questions = [
        {"question": "Pick  two", "options": ["a", "b", {"label": "c"}], "multiSelect": True},
        {"question": "Why?", "options": None, "header": ""},
        "not a question",
    ]
    ask = {"type": "tool_use", "id": "t1", "name": "AskUserQuestion"}
    path = _write(
        tmp_path / "s.jsonl",
        _user("go", timestamp="2026-01-01T10:00:00Z"),
        _assistant(
            "m1", ask | {"input": {"questions": questions}}, timestamp="2026-01-01T10:00:00"
        ),
        _result(
            "t1",
            'User has answered your questions: "Why?"="because, "so"". You can now continue.',
            toolUseResult={"answers": {"Pick two": ["a", "c"]}},  # whitespace differs
            timestamp="2026-01-01T10:00:05Z",  # one with a zone, one without: no seconds
        ),
        _assistant("m2", ask | {"id": "t2", "input": None}),
        _result("t2", "[Request interrupted by user for tool use]", is_error=True),
    )
    asks = _read(path)[0].turns[0].asks
    assert asks == [
        Ask("Pick  two", ["a", "b", "c"], multi_select=True, answer="a, c"),
        Ask("Why?", answer='because, "so"'),
        Ask("", dismissed=True),
    ]


def test_content_shapes_never_raise(tmp_path: Path) -> None:
    path = _write(
        tmp_path / "s.jsonl",
        {"type": "user", "message": None},
        {"type": "user", "message": {"content": None}},
        {"type": "user", "message": {"content": 7}},
        {"type": "user", "message": {"content": [None, 3, {"type": "text", "text": None}]}},
        {"type": "assistant", "message": {"content": "plain string reply", "model": None}},
        {"type": "assistant", "message": {"id": None, "content": [None, {"type": "image"}]}},
        {"type": "user", "message": {"content": [{"type": "tool_result", "content": None}]}},
        {"type": "user", "message": {"content": [{"type": "tool_result", "content": [1]}]}},
        {"type": "summary", "summary": None},
        "[1, 2, 3]",
        '"just a string"',
        "",
    )
    session, warnings = _read(path)
    assert [(t.prompt, t.response()) for t in session.turns] == [("", "plain string reply")]
    assert session.id == "s"  # no sessionId on any line: the file's name
    assert session.started is None
    assert warnings == [
        f"{path}:10: not a JSON object, skipped",
        f"{path}:11: not a JSON object, skipped",
    ]


# -- files that are no session ------------------------------------------------------


def test_usage_records_only(tmp_path: Path) -> None:
    usage = {"input_tokens": 100, "output_tokens": 50}
    line = {
        "timestamp": "2026-01-09T10:00:00.000Z",
        "sessionId": "session-alpha",
        "message": {"role": "assistant", "id": "msg-1", "model": "claude-opus-4-6", "usage": usage},
        "costUSD": 0.12,
    }
    path = _write(tmp_path / "chat.jsonl", line, line)
    with pytest.raises(SessionError, match=r"only token-usage records"):
        _read(path)


def test_empty_and_garbage_files(tmp_path: Path) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.write_bytes(b"")
    with pytest.raises(SessionError, match=r"^.*empty\.jsonl: no conversation in it \(the file"):
        _read(empty)
    garbage = tmp_path / "garbage.jsonl"
    garbage.write_bytes(b"\xff\xfe not json\n" * 30)
    warnings = SessionWarnings()
    with pytest.raises(SessionError, match=r"none of its 30 lines is a JSON object"):
        read_claude_code(str(garbage), warnings)
    assert len(warnings.lines) == 21
    assert warnings.lines[0] == f"{garbage}:1: not JSON, skipped"
    assert warnings.lines[-1] == f"{garbage}: 10 more lines not JSON, skipped"
    with pytest.raises(SessionError, match=r"cannot be read"):
        _read(tmp_path)  # a folder


def test_a_last_line_is_cut_short_only_without_its_newline(tmp_path: Path) -> None:
    cut = tmp_path / "cut.jsonl"
    cut.write_text(json.dumps(_user("hi")) + '\n{"type": "user", "mess', encoding="utf-8")
    assert _read(cut)[1] == [f"{cut}:2: cut short (the session may still be being written)"]
    whole = _write(tmp_path / "whole.jsonl", _user("hi"), '{"type": "user", "mess')
    assert _read(whole)[1] == [f"{whole}:2: not JSON, skipped"]  # its newline was written


def test_a_flood_of_unknown_line_types_is_summed_up(tmp_path: Path) -> None:
    kinds = ({"type": f"future-{n}"} for n in range(25))
    warnings = _read(_write(tmp_path / "s.jsonl", _user("hi"), *kinds))[1]
    assert len(warnings) == 21
    assert warnings[0] == f"{tmp_path / 's.jsonl'}:2: unknown line type 'future-0': 1 line skipped"
    assert warnings[-1].endswith(": 5 more lines of unknown line types skipped")


def test_known_noise_lines_are_silent(tmp_path: Path) -> None:
    noise = ["progress", "file-history-snapshot", "queue-operation", "system", "attachment"]
    noise += ["custom-title", "ai-title", "last-prompt", "pr-link", "worktree-state", "summary"]
    path = _write(tmp_path / "s.jsonl", _user("hi"), *({"type": kind} for kind in noise))
    assert _read(path)[1] == []
    only_noise = _write(tmp_path / "n.jsonl", *({"type": kind} for kind in noise))
    with pytest.raises(SessionError, match=r"no user or assistant message in it"):
        _read(only_noise)


_KEYS = [
    "type",
    "message",
    "content",
    "role",
    "text",
    "thinking",
    "id",
    "tool_use_id",
    "name",
    "input",
    "questions",
    "question",
    "options",
    "label",
    "answers",
    "toolUseResult",
    "isSidechain",
    "isMeta",
    "is_error",
    "timestamp",
    "sessionId",
    "model",
    "uuid",
]
_WORDS = st.sampled_from(
    [
        *("user", "assistant", "text", "tool_use", "tool_result", "thinking", "AskUserQuestion"),
        *("Bash", "t1", "q", "<command-name>/x</command-name>", "2026-01-01T00:00:00Z"),
    ]
)
_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=4) | _WORDS,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(_KEYS), inner),
    max_leaves=12,
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.dictionaries(st.sampled_from(_KEYS), _JSON, max_size=6), max_size=8))
def test_any_shape_is_a_session_or_one_error(lines: list[dict[str, Any]]) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "s.jsonl"
        path.write_text("\n".join(json.dumps(line) for line in lines), encoding="utf-8")
        try:
            session = read_claude_code(str(path), SessionWarnings())
        except SessionError as error:
            assert "\n" not in str(error)
        else:
            for turn in session.turns:
                assert len(turn.asks) == sum(s.kind is StepKind.ASK for s in turn.steps)


def _is_json(line: bytes) -> bool:
    try:
        json.loads(line)
    except ValueError:
        return False
    return True
