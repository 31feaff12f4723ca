"""Hostile input gets one error line and exit code 1, never a traceback, and loses nothing.

Import and `score` are fed numbers out of range, oversized integers, deep nesting,
broken Unicode, devices and empty inputs; config.toml out-of-range numbers; the
database values an outside edit can leave. A property-based test then throws
arbitrary JSON-ish documents and bytes at both commands.
"""

from __future__ import annotations

import json
import math
import os
import sqlite3
import stat
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from helpers import opened
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ppp_tui.cli import cli
from ppp_tui.core.errors import RunError
from ppp_tui.core.model import MAX_ITERATION_SCORE, MAX_PENALTY
from ppp_tui.core.runs import run_from_dict
from ppp_tui.core.scoring import rank_key, tie_key
from ppp_tui.storage import files


def _run(*args: str, input: str | bytes | None = None) -> Result:
    return CliRunner().invoke(cli, list(args), input=input)


def _one_error_line(result: Result) -> str:
    """The command failed cleanly: exit 1, no traceback, one line on standard error."""
    assert result.exit_code == 1, (result.exit_code, result.output)
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(
        result.exception
    )
    assert "Traceback" not in result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: "), result.stderr
    return lines[0]


def _good_run(**changes: Any) -> dict[str, Any]:
    run: dict[str, Any] = {
        "id": "r1",
        "stage": "plan",
        "iterations": [8.1, 8.7],
        "agents": [
            {
                "name": "a",
                "technical_score": 0.5,
                "trajectory": {
                    "questions": [{"text": "Which database?", "effort": "low", "turn": 1}],
                    "violations": [{"preference": "json", "turn": 1}],
                },
            },
            {"name": "b", "technical_score": 0.6},
        ],
    }
    run.update(changes)
    return run


def _dump(db: Path) -> list[str]:
    if not db.exists():
        return []
    with sqlite3.connect(db) as conn:
        return list(conn.iterdump())


@pytest.fixture(autouse=True)
def empty_config(tmp_path: Path) -> Path:
    """The config.toml the commands are pointed at: it must exist when named."""
    config = tmp_path / "c.toml"
    config.touch()
    return config


@pytest.fixture
def seeded(tmp_path: Path) -> Path:
    """A database holding one run, to show that a failed import leaves it as it was."""
    source = tmp_path / "seed.json"
    source.write_text(json.dumps(_good_run(id="seed")))
    db = tmp_path / "runs.db"
    result = _run("import", str(source), "--db", str(db), "--config", str(tmp_path / "c.toml"))
    assert result.exit_code == 0, result.output
    return db


def _text(run: dict[str, Any]) -> str:
    return json.dumps(run)


def _with_violation(**fields: Any) -> dict[str, Any]:
    run = _good_run()
    run["agents"][0]["trajectory"]["violations"][0].update(fields)
    return run


