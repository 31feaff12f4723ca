"""The PPP formulas: R_Proact, R_Pers, interaction, final, and ranking.

final = w_t * technical + w_p * R_Proact + w_s * R_Pers. In the pair form (w_p = w_s,
the interaction weight w_i) it is computed as C + P * w_t + Q * w_i, where (C, P, Q)
depend only on the agent and the settings (`coefficients`) and Q = R_Proact + R_Pers;
with three weights as C + P * w_t + QP * w_p + QS * w_s (`split_coefficients`), where
QP = R_Proact and QS = R_Pers. The whole-database arrays in `arrays` use the same
expressions, float operation for float operation, so that one agent's score (and so
every pick) never depends on which face asked.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from .model import UNSCORED, Agent, Run, Severity, Violation
from .preferences import CATALOGUE, UNKNOWN_PENALTY, canonical
from .relevance import LOW_RELEVANCE, relevance_weight
from .settings import ProactivitySettings, Settings, Weights

# Finals equal to 9 decimals are ties (the ranking's tie rule); the arrays quantise alike.
TIE_SCALE = 1e9


def tie_key(final: float) -> float:
    """The quantised final both the per-run ranking and the arrays compare."""
    try:
        return round(final * TIE_SCALE)
    except (OverflowError, ValueError):
        # Infinite or NaN: import refuses the numbers that lead here, but a database
        # edited by hand may hold them; they sort (as the arrays do), never crash.
        return final * TIE_SCALE


def r_proact(low: int, medium: int, high: int, settings: ProactivitySettings) -> float:
    """+bonus with no question or only low-effort ones, else the medium/high penalties."""
    del low  # low-effort questions add nothing once any other question was asked
    if medium == 0 and high == 0:
        return settings.low_effort_bonus
    return -(settings.medium_penalty * medium + settings.high_penalty * high)


def penalty_for(preference: str, settings: Settings) -> float:
    """An error-severity violation's cost: config override, else catalogue, else unknown."""
    name = canonical(preference)
    if name in settings.penalties:
        return settings.penalties[name]
    known = CATALOGUE.get(name)
    return known.default_penalty if known is not None else UNKNOWN_PENALTY


def violation_penalty(violation: Violation, settings: Settings) -> float:
    """The magnitude one violation costs: its own penalty wins over all others."""
    if violation.penalty is not None:
        return violation.penalty
    pers = settings.personalization
    match violation.severity:
        case Severity.ERROR:
            return penalty_for(violation.preference, settings)
        case Severity.WARNING:
            return pers.warning_penalty
        case Severity.MINOR:
            return pers.minor_penalty
        case Severity.MAJOR:
            return pers.major_penalty
        case Severity.CRITICAL:
            return pers.critical_penalty


def states_preferences(preferences: Iterable[str]) -> bool:
    """True when the run states a preference other than no_preference."""
    return any(canonical(p) != "no_preference" for p in preferences)


def r_pers(total_penalty: float, has_violations: bool, stated: bool, settings: Settings) -> float:
    """-(sum of penalties) with violations; the compliance bonus only if something was stated."""
    if has_violations:
        return -total_penalty
    return settings.personalization.compliance_bonus if stated else 0.0


def rewards(
    questions: tuple[int, int, int],
    penalty: float,
    violated: bool,
    stated: bool,
    settings: Settings,
) -> tuple[float, float]:
    """(R_Proact, R_Pers) of an agent with a trajectory: its (low, medium, high) question
    counts, its violations' penalty sum, whether it has violations, and whether the run
    states a preference. Interaction is their sum."""
    return (
        r_proact(*questions, settings.proactivity),
        r_pers(penalty, violated, stated, settings),
    )


def coefficients(
    technical: float, interaction: float | None, settings: Settings
) -> tuple[float, float, float]:
    """(C, P, Q) with final = C + P * w_technical + Q * w_interaction."""
    if not settings.enabled:
        return technical, 0.0, 0.0
    if interaction is None:
        # The backward-compatible fallback (final = technical), or "neutral": w_t * technical.
        if settings.missing_trajectory == "neutral":
            return 0.0, technical, 0.0
        return technical, 0.0, 0.0
    return 0.0, technical, interaction


def split_coefficients(
    technical: float, split: tuple[float, float] | None, settings: Settings
) -> tuple[float, float, float, float]:
    """(C, P, QP, QS) with final = C + P * w_t + QP * w_p + QS * w_s; `split` is the
    agent's (R_Proact, R_Pers), None without a trajectory (QP = QS = 0 then, and
    whenever PPP is off: the technical-only fallback is the same in both forms)."""
    c, p, _ = coefficients(technical, None if split is None else 0.0, settings)
    if split is None or not settings.enabled:
        return c, p, 0.0, 0.0
    return c, p, split[0], split[1]


def final_score(
    technical: float,
    interaction: float | None,
    weights: Weights,
    settings: Settings,
    split: tuple[float, float] | None = None,
) -> float:
    """The agent's final score. Pair-form `weights` need only `interaction` (R_Proact +
    R_Pers); three weights need `split`, its (R_Proact, R_Pers), too."""
    c, p, q = coefficients(technical, interaction, settings)
    if weights.is_pair:
        return c + p * weights.technical + q * weights.interaction
    if interaction is not None and split is None and settings.enabled:
        raise ValueError("three weights score R_Proact and R_Pers apart: pass `split`")
    c, p, qp, qs = split_coefficients(technical, None if interaction is None else split, settings)
    return c + p * weights.technical + qp * weights.proactivity + qs * weights.personalization


