"""Weight pairs, stage tables and presets (SPEC 5): what a config file can say and what it means."""

from __future__ import annotations

import math
import re

import pytest

from ppp_tui.core.errors import PPPError, WeightError
from ppp_tui.core.scoring import penalty_for
from ppp_tui.core.settings import (
    PRESETS,
    STAGE_TUNED,
    STAGES,
    Settings,
    Weights,
    preset,
    validate_weights,
)

# --- Weight pairs --------------------------------------------------------------------------


def test_a_pair_that_does_not_sum_to_one_names_the_table_and_the_numbers() -> None:
    """Seed 002's weight-validation scenario: 0.5 + 0.6 = 1.1 is rejected."""
    with pytest.raises(WeightError) as error:
        validate_weights(0.5, 0.6, "ppp.weights.plan")
    assert str(error.value) == (
        "ppp.weights.plan: weights must sum to 1.0, got technical=0.5 + interaction=0.6 = 1.1"
    )


def test_the_global_table_is_named_by_default() -> None:
    with pytest.raises(WeightError, match=r"^ppp\.weights: weights must sum to 1\.0"):
        Weights.pair(0.8, 0.3)


@pytest.mark.parametrize(
    ("technical", "interaction"),
    [(0.7, 0.3), (0.75, 0.25), (1.0, 0.0), (0.0, 1.0), (0.7, 0.3009), (0.7, 0.2991)],
)
def test_pairs_summing_to_one_within_a_thousandth_are_accepted(
    technical: float, interaction: float
) -> None:
    weights = Weights.pair(technical, interaction)
    assert (weights.technical, weights.interaction) == (technical, interaction)


@pytest.mark.parametrize(
    ("technical", "interaction", "total"),
    [(0.7, 0.302, "1.002"), (0.7, 0.298, "0.998"), (0.5, 0.6, "1.1"), (0.0, 0.0, "0")],
)
def test_pairs_off_by_more_than_a_thousandth_are_rejected(
    technical: float, interaction: float, total: str
) -> None:
    with pytest.raises(WeightError, match=rf"= {re.escape(total)}$"):
        Weights.pair(technical, interaction)


@pytest.mark.parametrize(
    ("technical", "interaction", "message"),
    [
        (1.2, -0.2, "ppp.weights: technical must be in [0, 1], got technical=1.2"),
        (-0.1, 1.1, "ppp.weights: technical must be in [0, 1], got technical=-0.1"),
        (0.0, 1.5, "ppp.weights: interaction must be in [0, 1], got interaction=1.5"),
    ],
)
def test_each_weight_must_lie_in_zero_one(
    technical: float, interaction: float, message: str
) -> None:
    with pytest.raises(WeightError) as error:
        Weights.pair(technical, interaction)
    assert str(error.value) == message


@pytest.mark.parametrize(
    ("technical", "message"),
    [
        ("0.7", "ppp.weights: technical must be a number, got '0.7'"),
        (None, "ppp.weights: technical must be a number, got None"),
        (True, "ppp.weights: technical must be a number, got True"),
        (math.nan, "ppp.weights: technical must be a number, got nan"),
    ],
)
def test_each_weight_must_be_a_number(technical: object, message: str) -> None:
    with pytest.raises(WeightError) as error:
        validate_weights(technical, 0.3)  # type: ignore[arg-type]
    assert str(error.value) == message


def test_integer_weights_are_numbers() -> None:
    assert Weights.pair(1, 0) == Weights.pair(1.0, 0.0)


def test_a_weight_error_is_a_ppp_error() -> None:
    with pytest.raises(PPPError):
        Weights.pair(0.9, 0.9)


@pytest.mark.parametrize(
    ("technical", "interaction"),
    [(0.7, 0.3), (0.6, 0.4), (0.8, 0.2), (0.75, 0.25), (0.33, 0.67), (0.0, 1.0), (1.0, 0.0)],
)
def test_from_technical_gives_the_exact_complement(technical: float, interaction: float) -> None:
    """The slider's pair: 1 - 0.7 is 0.30000000000000004 in floats, but the weight is 0.3."""
    weights = Weights.from_technical(technical)
    assert weights.technical == technical
    assert weights.interaction == interaction


# --- Stage tables --------------------------------------------------------------------------


def test_defaults_are_seventy_thirty_with_no_stage_tables() -> None:
    settings = Settings()
    assert settings.weights == Weights.pair(0.7, 0.3)
    assert dict(settings.stage_weights) == {}
    assert settings.enabled
    assert settings.missing_trajectory == "technical_only"
    for stage in (*STAGES, None):
        assert settings.weights_for(stage) == Weights.pair(0.7, 0.3)


def test_a_stage_uses_its_own_table_and_any_other_stage_the_global_one() -> None:
    settings = Settings(
        weights=Weights.pair(0.65, 0.35), stage_weights={"plan": Weights.pair(0.6, 0.4)}
    )

    assert settings.weights_for("plan") == Weights.pair(0.6, 0.4)
    assert settings.weights_for("unlock") == Weights.pair(0.65, 0.35)
    assert settings.weights_for("review") == Weights.pair(0.65, 0.35)
    assert settings.weights_for(None) == Weights.pair(0.65, 0.35)


