"""Seed 004: task types, relevance x confidence weighting, and early stopping of the N^2 loop."""

from __future__ import annotations

import pytest
from pytest import approx

from ppp_tui.core.early_stop import EarlyStop, analyse
from ppp_tui.core.model import Agent, Run, Trajectory
from ppp_tui.core.relevance import LOW_RELEVANCE, TaskType, relevance_weight, task_type
from ppp_tui.core.scoring import rank_run
from ppp_tui.core.settings import Settings

# --- Task types ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("task", "expected"),
    [
        # Seed 004's example classifications.
        ("Add error handling", TaskType.CODE_GENERATION),
        ("Write README", TaskType.DOCUMENTATION),
        ("Fix bug", TaskType.DEBUGGING),
        ("Optimize query", TaskType.OPTIMIZATION),
        # Seed 004's testing recommendations.
        ("Create comprehensive README for this module", TaskType.DOCUMENTATION),
        ("Fix the null pointer exception on line 42", TaskType.DEBUGGING),
        ("Optimize this database query", TaskType.OPTIMIZATION),
        # Nothing to go on.
        ("", TaskType.GENERAL),
        (None, TaskType.GENERAL),
        ("Hello", TaskType.GENERAL),
        ("Thanks!", TaskType.GENERAL),
    ],
)
def test_seed004_task_types(task: str | None, expected: TaskType) -> None:
    assert task_type(task) is expected


@pytest.mark.parametrize(
    ("task", "expected"),
    [
        ("Refactor the payment module into smaller services", TaskType.REFACTORING),
        ("Rename getUser to fetchUser across the codebase", TaskType.REFACTORING),
        ("Clean up the legacy config loader", TaskType.REFACTORING),
        ("Add OAuth2 login to the API", TaskType.CODE_GENERATION),
        ("Write a function that parses CSV files", TaskType.CODE_GENERATION),
        ("Document the public API", TaskType.DOCUMENTATION),
        ("Write docstrings for the utils module", TaskType.DOCUMENTATION),
        ("Why does the build crash on startup?", TaskType.DEBUGGING),
        ("The login page is broken", TaskType.DEBUGGING),
        ("Speed up the test suite", TaskType.OPTIMIZATION),
        ("Make the dashboard load faster", TaskType.OPTIMIZATION),
    ],
)
def test_natural_phrasings_of_each_task_type(task: str, expected: TaskType) -> None:
    assert task_type(task) is expected


def test_seed004_implementation_plan_documentation_is_a_documentation_task() -> None:
    """Seed 004, scenario 1: "Create implementation plan documentation" -> DOCUMENTATION."""
    assert task_type("Create implementation plan documentation") is TaskType.DOCUMENTATION


# --- Relevance x confidence ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("relevance", "confidence", "weight"),
    [
        # Seed 004's observe phase: architect, engineer, performance.
        (0.90, 0.95, 0.855),
        (0.80, 0.98, 0.784),
        (0.70, 0.65, 0.455),
        # Seed 004's documentation scenario: performance, testing, documentation.
        (0.40, 0.65, 0.26),
        (0.60, 0.80, 0.48),
        (1.0, 0.95, 0.95),
    ],
)
def test_relevance_weight_is_relevance_times_confidence(
    relevance: float, confidence: float, weight: float
) -> None:
    assert relevance_weight(relevance, confidence) == approx(weight)


def test_relevance_weight_is_unknown_without_both_numbers() -> None:
    assert relevance_weight(None, 0.95) is None
    assert relevance_weight(0.9, None) is None


def specialist(name: str, relevance: float | None, confidence: float | None) -> Agent:
    return Agent(name, 0.8, Trajectory(), relevance=relevance, confidence=confidence)


def test_agents_below_half_relevance_are_flagged_low_relevance() -> None:
    """Seed 004: agents with relevance < 0.5 should weigh less; the documentation agent
    (1.0 x 0.95) is not flagged, the performance agent (0.40 x 0.65) is."""
    run = Run(
        "run-docs",
        (
            specialist("documentation", 1.0, 0.95),
            specialist("performance", 0.40, 0.65),
            specialist("testing", 0.50, 0.80),
            specialist("unrated", None, None),
        ),
        task="Create comprehensive README for this module",
    )
    scores = {s.name: s for s in rank_run(run, Settings()).agents}

    assert LOW_RELEVANCE == 0.5
    assert scores["performance"].low_relevance
    assert scores["performance"].flags == ("low relevance",)
    assert scores["performance"].weight == approx(0.26)
    assert not scores["testing"].low_relevance  # exactly 0.5 is not below it
    assert scores["documentation"].flags == ()
    assert scores["documentation"].weight == approx(0.95)
    assert not scores["unrated"].low_relevance
    assert scores["unrated"].weight is None


