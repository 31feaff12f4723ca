"""The PPP formulas of SPEC 2 on the seeds' worked examples: who wins, and by how much."""

from __future__ import annotations

import pytest
from pytest import approx

from ppp_tui.core.model import Agent, Effort, Question, Run, Severity, Trajectory, Violation
from ppp_tui.core.scoring import (
    coefficients,
    final_score,
    penalty_for,
    r_pers,
    r_proact,
    rank_run,
    violation_penalty,
)
from ppp_tui.core.settings import (
    STAGE_TUNED,
    PersonalizationSettings,
    ProactivitySettings,
    Settings,
    Weights,
)

DEFAULTS = Settings()


def asked(low: int = 0, medium: int = 0, high: int = 0) -> tuple[Question, ...]:
    """Questions of the given efforts, each in a turn of its own."""
    efforts = [Effort.LOW] * low + [Effort.MEDIUM] * medium + [Effort.HIGH] * high
    return tuple(
        Question(f"Question {n} ({effort})?", effort, turn=n)
        for n, effort in enumerate(efforts, start=1)
    )


def agent(
    name: str,
    technical: float,
    *,
    low: int = 0,
    medium: int = 0,
    high: int = 0,
    violations: tuple[Violation, ...] = (),
) -> Agent:
    """An agent with a trajectory: its questions by effort and its violations."""
    return Agent(
        name, technical, Trajectory(questions=asked(low, medium, high), violations=violations)
    )


def without_trajectory(name: str, technical: float) -> Agent:
    """An agent whose run recorded no trajectory (the seeds' technical-only fallback)."""
    return Agent(name, technical, trajectory=None)


def run(*agents: Agent, preferences: tuple[str, ...] = (), stage: str | None = None) -> Run:
    return Run("run-test", agents, stage=stage, preferences=preferences)


def names(ranking_run: Run, settings: Settings = DEFAULTS) -> list[str]:
    return [score.name for score in rank_run(ranking_run, settings).agents]


# --- The seeds' worked examples ------------------------------------------------------------


def test_seed000_agent_b_beats_agent_a_0_645_to_0_25() -> None:
    """Seed 000: agent_a is perfect (tech 1.0) but asks three high-effort questions; agent_b
    (tech 0.9) asks none. No preference is stated, so R_Pers is 0 for both: interactions are
    -1.5 and +0.05, and under 0.7/0.3 agent_b wins 0.7*0.9 + 0.3*0.05 = 0.645 to
    0.7*1.0 + 0.3*(-1.5) = 0.25."""
    ranking = rank_run(run(agent("agent_a", 1.0, high=3), agent("agent_b", 0.9)), DEFAULTS)

    assert ranking.weights == Weights.pair(0.7, 0.3)
    assert ranking.best_agent == "agent_b"
    b, a = ranking.agents
    assert (b.r_proact, b.r_pers, b.interaction) == (approx(0.05), 0.0, approx(0.05))
    assert b.final == approx(0.645)
    assert (a.r_proact, a.r_pers, a.interaction) == (approx(-1.5), 0.0, approx(-1.5))
    assert a.final == approx(0.25)
    assert a.questions == (0, 0, 3)
    assert ranking.confidence == approx(0.645)
    assert ranking.margin == approx(0.395)
    assert a.gap == approx(0.395)


def seed003_run() -> Run:
    """Seed 003's three agents, the run stating a json preference.

    agent1: tech 0.85, two low-effort questions, no violation -> 0.05 + 0.05 = 0.10
    agent2: tech 0.95, one high-effort question              -> -0.50 + 0.05 = -0.45
    agent3: tech 0.80, no question, one major json violation -> 0.05 - 0.03 = 0.02
    """
    return run(
        agent("agent1", 0.85, low=2),
        agent("agent2", 0.95, high=1),
        agent("agent3", 0.80, violations=(Violation("json", Severity.MAJOR),)),
        preferences=("json",),
    )


