"""The two run parsers agree: the fast path (exact JSON types, no JSON paths) builds the
very run the checked path builds, and leaves every document it cannot take to the
checked path, which then names the first problem.

`_fast_run` either returns a run or raises `_Unusual`; `_checked_run` returns a run or
raises `RunError`. For every document: when the fast path returns a run, the checked
path returns an equal one; when the checked path refuses a document, the fast path has
declined it. Documents of the usual shapes (what real inputs hold) must not be declined:
the fast path exists for their speed.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ppp_tui.core.errors import RunError
from ppp_tui.core.model import MAX_COUNT, MAX_ITERATION_SCORE, MAX_PENALTY, Run
from ppp_tui.core.preferences import CATALOGUE
from ppp_tui.core.runs import run_from_dict
from ppp_tui.core.runs.checked import _checked_run
from ppp_tui.core.runs.fast import _fast_run, _Unusual
from ppp_tui.storage.direct_rows import add_object
from ppp_tui.storage.formats import open_any
from ppp_tui.storage.rows import Rows

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"

DECLINED = "declined"


def fast(raw: Any) -> Run | str:
    """The fast path's run, or DECLINED. It is only ever given a dict."""
    try:
        return _fast_run(raw)
    except _Unusual:
        return DECLINED


# What the direct rows and `Rows.add` are compared with: a stamp, the first agent id
# (not 0: ids count on from it) and a reviewer.
ROWS_MADE = ("2026-01-01T00:00:00Z", 7, "Ada")


def direct(raw: dict[str, Any]) -> tuple[Any, ...] | str:
    """The direct rows' (tables, unknown names, next agent id, marked, run id), or
    DECLINED, having added nothing."""
    rows = Rows(*ROWS_MADE)
    known = {"someone else's run"}
    try:
        marked = add_object(rows, raw, known)
    except _Unusual:
        assert not any(rows.take()) and rows.next_agent == 7 and not rows.unknown
        assert known == {"someone else's run"}
        return DECLINED
    assert marked is not None
    (added,) = known - {"someone else's run"}
    # Again: the run is there now, so it is skipped, and nothing is added.
    again = Rows(*ROWS_MADE)
    assert add_object(again, raw, set(known)) is None
    assert not any(again.take()) and again.next_agent == 7 and not again.unknown
    return rows.take(), rows.unknown, rows.next_agent, marked, added


def checked(raw: Any) -> Run | RunError:
    try:
        return _checked_run(raw, "$")
    except RunError as error:
        return error


def assert_equivalent(raw: Any) -> Run | str:
    """Both parsers on `raw` (and `run_from_dict`, which picks between them) agree;
    neither changes the document. Returns what the fast path gave."""
    before = json.dumps(raw)  # NaN != NaN: the documents are compared as JSON text
    slow = checked(raw)
    quick = fast(raw) if type(raw) is dict else DECLINED
    assert json.dumps(raw) == before, "a parser changed its input"
    if isinstance(quick, Run):
        assert isinstance(slow, Run), f"fast path took a document the checked path refuses: {slow}"
        assert quick == slow
    rows = direct(raw) if type(raw) is dict else DECLINED
    assert json.dumps(raw) == before, "the direct rows changed their input"
    if isinstance(slow, Run):
        expected = Rows(*ROWS_MADE)
        expected.add(slow)
        made = (expected.take(), expected.unknown, expected.next_agent)
        assert rows == DECLINED or rows == (*made, slow.preferred_agent is not None, slow.id)
    else:
        assert rows == DECLINED, f"direct rows took a document the checked path refuses: {slow}"
    assert (rows == DECLINED) == (quick == DECLINED), "the two fast ways take different documents"
    try:
        chosen: Run | RunError = run_from_dict(raw)
    except RunError as error:
        chosen = error
    if isinstance(slow, Run):
        assert chosen == slow
    else:
        assert isinstance(chosen, RunError) and str(chosen) == str(slow)
    return quick


# -- the examples shipped with the project ----------------------------------------------


def _example_documents() -> list[Any]:
    documents = []
    for name, fmt in (
        ("runs.jsonl", "jsonl"),
        ("userville-rollouts.jsonl", "userville"),
        ("spec-kit-consensus.db", "spec-kit"),
    ):
        for record in open_any(str(EXAMPLES / name), fmt, lambda message: None).records:
            if record.raw is None:
                assert record.text is not None
                documents.append(json.loads(record.text))
            else:
                documents.append(record.raw)
    return documents


