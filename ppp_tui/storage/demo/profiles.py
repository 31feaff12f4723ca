"""The demo's agents and its simulated user.

Each of the seven agents has a character of its own (how good it is, on which task
types, how often and how hard it asks, how it treats stated preferences, how its
trajectory is recorded); the simulated user marks a preferred agent with hidden weights
that tuning is meant to find again.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from ...core.relevance import TaskType
from ...core.settings import Settings, Weights

# The simulated user's hidden technical weights (interaction = 1 - technical).
HIDDEN_TECHNICAL = 0.62
HIDDEN_WEIGHTS: Mapping[str, float] = MappingProxyType(
    {
        "plan": 0.57,
        "tasks": 0.60,
        "implement": 0.62,
        "validate": 0.64,
        "audit": 0.66,
        "unlock": 0.65,
    }
)
# Standard deviation of the noise the simulated user adds to each agent's hidden score.
USER_NOISE = 0.012
# Share of runs the simulated user marks with a preferred agent.
PREFERRED_SHARE = 0.4


def hidden_settings() -> Settings:
    """The simulated user's weights as settings: global 0.62, one table per stage."""
    return Settings(
        weights=Weights.from_technical(HIDDEN_TECHNICAL),
        stage_weights={stage: Weights.from_technical(w) for stage, w in HIDDEN_WEIGHTS.items()},
    )


# --- Agents ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Profile:
    """An agent's character: how good, how it asks, how it treats preferences."""

    name: str
    models: tuple[str, ...]
    frequency: float  # relative chance of taking part in a run
    technical: float  # mean technical score
    spread: float  # its standard deviation
    strengths: Mapping[str, float]  # task type -> technical bonus
    relevance: Mapping[str, float]  # task type -> self-assessed relevance
    confidence: float
    ask: float  # chance of asking anything at all
    max_questions: int
    efforts: tuple[float, float, float]  # low, medium, high mix
    comply: float  # chance of honouring each stated preference
    no_trajectory: float  # chance the trajectory is absent
    empty_trajectory: float  # chance of `trajectory: {}`
    # Chances of the three ways its questions are recorded: labelled, unlabelled, turns.
    modes: tuple[float, float, float]
    label_share: float  # in unlabelled mode, the share of questions still labelled
    checked: float  # chance that violations are left to the rule checkers
    verbose: float  # chance of recording turns beside labelled questions


def _types(**values: float) -> Mapping[str, float]:
    return MappingProxyType({t.value: values.get(t.value, 0.0) for t in TaskType})


def _relevance(base: float, **values: float) -> Mapping[str, float]:
    return MappingProxyType({t.value: values.get(t.value, base) for t in TaskType})


