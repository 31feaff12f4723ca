"""The three weights: w_t * technical + w_p * R_Proact + w_s * R_Pers, with
w_t + (w_p + w_s) / 2 = 1; the pair form is w_p = w_s and keeps its old bits."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from ppp_tui.core.arrays import AgentRow, ScoreArrays
from ppp_tui.core.errors import ConfigError, WeightError
from ppp_tui.core.model import Agent, Effort, Question, Run, Trajectory, Violation
from ppp_tui.core.scoring import coefficients, final_score, rank_run
from ppp_tui.core.settings import STAGE_TUNED, Settings, Weights
from ppp_tui.storage.config import load_settings, parse_settings
from ppp_tui.storage.config_write import render_settings, save_weights

CONFIG = Path("config.toml")


def random_runs(rng: np.random.Generator, count: int, stage: str = "plan") -> list[Run]:
    """Runs whose agents differ in questions and violations, so R_Proact and R_Pers
    pull apart; coarse technical scores make exact ties common."""
    runs = []
    for r in range(count):
        agents = []
        for j in range(int(rng.integers(1, 6))):
            trajectory = None
            if rng.random() > 0.2:
                questions = tuple(
                    Question("Why?", Effort(rng.choice(["low", "medium", "high"])))
                    for _ in range(int(rng.integers(0, 3)))
                )
                violations = tuple(
                    Violation("commas", penalty=float(rng.choice([0.05, 0.1, 0.3])))
                    for _ in range(int(rng.integers(0, 3)))
                )
                trajectory = Trajectory(questions=questions, violations=violations)
            agents.append(Agent(f"a{j}", float(rng.choice([0.6, 0.8, 0.9])), trajectory))
        preferred = f"a{int(rng.integers(0, len(agents)))}"
        runs.append(
            Run(
                f"r{r}",
                tuple(agents),
                stage=stage,
                preferences=("commas",),
                preferred_agent=preferred,
            )
        )
    return runs


# --- Weights ------------------------------------------------------------------------------------


def test_pair_form_is_equal_proactivity_and_personalization() -> None:
    weights = Weights.pair(0.7, 0.3)
    assert (weights.technical, weights.proactivity, weights.personalization) == (0.7, 0.3, 0.3)
    assert weights.is_pair and weights.interaction == 0.3
    assert Weights.from_technical(0.65) == Weights.pair(0.65, 0.35)


def test_three_weights_follow_the_rule_and_interaction_is_their_mean() -> None:
    weights = Weights(0.5, 0.2, 0.8)
    assert not weights.is_pair
    assert weights.interaction == 0.5  # the mean: still technical + interaction = 1
    assert Weights.from_free(0.2, 0.8) == weights
    assert Weights.from_free(0.4, 0.4) == Weights.pair(0.6, 0.4)
    # A free weight may pass 1 as long as the other makes up for it.
    assert Weights.from_free(1.5, 0.0).technical == 0.25


@pytest.mark.parametrize(
    ("weights", "message"),
    [
        (
            (0.5, 0.2, 0.9),
            "ppp.weights: weights must satisfy technical + (proactivity + personalization) / 2"
            " = 1, got 0.5 + (0.2 + 0.9) / 2 = 1.05",
        ),
        ((0.5, -0.2, 1.2), "ppp.weights: proactivity must be >= 0, got proactivity=-0.2"),
        ((-0.1, 1.2, 1.0), "ppp.weights: technical must be >= 0, got technical=-0.1"),
        ((0.5, float("nan"), 0.5), "ppp.weights: proactivity must be a number, got nan"),
    ],
)
def test_invalid_three_weights_name_the_rule_and_the_numbers(
    weights: tuple[float, float, float], message: str
) -> None:
    with pytest.raises(WeightError) as raised:
        Weights(*weights)
    assert str(raised.value) == message


# --- Scoring ------------------------------------------------------------------------------------


def test_pair_form_scores_with_the_pair_expression_bit_for_bit() -> None:
    rng = np.random.default_rng(1)
    settings = Settings()
    for run in random_runs(rng, 40):
        for technical in (0.7, 0.123456789, 0.5, 0.0, 1.0):
            weights = Weights.from_technical(technical)
            for score in rank_run(run, settings, weights).agents:
                c, p, q = coefficients(score.technical, score.interaction, settings)
                assert score.final == c + p * weights.technical + q * weights.interaction


def test_three_weights_score_each_reward_with_its_own_weight() -> None:
    settings = Settings()
    trajectory = Trajectory(
        questions=(Question("Which port?", Effort.HIGH),),
        violations=(Violation("commas", penalty=0.2),),
    )
    run = Run("r", (Agent("a", 0.9, trajectory),), preferences=("commas",))
    score = rank_run(run, settings, Weights(0.5, 0.2, 0.8)).best
    assert (score.r_proact, score.r_pers) == (-0.5, -0.2)
    assert score.final == pytest.approx(0.5 * 0.9 + 0.2 * -0.5 + 0.8 * -0.2)
    # Without a trajectory the technical-only fallback is the same in every form.
    bare = Run("b", (Agent("a", 0.9),))
    assert rank_run(bare, settings, Weights(0.5, 0.2, 0.8)).best.final == 0.9
    with pytest.raises(ValueError, match="R_Proact and R_Pers apart"):
        final_score(0.9, -0.7, Weights(0.5, 0.2, 0.8), settings)


@pytest.mark.parametrize("seed", range(6))
def test_arrays_pick_and_score_as_the_per_run_ranking_at_three_weights(seed: int) -> None:
    """At random points of the triangle and in the pair form, the whole-database
    arrays give every run the same finals (same bits) and the same pick as rank_run."""
    rng = np.random.default_rng(300 + seed)
    settings = Settings(stage_weights=STAGE_TUNED)
    runs = random_runs(rng, 40)
    arrays = ScoreArrays.from_runs(runs, settings)
    lines = arrays.lines(settings)
    points = [Weights.from_free(*rng.uniform(0, 1, 2)) for _ in range(8)]
    points += [Weights.from_technical(float(t)) for t in rng.uniform(0, 1, 4)]
    points += [Weights(0.5, 0.0, 1.0), Weights(0.0, 2.0, 0.0), Weights.pair(0.7, 0.3)]
    for weights in points:
        outcome = lines.outcome_at(weights)
        for index, run in enumerate(runs):
            ranking = rank_run(run, settings, weights)
            assert arrays.names[index, outcome.selected[index]] == ranking.best_agent
            for slot, name in enumerate(arrays.names[index]):
                if name:
                    assert outcome.final[index, slot] == ranking.agent(name).final  # type: ignore[union-attr]


def test_pair_form_outcome_at_is_the_old_outcome() -> None:
    rng = np.random.default_rng(5)
    settings = Settings()
    lines = ScoreArrays.from_runs(random_runs(rng, 50), settings).lines(settings)
    for technical in (0.3, 0.7, 0.81):
        old = lines.outcome(technical, round(1.0 - technical, 12))
        new = lines.outcome_at(Weights.from_technical(technical))
        assert np.array_equal(old.final, new.final)
        assert np.array_equal(old.selected, new.selected)
        assert old.mean_regret == new.mean_regret and old.agreement == new.agreement


def test_configured_three_weight_stages_score_with_their_weights() -> None:
    rng = np.random.default_rng(9)
    settings = Settings(
        weights=Weights(0.6, 0.1, 0.7), stage_weights={"plan": Weights.pair(0.6, 0.4)}
    )
    runs = random_runs(rng, 30, "plan") + random_runs(rng, 30, "audit")
    runs = [
        Run(
            f"{r.stage}{i}",
            r.agents,
            stage=r.stage,
            preferences=r.preferences,
            preferred_agent=r.preferred_agent,
        )
        for i, r in enumerate(runs)
    ]
    arrays = ScoreArrays.from_runs(runs, settings)
    outcome = arrays.lines(settings).outcome()
    for index, run in enumerate(runs):
        ranking = rank_run(run, settings)
        assert arrays.names[index, outcome.selected[index]] == ranking.best_agent
        assert outcome.final[index, outcome.selected[index]] == ranking.best.final


def test_free_planes_equal_the_scores_over_the_triangle() -> None:
    rng = np.random.default_rng(11)
    settings = Settings()
    lines = ScoreArrays.from_runs(random_runs(rng, 30), settings).lines(settings)
    free = lines.free()
    for wp, ws in rng.uniform(0, 1, (6, 2)):
        exact = lines.outcome_at(Weights.from_free(wp, ws)).final
        planes = free.final(wp, ws)
        usable = free.selectable
        assert np.allclose(planes[usable], exact[usable], rtol=0, atol=1e-12)
        assert np.all(np.isneginf(planes[~usable]))
    assert np.array_equal(free.preferred, lines.arrays.preferred)


def test_rows_without_the_split_count_interaction_as_proactivity() -> None:
    row = AgentRow("a", 0.8, -0.3)
    assert row.split() == (-0.3, 0.0)
    assert AgentRow("a", 0.8, None).split() is None
    arrays = ScoreArrays.build([("r", None, [row], "a")])
    assert arrays.proactivity[0, 0] == -0.3 and arrays.personalization[0, 0] == 0.0


# --- config.toml --------------------------------------------------------------------------------


def test_config_reads_proactivity_and_personalization() -> None:
    text = (
        "[ppp.weights]\ntechnical = 0.5\nproactivity = 0.2\npersonalization = 0.8\n"
        "[ppp.weights.plan]\ntechnical = 0.6\ninteraction = 0.4\n"
        "proactivity = 0.3\npersonalization = 0.5\n"
    )
    settings = parse_settings(text, CONFIG)
    assert settings.weights == Weights(0.5, 0.2, 0.8)
    assert settings.stage_weights["plan"] == Weights(0.6, 0.3, 0.5)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "[ppp.weights]\ntechnical = 0.5\nproactivity = 0.2\n",
            "config.toml: ppp.weights: personalization is missing"
            " (proactivity and personalization go together)",
        ),
        (
            "[ppp.weights.plan]\ntechnical = 0.5\nproactivity = 0.2\npersonalization = 0.9\n",
            "config.toml: ppp.weights.plan: weights must satisfy technical + (proactivity"
            " + personalization) / 2 = 1, got 0.5 + (0.2 + 0.9) / 2 = 1.05",
        ),
        (
            "[ppp.weights]\ntechnical = 0.5\ninteraction = 0.4\nproactivity = 0.2\n"
            "personalization = 0.8\n",
            "config.toml: ppp.weights: interaction must be the mean of proactivity and"
            " personalization when all three are given, got interaction=0.4 but"
            " (0.2 + 0.8) / 2 = 0.5",
        ),
        (
            "[ppp.weights]\nproactivity = 0.2\npersonalization = 0.8\n",
            "config.toml: ppp.weights: technical is missing"
            " (it goes with proactivity and personalization)",
        ),
    ],
)
def test_bad_three_weight_tables_name_the_rule(text: str, message: str) -> None:
    with pytest.raises(ConfigError) as raised:
        parse_settings(text, CONFIG)
    assert str(raised.value) == message


def test_a_save_writes_three_keys_and_returns_to_the_pair_form(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text(
        "[ppp]\n[ppp.weights]\ntechnical = 0.7  # mine\ninteraction = 0.3\n"
        "\n[ppp.weights.plan]\ntechnical = 0.6\ninteraction = 0.4\n"
    )
    save_weights(config, Weights(0.5, 0.2, 0.8), {"audit": Weights(0.6, 0.3, 0.5)}, note="tuned")
    text = config.read_text()
    assert (
        "[ppp.weights]\n# ppp-tui: tuned\ntechnical = 0.5  # mine\nproactivity = 0.2\n"
        "personalization = 0.8\n" in text
    )
    assert "[ppp.weights.plan]\ntechnical = 0.6\ninteraction = 0.4\n" in text
    assert "[ppp.weights.audit]\ntechnical = 0.6  # ppp-tui: tuned\nproactivity = 0.3\n" in text
    settings = load_settings(config)
    assert settings.weights == Weights(0.5, 0.2, 0.8)
    assert settings.stage_weights["audit"] == Weights(0.6, 0.3, 0.5)
    assert "proactivity = 0.2" in render_settings(settings)
    # Back to equal weights: the pair form again, the split keys gone.
    save_weights(config, Weights.from_free(0.35, 0.35))
    assert "[ppp.weights]\ntechnical = 0.65  # mine\ninteraction = 0.35\n\n" in config.read_text()


def test_the_older_form_becomes_a_weights_table_for_three_weights(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text("[ppp]\ntechnical_weight = 0.7\ninteraction_weight = 0.3\n")
    save_weights(config, Weights.pair(0.6, 0.4))
    assert "technical_weight = 0.6\ninteraction_weight = 0.4\n" in config.read_text()
    save_weights(config, Weights(0.6, 0.2, 0.6))
    assert "technical_weight" not in config.read_text()
    assert load_settings(config).weights == Weights(0.6, 0.2, 0.6)


def test_outcome_under_settings_follows_each_stage_form() -> None:
    rng = np.random.default_rng(13)
    runs = random_runs(rng, 25, "plan") + random_runs(rng, 25, "audit")
    runs = [
        Run(
            f"x{i}",
            r.agents,
            stage=r.stage,
            preferences=r.preferences,
            preferred_agent=r.preferred_agent,
        )
        for i, r in enumerate(runs)
    ]
    base = Settings()
    lines = ScoreArrays.from_runs(runs, base).lines(base)
    for settings in (
        base,
        Settings(weights=Weights(0.5, 0.9, 0.1)),
        Settings(weights=Weights(0.5, 0.9, 0.1), stage_weights={"audit": Weights.pair(0.8, 0.2)}),
        Settings(stage_weights={"audit": Weights(0.2, 0.0, 1.6)}),
    ):
        outcome = lines.outcome_under(settings)
        for index, run in enumerate(runs):
            ranking = rank_run(run, settings)
            assert lines.arrays.names[index, outcome.selected[index]] == ranking.best_agent
            assert outcome.final[index, outcome.selected[index]] == ranking.best.final


@pytest.mark.parametrize("seed", range(4))
def test_the_step_gives_the_outcome_figures_bit_for_bit(seed: int) -> None:
    """The sliders' buffered step equals the full outcome: picks, agreement, regret."""
    rng = np.random.default_rng(400 + seed)
    runs = random_runs(rng, 30, "plan") + random_runs(rng, 30, "audit")
    runs = [
        Run(
            f"y{i}",
            r.agents,
            stage=r.stage,
            preferences=r.preferences,
            preferred_agent=None if rng.random() < 0.2 else r.preferred_agent,
        )
        for i, r in enumerate(runs)
    ]
    base = Settings()
    lines = ScoreArrays.from_runs(runs, base).lines(base)
    choices = [Weights.from_free(*map(float, rng.uniform(0, 1, 2))) for _ in range(5)]
    choices += [Weights.from_technical(float(t)) for t in rng.uniform(0, 1, 3)]
    for weights in choices:
        outcome = lines.outcome_at(weights)
        expected = (outcome.marked_runs, outcome.mean_regret, outcome.agreement)
        assert lines.figures_at(weights) == expected
        for stage_weights in ({}, {"audit": choices[0]}, {"audit": choices[-1], "plan": weights}):
            settings = Settings(weights=weights, stage_weights=stage_weights)
            outcome = lines.outcome_under(settings)
            expected = (outcome.marked_runs, outcome.mean_regret, outcome.agreement)
            assert lines.figures_under(settings) == expected
    unmarked = lines.subset(~lines.arrays.marked)
    assert unmarked.figures_at(choices[0]) == (0, None, None)