def test_with_weights_replaces_the_global_pair_and_keeps_the_stage_tables() -> None:
    settings = Settings(stage_weights={"plan": Weights.pair(0.6, 0.4)})
    changed = settings.with_weights(Weights.pair(0.8, 0.2))

    assert changed.weights_for("implement") == Weights.pair(0.8, 0.2)
    assert changed.weights_for("plan") == Weights.pair(0.6, 0.4)
    assert settings.weights == Weights.pair(0.7, 0.3)  # the original is untouched


def test_with_weights_for_a_stage_replaces_only_that_stage() -> None:
    settings = Settings(stage_weights={"plan": Weights.pair(0.6, 0.4)})
    changed = settings.with_weights(Weights.pair(0.9, 0.1), stage="unlock")

    assert changed.weights_for("unlock") == Weights.pair(0.9, 0.1)
    assert changed.weights_for("plan") == Weights.pair(0.6, 0.4)
    assert changed.weights == Weights.pair(0.7, 0.3)
    assert "unlock" not in settings.stage_weights


def test_a_stage_table_passed_as_a_dict_cannot_be_changed_behind_the_settings_back() -> None:
    tables = {"plan": Weights.pair(0.6, 0.4)}
    settings = Settings(stage_weights=tables)
    tables["plan"] = Weights.pair(0.9, 0.1)

    assert settings.weights_for("plan") == Weights.pair(0.6, 0.4)


@pytest.mark.parametrize("mode", ["ignore", "", "Neutral"])
def test_an_unknown_missing_trajectory_mode_is_a_weight_error(mode: str) -> None:
    with pytest.raises(WeightError, match="missing_trajectory must be one of") as error:
        Settings(missing_trajectory=mode)  # type: ignore[arg-type]
    assert isinstance(error.value, PPPError)
    assert "technical_only, neutral" in str(error.value)


# --- Presets -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("key", "label", "technical"),
    [
        ("balanced", "Balanced 70/30", 0.7),
        ("technical", "Technical 80/20", 0.8),
        ("interaction", "Interaction 60/40", 0.6),
        ("stage", "Stage defaults", 0.7),
        ("paper", "Paper", 0.7),
    ],
)
def test_presets_set_the_global_weights(key: str, label: str, technical: float) -> None:
    chosen = preset(key)
    applied = chosen.apply(Settings())

    assert chosen.label == label
    assert applied.weights == Weights.from_technical(technical)


def test_the_presets_are_offered_in_the_spec_order() -> None:
    assert [p.key for p in PRESETS] == ["balanced", "technical", "interaction", "stage", "paper"]


def test_the_stage_preset_holds_the_seeds_stage_recommendations() -> None:
    """Seed 002: plan 60/40, tasks and implement 70/30, validate 75/25, audit and unlock 80/20."""
    expected = {
        "plan": Weights.pair(0.6, 0.4),
        "tasks": Weights.pair(0.7, 0.3),
        "implement": Weights.pair(0.7, 0.3),
        "validate": Weights.pair(0.75, 0.25),
        "audit": Weights.pair(0.8, 0.2),
        "unlock": Weights.pair(0.8, 0.2),
    }
    assert dict(STAGE_TUNED) == expected

    applied = preset("stage").apply(Settings())
    for stage, weights in expected.items():
        assert applied.weights_for(stage) == weights
    assert applied.weights_for("review") == Weights.pair(0.7, 0.3)


def test_a_global_preset_drops_the_stage_tables() -> None:
    staged = preset("stage").apply(Settings())
    flat = preset("technical").apply(staged)

    assert flat.weights_for("plan") == Weights.pair(0.8, 0.2)
    assert flat.weights_for("unlock") == Weights.pair(0.8, 0.2)


def test_the_paper_preset_applies_the_papers_penalties() -> None:
    """The paper charges 0.5 for a one_question violation and 0.1 for a concise_question one,
    where the SPEC's defaults charge 0.05 for both."""
    default = Settings()
    paper = preset("paper").apply(default)

    assert penalty_for("one_question", default) == 0.05
    assert penalty_for("concise_question", default) == 0.05
    assert penalty_for("one_question", paper) == 0.5
    assert penalty_for("concise_question", paper) == 0.1
    assert penalty_for("no_ask", paper) == 1.0
    assert penalty_for("lang_ita", paper) == 0.5
    assert penalty_for("professional", paper) == 0.0


def test_other_presets_keep_the_configured_penalties() -> None:
    configured = Settings(penalties={"lang_ita": 0.2})
    assert penalty_for("lang_ita", preset("balanced").apply(configured)) == 0.2


def test_an_unknown_preset_names_the_choices() -> None:
    with pytest.raises(WeightError) as error:
        preset("heavy")
    assert str(error.value) == (
        "unknown preset 'heavy'; choose one of balanced, technical, interaction, stage, paper"
    )