# Each finding: the file's name and text, and what the error line must say.
FINDINGS: dict[str, tuple[str, str | bytes, str]] = {
    "penalty 1e308": (
        "p.json",
        _text(_with_violation(penalty=1e308)),
        "violations[0].penalty: penalty must be at most 1000",
    ),
    "penalty of 400 digits (JSON reads infinity)": (
        "p.json",
        _text(_with_violation(penalty=0)).replace(
            '"penalty": 0', '"penalty": 1' + "0" * 400 + ".0"
        ),
        "penalty: expected a finite number",
    ),
    "10^400 in technical_score": (
        "t.json",
        _text(_good_run()).replace('"technical_score": 0.5', '"technical_score": 1e400'),
        "agents[0].technical_score: expected a finite number",
    ),
    "an integer of 400 digits in technical_score": (
        "t.json",
        _text(_good_run()).replace('"technical_score": 0.5', '"technical_score": 1' + "0" * 400),
        "technical_score: number out of range",
    ),
    "an integer of 5000 digits": (
        "i.json",
        _text(_good_run()).replace('"turn": 1}]', '"turn": ' + "9" * 5000 + "}]", 1),
        "a number of more than 4300 digits",
    ),
    "turn 2**63": (
        "turn.json",
        _text(_good_run()).replace('"turn": 1}]', f'"turn": {2**63}}}]', 1),
        "questions[0].turn: turn must be a whole number >= 0 (below 2**63)",
    ),
    "token_count 2**64": (
        "tokens.json",
        _text(
            _good_run(
                agents=[
                    {
                        "name": "a",
                        "technical_score": 0.5,
                        "trajectory": {"turns": [{"response": "ok", "token_count": 2**64}]},
                    }
                ]
            )
        ),
        "turns[0].token_count: token_count must be a number >= 0 (below 2**63)",
    ),
    "iteration score 1e7": (
        "it.json",
        _text(_good_run(iterations=[1.0, 1e7])),
        "iterations[1]: an iteration's score must be in [-1e+06, 1e+06]",
    ),
    "NaN (not JSON)": (
        "nan.json",
        _text(_good_run()).replace('"technical_score": 0.6', '"technical_score": NaN'),
        "agents[1].technical_score: expected a finite number, got NaN",
    ),
    "nesting 100000 deep": (
        "deep.json",
        '{"a": ' + "[" * 100_000 + "]" * 100_000 + ', "agents": []}',
        "nested too deeply",
    ),
    "nesting 100000 deep in JSON Lines": (
        "deep.jsonl",
        json.dumps(_good_run(id="fine")) + "\n" + '{"a": ' + "[" * 100_000 + "]" * 100_000 + "}\n",
        "deep.jsonl:2: invalid JSON: nested too deeply",
    ),
    "a lone surrogate": (
        "s.json",
        _text(_good_run()).replace("Which database?", "Which \\ud800 database?"),
        "questions[0].text: a lone surrogate \\ud800 is not Unicode text",
    ),
    "a lone surrogate in a key, JSON Lines": (
        "s.jsonl",
        _text(_good_run(extra={"\\udc00": 1})).replace("\\\\udc00", "\\udc00") + "\n",
        "$.extra: a key with a lone surrogate \\udc00 is not Unicode text",
    ),
    "invalid UTF-8 inside a string": (
        "u.json",
        _text(_good_run())
        .replace("Which database?", "Which \x00 database?")
        .encode()
        .replace(b"\x00", b"\xff\xfe"),
        "not UTF-8 text (invalid start byte",
    ),
    "an empty .json": ("e.json", "", "e.json: no runs in it"),
    "an empty .jsonl": ("e.jsonl", "", "e.jsonl: no runs in it"),
    "a .jsonl of blank lines": ("b.jsonl", "\n  \n\n", "b.jsonl: no runs in it"),
    "an empty list": ("l.json", "[]", "l.json: no runs in it (an empty list)"),
}


@pytest.mark.parametrize("command", ["import", "score"])
@pytest.mark.parametrize("finding", list(FINDINGS))
def test_each_finding_is_one_error_line(
    finding: str, command: str, seeded: Path, tmp_path: Path
) -> None:
    name, content, expected = FINDINGS[finding]
    path = tmp_path / name
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8", errors="surrogatepass")
    before = _dump(seeded)
    result = _run(command, str(path), "--db", str(seeded), "--config", str(tmp_path / "c.toml"))
    line = _one_error_line(result)
    assert expected in line
    assert _dump(seeded) == before


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (
            _text(_good_run())
            .replace("Which database?", "Which \x00 database?")
            .encode()
            .replace(b"\x00", b"\xff\xfe"),
            "<stdin>: not UTF-8 text",
        ),
        (b"", "<stdin>: no runs in it"),
        (b"  \n", "<stdin>: no runs in it"),
        (_text(_good_run()).replace("Which database?", "\\udfff").encode(), "lone surrogate"),
    ],
)
@pytest.mark.parametrize("command", ["import", "score"])
def test_standard_input_is_checked_as_bytes(
    data: bytes, expected: str, command: str, seeded: Path, tmp_path: Path
) -> None:
    before = _dump(seeded)
    result = _run(
        command, "-", "--db", str(seeded), "--config", str(tmp_path / "c.toml"), input=data
    )
    assert expected in _one_error_line(result)
    assert _dump(seeded) == before