def test_the_example_files_parse_the_same_both_ways_and_take_the_fast_path() -> None:
    documents = _example_documents()
    assert len(documents) >= 8
    taken = [assert_equivalent(document) for document in documents]
    assert all(isinstance(run, Run) for run in taken), "an example left the fast path"


# -- generated documents ---------------------------------------------------------------

QUESTIONS = (
    "Which database: PostgreSQL or MySQL?",
    "Could you check what the staging server returns?",
    "Should I add a test?",
    "What line length do you want?",
    "Default branch name?",
    "Can you share the stack trace from production?",
    "Two quick ones: which port, and should it use TLS?",
    "Just to confirm, you want me to delete the old table?",
)
TEXTS = st.one_of(
    st.sampled_from(QUESTIONS),
    st.sampled_from(("", " ", "plan", "implement", "a b c", "Done.")),
    st.text(max_size=30),
)
RESPONSES = st.lists(st.sampled_from((*QUESTIONS, "I made the change.", "```py\nx = 1\n```")))
PREFERENCE_NAMES = st.sampled_from(sorted(CATALOGUE))
# Names of the catalogue and others (an import notes those it does not know).
ANY_PREFERENCE_NAMES = st.one_of(PREFERENCE_NAMES, st.sampled_from(("house_style", "Tabs")))
NAMES = st.sampled_from(("claude", "codex", "gemini", "gpt", " claude "))
UNITS = st.one_of(st.floats(0.0, 1.0), st.integers(0, 1), st.sampled_from((-0.0, 0.5, 1.0, 0, 1)))


def _usual_turn() -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries(
        {},
        optional={
            "prompt": st.one_of(st.none(), TEXTS),
            "response": st.one_of(st.none(), RESPONSES.map(" ".join)),
            "token_count": st.one_of(st.none(), st.integers(0, 10**6), st.floats(0, 1e6)),
            "latency_ms": st.one_of(st.none(), st.integers(0, 10**5)),
            "timestamp": st.one_of(st.none(), st.just("2026-01-02T03:04:05Z")),
        },
    )


def _usual_question() -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries(
        {"text": TEXTS},
        optional={
            "effort": st.one_of(st.none(), st.sampled_from(("low", "medium", "high", "HIGH"))),
            "turn": st.one_of(st.none(), st.integers(0, 50)),
        },
    )


def _usual_violation() -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries(
        {"preference": ANY_PREFERENCE_NAMES},
        optional={
            "severity": st.sampled_from(("minor", "major", "error", "Major")),
            "penalty": st.one_of(st.none(), st.floats(0, 1), st.integers(0, 2)),
            "turn": st.one_of(st.none(), st.integers(0, 9)),
        },
    )


def _usual_trajectory() -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries(
        {},
        optional={
            "turns": st.lists(_usual_turn(), max_size=4),
            "questions": st.one_of(st.none(), st.lists(_usual_question(), max_size=4)),
            "violations": st.one_of(st.none(), st.lists(_usual_violation(), max_size=3)),
        },
    )


def _usual_agent(name: str) -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries(
        {"name": st.just(name), "technical_score": UNITS},
        optional={
            "trajectory": st.one_of(st.none(), _usual_trajectory()),
            "model": st.one_of(st.none(), st.just("gpt-4")),
            "relevance": st.one_of(st.none(), UNITS),
            "confidence": st.one_of(st.none(), UNITS),
            "output": st.one_of(st.none(), TEXTS),
            "failure": st.one_of(st.none(), st.sampled_from(("timed out", " crashed "))),
        },
    )


@st.composite
def usual_runs(draw: st.DrawFn) -> dict[str, Any]:
    """A valid run of the shapes real inputs hold: exact JSON types, no declared asks."""
    names = draw(st.lists(NAMES, min_size=1, max_size=4, unique=True))
    agents = [draw(_usual_agent(name)) for name in names]
    run: dict[str, Any] = {"agents": agents}
    working = [a["name"] for a in agents if a.get("failure") is None]
    optional = {
        "id": st.one_of(st.none(), st.just("run-1"), st.integers(0, 10**6)),
        "task": st.one_of(st.none(), TEXTS),
        "stage": st.one_of(st.none(), st.sampled_from(("plan", "implement", ""))),
        "spec_id": st.one_of(st.none(), st.just("SPEC-1")),
        "created_at": st.one_of(st.none(), st.just("2026-01-02T03:04:05+01:00")),
        "preferences": st.one_of(
            st.none(), st.lists(ANY_PREFERENCE_NAMES, max_size=3), st.just([" json "])
        ),
        "iterations": st.lists(st.one_of(st.floats(-100, 100), st.integers(-100, 100)), max_size=4),
        "selected_agent": st.one_of(st.none(), st.sampled_from(names)),
        "preferred_agent": st.one_of(st.none(), *([st.sampled_from(working)] if working else [])),
        "consensus": st.one_of(
            st.none(), st.fixed_dictionaries({"status": st.just("ok"), "agreements": UNITS})
        ),
    }
    for key, strategy in optional.items():
        if draw(st.booleans()):
            run[key] = draw(strategy)
    return run


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(run=usual_runs())
def test_usual_documents_take_the_fast_path_to_the_same_run(run: dict[str, Any]) -> None:
    assert isinstance(assert_equivalent(run), Run), "a usual document left the fast path"


