"""Every constant of the PPP formulas, with their documented defaults, and weights.

A `Settings` object is what config.toml becomes once read; the core never reads
files itself. Weights (the technical / interaction pair, or technical, proactivity
and personalization) are validated here so that every face reports the same error
text.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Literal

from .errors import WeightError
from .preferences import canonical, paper_penalties

MissingTrajectory = Literal["technical_only", "neutral"]
MISSING_TRAJECTORY_MODES: tuple[MissingTrajectory, ...] = ("technical_only", "neutral")

# The six spec-kit stages that have their own weight tables.
STAGES: tuple[str, ...] = ("plan", "tasks", "implement", "validate", "audit", "unlock")

WEIGHT_SUM_TOLERANCE = 0.001


def _fmt(value: float) -> str:
    """Print a weight the way a user typed it: 0.6, not 0.6000000000000001."""
    return f"{value:.6g}"


@dataclass(frozen=True)
class Weights:
    """The three weights of final = w_t * technical + w_p * R_Proact + w_s * R_Pers.

    All are >= 0 and w_t + (w_p + w_s) / 2 = 1 (to `WEIGHT_SUM_TOLERANCE`). The pair
    form (technical, interaction) is w_p = w_s = interaction: `pair` builds it, and its
    scores are computed with the pair's own expression, so they are the same bits as
    before the interaction weight was split.
    """

    technical: float
    proactivity: float
    personalization: float

    def __post_init__(self) -> None:
        if self.proactivity == self.personalization:
            validate_weights(self.technical, self.proactivity)
        else:
            validate_three(self.technical, self.proactivity, self.personalization)

    @classmethod
    def pair(cls, technical: float, interaction: float) -> Weights:
        """The pair form: proactivity and personalization both weigh `interaction`."""
        return cls(technical, interaction, interaction)

    @classmethod
    def from_technical(cls, technical: float) -> Weights:
        """The pair the slider and the tuner produce: interaction = 1 - technical."""
        return cls.pair(technical, round(1.0 - technical, 12))

    @classmethod
    def from_free(cls, proactivity: float, personalization: float) -> Weights:
        """The weights with these two free weights: technical = 1 - (w_p + w_s) / 2."""
        return cls(
            round(1.0 - (proactivity + personalization) / 2, 12), proactivity, personalization
        )

    @property
    def is_pair(self) -> bool:
        """Whether proactivity and personalization weigh the same (the pair form)."""
        return self.proactivity == self.personalization

    @property
    def interaction(self) -> float:
        """The interaction weight: in the pair form exactly w_p (= w_s); otherwise the
        mean (w_p + w_s) / 2, which is still the weight that sums with technical to 1."""
        if self.proactivity == self.personalization:
            return self.proactivity
        return (self.proactivity + self.personalization) / 2

    def document(self) -> dict[str, float]:
        """The weights as `--json` documents give them: technical and interaction, and
        off the pair form proactivity and personalization too."""
        result = {"technical": self.technical, "interaction": self.interaction}
        if not self.is_pair:
            result |= {"proactivity": self.proactivity, "personalization": self.personalization}
        return result

    def label(self) -> str:
        """Short text for tables: "0.70/0.30" in the pair form, else "0.50/0.20/0.80"
        (technical / proactivity / personalization)."""
        if self.is_pair:
            return f"{self.technical:.2f}/{self.interaction:.2f}"
        return f"{self.technical:.2f}/{self.proactivity:.2f}/{self.personalization:.2f}"


def _check_number(table: str, name: str, value: object) -> None:
    if isinstance(value, bool) or not isinstance(value, int | float) or math.isnan(value):
        raise WeightError(f"{table}: {name} must be a number, got {value!r}")


def validate_weights(technical: float, interaction: float, table: str = "ppp.weights") -> None:
    """Raise `WeightError` naming `table` unless both weights are in [0, 1] and sum to 1."""
    for name, value in (("technical", technical), ("interaction", interaction)):
        _check_number(table, name, value)
        if not 0.0 <= value <= 1.0:
            raise WeightError(f"{table}: {name} must be in [0, 1], got {name}={_fmt(value)}")
    total = technical + interaction
    if abs(total - 1.0) > WEIGHT_SUM_TOLERANCE:
        raise WeightError(
            f"{table}: weights must sum to 1.0, got technical={_fmt(technical)}"
            f" + interaction={_fmt(interaction)} = {_fmt(total)}"
        )


def validate_three(
    technical: float, proactivity: float, personalization: float, table: str = "ppp.weights"
) -> None:
    """Raise `WeightError` naming `table` unless all three weights are >= 0 and
    technical + (proactivity + personalization) / 2 = 1."""
    named = (
        ("technical", technical),
        ("proactivity", proactivity),
        ("personalization", personalization),
    )
    for name, value in named:
        _check_number(table, name, value)
        if value < 0.0:
            raise WeightError(f"{table}: {name} must be >= 0, got {name}={_fmt(value)}")
    total = technical + (proactivity + personalization) / 2
    if not abs(total - 1.0) <= WEIGHT_SUM_TOLERANCE:
        raise WeightError(
            f"{table}: weights must satisfy technical + (proactivity + personalization) / 2"
            f" = 1, got {_fmt(technical)} + ({_fmt(proactivity)} + {_fmt(personalization)})"
            f" / 2 = {_fmt(total)}"
        )


@dataclass(frozen=True)
class ProactivitySettings:
    low_effort_bonus: float = 0.05
    medium_penalty: float = 0.1
    high_penalty: float = 0.5


@dataclass(frozen=True)
class PersonalizationSettings:
    compliance_bonus: float = 0.05
    warning_penalty: float = 0.02
    # The trajectory schema's severities.
    minor_penalty: float = 0.01
    major_penalty: float = 0.03
    critical_penalty: float = 0.05


@dataclass(frozen=True)
class JudgeSettings:
    """[ppp.judge]: an LLM judge behind an OpenAI-compatible endpoint (docs/judge.md).

    The API key itself is never a setting: `api_key_env` names the environment
    variable it is read from, at the moment a request is sent.
    """

    base_url: str
    model: str
    api_key_env: str | None = "OPENAI_API_KEY"
    concurrency: int = 4  # requests in flight at once
    timeout_s: float = 60.0  # the whole of one request: sending it and reading its reply
    # The answer's length cap sent with each request (an effort is a word, a score a
    # number); 0 sends none.
    max_tokens: int = 16


def _frozen(mapping: Mapping[str, float] | None = None) -> Mapping[str, float]:
    return MappingProxyType(dict(mapping or {}))


@dataclass(frozen=True)
class Settings:
    """The effective PPP configuration: the documented defaults unless overridden."""

    enabled: bool = True
    missing_trajectory: MissingTrajectory = "technical_only"
    weights: Weights = Weights(0.7, 0.3, 0.3)  # the pair 0.7 / 0.3
    stage_weights: Mapping[str, Weights] = field(default_factory=lambda: MappingProxyType({}))
    proactivity: ProactivitySettings = ProactivitySettings()
    personalization: PersonalizationSettings = PersonalizationSettings()
    # Per-preference penalty overrides ([ppp.penalties]); the catalogue gives the rest.
    penalties: Mapping[str, float] = field(default_factory=_frozen)
    # The technical score an unscored agent (no test run, no rating) is ranked with; it
    # is still shown as unscored.
    unscored_technical: float = 0.5
    # Whom marks are recorded for when neither --reviewer nor $PPP_TUI_REVIEWER says
    # ([ppp] reviewer); None: git's user.name, else the login name.
    reviewer: str | None = None
    # [ppp.judge]: the LLM judge of `ppp-tui judge`; None when the file has no such table.
    judge: JudgeSettings | None = None

    def __post_init__(self) -> None:
        if not 0.0 <= self.unscored_technical <= 1.0:
            raise WeightError(
                f"ppp: unscored_technical must be in [0, 1], got {self.unscored_technical!r}"
            )
        if self.missing_trajectory not in MISSING_TRAJECTORY_MODES:
            raise WeightError(
                f"ppp: missing_trajectory must be one of {', '.join(MISSING_TRAJECTORY_MODES)},"
                f" got {self.missing_trajectory!r}"
            )
        # Freeze caller-supplied dicts so a Settings can be shared between threads.
        object.__setattr__(self, "stage_weights", MappingProxyType(dict(self.stage_weights)))
        # `no_commas` in [ppp.penalties] is the same preference as `commas`.
        penalties = {canonical(name): value for name, value in self.penalties.items()}
        object.__setattr__(self, "penalties", _frozen(penalties))

    def weights_for(self, stage: str | None) -> Weights:
        """The stage's own table if it has one, else the global weights."""
        if stage is not None and stage in self.stage_weights:
            return self.stage_weights[stage]
        return self.weights

    def with_weights(self, weights: Weights, stage: str | None = None) -> Settings:
        """A copy with the global weights, or one stage's weights, replaced."""
        if stage is None:
            return replace(self, weights=weights)
        return replace(self, stage_weights={**self.stage_weights, stage: weights})


