"""The Gemini CLI reader: its three chat layouts, asks, test evidence and bad input."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

from ppp_tui.core.sessions.model import (
    Ask,
    Session,
    SessionError,
    SessionWarnings,
    Step,
    StepKind,
    Tool,
)
from ppp_tui.storage.sessions.gemini_cli import read_gemini_cli

DATA = Path(__file__).parent / "data" / "sessions" / "gemini-cli"
JSONL = DATA / "session-2026-05-12T09-14-3f9c2a1e.jsonl"
RECORD = DATA / "session-2026-01-20T14-02-8b1d0c47.json"
SAVED = DATA / "checkpoint-release-notes.json"

HEADER = {
    "sessionId": "0f0e0d0c-0b0a-4909-8807-060504030201",
    "projectHash": "9f8e7d6c5b4a39281706f5e4d3c2b1a09f8e7d6c5b4a39281706f5e4d3c2b1a0",
    "startTime": "2026-06-02T08:00:00.000Z",
    "lastUpdated": "2026-06-02T08:00:00.000Z",
    "kind": "main",
}


def read(path: Path | str) -> tuple[Session, list[str]]:
    warnings = SessionWarnings()
    session = read_gemini_cli(str(path), warnings)
    return session, warnings.lines


def steps(session: Session, turn: int) -> list[tuple[str, str]]:
    return [(step.kind.value, step.text) for step in session.turns[turn].steps]


def write_jsonl(path: Path, records: list[Any]) -> Path:
    path.write_text(
        "".join(json.dumps(r, ensure_ascii=False, separators=(",", ":")) + "\n" for r in records),
        encoding="utf-8",
    )
    return path


def user(message_id: str, text: Any, **extra: Any) -> dict[str, Any]:
    return {
        "id": message_id,
        "timestamp": "2026-06-02T08:00:05.000Z",
        "type": "user",
        "content": text,
        **extra,
    }


def gemini(message_id: str, text: str, **extra: Any) -> dict[str, Any]:
    return {
        "id": message_id,
        "timestamp": "2026-06-02T08:00:09.000Z",
        "type": "gemini",
        "content": text,
        "thoughts": [],
        "model": "gemini-3-flash-preview",
        **extra,
    }


# --- 1. JSON Lines ChatRecording ----------------------------------------------------------


def test_jsonl_session_header_models_and_folder() -> None:
    session, warnings = read(JSONL)
    assert warnings == []
    assert session.tool is Tool.GEMINI_CLI
    assert session.id == "3f9c2a1e-7b4d-4e21-9a0c-5d8e6f1b2c3d"
    assert session.path == str(JSONL)
    assert session.started == "2026-05-12T09:14:03.211Z"
    assert session.cwd == "/home/dana/src/invoicer"  # from the <session_context> preamble
    assert session.repository is None
    assert session.models == ["gemini-3-pro-preview", "gemini-3-flash-preview"]
    assert session.size == JSONL.stat().st_size


def test_jsonl_turns_are_typed_prompts_after_rewind() -> None:
    session, _ = read(JSONL)
    # Not prompts: the <session_context> preamble, the tool results sent back as a user
    # message, the "Request cancelled." info line; the CSV prompt was rewound away.
    assert [(t.prompt, t.timestamp) for t in session.turns] == [
        (
            "The invoice totals are off by a cent when a discount applies."
            " Find out why and fix it.",
            "2026-05-12T09:14:27.118Z",
        ),
        (
            "Leave the export alone for now. Should we log when rounding changes a total?",
            "2026-05-12T09:18:12.845Z",
        ),
        ("No logging. Just summarise what changed.", "2026-05-12T09:18:40.126Z"),
    ]


def test_jsonl_steps_use_the_last_write_of_each_message_in_its_first_place() -> None:
    session, _ = read(JSONL)
    assert steps(session, 0) == [
        (
            "thinking",
            "Locating the rounding step: The discount is applied after tax, so I should read"
            " how totals are summed before guessing.",
        ),
        ("tool", "read_file: src/invoicer/totals.py"),
        ("tool", "run_shell_command: python -m pytest -q tests/test_totals.py"),
        (
            "thinking",
            "Choosing a rounding policy: Both half-up and banker's rounding are defensible;"
            " this is the user's call.",
        ),
        (
            "text",
            "The line totals are rounded one by one and the discount is rounded again on the"
            " sum. Before I change it, I need two decisions from you.",
        ),
        ("ask", "Which rounding mode should invoice totals use?"),
        ("ask", "Should each line be rounded before summing, or only the final total?"),
        (
            "text",
            "Fixed: each line is now rounded half up with `Decimal.quantize` and the discount"
            " is applied before rounding. All 12 tests pass.",
        ),
        ("tool", "replace: src/invoicer/totals.py"),
        ("tool", "run_shell_command: python -m pytest -q"),
    ]
    assert steps(session, 2) == [
        (
            "text",
            "Changed `line_total` in `src/invoicer/totals.py` to round each line half up after"
            " the discount; the export is untouched and nothing new is logged.",
        )
    ]


def test_jsonl_asks_answered_with_a_label_and_free_text_and_one_dismissed() -> None:
    session, _ = read(JSONL)
    assert session.turns[0].asks == [
        Ask(
            text="Which rounding mode should invoice totals use?",
            options=["Half up", "Banker's"],
            header="Rounding",
            answer="Half up",
            seconds=43.5,
        ),
        Ask(
            text="Should each line be rounded before summing, or only the final total?",
            options=["Each line", "Final total"],
            header="When",
            answer="Round each line, then sum: that is what the accountants do",
            seconds=43.5,
        ),
    ]
    # Cancelled by the scheduler: status "cancelled", an "[Operation Cancelled]" error.
    assert session.turns[1].asks == [
        Ask(
            text="Where should a rounding adjustment be logged?",
            options=["App log", "Audit table"],
            header="Log to",
            multi_select=True,
            answer=None,
            dismissed=True,
            seconds=12.525,
        )
    ]
    assert steps(session, 1) == [
        (
            "thinking",
            "Asking where to log: Logging destinations differ per deployment, so I will ask.",
        ),
        ("ask", "Where should a rounding adjustment be logged?"),
    ]


def test_jsonl_tests_are_the_last_run_left_after_the_rewind() -> None:
    session, _ = read(JSONL)
    # The rewound turn ran tests with 2 failures; the last run that stayed passed all 12.
    assert session.tests is not None
    assert (session.tests.passed, session.tests.failed) == (12, 0)


# --- 2. One ConversationRecord .json ------------------------------------------------------


def test_record_session_and_model_switch() -> None:
    session, warnings = read(RECORD)
    assert warnings == []  # info, error and warning messages are skipped quietly
    assert session.id == "8b1d0c47-2e3f-4a5b-9c6d-7e8f9a0b1c2d"
    assert session.started == "2026-01-20T14:02:11.730Z"
    assert session.cwd is None
    assert session.models == ["gemini-2.5-pro", "gemini-2.5-flash"]
    assert session.size == RECORD.stat().st_size


def test_record_prompts_string_and_parts_content_and_no_slash_command() -> None:
    session, _ = read(RECORD)
    assert [t.prompt for t in session.turns] == [
        "Add a --dry-run flag to the sync command.",
        "Keep going with flash. In dry-run mode print what would change instead of writing.",
    ]
    assert [t.timestamp for t in session.turns] == [
        "2026-01-20T14:02:19.004Z",
        "2026-01-20T14:04:58.340Z",
    ]


def test_record_steps() -> None:
    session, _ = read(RECORD)
    assert steps(session, 0) == [
        (
            "thinking",
            "Finding the command: The CLI is built with click; the sync command should be in"
            " cli/sync.py.",
        ),
        (
            "thinking",
            "Planning the flag: A boolean option that skips the writes but still reports them.",
        ),
        ("text", "I'll read the sync command first."),
        ("tool", "read_file: /home/ravi/work/syncer/cli/sync.py"),
        ("thinking", "Running the tests: Check the change against the existing sync tests."),
        ("tool", "replace: /home/ravi/work/syncer/cli/sync.py"),
        ("tool", "run_shell_command: pytest tests/test_sync.py"),
    ]
    assert session.turns[0].response() == "I'll read the sync command first."
    assert [s.kind for s in session.turns[1].steps] == [
        StepKind.TEXT,
        StepKind.ASK,
        StepKind.ASK,
        StepKind.THINKING,
        StepKind.TEXT,
        StepKind.TOOL,
    ]


def test_record_multi_select_answer_and_dismissed_dialog() -> None:
    session, _ = read(RECORD)
    assert session.turns[1].asks == [
        Ask(
            text="Which kinds of change should the dry run print?",
            options=["Added", "Removed", "Modified"],
            header="Show",
            multi_select=True,
            answer="Added, Removed",
            seconds=27.25,
        ),
        # The tool's own "User dismissed ask_user dialog without answering." output.
        Ask(
            text="Should a dry run that finds changes exit with status 1?",
            options=["Yes", "No"],  # a yesno question offers these
            header="Exit code",
            answer=None,
            dismissed=True,
            seconds=8.553,
        ),
    ]


def test_record_tests_are_the_last_run() -> None:
    session, _ = read(RECORD)
    assert session.tests is not None
    assert (session.tests.passed, session.tests.failed) == (8, 0)


# --- 3. A saved history (/chat save) ------------------------------------------------------


def test_saved_history_session() -> None:
    session, warnings = read(SAVED)
    assert warnings == []
    assert session.id.startswith("sha256:") and len(session.id) == len("sha256:") + 16
    assert session.id == read(SAVED)[0].id  # stable
    assert session.started is None
    assert session.models == []
    assert session.cwd == "/Users/ravi/projects/notes-app"
    assert [t.prompt for t in session.turns] == [
        "Draft release notes for v2.3 from the git log since v2.2.",
        "Run the tests before I tag it.",
    ]
    assert all(t.timestamp is None for t in session.turns)


def test_saved_history_steps_and_asks() -> None:
    session, _ = read(SAVED)
    # The canned "Got it. Thanks for the context!" after the setup is no step.
    assert steps(session, 0) == [
        (
            "thinking",
            "Reading the history: I'll list the commits since the v2.2 tag before writing"
            " anything.",
        ),
        ("tool", "run_shell_command: git log --oneline v2.2..HEAD"),
        ("text", "Three user-facing changes. Two things decide how the notes read:"),
        ("ask", "Should dropping the legacy sync API be listed under Breaking changes?"),
        ("ask", "Who are these notes written for?"),
        ("tool", "write_file: /Users/ravi/projects/notes-app/docs/release-notes/v2.3.md"),
        (
            "text",
            "The notes are in `docs/release-notes/v2.3.md`, written for end users, with the"
            " sync API removal under Breaking changes.",
        ),
    ]
    assert session.turns[0].asks == [
        Ask(
            text="Should dropping the legacy sync API be listed under Breaking changes?",
            options=["Yes", "No"],
            header="Breaking",
            answer="Yes",
        ),
        Ask(
            text="Who are these notes written for?",
            header="Audience",
            answer="End users, not developers",
        ),
    ]
    assert session.tests is not None
    assert (session.tests.passed, session.tests.failed) == (39, 2)


def test_saved_history_in_a_checkpoint_object_is_the_same_session(tmp_path: Path) -> None:
    history = json.loads(SAVED.read_text(encoding="utf-8"))
    wrapped = tmp_path / "checkpoint-release-notes.json"
    wrapped.write_text(json.dumps({"history": history, "authType": "oauth-personal"}, indent=2))
    session, _ = read(wrapped)
    assert session.id == read(SAVED)[0].id
    assert [t.prompt for t in session.turns] == [t.prompt for t in read(SAVED)[0].turns]


def test_saved_history_ask_answered_by_call_id(tmp_path: Path) -> None:
    history = [
        {"role": "user", "parts": [{"text": "Pick a name for the CLI."}]},
        {
            "role": "model",
            "parts": [
                {
                    "functionCall": {
                        "id": "ask_user_1771890363040_0",
                        "name": "ask_user",
                        "args": {
                            "questions": [
                                {
                                    "type": "choice",
                                    "header": "Name",
                                    "question": "Which name?",
                                    "options": [
                                        {"label": "tally", "description": "Short."},
                                        {"label": "ledger", "description": "Plain."},
                                    ],
                                }
                            ]
                        },
                    }
                }
            ],
        },
        {
            "role": "user",
            "parts": [
                {
                    "functionResponse": {
                        "id": "ask_user_1771890363040_0",
                        "name": "ask_user",
                        "response": {"output": '{"answers":{"0":"ledger"}}'},
                    }
                }
            ],
        },
    ]
    path = tmp_path / "checkpoint-name.json"
    path.write_text(json.dumps(history))
    session, _ = read(path)
    assert session.turns[0].asks == [
        Ask(text="Which name?", options=["tally", "ledger"], header="Name", answer="ledger")
    ]


# --- what is and is not a prompt -----------------------------------------------------------


def test_injected_and_command_messages_are_no_prompts(tmp_path: Path) -> None:
    expanded = "\nYou are an AI agent that brings the power of Gemini directly into the terminal."
    path = write_jsonl(
        tmp_path / "s.jsonl",
        [
            HEADER,
            user("u1", [{"text": expanded}], displayContent=[{"text": "/init"}]),
            gemini("g1", "GEMINI.md written."),
            user(
                "u2",
                [{"text": "System: Please continue."}],
                displayContent=[{"functionResponse": {"name": "update_topic", "response": {}}}],
            ),
            gemini("g2", "Anything else?"),
            user("u3", "/stats"),
            user("u4", "Please continue."),
            user(
                "u5",
                [
                    {"text": "explain \x1b[1m@src/app.py\x1b[0m <b>now</b>"},
                    {"text": "<hook_context>branch: main</hook_context>"},
                ],
            ),
            user("u6", "<state_snapshot>summary of earlier work</state_snapshot>"),
            user("u7", "//: a comment is a prompt"),
        ],
    )
    session, warnings = read(path)
    assert warnings == []
    # A custom command expanded for the model is a prompt: the one the person typed.
    assert [t.prompt for t in session.turns] == [
        "/init",
        "explain \x1b[1m@src/app.py\x1b[0m <b>now</b>",  # control characters kept
        "//: a comment is a prompt",
    ]
    assert steps(session, 0) == [("text", "GEMINI.md written."), ("text", "Anything else?")]


def test_agent_output_before_any_prompt_is_a_turn_without_prompt(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "s.jsonl", [HEADER, gemini("g1", "Resumed.")])
    session, _ = read(path)
    assert [(t.prompt, steps(session, 0)) for t in session.turns] == [("", [("text", "Resumed.")])]
    assert session.first_prompt() == ""


def test_session_with_only_a_warning_is_an_empty_session(tmp_path: Path) -> None:
    path = tmp_path / "session-2026-02-03T04-09-29eb990e.json"
    path.write_text(
        json.dumps(
            {
                "sessionId": "29eb990e-0000-4000-8000-000000000001",
                "projectHash": "41d5",
                "startTime": "2026-02-03T04:09:57.093Z",
                "lastUpdated": "2026-02-03T04:09:57.093Z",
                "messages": [
                    {
                        "id": "w1",
                        "timestamp": "2026-02-03T04:09:57.093Z",
                        "type": "warning",
                        "content": "Hook(s) [session-end] failed for event SessionEnd.\n",
                    }
                ],
            },
            indent=2,
        )
    )
    session, warnings = read(path)
    assert warnings == []
    assert (session.id, session.started, session.turns, session.models) == (
        "29eb990e-0000-4000-8000-000000000001",
        "2026-02-03T04:09:57.093Z",
        [],
        [],
    )


# --- the JSONL log's own records -----------------------------------------------------------


def test_set_messages_is_a_checkpoint_and_set_patches_the_header(tmp_path: Path) -> None:
    path = write_jsonl(
        tmp_path / "s.jsonl",
        [
            HEADER,
            user("u1", "first draft of the prompt"),
            gemini("g1", "first answer"),
            {
                "$set": {
                    "messages": [user("u2", "the prompt after compression"), gemini("g2", "ok")],
                    "lastUpdated": "2026-06-02T08:10:00.000Z",
                }
            },
            {"$set": {"sessionId": "11111111-2222-4333-8444-555555555555"}},
            {"$set": {"directories": ["/srv/app", "/srv/shared"]}},
            user("u3", "next"),
        ],
    )
    session, _ = read(path)
    assert session.id == "11111111-2222-4333-8444-555555555555"
    assert session.cwd == "/srv/app"
    assert [t.prompt for t in session.turns] == ["the prompt after compression", "next"]


def test_rewind_to_a_notice_drops_it_and_what_follows(tmp_path: Path) -> None:
    notice = {"id": "i1", "timestamp": "t", "type": "info", "content": "Request cancelled."}
    path = write_jsonl(
        tmp_path / "s.jsonl",
        [HEADER, user("u1", "kept"), notice, user("u2", "dropped"), {"$rewindTo": "i1"}],
    )
    session, warnings = read(path)
    assert ([t.prompt for t in session.turns], warnings) == (["kept"], [])


def test_rewind_to_an_unknown_message_drops_everything_before_it(tmp_path: Path) -> None:
    path = write_jsonl(
        tmp_path / "s.jsonl",
        [HEADER, user("u1", "old"), {"$rewindTo": "nope"}, user("u2", "new")],
    )
    session, warnings = read(path)
    assert [t.prompt for t in session.turns] == ["new"]
    assert warnings == [
        f"{path}: 1 $rewindTo to a message not in the file: every earlier message dropped,"
        " as Gemini CLI does"
    ]


def test_rewritten_message_keeps_its_place(tmp_path: Path) -> None:
    path = write_jsonl(
        tmp_path / "s.jsonl",
        [
            HEADER,
            user("u1", "one"),
            gemini("g1", "draft"),
            user("u2", "two"),
            gemini("g2", "reply two"),
            gemini("g1", "final", model="gemini-3-pro-preview"),
        ],
    )
    session, _ = read(path)
    assert [(t.prompt, t.response()) for t in session.turns] == [
        ("one", "final"),
        ("two", "reply two"),
    ]
    assert session.models == ["gemini-3-pro-preview", "gemini-3-flash-preview"]


def test_only_the_tail_of_a_huge_output_is_searched_for_tests(tmp_path: Path) -> None:
    def shell(call_id: str, output: str) -> dict[str, Any]:
        return {
            "id": call_id,
            "name": "run_shell_command",
            "args": {"command": "pytest"},
            "result": [
                {
                    "functionResponse": {
                        "id": call_id,
                        "name": "run_shell_command",
                        "response": {"output": output},
                    }
                }
            ],
            "status": "success",
            "timestamp": "2026-06-02T08:00:10.000Z",
        }

    early = "======== 5 passed in 0.1s ========\n" + "log line\n" * 5000
    path = write_jsonl(
        tmp_path / "s.jsonl",
        [HEADER, user("u1", "run it"), gemini("g1", "", toolCalls=[shell("c1", early)])],
    )
    assert read(path)[0].tests is None


def test_long_tool_calls_fold_to_one_short_line(tmp_path: Path) -> None:
    command = "python -m pytest -q \\\n    tests/test_a.py \\\n    " + "tests/test_b.py " * 20
    calls = [
        {"id": "c1", "name": "run_shell_command", "args": {"command": command}},
        {"id": "c2", "name": "grep_search", "args": {"dir_path": "src", "pattern": "TODO"}},
        {"id": "c3", "name": "read_many_files", "args": {"paths": ["a.py", "b.py"]}},
        {"id": "c4", "name": "write_todos", "args": {"todos": [{"description": "x"}]}},
        {"id": "c5", "name": "exit_plan_mode", "args": {}},
        {"id": "c6", "name": "mcp__docs__lookup", "args": {"topic": "rounding modes"}},
    ]
    path = write_jsonl(
        tmp_path / "s.jsonl", [HEADER, user("u1", "go"), gemini("g1", "", toolCalls=calls)]
    )
    lines = [text for _, text in steps(read(path)[0], 0)]
    assert len(lines[0]) == 120 and lines[0].endswith("…")
    assert lines[0].startswith("run_shell_command: python -m pytest -q \\ tests/test_a.py \\ ")
    assert lines[1:] == [
        "grep_search: TODO",
        "read_many_files: a.py, b.py",
        "write_todos: 1 todos",
        "exit_plan_mode",
        "mcp__docs__lookup: rounding modes",
    ]


# --- bad input -----------------------------------------------------------------------------


def test_jsonl_bad_and_cut_short_lines_are_warnings(tmp_path: Path) -> None:
    lines = JSONL.read_text(encoding="utf-8").splitlines()
    lines.insert(4, "{not json")
    text = "\n".join(lines) + "\n" + '{"id":"zz","timestamp":"2026-05-12T09:19:00.000Z","ty'
    path = tmp_path / "s.jsonl"
    path.write_text(text, encoding="utf-8")
    session, warnings = read(path)
    assert warnings == [
        f"{path}:5: not JSON, skipped",
        f"{path}:{len(lines) + 1}: cut short (the session may still be being written)",
    ]
    assert [t.prompt for t in session.turns] == [t.prompt for t in read(JSONL)[0].turns]
    assert session.size == len(text.encode("utf-8"))


def test_jsonl_last_line_is_cut_short_only_without_its_newline(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "s.jsonl", [HEADER, user("u1", "hello")])
    with path.open("a", encoding="utf-8") as out:
        out.write('{"id":"g1","ty\n')
    assert read(path)[1] == [f"{path}:3: not JSON, skipped"]  # its newline was written


def test_unknown_message_types_are_one_warning_each(tmp_path: Path) -> None:
    path = write_jsonl(
        tmp_path / "s.jsonl",
        [
            HEADER,
            user("u1", "hello"),
            {"id": "x1", "timestamp": "t", "type": "compression", "content": ""},
            {"id": "x2", "timestamp": "t", "type": "compression", "content": ""},
            {"id": "x3", "timestamp": "t", "content": "no type"},
            ["a", "list"],
            gemini("g1", "hi"),
        ],
    )
    session, warnings = read(path)
    assert [(t.prompt, t.response()) for t in session.turns] == [("hello", "hi")]
    assert warnings == [
        f"{path}:6: not a JSON object, skipped",
        f"{path}:3: unknown message type 'compression': 2 messages skipped",
        f"{path}:5: unknown message type (none): 1 message skipped",
    ]


def test_cut_short_json_is_a_session_error(tmp_path: Path) -> None:
    path = tmp_path / "session.json"
    path.write_bytes(RECORD.read_bytes()[:5000])
    with pytest.raises(SessionError) as raised:
        read(path)
    message = str(raised.value)
    assert "\n" not in message
    assert message.startswith(f"{path}: not valid JSON (")
    assert message.endswith("the file may be cut short")


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        (b"", "empty file"),
        (b"   \n", "empty file"),
        (b"42", "no Gemini CLI chat"),
        (b'{"sessionId": "s"}', "no Gemini CLI chat"),
        (b'[{"a": 1}]', "no Gemini CLI chat"),
        (
            b'{"type":"user","sessionId":"s","uuid":"u","message":{"role":"user"}}\n',
            "no Gemini CLI chat",
        ),
        (b'{"$set": {"lastUpdated": "x"}}\n', "no Gemini CLI chat"),
        (b"\xff\xfe{garbage", "not valid JSON"),
    ],
)
def test_not_a_gemini_chat_is_a_session_error(tmp_path: Path, content: bytes, problem: str) -> None:
    path = tmp_path / "f.json"
    path.write_bytes(content)
    with pytest.raises(SessionError, match=problem):
        read(path)


def test_missing_file_is_a_session_error(tmp_path: Path) -> None:
    with pytest.raises(SessionError, match="cannot be read"):
        read(tmp_path / "gone.json")


def test_progress_counts_every_byte() -> None:
    for path in (JSONL, RECORD, SAVED):
        calls: list[int] = []
        session = read_gemini_cli(str(path), SessionWarnings(), calls.append)
        assert calls and all(n > 0 for n in calls)
        assert sum(calls) == session.size == path.stat().st_size


_ODD = [None, 0, 1.5, True, "", "x", "/x", "<x", [], [None], {}, {"a": 1}, [{"text": 1}]]


def _nodes(value: Any, into: list[tuple[Any, Any]]) -> None:
    if isinstance(value, dict):
        for key, item in value.items():
            into.append((value, key))
            _nodes(item, into)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            into.append((value, index))
            _nodes(item, into)


def _mutate(value: Any, rng: random.Random) -> Any:
    nodes: list[tuple[Any, Any]] = []
    _nodes(value, nodes)
    for container, key in rng.sample(nodes, min(len(nodes), rng.randint(1, 6))):
        container[key] = rng.choice(_ODD)
    return value


@pytest.mark.parametrize("fixture", [JSONL, RECORD, SAVED], ids=lambda p: p.suffix)
def test_odd_shapes_raise_nothing_but_session_error(tmp_path: Path, fixture: Path) -> None:
    rng = random.Random(20260512)
    text = fixture.read_text(encoding="utf-8")
    path = tmp_path / fixture.name
    for _ in range(150):
        if fixture.suffix == ".jsonl":
            records = [
                _mutate(json.loads(line), rng) if rng.random() < 0.3 else json.loads(line)
                for line in text.splitlines()
            ]
            write_jsonl(path, records)
        else:
            path.write_text(json.dumps(_mutate(json.loads(text), rng)), encoding="utf-8")
        try:
            session, _ = read(path)
        except SessionError as error:
            assert "\n" not in str(error)
            continue
        for turn in session.turns:
            assert isinstance(turn.prompt, str)
            assert all(isinstance(step, Step) and isinstance(step.text, str) for step in turn.steps)
            assert all(isinstance(ask.text, str) for ask in turn.asks)