def test_seed003_balanced_agent1_wins_0_625_over_agent3_0_566_and_agent2_0_530() -> None:
    """Seed 003 (and seed 002's basic scenario): agent2 has the best technical score (0.95)
    but its high-effort question costs it; agent1's balance wins 0.625, agent3 (0.566) is
    second and agent2 (0.530) last."""
    ranking = rank_run(seed003_run(), DEFAULTS)

    assert [s.name for s in ranking.agents] == ["agent1", "agent3", "agent2"]
    agent1, agent3, agent2 = ranking.agents
    assert (agent1.r_proact, agent1.r_pers) == (approx(0.05), approx(0.05))
    assert agent1.interaction == approx(0.10)
    assert agent1.final == approx(0.625)
    assert (agent2.r_proact, agent2.r_pers) == (approx(-0.5), approx(0.05))
    assert agent2.interaction == approx(-0.45)
    assert agent2.final == approx(0.530)
    assert (agent3.r_proact, agent3.r_pers) == (approx(0.05), approx(-0.03))
    assert agent3.interaction == approx(0.02)
    assert agent3.final == approx(0.566)
    assert agent3.violations == 1
    assert agent3.penalty == approx(0.03)
    assert ranking.confidence == approx(0.625)
    assert ranking.margin == approx(0.625 - 0.566)
    assert [s.rank for s in ranking.agents] == [1, 2, 3]


@pytest.mark.parametrize(
    ("technical", "interaction", "weights", "final"),
    [
        # Seed 002 basic scenario / seed 003.
        (0.85, 0.10, Weights.pair(0.7, 0.3), 0.625),
        (0.95, -0.45, Weights.pair(0.7, 0.3), 0.530),
        (0.80, 0.02, Weights.pair(0.7, 0.3), 0.566),
        # Seed 002 stage-specific scenario: plan 60/40, unlock 80/20.
        (0.80, 0.05, Weights.pair(0.6, 0.4), 0.50),
        (0.70, 0.10, Weights.pair(0.6, 0.4), 0.46),
        (0.80, 0.05, Weights.pair(0.8, 0.2), 0.65),
        # Seed 002 "tie-breaker" scenario (not a tie after all: 0.575 beats 0.555).
        (0.80, 0.05, Weights.pair(0.7, 0.3), 0.575),
        (0.75, 0.10, Weights.pair(0.7, 0.3), 0.555),
        # Seed 002 guide, example 2: technical quality dominates at 80/20.
        (0.95, -0.20, Weights.pair(0.8, 0.2), 0.72),
        (0.85, 0.05, Weights.pair(0.8, 0.2), 0.69),
    ],
)
def test_final_is_the_weighted_sum_of_the_seeds_examples(
    technical: float, interaction: float, weights: Weights, final: float
) -> None:
    assert final_score(technical, interaction, weights, DEFAULTS) == approx(final)


# --- Technical-only fallback (seed 002) ------------------------------------------------------


def test_no_trajectory_falls_back_to_the_technical_score() -> None:
    """Seed 002: an agent without trajectory scores its technical 0.90, whatever the weights;
    its interaction is absent, not 0."""
    ranking = rank_run(run(without_trajectory("agent1", 0.90), stage="plan"), DEFAULTS)

    (only,) = ranking.agents
    assert only.final == approx(0.90)
    assert (only.interaction, only.r_proact, only.r_pers) == (None, None, None)
    assert not only.has_trajectory
    assert only.flags == ("no trajectory",)
    assert only.questions == (0, 0, 0)


def test_neutral_missing_trajectory_scores_only_the_weighted_technical_part() -> None:
    """missing_trajectory = "neutral": final = 0.7 * 0.9 = 0.63, interaction still absent."""
    neutral = Settings(missing_trajectory="neutral")
    (only,) = rank_run(run(without_trajectory("agent1", 0.90)), neutral).agents

    assert only.final == approx(0.63)
    assert only.interaction is None