def test_classify_reads_standard_input_as_utf8() -> None:
    result = _run("classify", input=b"Which \xff\xfe database?\n")
    assert "<stdin>: not UTF-8 text (invalid start byte at byte 6)" in _one_error_line(result)
    result = _run("classify", input=b"Which database: PostgreSQL or MySQL?\n")
    assert result.exit_code == 0 and result.output.startswith("low")


def test_a_device_is_refused_unread(
    seeded: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A regular file that os.fstat calls a character device (like /dev/zero).
    path = tmp_path / "zero"
    path.write_text(_text(_good_run()))
    real_fstat = os.fstat

    def fstat(fd: int) -> os.stat_result:
        found = real_fstat(fd)
        return os.stat_result((stat.S_IFCHR | 0o666, *tuple(found)[1:]))

    monkeypatch.setattr("ppp_tui.storage.files.os.fstat", fstat)
    result = _run("import", str(path), "--db", str(seeded))
    assert "zero: not a regular file or a pipe" in _one_error_line(result)


def test_a_pipe_is_read(tmp_path: Path) -> None:
    fifo = tmp_path / "runs.fifo"
    os.mkfifo(fifo)
    pid = os.fork()
    if pid == 0:  # the writer
        with open(fifo, "w") as pipe:
            pipe.write(_text(_good_run()))
        os._exit(0)
    try:
        result = _run("score", str(fifo), "--json", "--config", str(tmp_path / "c.toml"))
    finally:
        os.waitpid(pid, 0)
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["run_id"] == "r1"


@pytest.mark.parametrize("stdin", [False, True])
def test_an_input_past_the_size_cap_is_refused(
    stdin: bool, seeded: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    text = _text(_good_run())
    monkeypatch.setattr(files, "MAX_INPUT_BYTES", len(text) - 1)
    path = tmp_path / "big.json"
    path.write_text(text)
    before = _dump(seeded)
    args = ["import", "-" if stdin else str(path), "--db", str(seeded)]
    result = _run(*args, input=text if stdin else None)
    assert "split the runs into several files" in _one_error_line(result)
    assert _dump(seeded) == before


# -- the numbers rule -------------------------------------------------------------


def _violation_penalty(penalty: Any) -> float | None:
    run = run_from_dict(_with_violation(penalty=penalty))
    trajectory = run.agents[0].trajectory
    assert trajectory is not None
    return trajectory.violations[0].penalty


def test_penalties_up_to_the_bound_are_accepted() -> None:
    assert _violation_penalty(MAX_PENALTY) == 1000.0
    assert _violation_penalty(1000) == 1000.0
    assert _violation_penalty(0.25) == 0.25
    with pytest.raises(RunError, match=r"violations\[0\]\.penalty: penalty must be at most 1000"):
        _violation_penalty(1000.5)
    with pytest.raises(RunError, match="at most 1000, got 1001"):
        _violation_penalty(1001)


def test_iteration_scores_and_turns_at_their_bounds() -> None:
    scores = (-MAX_ITERATION_SCORE, MAX_ITERATION_SCORE)
    assert run_from_dict(_good_run(iterations=list(scores))).iterations == scores
    with pytest.raises(RunError, match=r"iterations\[0\]"):
        run_from_dict(_good_run(iterations=[-1_000_001]))
    run = _good_run()
    run["agents"][0]["trajectory"]["questions"][0]["turn"] = 2**63 - 1
    trajectory = run_from_dict(run).agents[0].trajectory
    assert trajectory is not None and trajectory.questions[0].turn == 2**63 - 1


def test_tie_key_orders_infinities_and_nan_without_raising() -> None:
    assert tie_key(0.645) == 645_000_000
    assert tie_key(math.inf) == math.inf
    assert math.isnan(tie_key(math.nan))
    assert sorted([rank_key(math.inf, 0.5, "b"), rank_key(0.5, 0.5, "a")])[0][3] == "b"


# -- config.toml ---------------------------------------------------------------------

CONFIGS = {
    "a 400-digit weight": (
        "[ppp.weights]\ntechnical = 1" + "0" * 400 + "\ninteraction = 0.3\n",
        "ppp.weights.technical: number out of range",
    ),
    "a 5000-digit weight": (
        "[ppp.weights]\ntechnical = 1" + "0" * 5000 + "\ninteraction = 0.3\n",
        "invalid TOML: a number of more than 4300 digits",
    ),
    "a penalty of 1e308": (
        "[ppp.penalties]\njson = 1e308\n",
        "ppp.penalties.json: must be at most",
    ),
    "a stage's weights that are not a table": (
        '[ppp.weights]\nplan = "x"\n',
        "ppp.weights.plan: expected a table of the stage's weights",
    ),
    "nesting 3000 deep": ("x = " + "[" * 3000 + "]" * 3000 + "\n", "nested too deeply"),
}


@pytest.mark.parametrize("case", list(CONFIGS))
@pytest.mark.parametrize("command", [("config", "validate"), ("tune", "--write"), ("runs",)])
def test_each_config_finding_is_one_error_line(
    case: str, command: tuple[str, ...], seeded: Path, tmp_path: Path
) -> None:
    text, expected = CONFIGS[case]
    config = tmp_path / "config.toml"
    config.write_text(text)
    result = _run(*command, "--db", str(seeded), "--config", str(config))
    assert expected in _one_error_line(result)
    assert config.read_text() == text


def test_tune_write_leaves_a_config_with_a_bad_stage_value_alone(
    seeded: Path, tmp_path: Path
) -> None:
    assert _run("prefer", "seed", "b", "--db", str(seeded)).exit_code == 0
    config = tmp_path / "config.toml"
    config.write_text('[ppp.weights]\nplan = "x"\n')
    for extra in ((), ("--per-stage",)):
        result = _run("tune", "--write", *extra, "--db", str(seeded), "--config", str(config))
        _one_error_line(result)
    assert config.read_text() == '[ppp.weights]\nplan = "x"\n'


# -- a database edited outside ppp-tui -------------------------------------------------

EDITS = {
    "text in agents.technical": (
        "UPDATE agents SET technical = 'abc' WHERE run_id = 'seed'",
        "agents.technical of run 'seed' holds 'abc', not a number in [0, 1]",
    ),
    "infinity in agents.technical": (
        "UPDATE agents SET technical = 9e999 WHERE run_id = 'seed'",
        "agents.technical of run 'seed' holds inf",
    ),
    "text in a question count": (
        "UPDATE agents SET q_low = 'x'",
        "agents.q_low of run 'seed' holds 'x'",
    ),
    "a penalty of 1e308": (
        "UPDATE trajectory_violations SET penalty = 1e308",
        "trajectory_violations.penalty of run 'seed' holds 1e+308",
    ),
    "iterations that are not JSON": (
        "UPDATE runs SET iterations = 'not json'",
        "runs.iterations of run 'seed' holds 'not json', not a JSON list",
    ),
    "preferences that are an object": (
        "UPDATE runs SET preferences = '{}'",
        "runs.preferences of run 'seed' holds '{}', not a JSON list",
    ),
    "an unknown severity": (
        "UPDATE trajectory_violations SET severity = 'bogus'",
        "trajectory_violations.severity of run 'seed' holds 'bogus'",
    ),
    "a NULL run id": (
        "INSERT INTO runs (id, task_type, agents, imported_at) VALUES (NULL, 'x', 0, 'now')",
        "runs.id holds NULL, not text",
    ),
    "a broken packed score row": (
        "UPDATE run_scores SET technical = x'00'",
        "the packed scores of run 'seed' (table run_scores) are damaged",
    ),
    "text in a question's turn": (
        "UPDATE trajectory_questions SET turn = 'x'",
        "trajectory_questions.turn of run 'seed' holds 'x'",
    ),
}


@pytest.mark.parametrize("edit", list(EDITS))
def test_each_outside_edit_is_one_error_line(edit: str, seeded: Path, tmp_path: Path) -> None:
    sql, expected = EDITS[edit]
    assert _run("prefer", "seed", "b", "--db", str(seeded)).exit_code == 0  # regret, tune read
    with sqlite3.connect(seeded) as conn:
        conn.execute(sql)
    config = str(tmp_path / "c.toml")
    failed = 0
    for command in (["runs"], ["rank", "seed"], ["regret"], ["tune"], ["export"]):
        result = _run(*command, "--db", str(seeded), "--config", config)
        assert "Traceback" not in result.output
        assert result.exception is None or isinstance(result.exception, SystemExit)
        if result.exit_code:
            assert expected in _one_error_line(result)
            failed += 1
    assert failed  # the bad value is noticed by at least one command


async def test_the_app_shows_an_outside_edit_as_an_error(seeded: Path, tmp_path: Path) -> None:
    from ppp_tui.app.screens.runs import RunsScreen

    with sqlite3.connect(seeded) as conn:
        conn.execute("UPDATE agents SET technical = 'abc'")
    async with opened(seeded, tmp_path, (120, 40)) as (app, pilot):
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, RunsScreen)
        shown = str(screen.query_one("#runs-message").render())
        assert "agents.technical of run 'seed' holds 'abc'" in shown
    assert app.return_code in (None, 0)


async def test_opening_a_run_with_an_edited_penalty_is_a_toast(
    seeded: Path, tmp_path: Path
) -> None:
    from ppp_tui.app.screens.runs import RunsScreen

    with sqlite3.connect(seeded) as conn:
        conn.execute("UPDATE trajectory_violations SET penalty = 'x'")  # SUM reads it as 0
    async with opened(seeded, tmp_path, (120, 40)) as (app, pilot):
        await pilot.pause()
        app.open_run("seed")
        await pilot.pause()
        assert isinstance(app.screen, RunsScreen)  # not opened, and no crash
        shown = [str(n.message) for n in app._notifications]
        assert any("trajectory_violations.penalty of run 'seed' holds 'x'" in m for m in shown)


def test_a_score_out_of_range_draws_no_bar() -> None:
    from ppp_tui.app.screens.run import _bar

    assert _bar(0.5, 4) == "██░░ 0.50"
    assert _bar(math.inf, 4) == "inf"
    assert _bar(math.nan, 4) == "nan"


# -- fuzzing ---------------------------------------------------------------------------

_KEYS = [
    "id",
    "stage",
    "task",
    "agents",
    "name",
    "technical_score",
    "relevance",
    "confidence",
    "trajectory",
    "turns",
    "questions",
    "violations",
    "text",
    "effort",
    "turn",
    "preference",
    "severity",
    "penalty",
    "iterations",
    "preferences",
    "token_count",
    "response",
    "selected_agent",
    "preferred_agent",
]
_SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.sampled_from(
        [0, 1, 0.5, 1e308, -0.0, 2**63, 2**64, 10**400, "low", "high", "error", "major", "json"]
    )
    | st.sampled_from(["\ud800", "a\udfffb", "[/]", "\x1b[2J"])  # lone surrogates, markup
    | st.text(max_size=12)
)
_JSONISH = st.recursive(
    _SCALARS,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(st.sampled_from(_KEYS) | st.text(max_size=5), inner, max_size=6)
    ),
    max_leaves=20,
)


