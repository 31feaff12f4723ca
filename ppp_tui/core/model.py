"""The run model: runs, agents and their trajectories, as plain frozen objects."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

# The numbers a run (and config.toml) may hold, beyond being finite (docs/input-limits.md):
# magnitudes bounded so that sums over any number of agents, questions and violations
# stay finite and print as plain decimals.
MAX_PENALTY = 1000.0  # a violation's own penalty, and a configured bonus or penalty
MAX_ITERATION_SCORE = 1e6  # |an iteration's quality score|
MAX_COUNT = 2**63 - 1  # token counts, latencies and turn numbers: SQLite's 64-bit integers


class Effort(StrEnum):
    """How much a question costs the user to answer."""

    LOW = "low"
    MEDIUM = "medium"
    HIGH = "high"


class Severity(StrEnum):
    """A violation's severity: error / warning, or the trajectory schema's three."""

    ERROR = "error"
    WARNING = "warning"
    MINOR = "minor"
    MAJOR = "major"
    CRITICAL = "critical"


class Source(StrEnum):
    """Where a question's effort label or a violation came from."""

    LABEL = "label"  # present in the imported data
    CLASSIFIER = "classifier"  # effort decided by ppp-tui's classifier
    EXTRACTED = "extracted"  # question found in a response and classified
    JUDGED = "judged"  # effort given by an LLM judge (`ppp-tui judge`), over the classifier's
    CHECKER = "checker"  # violation decided by a preference rule checker


class AskedWith(StrEnum):
    """How a question reached the user."""

    TEXT = "text"  # written in the agent's text
    TOOL = "tool"  # through the agent's dedicated ask tool, as a dialog


# An agent's technical_source when no test run and no hand rating gave it a score: its
# technical value is then a placeholder, ranked as settings.unscored_technical says.
UNSCORED = "unscored"
# An agent's technical_source when the user rated it by hand (wins over test evidence).
HAND = "hand"
# An unscored agent's technical_source once an LLM judge scored it (`ppp-tui judge
# --technical`); a hand rating still wins over it.
JUDGED = "judged"


@dataclass(frozen=True)
class Turn:
    prompt: str = ""
    response: str = ""
    token_count: int | None = None
    latency_ms: int | None = None
    timestamp: str | None = None
    # A session's turn as the user lived it: (kind, text) in order, kind being text,
    # tool, thinking or ask (core/sessions/model.py's StepKind); empty for other runs.
    steps: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class Question:
    text: str
    effort: Effort
    turn: int | None = None
    source: Source = Source.LABEL
    asked_with: AskedWith = AskedWith.TEXT
    # A question asked through a tool: its options, the user's answer (an option or
    # their own text), whether they dismissed the dialog, and how long they took.
    options: tuple[str, ...] = ()
    answer: str | None = None
    dismissed: bool = False
    seconds_to_answer: float | None = None
    # The model of the LLM judge that gave the effort (source JUDGED), else None.
    judged_model: str | None = None


@dataclass(frozen=True)
class Violation:
    preference: str
    severity: Severity = Severity.ERROR
    # A violation's own penalty magnitude wins over every configured one.
    penalty: float | None = None
    turn: int | None = None
    source: Source = Source.LABEL


@dataclass(frozen=True)
class Trajectory:
    turns: tuple[Turn, ...] = ()
    questions: tuple[Question, ...] = ()
    violations: tuple[Violation, ...] = ()
    # Stated preferences that no rule checker could decide for this agent.
    unchecked: tuple[str, ...] = ()

    def effort_counts(self) -> tuple[int, int, int]:
        """(low, medium, high) question counts."""
        low = medium = high = 0
        for question in self.questions:
            if question.effort is Effort.LOW:
                low += 1
            elif question.effort is Effort.MEDIUM:
                medium += 1
            else:
                high += 1
        return low, medium, high


@dataclass(frozen=True)
class Edit:
    """One edit of one file by a session's agent (docs/sessions.md, "Changes"): its turn
    (1-based), the file (relative to the session's folder when inside it), the lines it
    added and removed, and its unified diff, headed `--- a/PATH` / `+++ b/PATH`."""

    turn: int
    path: str
    added: int
    removed: int
    diff: str


@dataclass(frozen=True)
class Agent:
    name: str
    technical: float
    trajectory: Trajectory | None = None
    model: str | None = None
    relevance: float | None = None
    confidence: float | None = None
    output: str | None = None
    failure: str | None = None  # why the agent's output is a failure, not work
    # Where the technical score came from: None as given with the run, HAND for the
    # user's own rating, UNSCORED for none, else the test run it was read from
    # ("pytest: 41 passed, 2 failed").
    technical_source: str | None = None
    models: tuple[str, ...] = ()  # every model a session used, in order
    sessions: tuple[str, ...] = ()  # the session ids an agent was read from
    # The model of the LLM judge that gave the technical score (technical_source JUDGED).
    judged_model: str | None = None
    # Its edits of files, in the order they took effect, when read from a session now;
    # None when not read (the store keeps them and reads them on demand).
    edits: tuple[Edit, ...] | None = None

    @property
    def unscored(self) -> bool:
        return self.technical_source == UNSCORED


@dataclass(frozen=True)
class Run:
    id: str
    agents: tuple[Agent, ...]
    spec_id: str | None = None
    stage: str | None = None
    task: str | None = None
    created_at: str | None = None
    preferences: tuple[str, ...] = ()
    selected_agent: str | None = None
    preferred_agent: str | None = None
    iterations: tuple[float, ...] = ()
    # The consensus result of the run (status, agreements, conflicts, artifacts count,
    # synthesis, verdict), as JSON text; None if it has none.
    consensus: str | None = None

    def agent(self, name: str) -> Agent | None:
        for agent in self.agents:
            if agent.name == name:
                return agent
        return None