def test_the_fallback_decides_between_a_logged_and_an_unlogged_agent() -> None:
    """A silent logged agent (tech 0.85, interaction +0.05) scores 0.7*0.85 + 0.3*0.05 = 0.61.
    The unlogged one (tech 0.80) keeps its 0.80 by default and wins; under "neutral" it gets
    0.7*0.80 = 0.56 and loses."""
    both = run(agent("logged", 0.85), without_trajectory("unlogged", 0.80))

    by_default = rank_run(both, DEFAULTS)
    assert by_default.best_agent == "unlogged"
    assert by_default.margin == approx(0.80 - 0.61)

    neutral = rank_run(both, Settings(missing_trajectory="neutral"))
    assert neutral.best_agent == "logged"
    assert neutral.margin == approx(0.61 - 0.56)


@pytest.mark.parametrize(
    ("settings", "interaction", "expected"),
    [
        (Settings(), 0.10, (0.0, 0.85, 0.10)),
        (Settings(), None, (0.85, 0.0, 0.0)),
        (Settings(missing_trajectory="neutral"), None, (0.0, 0.85, 0.0)),
        (Settings(enabled=False), 0.10, (0.85, 0.0, 0.0)),
        (Settings(enabled=False, missing_trajectory="neutral"), None, (0.85, 0.0, 0.0)),
    ],
)
def test_coefficients_decompose_final_as_c_plus_p_wt_plus_q_wi(
    settings: Settings, interaction: float | None, expected: tuple[float, float, float]
) -> None:
    assert coefficients(0.85, interaction, settings) == expected


# --- Stage weights (seed 002) ----------------------------------------------------------------


def asker_and_quiet(stage: str | None) -> Run:
    """No stated preference. asker: tech 0.80 and one medium-effort question (interaction
    -0.1); quiet: tech 0.75 and no question (interaction +0.05)."""
    return run(agent("asker", 0.80, medium=1), agent("quiet", 0.75), stage=stage)


@pytest.mark.parametrize(
    ("stage", "weights", "winner", "margin"),
    [
        # plan 0.6/0.4: asker 0.48 - 0.04 = 0.44, quiet 0.45 + 0.02 = 0.47.
        ("plan", Weights.pair(0.6, 0.4), "quiet", 0.03),
        # implement 0.7/0.3: asker 0.56 - 0.03 = 0.53, quiet 0.525 + 0.015 = 0.54.
        ("implement", Weights.pair(0.7, 0.3), "quiet", 0.01),
        # unlock 0.8/0.2: asker 0.64 - 0.02 = 0.62, quiet 0.60 + 0.01 = 0.61.
        ("unlock", Weights.pair(0.8, 0.2), "asker", 0.01),
        # A stage without a table of its own uses the global 0.7/0.3.
        ("review", Weights.pair(0.7, 0.3), "quiet", 0.01),
        (None, Weights.pair(0.7, 0.3), "quiet", 0.01),
    ],
)
def test_stage_tuned_weights_can_flip_the_winner(
    stage: str | None, weights: Weights, winner: str, margin: float
) -> None:
    ranking = rank_run(asker_and_quiet(stage), Settings(stage_weights=STAGE_TUNED))

    assert ranking.weights == weights
    assert ranking.best_agent == winner
    assert ranking.margin == approx(margin)


def test_explicit_weights_override_the_stage_table() -> None:
    ranking = rank_run(
        asker_and_quiet("plan"), Settings(stage_weights=STAGE_TUNED), Weights.pair(0.8, 0.2)
    )
    assert ranking.weights == Weights.pair(0.8, 0.2)
    assert ranking.best_agent == "asker"
    assert ranking.best.final == approx(0.62)


# --- Ranking ties, PPP off, confidence and margin --------------------------------------------


def test_equal_finals_go_to_the_higher_technical_score() -> None:
    """Under 0.6/0.4, asker (tech 0.85, one medium question) scores 0.51 - 0.04 = 0.47 and
    quiet (tech 0.75, no question) 0.45 + 0.02 = 0.47: a tie that asker's technical breaks."""
    tie = run(agent("quiet", 0.75), agent("asker", 0.85, medium=1))
    ranking = rank_run(tie, DEFAULTS, Weights.pair(0.6, 0.4))

    assert [s.name for s in ranking.agents] == ["asker", "quiet"]
    assert [s.final for s in ranking.agents] == [approx(0.47), approx(0.47)]
    assert ranking.margin == approx(0.0)