# Numbers at and just past every bound a run's numbers have, as integers and floats.
EDGES = sorted(
    {
        value
        for bound in (0, 1, MAX_PENALTY, MAX_ITERATION_SCORE, MAX_COUNT)
        for step in (-1, -0.5, 0, 0.5, 1)
        for value in (bound + step, -(bound + step), float(bound) + step)
        if not isinstance(value, float) or value != int(value) or abs(value) < 2**53
    }
    | {-0.0, 2**63, 2**64, 10**400, 1e308, float("inf"), float("nan")},
    key=repr,
)
# Anything JSON can hold where a run's values go: numbers at the edges, wrong types,
# booleans, blanks.
ODD = st.one_of(
    st.sampled_from(EDGES),
    st.none(),
    st.booleans(),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from(("", " ", "x", "LOW", "Minor", "huge", "true")),
    st.lists(st.integers(0, 2), max_size=2),
    st.dictionaries(st.sampled_from(("a", "name", "text")), st.integers(0, 1), max_size=2),
)


@st.composite
def odd_runs(draw: st.DrawFn) -> Any:
    """A usual run with some of its values swapped for odd ones, some keys taken out, or
    declared asks added (which only the checked path reads); now and then not an object."""
    if draw(st.integers(0, 30)) == 0:
        return draw(ODD)
    run = draw(usual_runs())
    for container in _containers(run):
        if isinstance(container, dict):
            for key in sorted(container):
                roll = draw(st.integers(0, 11))
                if roll == 0:
                    del container[key]
                elif roll <= 2:
                    container[key] = draw(ODD)
            if draw(st.integers(0, 9)) == 0:
                key = draw(st.sampled_from(EXTRA_KEYS))
                container[key] = draw(st.one_of(ODD, st.lists(TEXTS, max_size=2)))
        elif container and draw(st.integers(0, 7)) == 0:
            container[draw(st.integers(0, len(container) - 1))] = draw(ODD)
    return run


# Keys a run's objects may hold that the usual documents leave out.
EXTRA_KEYS = ("asks", "tool_calls", "effort", "severity", "failure", "turn", "id", "consensus")


def _containers(value: Any) -> list[Any]:
    """Every dict and list inside `value`, itself included."""
    found: list[Any] = []
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            found.append(item)
            stack.extend(item.values())
        elif isinstance(item, list):
            found.append(item)
            stack.extend(item)
    return found


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(document=odd_runs())
def test_odd_documents_parse_the_same_or_leave_the_fast_path(document: Any) -> None:
    assert_equivalent(document)


def _with(path: tuple[str | int, ...], value: Any) -> dict[str, Any]:
    """A valid run with every kind of number in it, `value` put at `path`."""
    run: dict[str, Any] = {
        "iterations": [1.0],
        "agents": [
            {
                "name": "a",
                "technical_score": 0.5,
                "relevance": 0.5,
                "confidence": 0.5,
                "trajectory": {
                    "turns": [{"response": "Which port?", "token_count": 3, "latency_ms": 4}],
                    "questions": [{"text": "Which port?", "turn": 1}],
                    "violations": [{"preference": "json", "penalty": 0.5, "turn": 1}],
                },
            }
        ],
    }
    container: Any = run
    for step in path[:-1]:
        container = container[step]
    container[path[-1]] = value
    return run


NUMBER_PATHS: tuple[tuple[str | int, ...], ...] = (
    ("iterations", 0),
    ("agents", 0, "technical_score"),
    ("agents", 0, "relevance"),
    ("agents", 0, "confidence"),
    ("agents", 0, "trajectory", "turns", 0, "token_count"),
    ("agents", 0, "trajectory", "turns", 0, "latency_ms"),
    ("agents", 0, "trajectory", "questions", 0, "turn"),
    ("agents", 0, "trajectory", "violations", 0, "penalty"),
    ("agents", 0, "trajectory", "violations", 0, "turn"),
    ("id",),
)