@dataclass(frozen=True)
class Preset:
    """A named weight configuration offered in the app and the CLI."""

    key: str
    label: str
    weights: Weights
    stage_weights: Mapping[str, Weights]
    paper_penalties: bool = False

    def apply(self, settings: Settings) -> Settings:
        penalties = paper_penalties() if self.paper_penalties else settings.penalties
        return replace(
            settings,
            weights=self.weights,
            stage_weights=self.stage_weights,
            penalties=penalties,
        )


# The recommended stage tables: `config init` writes these.
STAGE_TUNED: Mapping[str, Weights] = MappingProxyType(
    {
        "plan": Weights.pair(0.6, 0.4),
        "tasks": Weights.pair(0.7, 0.3),
        "implement": Weights.pair(0.7, 0.3),
        "validate": Weights.pair(0.75, 0.25),
        "audit": Weights.pair(0.8, 0.2),
        "unlock": Weights.pair(0.8, 0.2),
    }
)

_NO_STAGES: Mapping[str, Weights] = MappingProxyType({})

PRESETS: tuple[Preset, ...] = (
    Preset("balanced", "Balanced 70/30", Weights.pair(0.7, 0.3), _NO_STAGES),
    Preset("technical", "Technical 80/20", Weights.pair(0.8, 0.2), _NO_STAGES),
    Preset("interaction", "Interaction 60/40", Weights.pair(0.6, 0.4), _NO_STAGES),
    # The fixed per-stage recommendations (not tuned on anyone's marks).
    Preset("stage", "Stage defaults", Weights.pair(0.7, 0.3), STAGE_TUNED),
    # The paper's own penalties (-0.1 / -0.5 per violating question) at 70/30.
    Preset("paper", "Paper", Weights.pair(0.7, 0.3), _NO_STAGES, paper_penalties=True),
)


def preset(key: str) -> Preset:
    for candidate in PRESETS:
        if candidate.key == key:
            return candidate
    names = ", ".join(p.key for p in PRESETS)
    raise WeightError(f"unknown preset {key!r}; choose one of {names}")