def test_equal_finals_and_technical_go_to_the_name_first_in_order() -> None:
    tie = run(agent("zeta", 0.8), agent("beta", 0.8), agent("alpha", 0.8))
    assert names(tie) == ["alpha", "beta", "zeta"]


def test_ppp_off_ranks_by_technical_alone() -> None:
    """Seed 000's agents with PPP off: agent_a's perfect 1.0 wins again, by 0.1."""
    seed000 = run(agent("agent_a", 1.0, high=3), agent("agent_b", 0.9))
    ranking = rank_run(seed000, Settings(enabled=False))

    assert not ranking.ppp_enabled
    assert ranking.best_agent == "agent_a"
    assert [s.final for s in ranking.agents] == [1.0, 0.9]
    assert ranking.margin == approx(0.1)


def test_ppp_off_keeps_the_tie_rule() -> None:
    tie = run(agent("bravo", 0.9, high=1), agent("alpha", 0.9))
    assert names(tie, Settings(enabled=False)) == ["alpha", "bravo"]
    # With PPP on, bravo's high-effort question decides instead of the name.
    assert names(run(agent("alpha", 0.9, high=1), agent("bravo", 0.9))) == ["bravo", "alpha"]


def test_a_single_agent_has_no_margin_and_its_final_is_the_confidence() -> None:
    ranking = rank_run(run(agent("solo", 0.8, low=1)), DEFAULTS)

    assert ranking.best_agent == "solo"
    assert ranking.margin is None
    assert ranking.confidence == approx(0.7 * 0.8 + 0.3 * 0.05)
    assert ranking.best.gap == 0.0


def test_confidence_is_the_best_final_not_the_best_technical() -> None:
    """Seed 003: agent2 has the best technical (0.95), but confidence is agent1's 0.625."""
    ranking = rank_run(seed003_run(), DEFAULTS)
    agent1, _, agent2 = ranking.agents

    assert ranking.confidence == agent1.final == approx(0.625)
    assert agent2.name == "agent2"
    assert agent2.gap == approx(0.625 - 0.530)


# --- R_Proact --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("low", "medium", "high", "expected"),
    [
        (0, 0, 0, 0.05),  # no question: the bonus
        (3, 0, 0, 0.05),  # only low-effort questions: the bonus (seed 000 RQ3.1)
        (0, 1, 0, -0.1),
        (0, 0, 1, -0.5),
        (0, 2, 1, -0.7),
        (2, 0, 1, -0.5),  # seed 000's unit test: -0.5 for the high one, nothing for the lows
        (5, 1, 0, -0.1),  # low questions add nothing once a medium one exists
    ],
)
def test_r_proact(low: int, medium: int, high: int, expected: float) -> None:
    assert r_proact(low, medium, high, ProactivitySettings()) == approx(expected)


def test_r_proact_constants_are_configurable() -> None:
    stricter = ProactivitySettings(low_effort_bonus=0.1, medium_penalty=0.2, high_penalty=1.0)
    assert r_proact(4, 0, 0, stricter) == approx(0.1)
    assert r_proact(4, 1, 1, stricter) == approx(-1.2)


def test_r_proact_counts_an_agents_questions_by_effort() -> None:
    (score,) = rank_run(run(agent("a", 0.8, low=4, medium=1)), DEFAULTS).agents
    assert score.questions == (4, 1, 0)
    assert score.r_proact == approx(-0.1)