def _objects(*keys: str) -> st.SearchStrategy[list[dict[str, Any]]]:
    """Lists of objects with some of `keys` (scalar values, now and then anything)."""
    value = _SCALARS | _JSONISH
    return st.lists(st.fixed_dictionaries({}, optional={key: value for key in keys}), max_size=3)


# Runs close enough to the format to reach its deeper checks.
_TRAJECTORY = st.fixed_dictionaries(
    {},
    optional={
        "turns": _objects("prompt", "response", "token_count", "latency_ms", "timestamp"),
        "questions": _objects("text", "effort", "turn"),
        "violations": _objects("preference", "severity", "penalty", "turn"),
    },
)
_AGENT = st.fixed_dictionaries(
    {"name": st.sampled_from(["a", "b"]) | _SCALARS, "technical_score": _SCALARS},
    optional={
        "trajectory": _TRAJECTORY | _JSONISH,
        "relevance": _SCALARS,
        "confidence": _SCALARS,
        "model": _SCALARS,
    },
)
_RUNISH = st.fixed_dictionaries(
    {"agents": st.lists(_AGENT, max_size=3)},
    optional={
        "id": _SCALARS,
        "stage": _SCALARS,
        "task": _SCALARS,
        "iterations": st.lists(_SCALARS, max_size=3) | _JSONISH,
        "preferences": st.lists(_SCALARS, max_size=3),
        "preferred_agent": _SCALARS,
    },
)
_DOCUMENTS = _RUNISH | st.lists(_RUNISH, max_size=3) | _JSONISH


