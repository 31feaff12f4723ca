"""The Codex CLI rollout reader: fixtures written the way codex-cli writes its rollouts."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ppp_tui.core.sessions.model import (
    Ask,
    Session,
    SessionError,
    SessionWarnings,
    StepKind,
    TestRun,
    Tool,
)
from ppp_tui.storage.sessions import common
from ppp_tui.storage.sessions.codex import read_codex

DATA = Path(__file__).parent / "data" / "sessions" / "codex"
BUG_FIX = DATA / "rollout-2026-03-14T09-12-05-0195e3b2-7c41-7d80-9a61-4f2c8e5d1a07.jsonl"
PLAN = DATA / "rollout-2026-05-02T14-40-11-019de0a4-2b6f-7e13-b8c5-61d0f7a93c24.jsonl"
LEGACY = DATA / "rollout-2025-06-20T16-05-44-5b0f9c9e-3d2a-4f7b-9e51-0c6d2a8e7f13.jsonl"
SUBAGENT = DATA / "rollout-2026-02-11T10-20-31-019c4d7e-5a10-7f42-8d3e-2b9a6c1f0e55.jsonl"
DAMAGED = DATA / "rollout-2025-11-03T08-55-09-019a4a1c-8f3e-7b22-a1d4-7c5e0b9f2d68.jsonl"
TOKENS_ONLY = DATA / "rollout-2025-12-29T19-31-07-019b77e0-4d2c-7a18-9f36-1e5d8c2b7a40.jsonl"

T, X, K, A = StepKind.TEXT, StepKind.TOOL, StepKind.THINKING, StepKind.ASK
Json = dict[str, Any]


def read(path: Path) -> tuple[Session, list[str]]:
    warnings = SessionWarnings()
    session = read_codex(str(path), warnings)
    return session, warnings.lines


def steps(session: Session, turn: int) -> list[tuple[StepKind, str]]:
    return [(step.kind, step.text) for step in session.turns[turn].steps]


def rollout(tmp_path: Path, *records: object, name: str = "rollout.jsonl") -> Path:
    """A rollout made of `records`: dicts are written as JSON lines, strings as they are."""
    path = tmp_path / name
    lines = [r if isinstance(r, str) else json.dumps(r) for r in records]
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


def env(kind: str, payload: object, at: str = "2026-01-05T10:00:00.000Z") -> Json:
    """One line of the envelope layout."""
    return {"timestamp": at, "type": kind, "payload": payload}


def item(at: str = "2026-01-05T10:00:05.000Z", **payload: object) -> Json:
    return env("response_item", payload, at)


def event(at: str = "2026-01-05T10:00:05.000Z", **payload: object) -> Json:
    return env("event_msg", payload, at)


META = env("session_meta", {"id": "s-1", "timestamp": "2026-01-05T10:00:00.000Z", "cwd": "/w"})


def prompt(text: str, at: str = "2026-01-05T10:00:01.000Z") -> Json:
    return item(at, type="message", role="user", content=text)


def call(name: str, arguments: object, call_id: str = "c") -> Json:
    return item(type="function_call", name=name, arguments=arguments, call_id=call_id)


# --------------------------------------------------------------------------- the fixtures


def test_a_bug_fix_session_reads_whole() -> None:
    session, warnings = read(BUG_FIX)
    assert warnings == []
    assert session.tool is Tool.CODEX
    assert session.id == "0195e3b2-7c41-7d80-9a61-4f2c8e5d1a07"
    assert session.path == str(BUG_FIX)
    assert session.started == "2026-03-14T09:12:05.902Z"
    assert session.cwd == "/home/dana/src/inventory-api"
    assert session.repository == "git@github.com:northwind-labs/inventory-api.git"
    assert session.branch == "fix/reservations"
    assert session.models == ["gpt-5.2-codex", "gpt-5.2"]
    assert session.size == BUG_FIX.stat().st_size
    # AGENTS.md, <environment_context> and the developer message are not prompts; each
    # prompt is written twice (item and event) and counted once.
    assert [turn.prompt for turn in session.turns] == [
        "The reservation tests fail since the stock refactor. Find out why and fix it.",
        "Also add a changelog entry, and check what the latest FastAPI release is.",
    ]
    assert [turn.timestamp for turn in session.turns] == [
        "2026-03-14T09:12:41.307Z",
        "2026-03-14T09:15:20.053Z",
    ]
    assert steps(session, 0) == [
        (
            K,
            "**Reproducing the failures**\n\nRunning the reservation tests first to see "
            "which assertions break.",
        ),
        (
            K,
            "**Planning the fix**\n\nIf `available` is stale after the refactor, `reserve()` "
            "must compute it from `on_hand` and `reserved`.",
        ),
        (X, "shell: pytest tests/test_reservations.py"),
        (
            T,
            "Both failures come from `reserve()`: it still reads `level.available`, which the "
            "refactor turned into a cached field that is only refreshed on restock. I'll "
            "compute it from `on_hand - reserved`.",
        ),
        (X, "apply_patch: src/inventory/reservations.py, tests/test_stock_math.py"),
        (X, "shell: pytest"),
        (
            T,
            "Fixed: `reserve()` now computes availability as `on_hand - reserved`, and a new "
            "`tests/test_stock_math.py` pins that down. The whole suite passes (43 tests).",
        ),
    ]
    assert steps(session, 1) == [
        (
            K,
            "**Looking up FastAPI**\n\nSearching the web for the current FastAPI release "
            "before editing the changelog.",
        ),
        (X, "web_search: FastAPI latest release version"),
        (X, "update_plan"),
        (X, "apply_patch: CHANGELOG.md"),
        (X, "shell: git diff --stat"),
        (
            T,
            "Added a **Fixed** entry under *Unreleased* in `CHANGELOG.md`.\n\nThe latest "
            "FastAPI release is 0.118.2; the project pins `fastapi>=0.115`, so no change is "
            "needed there.",
        ),
    ]
    assert session.turns[0].response().startswith("Both failures come from `reserve()`")
    assert all(turn.asks == [] for turn in session.turns)
    # The last test run in file order: the whole suite, after the fix.
    assert session.tests is not None
    assert (session.tests.passed, session.tests.failed) == (43, 0)


def test_plan_mode_asks_are_read_exactly() -> None:
    session, warnings = read(PLAN)
    assert warnings == []
    assert session.id == "019de0a4-2b6f-7e13-b8c5-61d0f7a93c24"
    assert session.repository == "https://github.com/tidepool-data/tidepool.git"
    assert session.models == ["gpt-5.5"]
    # codex-cli 0.148 writes no user_message event: the prompts are the user messages,
    # without AGENTS.md, <environment_context>, <turn_aborted> and developer messages.
    assert [turn.prompt for turn in session.turns] == [
        "Plan the move of our job queue from Redis to Postgres. Ask me whatever you need first.",
        "Looks good. Ask me about the rollback before you finalize.",
        "Roll back by flipping the flag. Finalize the plan now.",
    ]
    first, second, third = session.turns
    assert first.asks == [
        Ask(
            text="Which library should drive the Postgres job queue?",
            options=["Procrastinate (Recommended)", "pgmq", "Hand-rolled SKIP LOCKED"],
            header="Queue lib",
            answer="Procrastinate (Recommended)",
            seconds=pytest.approx(17.75),  # type: ignore[arg-type]
        ),
        Ask(
            text="How should the cutover from Redis happen?",
            options=["Big-bang weekend cutover (Recommended)", "Dual-write for a week"],
            header="Cutover",
            answer="Dual-write for a week; but only for the billing jobs",  # option + note
            seconds=pytest.approx(63.5),  # type: ignore[arg-type]
        ),
        Ask(
            text="How long should finished jobs be kept?",
            options=["7 days (Recommended)", "30 days"],
            header="Retention",
            answer="keep failed jobs 90 days, finished ones 7",  # typed in place of an option
            seconds=pytest.approx(63.5),  # type: ignore[arg-type]
        ),
        Ask(
            text="Where should queue metrics go?",
            options=["Prometheus (Recommended)", "StatsD"],
            header="Metrics",
            answer=None,  # submitted without an answer: not a dismissal
            dismissed=False,
            seconds=pytest.approx(63.5),  # type: ignore[arg-type]
        ),
    ]
    assert second.asks == [
        Ask(
            text="What should the rollback be if Postgres falls behind?",
            options=[
                "Flip the QUEUE_BACKEND flag back (Recommended)",
                "Restore the Redis snapshot",
            ],
            header="Rollback",
            answer=None,
            dismissed=True,  # Esc: "aborted by user after 41.3s", then turn_aborted
            seconds=pytest.approx(41.322),  # type: ignore[arg-type]
        )
    ]
    assert third.asks == [
        Ask(
            text="When can the migration run?",
            options=["Saturday 02:00-06:00 UTC (Recommended)", "Any weekday evening"],
            header="Window",
            answer=None,
            dismissed=True,  # "request_user_input was cancelled before receiving a response"
            seconds=pytest.approx(0.005),  # type: ignore[arg-type]
        )
    ]
    # Each question is one ASK step, where the call was, in the asks' order.
    assert [kind for kind, _ in steps(session, 0)] == [K, X, T, A, T, A, A, A, T]
    for turn in session.turns:
        asked = [step.text for step in turn.steps if step.kind is A]
        assert asked == [ask.text for ask in turn.asks]
    assert steps(session, 0)[1] == (X, 'shell_command: rg -n "redis" tidepool/jobs')
    assert steps(session, 1) == [(A, "What should the rollback be if Postgres falls behind?")]
    assert session.turns[2].response().startswith("<proposed_plan>\n# Move the job queue")
    assert session.tests is None


def test_the_legacy_flat_layout() -> None:
    session, warnings = read(LEGACY)
    assert warnings == []
    assert session.id == "5b0f9c9e-3d2a-4f7b-9e51-0c6d2a8e7f13"
    assert session.started == "2025-06-20T16:05:44.310Z"
    assert session.repository == "https://github.com/kestrel-oss/pagecache.git"
    assert session.branch == "main"
    assert session.cwd is None
    assert session.models == []
    assert [(turn.prompt, turn.timestamp) for turn in session.turns] == [
        ("Why does test_eviction_order fail on Python 3.13? Fix it if it's our bug.", None),
        ("Thanks. Commit it with a short message.", None),
    ]
    assert [kind for kind, _ in steps(session, 0)] == [K, X, T, X, X, T]
    assert steps(session, 0)[3] == (X, "apply_patch: pagecache/lru.py")  # apply_patch via shell
    assert steps(session, 1) == [
        (X, "shell: git commit -am Evict the least recently used key, not the newest"),
        (T, "Committed as 1f2e3d4."),
    ]
    # The shell outputs of the time are JSON in a string: the run after the fix is last.
    assert session.tests is not None
    assert (session.tests.passed, session.tests.failed) == (12, 0)


def test_a_sub_agent_thread_belongs_to_its_parent_without_the_replay() -> None:
    session, warnings = read(SUBAGENT)
    assert warnings == []
    assert session.id == "019c4d70-11aa-7c3b-9f20-4e8d2a6b7c91"  # the parent thread
    assert session.subagent
    assert session.started == "2026-02-11T10:20:31.398Z"
    assert session.models == ["gpt-5.1-codex-mini"]  # not the replayed parent's gpt-5.2
    assert session.repository == "git@gitlab.com:acme-finance/ledger.git"
    assert [turn.prompt for turn in session.turns] == [
        "Find every caller of `legacy_tax_rate()` and report file:line."
    ]
    assert steps(session, 0) == [
        (X, 'exec_command: rg -n "legacy_tax_rate\\(" --type py'),
        (
            T,
            "Two callers besides the definition (`ledger/tax/rates.py:41`):\n"
            "- `ledger/invoices/totals.py:88`\n- `ledger/reports/vat.py:17`",
        ),
    ]


def test_a_damaged_file_warns_and_reads_the_rest() -> None:
    session, warnings = read(DAMAGED)
    where = str(DAMAGED)
    assert warnings == [
        f"{where}:6: not JSON, skipped",
        f"{where}:17: cut short (the session may still be being written)",
        f"{where}:8: unknown record type 'turn_checkpoint': 2 lines skipped",
    ]
    assert session.id == "019a4a1c-8f3e-7b22-a1d4-7c5e0b9f2d68"  # the first session_meta
    assert session.started == "2025-11-03T08:55:09.604Z"
    assert session.repository is None
    assert session.models == ["gpt-5-codex", "gpt-5.1-codex"]
    # Prompts only as user_message events (no user item), the IDE context left out.
    assert [turn.prompt for turn in session.turns] == [
        "Rename `fetchUser` to `loadUser` everywhere and keep the old name as a deprecated alias.",
        "Now run the type checker.",
    ]
    assert steps(session, 0) == [
        (K, "**Finding usages**\n\nSearching for `fetchUser` across `src/`."),
        (X, 'shell: rg -n "fetchUser" src'),
        (
            T,
            "Two usages. Renaming and adding `export const fetchUser = loadUser` marked "
            "`@deprecated`.",
        ),
        (X, "apply_patch: src/api/users.ts, src/App.tsx"),
    ]
    assert steps(session, 1) == [(X, "shell: npx tsc --noEmit")]
    assert session.size == DAMAGED.stat().st_size


def test_a_file_of_token_counts_only_is_no_session() -> None:
    warnings = SessionWarnings()
    with pytest.raises(SessionError) as caught:
        read_codex(str(TOKENS_ONLY), warnings)
    message = str(caught.value)
    assert message.startswith(f"{TOKENS_ONLY}: no conversation in it (")
    assert "token_count" in message and "\n" not in message


def test_progress_is_told_every_line() -> None:
    seen: list[int] = []
    session = read_codex(str(BUG_FIX), SessionWarnings(), seen.append)
    assert len(seen) == len(BUG_FIX.read_bytes().splitlines())
    assert sum(seen) == session.size == BUG_FIX.stat().st_size


# --------------------------------------------------------------------------- asks


def ask_call(call_id: str, questions: object, at: str) -> Json:
    arguments = questions if isinstance(questions, str) else json.dumps({"questions": questions})
    name = "request_user_input"
    return item(at, type="function_call", name=name, arguments=arguments, call_id=call_id)


def output(call_id: str, text: object, at: str = "2026-01-05T10:00:09.000Z") -> Json:
    return item(at, type="function_call_output", call_id=call_id, output=text)


QUESTION = {
    "id": "db",
    "header": "Database",
    "question": "Which database?",
    "options": [
        {"label": "SQLite", "description": "a file"},
        {"label": "Postgres", "description": "a server"},
    ],
}


@pytest.mark.parametrize(
    ("answers", "expected"),
    [
        (["Postgres"], "Postgres"),
        (["None of the above"], "None of the above"),
        (["None of the above", "user_note: MySQL, sadly"], "MySQL, sadly"),
        (["SQLite", "user_note: in WAL mode"], "SQLite; in WAL mode"),
        (["user_note: whatever is cheapest"], "whatever is cheapest"),
        ([], None),
    ],
)
def test_an_answer_is_the_option_or_the_typed_text(
    tmp_path: Path, answers: list[str], expected: str | None
) -> None:
    response = json.dumps({"answers": {"db": {"answers": answers}}})
    path = rollout(
        tmp_path,
        META,
        prompt("Set up storage."),
        ask_call("c1", [QUESTION], "2026-01-05T10:00:02.500Z"),
        output("c1", response, "2026-01-05T10:00:09.000Z"),
    )
    session, warnings = read(path)
    assert warnings == []
    [ask] = session.turns[0].asks
    assert (ask.answer, ask.dismissed, ask.seconds) == (expected, False, 6.5)
    assert ask.options == ["SQLite", "Postgres"] and ask.header == "Database"


def test_an_ask_whose_turn_is_interrupted_without_output_is_dismissed(tmp_path: Path) -> None:
    path = rollout(
        tmp_path,
        META,
        prompt("Set up storage."),
        ask_call("c1", [QUESTION], "2026-01-05T10:00:02.000Z"),
        event("2026-01-05T10:00:12.000Z", type="turn_aborted", reason="interrupted"),
    )
    [ask] = read(path)[0].turns[0].asks
    assert (ask.answer, ask.dismissed, ask.seconds) == (None, True, 10.0)


def test_an_ask_the_tool_refused_is_neither_answered_nor_dismissed(tmp_path: Path) -> None:
    path = rollout(
        tmp_path,
        META,
        prompt("Set up storage."),
        ask_call("c1", [QUESTION], "2026-01-05T10:00:02.000Z"),
        output("c1", "request_user_input is unavailable in Default mode"),
        ask_call("c2", [QUESTION], "2026-01-05T10:00:10.000Z"),  # never answered
    )
    asks = read(path)[0].turns[0].asks
    assert [(a.answer, a.dismissed, a.seconds) for a in asks] == [(None, False, None)] * 2


def test_malformed_ask_arguments_are_a_tool_step(tmp_path: Path) -> None:
    odd = [None, {"question": None, "options": ["A", {"label": 3}, None]}]
    path = rollout(
        tmp_path,
        META,
        prompt("Go."),
        ask_call("c1", "{not json", "2026-01-05T10:00:02.000Z"),
        ask_call("c2", json.dumps({"questions": "Which one?"}), "2026-01-05T10:00:03.000Z"),
        ask_call("c3", odd, "2026-01-05T10:00:04.000Z"),
        output("c3", '{"answers": {"1": {"answers": ["A"]}}}'),
    )
    session, warnings = read(path)
    assert warnings == []
    assert steps(session, 0) == [(X, "request_user_input"), (X, "request_user_input"), (A, "")]
    assert session.turns[0].asks == [Ask(text="", options=["A"], answer="A", seconds=5.0)]


def test_questions_are_never_taken_from_other_tools_or_reasoning(tmp_path: Path) -> None:
    other = json.dumps({"questions": [QUESTION]})
    thought = [{"type": "summary_text", "text": "Should I ask which database?"}]
    path = rollout(
        tmp_path,
        META,
        prompt("Go."),
        item(type="reasoning", summary=thought),
        call("ask_the_user", other),
        item(
            type="function_call", name="request_user_input", namespace="mcp__forms", arguments=other
        ),
    )
    session = read(path)[0]
    assert session.turns[0].asks == []
    assert steps(session, 0) == [
        (K, "Should I ask which database?"),
        (X, "ask_the_user"),
        (X, "mcp__forms.request_user_input"),
    ]


# --------------------------------------------------------------------------- steps and prompts


def test_tool_lines_are_one_line_and_cut(tmp_path: Path) -> None:
    script = "for f in $(ls src); do\n  echo $f\ndone && " + "x" * 300
    path = rollout(
        tmp_path,
        META,
        prompt("Go."),
        call("shell", json.dumps({"command": ["bash", "-lc", script]})),
        call("shell", json.dumps({"command": ["python", "-m", "pytest", "-q"]})),
        item(type="web_search_call", action={"type": "search", "query": "a\nb " * 100}),
        call("view_image", "not json at all"),
        call("mcp__docs__search", json.dumps({"limit": 3})),
        item(type="custom_tool_call", name="apply_patch", input="*** Begin Patch\n*** End Patch"),
    )
    lines = [text for _, text in steps(read(path)[0], 0)]
    assert lines[0].startswith("shell: for f in $(ls src); do echo $f done && xxx")
    assert len(lines[0]) == 120 and lines[0].endswith("…")
    assert lines[1] == "shell: python -m pytest -q"
    assert lines[2].startswith("web_search: a b a b") and len(lines[2]) == 120
    assert lines[3:] == ["view_image: not json at all", "mcp__docs__search", "apply_patch"]
    assert all("\n" not in line for line in lines)


def test_text_is_kept_literally(tmp_path: Path) -> None:
    odd = "Fix \x1b[31mred\x1b[0m [bold]now[/bold]\r\n<b>ok</b>"
    path = rollout(
        tmp_path,
        META,
        event(type="user_message", message=odd),
        event(type="agent_message", message="Done: [link]x[/link] \x07"),
    )
    session = read(path)[0]
    assert session.turns[0].prompt == odd
    assert steps(session, 0) == [(T, "Done: [link]x[/link] \x07")]


def test_echoes_pair_up_in_either_order_and_repeats_still_count(tmp_path: Path) -> None:
    reply = item(type="message", role="assistant", content=[{"type": "output_text", "text": "Ok."}])
    echo = event(type="agent_message", message="Ok.")
    typed = event(type="user_message", message="yes")
    path = rollout(
        tmp_path, META, typed, prompt("yes"), reply, echo, echo, reply, typed, prompt("yes")
    )
    session = read(path)[0]
    assert [turn.prompt for turn in session.turns] == ["yes", "yes"]  # typed twice
    assert steps(session, 0) == [(T, "Ok."), (T, "Ok.")]  # said twice, each written twice
    assert steps(session, 1) == []


def test_injected_context_and_compaction_are_not_prompts(tmp_path: Path) -> None:
    image = {"type": "input_image", "image_url": "data:image/png;base64,iVBO"}
    tagged = [
        {"type": "input_text", "text": "<image name=[Image #1]>"},
        image,
        {"type": "input_text", "text": "</image>"},
        {"type": "input_text", "text": "What is in this screenshot?"},
    ]
    old = [{"type": "message", "role": "user", "content": "old prompt"}]
    path = rollout(
        tmp_path,
        META,
        prompt("<user_instructions>\nBe terse.\n</user_instructions>"),
        prompt("# AGENTS.md instructions for /w\n\n<INSTRUCTIONS>\nx\n</INSTRUCTIONS>"),
        item(type="message", role="developer", content=[{"type": "input_text", "text": "Plan."}]),
        env("compacted", {"message": "Summary so far", "replacement_history": old}),
        prompt("Another language model started to solve this problem and produced a summary..."),
        event(type="user_message", message="Be terse.", kind="user_instructions"),
        item(type="message", role="user", content=[image]),
        item(type="message", role="user", content=tagged),
    )
    session, warnings = read(path)
    assert warnings == []
    assert [turn.prompt for turn in session.turns] == ["", "What is in this screenshot?"]


def test_test_evidence_counts_each_command_once_and_reads_the_tail(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[int] = []

    def spy(text: str) -> TestRun | None:
        seen.append(len(text))
        if "2 failed" in text:
            return TestRun(5, 2, "pytest: 5 passed, 2 failed")
        if "7 passed" in text:
            return TestRun(7, 0, "pytest: 7 passed, 0 failed")
        return None

    monkeypatch.setattr(common, "find_test_run", spy)  # the readers' shared tests_in
    failing = "x" * 100_000 + "\n==== 2 failed, 5 passed in 1.0s ===="
    passing = [{"type": "input_text", "text": "==== 7 passed in 0.5s ===="}]
    mcp = {"Ok": {"content": [{"type": "text", "text": "no tests here"}]}}
    path = rollout(
        tmp_path,
        META,
        prompt("Go."),
        event(type="exec_command_end", call_id="a", aggregated_output=failing, exit_code=1),
        output("b", passing),
        output("a", "Exit code: 1\nOutput:\n" + failing),  # the same command: not recounted
        event(type="mcp_tool_call_end", call_id="m", result=mcp),
    )
    session = read(path)[0]
    assert session.tests == TestRun(7, 0, "pytest: 7 passed, 0 failed")
    assert len(seen) == 3 and max(seen) == 8192


# --------------------------------------------------------------------------- bad input


def test_odd_shapes_never_raise(tmp_path: Path) -> None:
    raw = [{"type": "reasoning_text", "text": "raw thought"}]
    path = rollout(
        tmp_path,
        META,
        env("session_meta", None),
        env("response_item", ["not", "an", "object"]),
        env("turn_context", {"model": None, "cwd": 7}),
        prompt("Go."),
        item(type="message", role="assistant", content=None),
        item(type="message", role="assistant", content="plain string"),
        item(type="reasoning", summary=None, content=None, encrypted_content="gAAAA"),
        item(type="reasoning", summary=[], content=raw),
        item(type="function_call", name=None, arguments=None),
        call("shell", "[1, 2]"),
        call("shell", {"command": [1, None]}),
        item(type="local_shell_call", action=None),
        item(type="web_search_call", action={"type": "open_page", "url": None}),
        item(type="function_call_output", call_id=None, output=None),
        item(type="custom_tool_call_output", call_id=5, output={"content": 3}),
        event(type="agent_message", message=None),
        event(type="exec_command_end", call_id="z", stdout=None),
        env("event_msg", None),
        "12",
        '"a string"',
        "",
    )
    session, warnings = read(path)
    assert warnings == [
        f"{path}:20: not a JSON object, skipped",
        f"{path}:21: not a JSON object, skipped",
    ]
    assert session.id == "s-1" and session.models == [] and session.cwd == "/w"
    assert [turn.prompt for turn in session.turns] == ["Go."]
    assert steps(session, 0) == [
        (T, "plain string"),
        (K, "raw thought"),
        (X, "function_call"),
        (X, "shell: [1, 2]"),
        (X, "shell"),
        (X, "shell"),
        (X, "web_search"),
    ]


def test_unknown_record_types_are_one_warning_each(tmp_path: Path) -> None:
    path = rollout(
        tmp_path,
        META,
        prompt("Go."),
        env("future_record", {}),
        env("world_state", {"full": True}),
        env("future_record", {}),
        item(type="hologram_call"),
        event(type="brand_new_event"),
    )
    warnings = read(path)[1]
    assert warnings == [
        f"{path}:3: unknown record type 'future_record': 2 lines skipped",
        f"{path}:6: unknown record type 'response_item hologram_call': 1 line skipped",
    ]


def test_many_lines_that_are_not_json_are_summed_up(tmp_path: Path) -> None:
    path = rollout(tmp_path, META, prompt("Go."), *(["garbage {"] * 25))
    warnings = read(path)[1]
    assert len(warnings) == 21
    assert warnings[0] == f"{path}:3: not JSON, skipped"
    assert warnings[-1] == f"{path}: 5 more lines not JSON, skipped"


def test_a_last_line_is_cut_short_only_without_its_newline(tmp_path: Path) -> None:
    whole = rollout(tmp_path, META, prompt("Go."), '{"timestamp": "2026')
    assert read(whole)[1] == [f"{whole}:3: not JSON, skipped"]  # its newline was written
    cut = tmp_path / "cut.jsonl"
    cut.write_bytes(whole.read_bytes()[:-1])
    assert read(cut)[1] == [f"{cut}:3: cut short (the session may still be being written)"]


def test_a_command_behind_much_white_space_is_still_shown(tmp_path: Path) -> None:
    command = "echo" + " " * 600 + "hello"
    session = read(rollout(tmp_path, META, prompt("Go."), call("shell", {"command": command})))[0]
    assert steps(session, 0) == [(X, "shell: echo hello")]


def test_invalid_utf8_is_replaced(tmp_path: Path) -> None:
    path = tmp_path / "rollout.jsonl"
    record = json.dumps(event(type="user_message", message="caf\u00e9"))
    path.write_bytes(record.replace("\\u00e9", "\xe9").encode("latin-1") + b"\n")
    assert read(path)[0].turns[0].prompt == "caf\ufffd"


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        (b"", "empty file, no conversation in it"),
        (b"\x89PNG\r\n\x1a\n\x00\x00", "not a Codex rollout (no line of it is JSON)"),
        (b'{"type": "user", "message": {"role": "user", "content": "hi"}}\n', "no conversation"),
    ],
)
def test_files_that_are_no_session_raise_one_line(
    tmp_path: Path, content: bytes, problem: str
) -> None:
    path = tmp_path / "x.jsonl"
    path.write_bytes(content)
    with pytest.raises(SessionError) as caught:
        read_codex(str(path), SessionWarnings())
    assert str(caught.value).startswith(f"{path}: {problem}")
    assert "\n" not in str(caught.value)


def test_a_missing_file_raises_a_session_error(tmp_path: Path) -> None:
    with pytest.raises(SessionError, match="cannot be read"):
        read_codex(str(tmp_path / "gone.jsonl"), SessionWarnings())


def test_without_a_header_the_id_comes_from_the_file_name(tmp_path: Path) -> None:
    name = "rollout-2025-08-01T12-00-00-0198a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b.jsonl"
    path = rollout(tmp_path, prompt("Go."), name=name)
    session = read(path)[0]
    assert session.id == "0198a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b"
    assert session.started == "2026-01-05T10:00:01.000Z"  # the first prompt's time


def test_a_flood_of_unknown_record_types_is_summed_up(tmp_path: Path) -> None:
    records = [env(f"future_{n}", {}) for n in range(25)] + [env("future_24", {})]
    warnings = read(rollout(tmp_path, META, prompt("Go."), *records))[1]
    assert len(warnings) == 21
    assert (
        warnings[0]
        == f"{tmp_path / 'rollout.jsonl'}:3: unknown record type 'future_0': 1 line skipped"
    )
    assert warnings[-1].endswith(": 6 more lines of unknown record types skipped")