PROFILES: tuple[_Profile, ...] = (
    _Profile(
        name="claude-code",
        models=("claude-sonnet-4-5", "claude-opus-4-1", "claude-sonnet-4"),
        frequency=1.0,
        technical=0.87,
        spread=0.05,
        strengths=_types(code_generation=0.03, refactoring=0.03, general=0.01),
        relevance=_relevance(0.9, documentation=0.8),
        confidence=0.9,
        ask=0.85,
        max_questions=4,
        efforts=(0.3, 0.3, 0.4),
        comply=0.6,
        no_trajectory=0.02,
        empty_trajectory=0.01,
        modes=(0.7, 0.2, 0.1),
        label_share=0.35,
        checked=0.4,
        verbose=0.05,
    ),
    _Profile(
        name="codex",
        models=("gpt-5-codex", "gpt-5", "o4-mini"),
        frequency=0.95,
        technical=0.83,
        spread=0.05,
        strengths=_types(debugging=0.04, optimization=0.02, documentation=-0.04),
        relevance=_relevance(0.88, documentation=0.7, debugging=0.95),
        confidence=0.88,
        ask=0.35,
        max_questions=2,
        efforts=(0.7, 0.25, 0.05),
        comply=0.95,
        no_trajectory=0.03,
        empty_trajectory=0.04,
        modes=(0.75, 0.2, 0.05),
        label_share=0.45,
        checked=0.5,
        verbose=0.04,
    ),
    _Profile(
        name="gemini-cli",
        models=("gemini-2.5-pro", "gemini-2.5-flash"),
        frequency=0.9,
        technical=0.79,
        spread=0.06,
        strengths=_types(documentation=0.07, general=0.03, debugging=-0.03),
        relevance=_relevance(0.82, documentation=0.97, optimization=0.65),
        confidence=0.86,
        ask=0.7,
        max_questions=3,
        efforts=(0.65, 0.27, 0.08),
        comply=0.45,
        no_trajectory=0.04,
        empty_trajectory=0.02,
        modes=(0.7, 0.22, 0.08),
        label_share=0.3,
        checked=0.5,
        verbose=0.04,
    ),
    _Profile(
        name="aider",
        models=("aider/claude-sonnet-4", "aider/deepseek-chat", "aider/gpt-4.1"),
        frequency=0.6,
        technical=0.76,
        spread=0.06,
        strengths=_types(refactoring=0.08, code_generation=0.02, documentation=-0.05),
        relevance=_relevance(0.8, refactoring=0.98, documentation=0.45, general=0.55),
        confidence=0.8,
        ask=0.55,
        max_questions=3,
        efforts=(0.45, 0.4, 0.15),
        comply=0.75,
        no_trajectory=0.1,
        empty_trajectory=0.02,
        modes=(0.35, 0.15, 0.5),
        label_share=0.3,
        checked=0.7,
        verbose=0.1,
    ),
    _Profile(
        name="cursor",
        models=("cursor/claude-4-sonnet", "cursor/gpt-5", "cursor-small"),
        frequency=0.7,
        technical=0.8,
        spread=0.06,
        strengths=_types(optimization=0.06, code_generation=0.02, general=-0.03),
        relevance=_relevance(0.85, optimization=0.95, general=0.6),
        confidence=0.84,
        ask=0.55,
        max_questions=3,
        efforts=(0.4, 0.42, 0.18),
        comply=0.7,
        no_trajectory=0.05,
        empty_trajectory=0.02,
        modes=(0.6, 0.22, 0.18),
        label_share=0.35,
        checked=0.5,
        verbose=0.06,
    ),
    _Profile(
        name="copilot",
        models=("copilot/gpt-4.1", "copilot/claude-sonnet-4", "copilot/o3-mini"),
        frequency=0.65,
        technical=0.72,
        spread=0.07,
        strengths=_types(code_generation=0.04, refactoring=-0.02, general=-0.04),
        relevance=_relevance(0.75, code_generation=0.9, general=0.4, documentation=0.5),
        confidence=0.74,
        ask=0.4,
        max_questions=2,
        efforts=(0.35, 0.5, 0.15),
        comply=0.5,
        no_trajectory=0.4,
        empty_trajectory=0.05,
        modes=(0.8, 0.15, 0.05),
        label_share=0.5,
        checked=0.3,
        verbose=0.02,
    ),
    _Profile(
        name="qwen-code",
        models=("qwen3-coder-plus", "qwen3-coder-30b"),
        frequency=0.45,
        technical=0.74,
        spread=0.07,
        strengths=_types(debugging=0.05, optimization=0.03, documentation=-0.04),
        relevance=_relevance(0.78, debugging=0.92, documentation=0.42),
        confidence=0.78,
        ask=0.6,
        max_questions=3,
        efforts=(0.3, 0.55, 0.15),
        comply=0.55,
        no_trajectory=0.08,
        empty_trajectory=0.03,
        modes=(0.65, 0.25, 0.1),
        label_share=0.4,
        checked=0.5,
        verbose=0.04,
    ),
)
_PROFILE_CUM = tuple(sum(p.frequency for p in PROFILES[: i + 1]) for i in range(len(PROFILES)))
_PROFILE_INDEXES = tuple(range(len(PROFILES)))
_AGENT_COUNTS = (2, 3, 4, 5)
_AGENT_COUNT_CUM = (0.3, 0.7, 0.9, 1.0)
