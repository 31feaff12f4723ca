"""The demo's runs read from coding agents' sessions: conversations as users lived them.

A few hand-written sessions of Claude Code, Codex CLI and Gemini CLI (prompts, text,
tool calls, thinking, questions asked through each agent's ask tool with options,
answers, a dismissal and answer times, test runs, edits of files: edits.py), made into
runs by the same steps an import of real transcripts takes, so `browse --demo` shows a conversation.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

from ...core.model import Run
from ...core.sessions.changes import SessionEdit
from ...core.sessions.grouping import (
    agent_names,
    revision,
    run_id,
    session_key,
    session_run,
    task_key,
)
from ...core.sessions.model import Ask, Session, SessionTurn, Step, StepKind, TestRun, Tool
from . import edits
from .draw import DAYS, START

T, X, K, Q = StepKind.TEXT, StepKind.TOOL, StepKind.THINKING, StepKind.ASK
# Near the end of the generated runs' period, so the dashboard's time line stays theirs.
_START = (START + timedelta(days=DAYS - 10)).replace(hour=9, minute=30)
_REPOSITORY = "github.com/acme/shop-api"

_RATE_LIMIT = (
    "Add rate limiting to the public /api/search endpoint: 100 requests per minute per API"
    " key, answering 429 with a Retry-After header."
)
_TOML = (
    "Move the CLI's config loading from configparser to tomllib, and keep old .ini files"
    " readable for one more release."
)
_FLAKY = "Fix the flaky test_upload_resume test in the storage service."


def _at(minutes: float) -> str:
    return (_START + timedelta(minutes=minutes)).isoformat().replace("+00:00", "Z")


def _session(
    tool: Tool,
    number: int,
    minutes: float,
    models: list[str],
    turns: list[SessionTurn],
    tests: TestRun | None,
) -> Session:
    return Session(
        tool=tool,
        id=f"demo-{tool.value}-{number:04d}",
        path=f"<demo {tool.value} session {number}>",
        started=_at(minutes),
        repository=_REPOSITORY,
        models=models,
        turns=turns,
        tests=tests,
        size=1,
    )


def _turn(
    prompt: str,
    minutes: float,
    steps: list[tuple[StepKind, str]],
    asks: list[Ask],
    changes: list[SessionEdit] | None = None,
) -> SessionTurn:
    return SessionTurn(
        prompt, _at(minutes), [Step(kind, text) for kind, text in steps], asks, changes or []
    )


def _rate_limit() -> list[Session]:
    claude = _session(
        Tool.CLAUDE_CODE,
        1,
        0,
        ["claude-opus-4-5"],
        [
            _turn(
                _RATE_LIMIT,
                0,
                [
                    (
                        K,
                        "The limit must hold across the API's four workers, so counters"
                        " cannot live in one process. Worth asking where they should live.",
                    ),
                    (T, "I'll look at how the search endpoint is wired first."),
                    (X, "Read: app/api/search.py"),
                    (X, "Grep: RateLimiter|throttle"),
                    (Q, "Where should the rate-limit counters live?"),
                    (Q, "What should happen when Redis is unreachable?"),
                    (X, "Write: app/ratelimit.py"),
                    (X, "Edit: app/api/search.py"),
                    (X, "Bash: pytest -q tests/api"),
                    (
                        T,
                        "Requests past 100 a minute per API key now get 429 with Retry-After."
                        " 41 of 43 tests pass; the two failures are in test_search_pagination,"
                        " which fails on main too. Should I look into those as well?",
                    ),
                ],
                [
                    Ask(
                        "Where should the rate-limit counters live?",
                        ["Redis (shared by every worker)", "In-process memory", "Postgres"],
                        header="Counters",
                        answer="Redis (shared by every worker)",
                        seconds=14.2,
                    ),
                    Ask(
                        "What should happen when Redis is unreachable?",
                        ["Fail open (allow the request)", "Fail closed (answer 503)"],
                        header="Redis down",
                        answer="Fail open (allow the request)",
                        seconds=9.0,
                    ),
                ],
                edits.rate_limit_claude(),
            )
        ],
        TestRun(41, 2, "pytest: 41 passed, 2 failed"),
    )
    codex = _session(
        Tool.CODEX,
        1,
        3,
        ["gpt-5.1-codex"],
        [
            _turn(
                _RATE_LIMIT,
                3,
                [
                    (
                        K,
                        "Planning a middleware keyed on the API key; a token bucket fits"
                        " the per-minute limit.",
                    ),
                    (X, "shell: rg -n 'def search' app"),
                    (Q, "Which value identifies a client?"),
                    (
                        T,
                        "I'll key the limit on the X-API-Key header, as the task says, and"
                        " fall back to the client's IP for anonymous calls.",
                    ),
                    (
                        X,
                        "apply_patch: app/middleware/ratelimit.py, tests/test_ratelimit.py,"
                        " app/main.py",
                    ),
                    (X, "shell: pytest -q"),
                    (T, "Done: all 43 tests pass, including two new ones for 429 and Retry-After."),
                ],
                [
                    Ask(
                        "Which value identifies a client?",
                        ["X-API-Key header", "Client IP address"],
                        header="Client key",
                        dismissed=True,
                        seconds=31.5,
                    )
                ],
                edits.rate_limit_codex(),
            )
        ],
        TestRun(43, 0, "pytest: 43 passed, 0 failed"),
    )
    gemini = _session(
        Tool.GEMINI_CLI,
        1,
        5,
        ["gemini-2.5-pro"],
        [
            _turn(
                _RATE_LIMIT,
                5,
                [
                    (K, "Rate limiting: I need to check the framework's middleware support first."),
                    (X, "read_file: app/api/search.py"),
                    (
                        T,
                        "Before I start: should the limit be configurable per environment?"
                        " And should admin keys be exempt from it?",
                    ),
                ],
                [],
            ),
            _turn(
                "One limit everywhere; admin keys are limited too.",
                9,
                [
                    (X, "replace: app/api/search.py"),
                    (T, "I added a fixed-window limiter to the endpoint."),
                ],
                [],
                edits.rate_limit_gemini(),
            ),
        ],
        None,
    )
    return [claude, codex, gemini]


def _toml() -> list[Session]:
    claude = _session(
        Tool.CLAUDE_CODE,
        2,
        1440,
        ["claude-sonnet-4-5"],
        [
            _turn(
                _TOML,
                1440,
                [
                    (X, "Read: cli/config.py"),
                    (Q, "Should reading an old .ini file print a deprecation warning?"),
                    (X, "Edit: cli/config.py"),
                    (X, "Bash: pytest"),
                    (
                        T,
                        "Config now loads from config.toml; an .ini file is still read and"
                        " warns under --verbose. 118 tests pass.",
                    ),
                ],
                [
                    Ask(
                        "Should reading an old .ini file print a deprecation warning?",
                        ["Yes, once per run", "No, read it silently"],
                        header="Warning",
                        answer="Yes, but only with --verbose",
                        seconds=47.0,
                    )
                ],
                edits.toml_claude(),
            ),
            _turn(
                "Also mention the change in CHANGELOG.md.",
                1452,
                [(X, "Edit: CHANGELOG.md"), (T, "Added an entry under Unreleased.")],
                [],
                edits.toml_changelog(),
            ),
        ],
        TestRun(118, 0, "pytest: 118 passed, 0 failed"),
    )
    codex = _session(
        Tool.CODEX,
        2,
        1446,
        ["gpt-5.1-codex"],
        [
            _turn(
                _TOML,
                1446,
                [
                    (X, "shell: rg -n configparser"),
                    (X, "apply_patch: cli/config.py"),
                    (X, "shell: pytest"),
                    (
                        T,
                        "Switched to tomllib with an .ini fallback; 117 of 118 tests pass"
                        " (test_ini_roundtrip expects the old writer).",
                    ),
                ],
                [],
                edits.toml_codex(),
            )
        ],
        TestRun(117, 1, "pytest: 117 passed, 1 failed"),
    )
    return [claude, codex]


def _flaky() -> list[Session]:
    sonnet = _session(
        Tool.CLAUDE_CODE,
        3,
        2900,
        ["claude-sonnet-4-5"],
        [
            _turn(
                _FLAKY,
                2900,
                [
                    (X, "Bash: go test ./storage/... -run TestUploadResume -count 50"),
                    (
                        T,
                        "It fails about 1 run in 12. Can you share the CI log of a failing"
                        " run, so I can see which step times out there?",
                    ),
                ],
                [],
            )
        ],
        None,
    )
    opus = _session(
        Tool.CLAUDE_CODE,
        4,
        2904,
        ["claude-opus-4-5"],
        [
            _turn(
                _FLAKY,
                2904,
                [
                    (
                        K,
                        "The resume test shares a temp dir between subtests; a race on"
                        " the part file would explain 1 failure in a dozen.",
                    ),
                    (X, "Bash: go test ./storage/... -run TestUploadResume -count 50 -race"),
                    (X, "Edit: storage/upload_test.go"),
                    (X, "Bash: go test ./storage/..."),
                    (
                        T,
                        "The subtests raced on one temp dir; each now gets its own."
                        " 50 runs in a row pass.",
                    ),
                ],
                [],
                edits.flaky_opus(),
            )
        ],
        TestRun(56, 0, "go test: 56 passed, 0 failed"),
    )
    return [sonnet, opus]


# How many runs read from sessions a demo holds on top of its generated runs.
SESSION_RUNS = 3


def session_runs() -> list[tuple[Run, str]]:
    """The demo's `SESSION_RUNS` session runs, each with the revision an import records
    (so they can be grouped and ungrouped as imported ones); the first carries a mark
    (codex preferred)."""
    runs = []
    for sessions in (_rate_limit(), _toml(), _flaky()):
        key = task_key(sessions[0].first_prompt(), _REPOSITORY)
        run = session_run(sessions, run_id(sessions), agent_names(sessions), key, None)
        runs.append((run, revision(key, {session_key(s): s.size for s in sessions})))
    runs[0] = (replace(runs[0][0], preferred_agent="codex"), runs[0][1])
    return runs