def _check_both_commands(path: Path, db: Path, config: Path) -> None:
    for command in ("import", "score"):
        before = _dump(db)
        result = _run(command, str(path), "--db", str(db), "--config", str(config))
        assert result.exit_code in (0, 1), (result.exit_code, result.output, result.exception)
        assert result.exception is None or isinstance(result.exception, SystemExit), repr(
            result.exception
        )
        assert "Traceback" not in result.output
        if result.exit_code == 1:
            assert len(result.stderr.strip().splitlines()) == 1, result.stderr
            assert _dump(db) == before


_FUZZ = settings(
    max_examples=200,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


@_FUZZ
@given(document=_DOCUMENTS, lines=st.booleans())
def test_fuzzed_documents_fail_cleanly_or_import(
    document: Any, lines: bool, seeded: Path, tmp_path: Path
) -> None:
    if lines:
        path = tmp_path / "fuzz.jsonl"
        items = document if isinstance(document, list) else [document]
        path.write_text("".join(json.dumps(item) + "\n" for item in items))
    else:
        path = tmp_path / "fuzz.json"
        path.write_text(json.dumps(document))
    _check_both_commands(path, seeded, tmp_path / "c.toml")


@_FUZZ
@given(data=st.binary(max_size=200), suffix=st.sampled_from([".json", ".jsonl", ".txt"]))
def test_fuzzed_bytes_fail_cleanly_or_import(
    data: bytes, suffix: str, seeded: Path, tmp_path: Path
) -> None:
    path = tmp_path / f"fuzz{suffix}"
    path.write_bytes(data)
    _check_both_commands(path, seeded, tmp_path / "c.toml")


# -- long texts: the linear steps find what the quadratic ones found ---------------------

_PIECES = st.sampled_from(
    ["a", "b)", "(c)", "2)", " ", "\n", "?", ".", "e.g.", "etc.", "No.", "Mr.", "X", "9", '"', "`"]
)


@settings(max_examples=300, deadline=None)
@given(text=st.lists(_PIECES, max_size=30).map("".join))
def test_option_lists_are_found_as_the_pattern_finds_them(text: str) -> None:
    from ppp_tui.core.effort.cues import _ENUMERATED, _enumerated

    assert _enumerated(text) == (_ENUMERATED.search(text) is not None)


@settings(max_examples=300, deadline=None)
@given(text=st.lists(_PIECES | st.sampled_from(["so", "which", "\t"]), max_size=20).map("".join))
def test_two_words_is_splitting_the_rest(text: str) -> None:
    from ppp_tui.core.effort.cues import _TWO_WORDS

    for end in range(len(text) + 1):
        assert bool(_TWO_WORDS.match(text, end)) == (len(text[end:].split()) >= 2)


def _sentences_by_slices(block: str) -> list[str]:
    """extraction._sentences as it was: the abbreviation test on the whole sentence."""
    from ppp_tui.core import extraction as x

    masked = x._SHIELDED.sub(lambda m: "x" * len(m.group()), block)
    sentences, start = [], 0
    for match in x._BOUNDARY.finditer(masked):
        if x._ABBREVIATION.search(masked[start : match.start()]):
            continue
        sentences.append((start, match.start()))
        start = match.end()
    sentences.append((start, len(block)))
    return [block[a:b] for a, b in sentences if masked[a:b].rstrip(x._TRAILING).endswith("?")]


@settings(max_examples=300, deadline=None)
@given(text=st.lists(_PIECES | st.sampled_from(["approx.", "vs.", "Incl.", "Dr"]), max_size=30))
def test_sentence_ends_are_found_as_before(text: list[str]) -> None:
    from ppp_tui.core.extraction import _sentences

    block = " ".join(text)
    asked = [sentence for sentence, asks in _sentences(block) if asks]
    assert asked == [s for s in _sentences_by_slices(block) if s.strip()]