def test_a_legacy_low_relevance_agent_carries_both_flags() -> None:
    legacy = Agent("performance", 0.8, None, relevance=0.3, confidence=0.6)
    (score,) = rank_run(Run("run-1", (legacy,)), Settings()).agents
    assert score.flags == ("no trajectory", "low relevance")


def test_relevance_does_not_change_the_ranking() -> None:
    """The flag informs; the PPP final is still technical and interaction only."""
    run = Run("run-1", (specialist("low", 0.1, 0.1), specialist("high", 1.0, 1.0)))
    ranking = rank_run(run, Settings())
    assert [s.name for s in ranking.agents] == ["high", "low"]  # equal finals: by name
    assert ranking.margin == 0.0


# --- Early stop ------------------------------------------------------------------------------


def test_a_plateau_of_two_iterations_stops_the_loop() -> None:
    """8.15 and 8.18 each gain less than 0.1 over 8.1: two plateau iterations, stop after the
    third, keeping its 8.18; the fourth iteration is saved."""
    result = analyse([8.1, 8.15, 8.18, 8.2])

    assert result == EarlyStop(
        iterations=4, stopped_at=3, reason="plateau", best_score=8.18, best_iteration=3
    )
    assert result.saved == 1


def test_a_drop_of_more_than_three_tenths_stops_the_loop_and_keeps_the_best() -> None:
    """8.5 -> 8.1 drops 0.4 > 0.3: stop after the third, keeping iteration 2's 8.5."""
    result = analyse([8.0, 8.5, 8.1])

    assert (result.stopped_at, result.reason) == (3, "regression")
    assert (result.best_score, result.best_iteration) == (8.5, 2)
    assert result.saved == 0


def test_a_regression_saves_the_iterations_after_it() -> None:
    result = analyse([8.0, 8.5, 8.1, 8.9, 9.4])

    assert (result.stopped_at, result.reason, result.saved) == (3, "regression", 2)
    assert result.best_score == 8.5


def test_a_drop_of_less_than_three_tenths_is_not_a_regression() -> None:
    result = analyse([8.0, 8.5, 8.3])
    assert (result.reason, result.stopped_at) == ("completed", 3)


def test_an_improvement_resets_the_plateau_count() -> None:
    """8.05 is one plateau iteration; 8.5 (> 8.0 + 0.1) resets it; 8.52 and 8.54 then make
    the two that stop the loop, after the fifth."""
    result = analyse([8.0, 8.05, 8.5, 8.52, 8.54, 8.56])

    assert (result.stopped_at, result.reason) == (5, "plateau")
    assert (result.best_score, result.best_iteration) == (8.54, 5)
    assert result.saved == 1


def test_a_steadily_improving_loop_completes() -> None:
    result = analyse([7.0, 7.5, 8.0, 8.5])

    assert result == EarlyStop(4, 4, "completed", 8.5, 4)
    assert result.saved == 0


def test_the_spec_example_iterations_complete_with_the_best_at_the_third() -> None:
    """SPEC 1's iterations [8.1, 8.7, 9.2, 9.1]: two real gains, then a 0.1 dip that is
    neither a regression nor yet a plateau; the best is 9.2 at iteration 3."""
    result = analyse([8.1, 8.7, 9.2, 9.1])

    assert result == EarlyStop(4, 4, "completed", 9.2, 3)
    assert result.saved == 0


def test_no_iterations() -> None:
    result = analyse([])

    assert result == EarlyStop(0, 0, "empty", None, None)
    assert result.saved == 0


def test_a_single_iteration_completes() -> None:
    assert analyse([9.0]) == EarlyStop(1, 1, "completed", 9.0, 1)


def test_the_best_of_equal_scores_is_the_earliest() -> None:
    assert analyse([8.0, 8.0, 8.0]) == EarlyStop(3, 3, "plateau", 8.0, 1)


@pytest.mark.parametrize(
    "scores",
    [
        [8.0, 8.1, 8.1],
        [8.7, 8.8, 8.8],
    ],
)
def test_a_gain_of_exactly_one_tenth_is_a_plateau_anywhere_on_the_scale(
    scores: list[float],
) -> None:
    result = analyse(scores)
    assert (result.stopped_at, result.reason) == (3, "plateau")
