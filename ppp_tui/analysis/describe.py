"""How both faces put a session's facts in words: a technical score with its source,
an effort label's origin, what became of a question asked through a tool."""

from __future__ import annotations

from ..core.model import JUDGED, Agent, Question, Source
from ..safe_text import inline, number

# How a question's effort label came to be, as the documents say it.
EFFORT_SOURCES = {
    Source.LABEL: "label",
    Source.CLASSIFIER: "classified",
    Source.EXTRACTED: "classified",
    Source.JUDGED: "judged",
}


def effort_source(question: Question) -> str:
    return EFFORT_SOURCES.get(question.source, question.source.value)


def technical_text(agent: Agent) -> str:
    """An agent's technical score: "— (unscored)", or the score and where it came from."""
    if agent.unscored:
        return "— (unscored)"
    source = agent.technical_source
    shown = number(agent.technical)
    if source == JUDGED and agent.judged_model:
        return f"{shown} (judged by {inline(agent.judged_model)})"
    return f"{shown} ({inline(source)})" if source else shown


def seconds_text(seconds: float) -> str:
    """A duration the way a person says it: 42 s, 3 min 5 s, 1 h 2 min."""
    whole = round(seconds)
    if whole < 60:
        return f"{whole} s"
    if whole < 3600:
        return f"{whole // 60} min {whole % 60} s"
    return f"{whole // 3600} h {whole % 3600 // 60} min"


def answer_text(question: Question) -> str:
    """What became of a question asked through a tool: "dismissed", "no answer" or the
    answer, and the time the user took."""
    if question.dismissed:
        answer = "dismissed"
    elif question.answer is None:
        answer = "no answer"
    else:
        answer = question.answer
    if question.seconds_to_answer is not None:
        answer += f" · {seconds_text(question.seconds_to_answer)}"
    return answer
