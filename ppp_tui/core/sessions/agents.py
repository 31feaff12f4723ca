"""What one session becomes as an agent of a run: its turns, questions and scores.

Questions come two ways. Those put through the agent's dedicated ask tool are asked
with the tool: their options, answer, dismissal and answer time are kept, and a question
that offered options is a selection for the effort classifier. Those the agent wrote in
its text count only in the text that ends its turn, where it hands control back to the
user (no tool call or ask follows before the user's next prompt), found there by the
extraction rules every run gets. A sub-agent's text is addressed to the agent that
started it, never to the user. Thinking and the
arguments of other tools are never read for questions.

The text read for questions is bounded per session (QUESTION_TEXT): the import says
when a session passes it.

The technical score is the pass fraction of the last test run in the session's tool
results; an agent without one is unscored (`UNSCORED`), never a silent number. Its edits
of files are its changes (changes.py).
"""

from __future__ import annotations

from ..effort import classify_effort
from ..extraction import extract_questions
from ..model import UNSCORED, Agent, AskedWith, Question, Source, Trajectory, Turn
from .changes import agent_edits
from .model import Ask, Session, SessionTurn, StepKind


def selection_text(question: str, options: list[str]) -> str:
    """The question as the classifier reads a selection: options offered inline, as
    letters. The labels' own words are not read: the user picks one, and an option
    named "architecture/" is no request for architecture work."""
    if not options:
        return question
    body = question.rstrip().rstrip("?\uff1f").rstrip()
    letters = [chr(ord("A") + i) for i in range(min(len(options), 26))]
    offered = ", ".join(letters[:-1]) + f" or {letters[-1]}" if len(letters) > 1 else "A"
    return f"{body} ({offered})?"


# Characters of the text that ends turns read for questions in one session. Questions
# found in text cost tens of times their size (a flood of "Should I?" is one every ten
# characters); real sessions end their turns with far less.
QUESTION_TEXT = 2 << 20


def question_text(session: Session) -> int:
    """How much text the question extraction has to read in `session` (the text that ends
    its turns); past QUESTION_TEXT, `session_agent` reads no more."""
    if session.subagent:
        return 0
    return sum(
        len(step.text)
        for turn in session.turns
        for step in turn.steps[closing_start(turn) :]
        if step.kind is StepKind.TEXT
    )


def closing_start(turn: SessionTurn) -> int:
    """Where the text that ends a turn starts: the step after its last tool call or ask.

    Only that text hands control back to the user. Text written before a tool call is
    the agent talking while it goes on working ("Let me check how the branch is built -
    does it keep the files?" and a Read call), and text before an ask is the ask's own
    question, put once, through the tool."""
    for place in range(len(turn.steps) - 1, -1, -1):
        if turn.steps[place].kind in (StepKind.TOOL, StepKind.ASK):
            return place + 1
    return 0


def final_reply(session: Session) -> str:
    """The text the session ended on: the closing text of its last turn that has one (a
    session cut short while a tool ran ends on the turn before)."""
    for turn in reversed(session.turns):
        closing = turn.steps[closing_start(turn) :]
        text = "\n\n".join(s.text for s in closing if s.kind is StepKind.TEXT and s.text.strip())
        if text:
            return text
    return ""


def _asked(ask: Ask, number: int, task: str | None) -> Question:
    return Question(
        text=ask.text,
        effort=classify_effort(selection_text(ask.text, ask.options), task),
        turn=number,
        source=Source.CLASSIFIER,
        asked_with=AskedWith.TOOL,
        options=tuple(ask.options),
        answer=ask.answer,
        dismissed=ask.dismissed,
        seconds_to_answer=ask.seconds,
    )


def session_agent(session: Session, name: str, task: str | None) -> Agent:
    """The agent a session is, named `name`; `task` is its run's task text (context for
    the effort classifier)."""
    turns: list[Turn] = []
    questions: list[Question] = []
    left = QUESTION_TEXT  # text the extraction may still read
    for number, turn in enumerate(session.turns, start=1):
        response = turn.response()
        turns.append(
            Turn(
                prompt=turn.prompt,
                response=response,
                timestamp=turn.timestamp,
                steps=tuple((step.kind.value, step.text) for step in turn.steps),
            )
        )
        asks = iter(turn.asks)
        closing = closing_start(turn) if not session.subagent else len(turn.steps)
        for place, step in enumerate(turn.steps):
            if step.kind is StepKind.ASK:
                ask = next(asks, None)
                if ask is not None:
                    questions.append(_asked(ask, number, task))
            elif step.kind is StepKind.TEXT and place >= closing:
                left -= len(step.text)
                if left >= 0:
                    questions.extend(
                        Question(text, classify_effort(text, task), number, Source.EXTRACTED)
                        for text in extract_questions(step.text)
                    )
        # Asks a reader listed without a step of their own still count.
        questions.extend(_asked(ask, number, task) for ask in asks)
    tests = session.tests
    return Agent(
        name=name,
        output=final_reply(session) or None,
        technical=tests.fraction if tests is not None else 0.0,
        trajectory=Trajectory(tuple(turns), tuple(questions)),
        model=", ".join(session.models) or None,
        technical_source=tests.source if tests is not None else UNSCORED,
        models=tuple(session.models),
        sessions=(session.id,),
        edits=agent_edits(session),
    )
