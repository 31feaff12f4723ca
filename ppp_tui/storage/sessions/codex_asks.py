"""Codex CLI's ask tool (`request_user_input`): the questions of a call, and the answers
its output holds.

Its arguments are `{"questions": [{"id", "header", "question", "options": [{"label",
"description"}]}]}` and its output (codex-rs/core/src/tools/handlers/request_user_input.rs)
is the serialized `RequestUserInputResponse`: `{"answers": {"<question id>": {"answers":
["<label>", "user_note: <typed text>"]}}}`, with the label "None of the above" when the
user typed an answer of their own. Esc interrupts the turn: the call's output is then
"aborted by user after 12.3s" (codex-rs/core/src/tools/parallel.rs) and a `turn_aborted`
event follows; "request_user_input was cancelled before receiving a response" is the
answer that never came. Both are a dismissal.
"""

from __future__ import annotations

from collections.abc import Iterable

from ...core.sessions.model import Ask
from .common import option_labels, parse_json, seconds_between

ASK_TOOL = "request_user_input"
_NOTE = "user_note: "
_OTHER = "None of the above"  # the TUI's own option for an answer typed by the user


class PendingAsk:
    """The questions of one request_user_input call, waiting for its output."""

    __slots__ = ("asks", "at", "ids")

    def __init__(self, asks: list[Ask], ids: list[str], at: str | None) -> None:
        self.asks = asks
        self.ids = ids
        self.at = at


def questions(args: object) -> tuple[list[Ask], list[str]] | None:
    """The questions of a call's arguments (a parsed object), each with its id in the
    answers; None for a call with no list of questions (malformed: a tool step)."""
    found = args.get("questions") if isinstance(args, dict) else None
    if not isinstance(found, list) or not found:
        return None
    asks: list[Ask] = []
    ids: list[str] = []
    for index, question in enumerate(found):
        if not isinstance(question, dict):
            continue
        text, header, qid = question.get("question"), question.get("header"), question.get("id")
        asks.append(
            Ask(
                text=text if isinstance(text, str) else "",
                options=option_labels(question.get("options")),
                header=header if isinstance(header, str) and header else None,
            )
        )
        ids.append(qid if isinstance(qid, str) and qid else str(index))
    return asks, ids


def answer(entry: object) -> str | None:
    """One question's answer in a `RequestUserInputResponse`: the option picked, the text
    typed in place of one, or both; None for an empty answer list."""
    if isinstance(entry, str):
        return entry or None
    values = entry.get("answers") if isinstance(entry, dict) else None
    if isinstance(values, str):
        values = [values]
    if not isinstance(values, list):
        return None
    labels: list[str] = []
    notes: list[str] = []
    for value in values:
        if not isinstance(value, str) or not value.strip():
            continue
        if value.startswith(_NOTE):
            note = value[len(_NOTE) :].strip()
            if note:
                notes.append(note)
        else:
            labels.append(value.strip())
    if notes and labels == [_OTHER]:
        labels = []  # "None of the above" and a typed answer: the typed answer
    picked = ", ".join(labels)
    typed = " ".join(notes)
    if picked and typed:
        return f"{picked}; {typed}"
    return picked or typed or None


def _dismissal(output: str) -> bool:
    head = output.lstrip()[:200]
    return head.startswith("aborted") or "was cancelled before receiving a response" in head


def fill(pending: PendingAsk, output: str, at: str | None) -> None:
    """The answers (or the dismissal) a call's output gives its questions."""
    seconds = seconds_between(pending.at, at)
    response: object = None
    if output.lstrip().startswith("{"):
        try:
            response = parse_json(output)
        except (ValueError, RecursionError):
            response = None
    answers = response.get("answers") if isinstance(response, dict) else None
    if isinstance(answers, dict):
        for ask, question_id in zip(pending.asks, pending.ids, strict=True):
            ask.answer = answer(answers.get(question_id))
            ask.dismissed = False
            ask.seconds = seconds
    elif _dismissal(output):
        for ask in pending.asks:
            ask.answer = None
            ask.dismissed = True
            ask.seconds = seconds
    # any other output is the tool's error: the question was never put, no answer


def dismiss(waiting: Iterable[PendingAsk], at: str | None) -> None:
    """A turn interrupted while its questions wait: they were dismissed (the call's
    "aborted" output, when written, comes after and says the same)."""
    for pending in waiting:
        for ask in pending.asks:
            if ask.answer is None:
                ask.dismissed = True
                ask.seconds = seconds_between(pending.at, at)
