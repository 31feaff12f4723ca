"""Gemini CLI's ask tool (`ask_user`): the questions of a call, and the answers its result
holds, or a later functionResponse when the call's result is not beside it (a saved
history).

The call's arguments are `{"questions": [{"question", "header", "options": [{"label"}],
"multiSelect", "type"}]}` (packages/core/src/tools/ask-user.ts); its output is
`{"answers": {"0": ...}}`, keyed by the question's index in the call.
"""

from __future__ import annotations

from dataclasses import dataclass

from ...core.sessions.model import Ask
from .common import as_text, number_text, option_labels, parse_json, seconds_between

ASK_TOOL = "ask_user"


@dataclass
class PendingAsk:
    """An ask_user call whose result is in a later message (a saved history)."""

    call_id: str | None
    asks: list[Ask]
    keys: list[str]  # each ask's key in the answers: its question's index in the call
    asked: str | None  # when it was asked (the message's timestamp)


@dataclass
class Response:
    """A tool result that came as a user message's functionResponse part."""

    call_id: str | None
    name: str | None
    response: object


def _text(value: object) -> str | None:
    return value if isinstance(value, str) else None


def questions(args: object) -> tuple[list[str], list[Ask]]:
    """The questions of an ask_user call, each with its key in the answers (its index
    among the call's questions, odd entries too)."""
    found = args.get("questions") if isinstance(args, dict) else None
    if not isinstance(found, list):
        return [], []
    keys = []
    asks = []
    for index, question in enumerate(found):
        if not isinstance(question, dict):
            continue
        keys.append(str(index))
        options = [as_text(label) for label in option_labels(question.get("options"))]
        if not options and question.get("type") == "yesno":
            options = ["Yes", "No"]  # the dialog offers these for a yes/no question
        text = _text(question.get("question")) or _text(question.get("header")) or ""
        header = _text(question.get("header"))
        asks.append(
            Ask(
                text=as_text(text.strip()),
                options=options,
                header=as_text(header) if header else None,
                multi_select=question.get("multiSelect") is True,
            )
        )
    return keys, asks


def answer(
    asks: list[Ask],
    keys: list[str],
    responses: list[object],
    status: object,
    seconds: float | None,
) -> None:
    """Answers from ask_user's result: `{"output": "{\\"answers\\": {"0": ...}}"}`, keyed by
    question index, labels of a multi-select joined by ", " and free text as typed. A
    dismissed dialog says so in its output (or, cancelled by the scheduler, in an
    `error` "[Operation Cancelled] ..."): every question is then dismissed."""
    answers: dict[str, object] | None = None
    dismissed = status == "cancelled"
    for response in responses:
        if not isinstance(response, dict):
            continue
        output = response.get("output")
        if isinstance(output, str):
            try:
                decoded = parse_json(output)
            except (ValueError, RecursionError):
                decoded = None
            if isinstance(decoded, dict) and isinstance(decoded.get("answers"), dict):
                answers = decoded["answers"]
            elif "dismissed" in output.lower() or "cancelled" in output.lower():
                dismissed = True
        error = response.get("error")
        if isinstance(error, str) and ("cancel" in error.lower() or "dismiss" in error.lower()):
            dismissed = True
    for key, ask in zip(keys, asks, strict=True):
        ask.seconds = seconds
        value = answers.get(key) if answers is not None else None
        if isinstance(value, (int, float)):
            value = number_text(value)  # NaN, an infinity: no answer typed
        if isinstance(value, str) and value.strip():
            ask.answer = as_text(value)
        elif answers is None and dismissed:
            ask.dismissed = True


def answer_seconds(asked: str | None, answered: str | None) -> float | None:
    """Answer time: the tool call's timestamp (set when it completed) minus its message's
    (set when the model's reply was recorded); None unless positive."""
    delta = seconds_between(asked, answered)
    return round(delta, 3) if delta is not None and delta > 0 else None


def resolve(pending: list[PendingAsk], response: Response, answered: str | None) -> None:
    """Answers a pending ask_user call from its functionResponse (matched by call id, else
    the oldest ask_user call still open)."""
    if response.name not in (ASK_TOOL, None):
        return
    match = next(
        (item for item in pending if response.call_id and item.call_id == response.call_id),
        None,
    )
    if match is None and response.name == ASK_TOOL:
        match = next((item for item in pending if not (item.call_id and response.call_id)), None)
    if match is None:
        return
    pending.remove(match)
    seconds = answer_seconds(match.asked, answered)
    answer(match.asks, match.keys, [response.response], None, seconds)