# --- R_Pers ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("violation", "penalty"),
    [
        # error severity: the preference's own penalty (SPEC 4)
        (Violation("json"), 0.05),
        (Violation("commas"), 0.05),
        (Violation("no_commas"), 0.05),
        (Violation("lang_ita"), 0.10),
        (Violation("one_question"), 0.05),
        (Violation("prefers_haiku"), 0.05),  # unknown preference
        # other severities, whatever the preference
        (Violation("lang_ita", Severity.WARNING), 0.02),
        (Violation("lang_ita", Severity.MINOR), 0.01),
        (Violation("json", Severity.MAJOR), 0.03),
        (Violation("json", Severity.CRITICAL), 0.05),
        # a violation's own penalty wins over all of these
        (Violation("lang_ita", Severity.ERROR, penalty=0.3), 0.3),
        (Violation("json", Severity.WARNING, penalty=0.07), 0.07),
        (Violation("json", Severity.CRITICAL, penalty=0.0), 0.0),
    ],
)
def test_violation_penalty(violation: Violation, penalty: float) -> None:
    assert violation_penalty(violation, DEFAULTS) == approx(penalty)


def test_penalties_override_the_catalogue_for_errors_only() -> None:
    """[ppp.penalties] json = 0.2: a json error costs 0.2; a json warning still 0.02, and a
    violation that carries its own penalty keeps it."""
    settings = Settings(penalties={"json": 0.2})

    assert penalty_for("json", settings) == 0.2
    assert penalty_for("commas", settings) == 0.05
    assert violation_penalty(Violation("json"), settings) == 0.2
    assert violation_penalty(Violation("json", Severity.WARNING), settings) == 0.02
    assert violation_penalty(Violation("json", penalty=0.01), settings) == 0.01


def test_a_penalty_override_spelled_no_commas_applies_to_commas() -> None:
    settings = Settings(penalties={"no_commas": 0.2})
    assert penalty_for("commas", settings) == 0.2
    assert penalty_for("no_commas", settings) == 0.2


def test_severity_penalties_are_configurable() -> None:
    settings = Settings(personalization=PersonalizationSettings(warning_penalty=0.04))
    assert violation_penalty(Violation("json", Severity.WARNING), settings) == 0.04


def test_r_pers_sums_the_penalties_of_every_violation() -> None:
    """Seed 000 RQ3.1: an agent that violates no_commas and capital gets R_Pers = -0.10."""
    broke_two = agent("a", 0.8, violations=(Violation("no_commas"), Violation("capital", turn=2)))
    (score,) = rank_run(run(broke_two, preferences=("no_commas", "capital")), DEFAULTS).agents

    assert score.r_pers == approx(-0.10)
    assert score.interaction == approx(0.05 - 0.10)
    assert score.violations == 2


def test_r_pers_mixes_severities_and_language_penalties() -> None:
    """lang_ita error 0.10 + commas warning 0.02 + json minor 0.01 = 0.13."""
    violations = (
        Violation("lang_ita"),
        Violation("commas", Severity.WARNING),
        Violation("json", Severity.MINOR),
    )
    (score,) = rank_run(
        run(agent("a", 0.8, violations=violations), preferences=("lang_ita", "commas", "json")),
        DEFAULTS,
    ).agents
    assert score.r_pers == approx(-0.13)
    assert score.penalty == approx(0.13)


def test_a_compliant_agent_gets_the_bonus_only_if_something_was_stated() -> None:
    compliant = agent("a", 0.8)
    stated = rank_run(run(compliant, preferences=("json",)), DEFAULTS).best
    nothing = rank_run(run(compliant), DEFAULTS).best
    only_no_preference = rank_run(run(compliant, preferences=("no_preference",)), DEFAULTS).best

    assert stated.r_pers == approx(0.05)
    assert nothing.r_pers == 0.0
    assert only_no_preference.r_pers == 0.0
    assert only_no_preference.interaction == approx(0.05)


@pytest.mark.parametrize(
    ("total", "has_violations", "stated", "expected"),
    [
        (0.13, True, True, -0.13),
        (0.13, True, False, -0.13),
        (0.0, True, True, 0.0),  # violations waived to 0 still forfeit the bonus
        (0.0, False, True, 0.05),
        (0.0, False, False, 0.0),
    ],
)
def test_r_pers(total: float, has_violations: bool, stated: bool, expected: float) -> None:
    assert r_pers(total, has_violations, stated, DEFAULTS) == approx(expected)