@dataclass(frozen=True)
class AgentScore:
    name: str
    rank: int
    technical: float
    r_proact: float | None
    r_pers: float | None
    interaction: float | None
    final: float
    gap: float  # best final minus this one
    has_trajectory: bool
    questions: tuple[int, int, int]  # (low, medium, high)
    violations: int
    penalty: float  # sum of this agent's violation penalties
    relevance: float | None
    confidence: float | None
    failure: str | None = None  # why its output is a failure; it then ranks below work
    # Where the technical score came from (model.Agent.technical_source); for an
    # unscored agent `technical` is the settings' placeholder, shown as unscored.
    technical_source: str | None = None

    @property
    def unscored(self) -> bool:
        return self.technical_source == UNSCORED

    @property
    def weight(self) -> float | None:
        """The relevance x confidence weight."""
        return relevance_weight(self.relevance, self.confidence)

    @property
    def low_relevance(self) -> bool:
        return self.relevance is not None and self.relevance < LOW_RELEVANCE

    @property
    def flags(self) -> tuple[str, ...]:
        flags = []
        if self.failure is not None:
            flags.append(f"failed: {self.failure}")
        if self.unscored:
            flags.append("unscored")
        if not self.has_trajectory:
            flags.append("no trajectory")
        if self.low_relevance:
            flags.append("low relevance")
        return tuple(flags)


@dataclass(frozen=True)
class Ranking:
    run_id: str
    stage: str | None
    weights: Weights
    ppp_enabled: bool
    agents: tuple[AgentScore, ...]  # rank order

    @property
    def best(self) -> AgentScore:
        return self.agents[0]

    @property
    def best_agent(self) -> str:
        return self.agents[0].name

    @property
    def confidence(self) -> float:
        return self.agents[0].final

    @property
    def margin(self) -> float | None:
        """Best final minus the runner-up's; None for a single agent."""
        if len(self.agents) < 2:
            return None
        return self.agents[0].final - self.agents[1].final

    def agent(self, name: str) -> AgentScore | None:
        for score in self.agents:
            if score.name == name:
                return score
        return None


@dataclass(frozen=True)
class _Scored:
    agent: Agent
    r_proact: float | None
    r_pers: float | None
    interaction: float | None
    final: float
    penalty: float


def technical_of(agent: Agent, settings: Settings) -> float:
    """The technical score an agent ranks with: its own, or for an unscored agent the
    configured placeholder."""
    return settings.unscored_technical if agent.unscored else agent.technical


def _score(agent: Agent, stated: bool, weights: Weights, settings: Settings) -> _Scored:
    trajectory = agent.trajectory
    technical = technical_of(agent, settings)
    if trajectory is None:
        final = final_score(technical, None, weights, settings)
        return _Scored(agent, None, None, None, final, 0.0)
    penalty = sum(violation_penalty(v, settings) for v in trajectory.violations)
    proact, pers = rewards(
        trajectory.effort_counts(), penalty, bool(trajectory.violations), stated, settings
    )
    interaction = proact + pers
    final = final_score(technical, interaction, weights, settings, (proact, pers))
    return _Scored(agent, proact, pers, interaction, final, penalty)


def rank_key(
    final: float, technical: float, name: str, failed: bool = False
) -> tuple[bool, float, float, str]:
    """The ranking order as a sort key (smallest first): working agents before failed
    ones (a failure never wins), then final descending (to 9 decimals), then technical
    descending, then name ascending."""
    return failed, -tie_key(final), -technical, name


def rank_agents(
    agents: Sequence[Agent],
    preferences: Sequence[str],
    weights: Weights,
    settings: Settings,
) -> list[AgentScore]:
    stated = states_preferences(preferences)
    scored = [_score(agent, stated, weights, settings) for agent in agents]
    # With PPP off, final is the technical score, so this is the technical-only ranking.
    scored.sort(
        key=lambda s: rank_key(
            s.final, technical_of(s.agent, settings), s.agent.name, s.agent.failure is not None
        )
    )
    best = scored[0].final if scored else 0.0
    result = []
    for rank, s in enumerate(scored, start=1):
        trajectory = s.agent.trajectory
        result.append(
            AgentScore(
                name=s.agent.name,
                rank=rank,
                technical=technical_of(s.agent, settings),
                r_proact=s.r_proact,
                r_pers=s.r_pers,
                interaction=s.interaction,
                final=s.final,
                gap=best - s.final,
                has_trajectory=trajectory is not None,
                questions=trajectory.effort_counts() if trajectory else (0, 0, 0),
                violations=len(trajectory.violations) if trajectory else 0,
                penalty=s.penalty,
                relevance=s.agent.relevance,
                confidence=s.agent.confidence,
                failure=s.agent.failure,
                technical_source=s.agent.technical_source,
            )
        )
    return result


def rank_run(run: Run, settings: Settings, weights: Weights | None = None) -> Ranking:
    """Rank a run's agents under `weights`, else the run stage's configured weights."""
    chosen = weights if weights is not None else settings.weights_for(run.stage)
    agents = rank_agents(run.agents, run.preferences, chosen, settings)
    return Ranking(run.id, run.stage, chosen, settings.enabled, tuple(agents))
