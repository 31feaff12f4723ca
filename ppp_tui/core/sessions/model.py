"""A coding agent's session, as read from its transcript: turns, asks, tool calls.

Every reader (Claude Code, Codex CLI, Gemini CLI) produces these and nothing else; the
rest of the import never looks at a tool's own format.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

from ..errors import PPPError
from .changes import SessionEdit


class Tool(StrEnum):
    """The coding agents whose transcripts ppp-tui reads; the value is the agent's name."""

    CLAUDE_CODE = "claude-code"
    CODEX = "codex"
    GEMINI_CLI = "gemini-cli"


class StepKind(StrEnum):
    """What one step of a turn is."""

    TEXT = "text"  # the agent's text addressed to the user
    TOOL = "tool"  # a tool call, folded to one line ("Bash: pytest -q")
    THINKING = "thinking"  # thinking or reasoning: never addressed to the user
    ASK = "ask"  # a question put through the agent's dedicated ask tool (its text)


@dataclass(frozen=True)
class Step:
    kind: StepKind
    text: str


@dataclass
class Ask:
    """One question put to the user through the agent's dedicated ask tool.

    A call of the tool may hold several questions (Claude Code up to four); each is one
    Ask. `answer` is the option label(s) the user picked or the free text they typed in
    place of an option (several labels of a multi-select joined by ", "); None when
    there is no answer. `dismissed` is True when the user closed the dialog without
    answering. `seconds` is the time from the question to the answer, when both carry a
    timestamp.
    """

    text: str
    options: list[str] = field(default_factory=list)
    header: str | None = None
    multi_select: bool = False
    answer: str | None = None
    dismissed: bool = False
    seconds: float | None = None


@dataclass
class SessionTurn:
    """What followed one prompt the person typed: the agent's steps, in order.

    `steps` hold the agent's text, its tool calls (one line each), its thinking and its
    asks (an ASK step's text is its question; the Ask itself is in `asks`, in the same
    order). `edits` are its edits of files that took effect, in that order.
    """

    prompt: str
    timestamp: str | None = None  # when the prompt was sent (ISO 8601), if known
    steps: list[Step] = field(default_factory=list)
    asks: list[Ask] = field(default_factory=list)
    edits: list[SessionEdit] = field(default_factory=list)

    def response(self) -> str:
        """The agent's text addressed to the user, paragraph by paragraph."""
        return "\n\n".join(s.text for s in self.steps if s.kind is StepKind.TEXT and s.text)


@dataclass(frozen=True)
class TestRun:
    """The summary of one test run found in a tool's output."""

    __test__ = False  # not a test class, whatever pytest makes of its name

    passed: int
    failed: int
    source: str  # "pytest: 41 passed, 2 failed"

    @property
    def fraction(self) -> float:
        total = self.passed + self.failed
        return self.passed / total if total else 0.0


@dataclass
class Session:
    """One agent session: who ran it, where, with which models, and its turns.

    `cwd` is the folder it ran in and `repository` the git remote it worked on (None
    when the transcript does not say); grouping falls back to the folder's name.
    `tests` is the last test run seen in the session's tool results, in file order.
    `size` is how much of the file was read (bytes), so a grown session is re-imported.
    """

    tool: Tool
    id: str
    path: str
    started: str | None = None  # ISO 8601
    cwd: str | None = None
    repository: str | None = None
    branch: str | None = None
    models: list[str] = field(default_factory=list)
    turns: list[SessionTurn] = field(default_factory=list)
    tests: TestRun | None = None
    size: int = 0
    # A sub-agent's own transcript: it belongs to the session `id` names (its parent).
    subagent: bool = False

    def first_prompt(self) -> str:
        for turn in self.turns:
            if turn.prompt.strip():
                return turn.prompt
        return ""

    def add_model(self, model: str | None) -> None:
        if model and model not in self.models and not model.startswith("<"):
            self.models.append(model)  # "<synthetic>": Claude Code's own lines, no model


class SessionWarnings:
    """The problems one reader met, one line each, naming the file and line."""

    def __init__(self) -> None:
        self.lines: list[str] = []

    def add(self, path: str, line: int | None, problem: str) -> None:
        where = f"{path}:{line}" if line is not None else path
        self.lines.append(f"{where}: {problem}")


class SessionError(PPPError):
    """A file that cannot become a session: not a transcript, or one with no conversation."""