@pytest.mark.parametrize("path", NUMBER_PATHS, ids=lambda path: ".".join(map(str, path)))
def test_every_number_parses_the_same_both_ways_at_its_bounds(
    path: tuple[str | int, ...],
) -> None:
    taken = [assert_equivalent(_with(path, value)) for value in (*EDGES, True, False, None)]
    # Each number is read by the fast path where it is valid.
    assert any(isinstance(run, Run) for run in taken)


@pytest.mark.parametrize(
    "document",
    [
        {"agents": [{"name": "a", "technical_score": True}]},
        {"agents": [{"name": "a", "technical_score": 0.5, "failure": True}]},
        {"agents": [{"name": "a", "technical_score": 0.5, "failure": False}]},
        {"agents": [{"name": "a", "technical_score": -0.0}]},
        {"id": True, "agents": [{"name": "a", "technical_score": 1}]},
        {"id": 7, "agents": [{"name": "a", "technical_score": 1}]},
        {"agents": [{"name": "a", "technical_score": 1}], "iterations": [float("nan")]},
        {"agents": [{"name": "a", "technical_score": 1}], "iterations": [10**400]},
        {"agents": [{"name": "a", "technical_score": 1}, {"name": "a", "technical_score": 0}]},
        {"agents": [{"name": "a", "technical_score": 1}], "preferences": ["  "]},
        {"agents": [{"name": "a", "technical_score": 1}], "preferences": ""},
        {"agents": [{"name": "a", "technical_score": 1, "failure": "x"}], "preferred_agent": "a"},
        {"agents": [{"name": "a", "technical_score": 1}], "consensus": {"x": float("nan")}},
        {"agents": [{"name": "a", "technical_score": 1}], "consensus": []},
        {
            "agents": [
                {
                    "name": "a",
                    "technical_score": 1,
                    "trajectory": {"turns": [{"response": "Which one?", "token_count": 2.5}]},
                }
            ]
        },
        {
            "agents": [
                {
                    "name": "a",
                    "technical_score": 1,
                    "trajectory": {"turns": [{"tool_calls": [{"name": "ask", "arguments": {}}]}]},
                }
            ]
        },
        {
            "agents": [
                {
                    "name": "a",
                    "technical_score": 1,
                    "trajectory": {"questions": [{"text": "Why?", "effort": "HiGh", "turn": 1.0}]},
                }
            ]
        },
        {
            "agents": [
                {
                    "name": "a",
                    "technical_score": 1,
                    "trajectory": {"violations": [{"preference": "json", "penalty": -0.0}]},
                }
            ]
        },
    ],
)
def test_edge_documents_parse_the_same_both_ways(document: dict[str, Any]) -> None:
    assert_equivalent(document)


def test_the_fast_makers_give_what_the_constructors_give() -> None:
    """The fast path makes its objects without their __init__: every field, in order."""
    from dataclasses import astuple, fields

    from ppp_tui.core.model import (
        Agent,
        Effort,
        Question,
        Severity,
        Source,
        Trajectory,
        Turn,
        Violation,
    )
    from ppp_tui.core.runs import makers

    turn = makers.new_turn("p", "r", 3, None, "2026-01-01T00:00:00Z")
    question = makers.new_question("Why?", Effort.HIGH, 2, Source.CLASSIFIER)
    violation = makers.new_violation("x", Severity.WARNING, 0.5, None, Source.CHECKER)
    trajectory = makers.new_trajectory((turn,), (question,), (violation,), ("y",))
    made: list[tuple[Any, Any]] = [
        (turn, Turn("p", "r", 3, None, "2026-01-01T00:00:00Z")),
        (question, Question("Why?", Effort.HIGH, 2, Source.CLASSIFIER)),
        (violation, Violation("x", Severity.WARNING, 0.5, None, Source.CHECKER)),
        (trajectory, Trajectory((turn,), (question,), (violation,), ("y",))),
    ]
    document = {
        "id": "r",
        "task": "t",
        "preferred_agent": "a",
        "agents": [{"name": "a", "technical_score": 0.5, "output": "o"}],
    }
    run = _fast_run(document)
    made += [(run, _checked_run(document, "$")), (run.agents[0], Agent("a", 0.5, output="o"))]
    for fast_one, constructed in made:
        assert fast_one == constructed and hash(fast_one) == hash(constructed)
        assert list(vars(fast_one)) == [f.name for f in fields(constructed)]
        assert astuple(fast_one) == astuple(constructed)
