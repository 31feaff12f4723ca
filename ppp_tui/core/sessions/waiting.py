"""Whether an agent read from a session is waiting for the user (docs/sessions.md,
"Waiting for you").

It is, when its session's last turn ends on a question the user has not answered:

- its last step is a question put through its ask tool, with no answer yet and not
  dismissed (the dialog is open); or
- the text that ends the turn asks the user a question (the closing-text rule of
  agents.py and extraction.py decides what counts), and no prompt of the user's came
  after it (it is the last turn).

Only agents read from sessions can wait: a run imported from a file is over.
"""

from __future__ import annotations

from collections.abc import Iterable

from ..model import Agent, AskedWith
from .model import StepKind

# What marks a run or an agent waiting for the user, wherever it is shown (with words
# saying what it means where there is room: the help, `show`).
MARK = "⚑"

# (how it was asked, its answer, whether it was dismissed) of one question of the last turn
Asked = tuple[str, str | None, bool]


def waiting(last_step: str | None, questions: Iterable[Asked]) -> bool:
    """The rule, from the kind of the last turn's last step and that turn's questions
    in the order they were asked."""
    last_tool: Asked | None = None
    for question in questions:
        if question[0] == AskedWith.TEXT:
            return True  # only the closing text of a turn is read for questions
        last_tool = question
    if last_step != StepKind.ASK or last_tool is None:
        return False
    _, answer, dismissed = last_tool
    return answer is None and not dismissed


def agent_waiting(agent: Agent) -> bool:
    """Whether `agent` waits for the user (False for one not read from a session)."""
    trajectory = agent.trajectory
    if not agent.sessions or trajectory is None or not trajectory.turns:
        return False
    last = len(trajectory.turns)
    steps = trajectory.turns[-1].steps
    asked = [(q.asked_with.value, q.answer, q.dismissed) for q in trajectory.questions]
    turns = [q.turn for q in trajectory.questions]
    return waiting(
        steps[-1][0] if steps else None,
        (question for question, turn in zip(asked, turns, strict=True) if turn == last),
    )
