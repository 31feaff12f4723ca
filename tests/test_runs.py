"""Reading one run of the import format (SPEC 1): validation by JSON path, and completion."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest
from pytest import approx

from ppp_tui.core.errors import PPPError, RunError
from ppp_tui.core.model import Effort, Question, Severity, Source, Trajectory, Turn, Violation
from ppp_tui.core.runs import content_id, run_from_dict
from ppp_tui.core.scoring import rank_run
from ppp_tui.core.settings import Settings

Json = dict[str, Any]


def spec_example() -> Json:
    """SPEC 1's example run. The SPEC prints only the gemini agent but names claude as the
    preferred one, so claude (a legacy agent without trajectory) completes the run."""
    return {
        "id": "run-0042",
        "spec_id": "SPEC-KIT-042",
        "stage": "implement",
        "task": "Add OAuth2 login to the API",
        "created_at": "2025-11-16T10:00:00Z",
        "preferences": ["json", "commas"],
        "selected_agent": "gemini",
        "preferred_agent": "claude",
        "iterations": [8.1, 8.7, 9.2, 9.1],
        "agents": [
            {
                "name": "gemini",
                "model": "gemini-2.5-pro",
                "technical_score": 0.85,
                "relevance": 0.9,
                "confidence": 0.95,
                "output": "final artifact text",
                "trajectory": {
                    "turns": [
                        {
                            "prompt": "...",
                            "response": "...",
                            "token_count": 812,
                            "latency_ms": 2300,
                            "timestamp": "2025-11-16T10:00:03Z",
                        }
                    ],
                    "questions": [
                        {"text": "Which database: PostgreSQL or MySQL?", "effort": "low", "turn": 1}
                    ],
                    "violations": [{"preference": "commas", "severity": "error", "turn": 1}],
                },
            },
            {"name": "claude", "technical_score": 0.8},
        ],
    }


def minimal(*agents: Json, **fields: Any) -> Json:
    """A run of just its required fields, plus `fields`."""
    return {"agents": list(agents) or [{"name": "a", "technical_score": 0.8}], **fields}


def with_trajectory(name: str, trajectory: Any, technical: float = 0.8) -> Json:
    return {"name": name, "technical_score": technical, "trajectory": trajectory}


# --- The SPEC's example ----------------------------------------------------------------------


def test_the_spec_example_parses_field_by_field() -> None:
    run = run_from_dict(spec_example())

    assert run.id == "run-0042"
    assert (run.spec_id, run.stage) == ("SPEC-KIT-042", "implement")
    assert run.task == "Add OAuth2 login to the API"
    assert run.created_at == "2025-11-16T10:00:00Z"
    assert run.preferences == ("json", "commas")
    assert (run.selected_agent, run.preferred_agent) == ("gemini", "claude")
    assert run.iterations == (8.1, 8.7, 9.2, 9.1)

    gemini, claude = run.agents
    assert (gemini.name, gemini.model, gemini.technical) == ("gemini", "gemini-2.5-pro", 0.85)
    assert (gemini.relevance, gemini.confidence) == (0.9, 0.95)
    assert gemini.output == "final artifact text"
    assert gemini.trajectory == Trajectory(
        turns=(Turn("...", "...", 812, 2300, "2025-11-16T10:00:03Z"),),
        questions=(Question("Which database: PostgreSQL or MySQL?", Effort.LOW, 1, Source.LABEL),),
        violations=(Violation("commas", Severity.ERROR, None, 1, Source.LABEL),),
    )
    assert claude.trajectory is None
    assert claude.model is None


def test_the_spec_example_ranks_its_legacy_agent_first() -> None:
    """gemini: one low question (+0.05) and one commas error (-0.05), interaction 0, so
    final 0.7 * 0.85 = 0.595; claude has no trajectory and keeps its technical 0.80."""
    ranking = rank_run(run_from_dict(spec_example()), Settings())

    assert ranking.best_agent == "claude"
    gemini = ranking.agents[1]
    assert gemini.interaction == approx(0.0)
    assert gemini.final == approx(0.595)
    assert ranking.margin == approx(0.80 - 0.595)


# --- Errors name the JSON path ---------------------------------------------------------------


def first_agent(change: Callable[[Json], Any]) -> Callable[[Json], Any]:
    return lambda run: change(run["agents"][0])


def first_question(change: Callable[[Json], Any]) -> Callable[[Json], Any]:
    return lambda run: change(run["agents"][0]["trajectory"]["questions"][0])


def first_violation(change: Callable[[Json], Any]) -> Callable[[Json], Any]:
    return lambda run: change(run["agents"][0]["trajectory"]["violations"][0])


@pytest.mark.parametrize(
    ("break_it", "message"),
    [
        (
            first_agent(lambda a: a.update(technical_score=1.5)),
            "$.agents[0].technical_score: technical_score must be in [0, 1], got 1.5",
        ),
        (
            first_agent(lambda a: a.update(technical_score=-0.1)),
            "$.agents[0].technical_score: technical_score must be in [0, 1], got -0.1",
        ),
        (
            first_agent(lambda a: a.update(technical_score="0.85")),
            "$.agents[0].technical_score: expected a number, got a string",
        ),
        (
            first_agent(lambda a: a.pop("technical_score")),
            "$.agents[0]: technical_score is required",
        ),
        (first_agent(lambda a: a.pop("name")), "$.agents[0]: name is required"),
        (
            first_agent(lambda a: a.update(relevance=2)),
            "$.agents[0].relevance: relevance must be in [0, 1], got 2",
        ),
        (
            lambda run: run.pop("agents"),
            "$: agents is required (a list of at least one agent)",
        ),
        (lambda run: run.update(agents=[]), "$.agents: agents must hold at least one agent"),
        (lambda run: run.update(agents={}), "$.agents: expected a list, got an object"),
        (
            lambda run: run["agents"][1].update(name="gemini"),
            "$.agents[1].name: duplicate agent name 'gemini'",
        ),
        (
            first_question(lambda q: q.update(effort="extreme")),
            "$.agents[0].trajectory.questions[0].effort:"
            " effort must be one of low, medium, high, got 'extreme'",
        ),
        (
            first_violation(lambda v: v.update(severity="fatal")),
            "$.agents[0].trajectory.violations[0].severity:"
            " severity must be one of error, warning, minor, major, critical, got 'fatal'",
        ),
        (
            first_violation(lambda v: v.update(penalty=-0.1)),
            "$.agents[0].trajectory.violations[0].penalty:"
            " penalty is a magnitude and must be >= 0, got -0.1",
        ),
        (
            lambda run: run.update(preferred_agent="gpt"),
            "$.preferred_agent: 'gpt' is not one of the run's agents",
        ),
        (
            lambda run: run.update(selected_agent="gpt"),
            "$.selected_agent: 'gpt' is not one of the run's agents",
        ),
        (
            lambda run: run.update(iterations=[8.1, "high"]),
            "$.iterations[1]: expected a number, got a string",
        ),
    ],
)
def test_bad_input_is_a_run_error_naming_the_json_path(
    break_it: Callable[[Json], Any], message: str
) -> None:
    raw = spec_example()
    break_it(raw)
    with pytest.raises(RunError) as error:
        run_from_dict(raw)
    assert str(error.value) == message
    assert error.value.path == message.split(": ")[0]
    assert isinstance(error.value, PPPError)


def test_a_run_that_is_not_an_object_is_rejected() -> None:
    with pytest.raises(RunError, match=r"^\$: expected an object, got a list$"):
        run_from_dict([spec_example()])


def test_the_path_prefix_locates_a_run_in_a_list() -> None:
    with pytest.raises(RunError) as error:
        run_from_dict(minimal({"name": "a", "technical_score": 7}), path="$[3]")
    assert error.value.path == "$[3].agents[0].technical_score"


def test_labels_are_read_case_insensitively() -> None:
    raw = spec_example()
    raw["agents"][0]["trajectory"]["questions"][0]["effort"] = "HIGH"
    raw["agents"][0]["trajectory"]["violations"][0]["severity"] = "Major"
    trajectory = run_from_dict(raw).agents[0].trajectory

    assert trajectory is not None
    assert trajectory.questions[0].effort is Effort.HIGH
    assert trajectory.violations[0].severity is Severity.MAJOR


def test_a_violations_own_penalty_is_kept() -> None:
    raw = spec_example()
    raw["agents"][0]["trajectory"]["violations"][0]["penalty"] = 0.2
    trajectory = run_from_dict(raw).agents[0].trajectory

    assert trajectory is not None
    assert trajectory.violations[0].penalty == 0.2


def test_severity_defaults_to_error() -> None:
    raw = spec_example()
    del raw["agents"][0]["trajectory"]["violations"][0]["severity"]
    trajectory = run_from_dict(raw).agents[0].trajectory

    assert trajectory is not None
    assert trajectory.violations[0].severity is Severity.ERROR


# --- The id ----------------------------------------------------------------------------------


def test_the_id_defaults_to_a_hash_of_the_content() -> None:
    run = run_from_dict(minimal())
    assert run.id.startswith("run-")
    assert len(run.id) == len("run-") + 16
    assert run.id == content_id(minimal())


def test_the_same_content_gets_the_same_id_whatever_the_key_order() -> None:
    agent = {"name": "a", "technical_score": 0.8, "model": "m"}
    reordered = {"model": "m", "technical_score": 0.8, "name": "a"}
    first = run_from_dict({"stage": "plan", "agents": [agent]})
    second = run_from_dict({"agents": [reordered], "stage": "plan"})

    assert first.id == second.id


def test_different_content_gets_a_different_id() -> None:
    base = run_from_dict(minimal(stage="plan"))
    other_stage = run_from_dict(minimal(stage="tasks"))
    other_score = run_from_dict(minimal({"name": "a", "technical_score": 0.81}, stage="plan"))

    assert len({base.id, other_stage.id, other_score.id}) == 3


def test_the_id_key_itself_does_not_count_towards_the_hash() -> None:
    assert content_id({**minimal(), "id": "run-7"}) == content_id(minimal())
    assert run_from_dict({**minimal(), "id": None}).id == run_from_dict(minimal()).id


def test_a_given_id_is_kept_and_a_numeric_one_becomes_text() -> None:
    assert run_from_dict(minimal(id="run-0042")).id == "run-0042"
    assert run_from_dict(minimal(id=42)).id == "42"


# --- Completing what the data leaves out -----------------------------------------------------


def test_questions_are_extracted_from_the_turns_and_classified() -> None:
    """No `questions` but turns: the questions of each response, outside code blocks."""
    turns = [
        {"response": "I read the handler. Should I use Redis or Memcached?"},
        {"response": "Done.\n```\nretry = ask('again?')\n```\nHow should we handle errors?"},
        {"response": "Pushed the branch."},
    ]
    agent = run_from_dict(minimal(with_trajectory("a", {"turns": turns}))).agents[0]

    assert agent.trajectory is not None
    assert agent.trajectory.questions == (
        Question("Should I use Redis or Memcached?", Effort.LOW, 1, Source.EXTRACTED),
        Question("How should we handle errors?", Effort.MEDIUM, 2, Source.EXTRACTED),
    )
    assert len(agent.trajectory.turns) == 3


def test_given_questions_win_over_the_turns() -> None:
    trajectory_raw = {
        "turns": [{"response": "Should I use Redis or Memcached?"}],
        "questions": [],
    }
    agent = run_from_dict(minimal(with_trajectory("a", trajectory_raw))).agents[0]

    assert agent.trajectory is not None
    assert agent.trajectory.questions == ()


def test_a_question_without_effort_is_classified_and_marked_so() -> None:
    questions = [
        {"text": "How should we handle errors?", "turn": 2},
        {"text": "What architecture patterns should we consider?"},
        {"text": "Tabs or spaces?", "effort": "medium"},
    ]
    agent = run_from_dict(minimal(with_trajectory("a", {"questions": questions}))).agents[0]

    assert agent.trajectory is not None
    assert agent.trajectory.questions == (
        Question("How should we handle errors?", Effort.MEDIUM, 2, Source.CLASSIFIER),
        Question(
            "What architecture patterns should we consider?", Effort.HIGH, None, Source.CLASSIFIER
        ),
        Question("Tabs or spaces?", Effort.MEDIUM, None, Source.LABEL),
    )


def test_the_classifier_reads_the_runs_task_as_context() -> None:
    """The task already says the TTL, so asking for it is low effort (medium without it)."""
    question = {"text": "What TTL should the cached entries have?"}
    with_task = minimal(
        with_trajectory("a", {"questions": [question]}),
        task="Cache the product catalog in Redis with a 10-minute TTL.",
    )
    without_task = minimal(with_trajectory("a", {"questions": [question]}))

    informed = run_from_dict(with_task).agents[0].trajectory
    blind = run_from_dict(without_task).agents[0].trajectory
    assert informed is not None and blind is not None
    assert informed.questions[0].effort is Effort.LOW
    assert blind.questions[0].effort is Effort.MEDIUM


def test_rule_checkers_decide_the_violations_and_record_the_unchecked() -> None:
    """Preferences no_ask and professional, no violations given: asking a question breaks
    no_ask (a checker decides it); no rule can decide professional."""
    questions = [{"text": "Which database: PostgreSQL or MySQL?", "effort": "low", "turn": 1}]
    raw = minimal(
        with_trajectory("a", {"questions": questions}), preferences=["no_ask", "professional"]
    )
    trajectory = run_from_dict(raw).agents[0].trajectory

    assert trajectory is not None
    assert trajectory.violations == (Violation("no_ask", Severity.ERROR, None, 1, Source.CHECKER),)
    assert trajectory.unchecked == ("professional",)


def test_checked_violations_count_in_r_pers() -> None:
    """The no_ask violation costs 0.05: R_Proact +0.05 (one low question) - 0.05 = 0."""
    questions = [{"text": "Which database: PostgreSQL or MySQL?", "effort": "low", "turn": 1}]
    raw = minimal(with_trajectory("a", {"questions": questions}), preferences=["no_ask"])
    (score,) = rank_run(run_from_dict(raw), Settings()).agents

    assert score.r_pers == approx(-0.05)
    assert score.interaction == approx(0.0)


def test_checkers_run_on_extracted_questions_too() -> None:
    turns = [{"response": "Which file, models.py or views.py, holds the bug?"}]
    raw = minimal(with_trajectory("a", {"turns": turns}), preferences=["commas"])
    trajectory = run_from_dict(raw).agents[0].trajectory

    assert trajectory is not None
    assert trajectory.violations == (Violation("commas", Severity.ERROR, None, 1, Source.CHECKER),)


def test_given_violations_are_not_second_guessed() -> None:
    questions = [{"text": "Which database: PostgreSQL or MySQL?", "effort": "low"}]
    raw = minimal(
        with_trajectory("a", {"questions": questions, "violations": []}),
        preferences=["no_ask", "professional"],
    )
    trajectory = run_from_dict(raw).agents[0].trajectory

    assert trajectory is not None
    assert trajectory.violations == ()
    assert trajectory.unchecked == ()


def test_no_checker_runs_without_stated_preferences() -> None:
    questions = [{"text": "Which database, PostgreSQL or MySQL?", "effort": "low"}]
    raw = minimal(with_trajectory("a", {"questions": questions}), preferences=["no_preference"])
    trajectory = run_from_dict(raw).agents[0].trajectory

    assert trajectory is not None
    assert (trajectory.violations, trajectory.unchecked) == ((), ())


def test_trajectory_null_means_no_trajectory_and_empty_means_an_empty_one() -> None:
    raw = minimal(with_trajectory("null", None), with_trajectory("empty", {}))
    absent, empty = run_from_dict(raw).agents

    assert absent.trajectory is None
    assert empty.trajectory == Trajectory()


def test_no_trajectory_and_an_empty_one_score_differently() -> None:
    """tech 0.8 each: without trajectory final = 0.8; an empty one is a silent agent with
    nothing stated, interaction +0.05, final 0.7 * 0.8 + 0.3 * 0.05 = 0.575."""
    raw = minimal(with_trajectory("null", None), with_trajectory("empty", {}))
    ranking = rank_run(run_from_dict(raw), Settings())

    assert [s.name for s in ranking.agents] == ["null", "empty"]
    assert [s.final for s in ranking.agents] == approx([0.8, 0.575])


def test_parsing_leaves_the_decoded_json_unchanged() -> None:
    raw = spec_example()
    before = copy.deepcopy(raw)
    run_from_dict(raw)
    assert raw == before


@pytest.mark.parametrize("value", [float("nan"), float("inf"), 2**70, -1])
def test_turn_counts_that_sqlite_cannot_hold_are_a_located_error(value: object) -> None:
    raw = {
        "agents": [
            {
                "name": "a",
                "technical_score": 0.5,
                "trajectory": {"turns": [{"response": "x", "latency_ms": value}]},
            }
        ]
    }
    with pytest.raises(RunError) as caught:
        run_from_dict(raw)
    assert str(caught.value).startswith("$.agents[0].trajectory.turns[0].latency_ms: ")
