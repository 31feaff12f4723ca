"""One message of a Gemini CLI chat, whichever of its layouts holds it (gemini_cli.py
reads the layouts): a prompt the person typed, or the model's text, thoughts and tool
calls, digested into steps as it is read (a tool's output is never kept: only the last
test summary it holds, and the edits of files its replace and write_file calls made)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from ...core.sessions.changes import SessionEdit
from ...core.sessions.model import (
    Ask,
    SessionWarnings,
    Step,
    StepKind,
    TestRun,
)
from .common import (
    UnknownKinds,
    kept_size,
    one_line,
    tests_in,
)
from .edits import GEMINI_EDIT_TOOLS, gemini_edits
from .gemini_asks import (
    ASK_TOOL,
    PendingAsk,
    Response,
    answer,
    answer_seconds,
    questions,
)

_SILENT_TYPES = frozenset({"info", "error", "warning"})  # the CLI's own notices
_MODEL_TYPES = frozenset({"gemini", "model"})  # "model": a hand-made variant, same shape
# What the CLI says to the model on its own, as a user message: never a typed prompt.
_CONTEXT_STARTS = (
    "<",  # <session_context>, <hook_context>, <state_snapshot>, ...
    "This is the Gemini CLI.",  # the setup preamble before it was wrapped in a tag
    "[Function Response:",  # a tool result flattened to text by old versions
    "System: ",  # "System: Please continue.", loop-detection feedback
)
_CONTEXT_TEXTS = frozenset({"Please continue."})  # the next-speaker check's nudge
# The model's canned replies to injected context: no answer to anyone.
_ACKS = frozenset({"Got it. Thanks for the context!", "Got it. Thanks for the additional context!"})
# The working folder, as the setup preamble names it (all its wordings since 2025).
_CWD = (
    re.compile(r"I'm currently working in the directory: *([^\n]+)"),
    re.compile(r"I'm currently working in the following directories:\n[ \t]*- *([^\n]+)"),
    re.compile(r"\*\*Workspace Directories:\*\*\n[ \t]*- *([^\n]+)"),
)
# The main argument of each built-in tool, for its one-line step; others fall back to
# their first string argument.
_MAIN_ARG = (
    "command",
    "file_path",
    "absolute_path",
    "pattern",
    "query",
    "url",
    "path",
    "dir_path",
    "prompt",
    "fact",
    "title",
    "name",
    "description",
)
_BOLD_SUBJECT = re.compile(r"\s*\*\*([^*\n]+)\*\*(.*)", re.DOTALL)
_SURROGATE = re.compile("[\ud800-\udfff]")  # JSON can spell a lone surrogate: no text


# --- messages --------------------------------------------------------------------------


@dataclass
class Digest:
    """What one message contributes: a typed prompt, or the agent's steps."""

    prompt: str | None = None
    timestamp: str | None = None
    steps: list[Step] = field(default_factory=list)
    asks: list[Ask] = field(default_factory=list)
    pending: list[PendingAsk] = field(default_factory=list)
    responses: list[Response] = field(default_factory=list)
    model: str | None = None
    tests: TestRun | None = None
    cwd: str | None = None
    edits: list[SessionEdit] = field(default_factory=list)
    # edit calls whose result is in a later message (a saved history): (id, name, args)
    edit_calls: list[tuple[str | None, str, object]] = field(default_factory=list)


class Digester:
    """Turns messages into digests; counts the message types it does not know."""

    def __init__(self, path: str, warnings: SessionWarnings) -> None:
        self.path = path
        self.warnings = warnings
        self.unknown = UnknownKinds("message type", "message")

    def report(self) -> None:
        self.unknown.report(self.warnings, self.path)

    def message(self, message: dict[str, Any], line: int | None) -> Digest | None:
        """A ConversationRecord MessageRecord (layouts 1 and 2); None when skipped."""
        kind = message.get("type")
        if not isinstance(kind, str):
            kind = None
        timestamp = _text(message.get("timestamp"))
        if kind == "user":
            display = message.get("displayContent")
            return _user(
                parts_of(message.get("content")),
                None if display is None else parts_of(display),
                timestamp,
            )
        if kind in _MODEL_TYPES:
            content = message.get("content", message.get("parts"))
            digest = _model(
                parts_of(content),
                message.get("thoughts"),
                message.get("toolCalls"),
                timestamp,
            )
            model = message.get("model")
            digest.model = model if isinstance(model, str) else None
            return digest
        if kind not in _SILENT_TYPES:
            self.unknown.add(kind, line)
        return None

    def content(self, entry: dict[str, Any]) -> Digest:
        """One `{role, parts}` entry of a saved history (layout 3)."""
        parts = parts_of(entry.get("parts"))
        if entry.get("role") == "model":
            return _model(parts, None, None, None)
        return _user(parts, None, None)


def _user(
    parts: list[dict[str, Any]], display: list[dict[str, Any]] | None, ts: str | None
) -> Digest:
    digest = Digest(timestamp=ts)
    for part in parts:
        response = part.get("functionResponse")
        if isinstance(response, dict):
            result = response.get("response")
            digest.responses.append(
                Response(_text(response.get("id")), _text(response.get("name")), result)
            )
            found = tests_in(_response_text(result))
            if found is not None:
                digest.tests = found
    text = _joined_text(parts)
    if "This is the Gemini CLI" in text[:500]:
        digest.cwd = _cwd_in(text)
    digest.prompt = typed_prompt(parts, display, text)
    return digest


def typed_prompt(
    parts: list[dict[str, Any]], display: list[dict[str, Any]] | None, text: str | None = None
) -> str | None:
    """What the person typed, when a user message is a prompt; None for injected context,
    tool results and slash commands the model never saw."""
    stripped = (_joined_text(parts) if text is None else text).strip()
    if stripped in _CONTEXT_TEXTS or stripped.startswith(_CONTEXT_STARTS):
        return None
    if stripped.startswith("/") and not stripped.startswith(("//", "/*")):
        return None  # a slash command, kept by the CLI but no task for the model
    if display is not None:
        # What the person typed ("/init", "explain @app.py") when the model got more.
        stripped = _joined_text(display).strip()
    return clean(stripped) if stripped else None


def _joined_text(parts: list[dict[str, Any]]) -> str:
    """The text the parts hold, as gemini-cli joins it; injected hook context left out."""
    texts = []
    for part in parts:
        text = part.get("text")
        if (
            isinstance(text, str)
            and part.get("thought") is not True
            and not text.lstrip().startswith("<hook_context>")
        ):
            texts.append(text)
    return "".join(texts)


def _cwd_in(text: str) -> str | None:
    head = text[:8192]
    for pattern in _CWD:
        match = pattern.search(head)
        if match:
            folder = match.group(1).strip().rstrip("/") or "/"
            return clean(folder) if folder.startswith(("/", "~")) or ":" in folder else None
    return None


def _model(
    parts: list[dict[str, Any]], thoughts: object, tool_calls: object, ts: str | None
) -> Digest:
    digest = Digest(timestamp=ts)
    summaries = thoughts if isinstance(thoughts, list) else []
    for thought in summaries:
        if isinstance(thought, dict):
            subject = (_text(thought.get("subject")) or "").strip()
            description = (_text(thought.get("description")) or "").strip()
            text = (
                f"{subject}: {description}" if subject and description else subject or description
            )
            _add(digest, StepKind.THINKING, text)
    calls = (
        [call for call in tool_calls if isinstance(call, dict)]
        if isinstance(tool_calls, list)
        else []
    )
    by_id = {call["id"]: call for call in calls if isinstance(call.get("id"), str)}
    done: set[int] = set()
    texts: list[str] = []
    for part in parts:
        piece = part.get("text")
        if isinstance(piece, str):
            if part.get("thought") is True:
                if not summaries:  # the summaries hold the same thinking
                    _flush(digest, texts)
                    _add(digest, StepKind.THINKING, _thought(piece))
            else:
                texts.append(piece)
            continue
        call = part.get("functionCall")
        if isinstance(call, dict):
            _flush(digest, texts)
            record = by_id.get(call.get("id")) if isinstance(call.get("id"), str) else None
            if record is not None and id(record) not in done:
                done.add(id(record))
                _tool_call(digest, record, ts)
            else:
                _tool_call(
                    digest,
                    {"name": call.get("name"), "id": call.get("id"), "args": call.get("args")},
                    ts,
                    pending=True,
                )
    _flush(digest, texts)
    for record in calls:
        if id(record) not in done:
            _tool_call(digest, record, ts)
    return digest


def _thought(text: str) -> str:
    """A thought part's "**Subject** description" as "Subject: description", the way the
    CLI splits it (packages/core/src/utils/thoughtUtils.ts)."""
    match = _BOLD_SUBJECT.match(text)
    if match is None:
        return text
    subject, description = match.group(1).strip(), match.group(2).strip()
    return f"{subject}: {description}" if description else subject


def _flush(digest: Digest, texts: list[str]) -> None:
    if texts:
        text = "".join(texts)
        texts.clear()
        if text.strip() not in _ACKS:
            _add(digest, StepKind.TEXT, text)


def _add(digest: Digest, kind: StepKind, text: str) -> None:
    text = text.strip()
    if text:
        digest.steps.append(Step(kind, clean(text)))


def _tool_call(
    digest: Digest, record: dict[str, Any], asked: str | None, pending: bool = False
) -> None:
    """One tool call: a one-line step (or its questions, for ask_user) and its evidence."""
    name = _text(record.get("name")) or "tool"
    args = record.get("args")
    result = record.get("result")
    if name == ASK_TOOL:
        keys, asks = questions(args)
        if asks:
            for ask in asks:
                digest.steps.append(Step(StepKind.ASK, ask.text))
            digest.asks.extend(asks)
            status = record.get("status")
            if pending or (result is None and status not in ("cancelled", "error")):
                digest.pending.append(PendingAsk(_text(record.get("id")), asks, keys, asked))
            else:
                seconds = answer_seconds(asked, _text(record.get("timestamp")))
                answer(asks, keys, _responses(result), status, seconds)
            return
    digest.steps.append(Step(StepKind.TOOL, _fold(name, args)))
    if pending:
        digest.edit_calls.append((_text(record.get("id")), name, args))
        return
    if name in GEMINI_EDIT_TOOLS:
        digest.edits.extend(gemini_edits(name, args, record))
    output = _results_text(result)
    if not output:
        display = record.get("resultDisplay")
        output = display if isinstance(display, str) else ""
    found = tests_in(output)
    if found is not None:
        digest.tests = found


def _fold(name: str, args: object) -> str:
    """A tool call on one line: `run_shell_command: pytest -q`."""
    value: str | None = None
    if isinstance(args, dict):
        for key in _MAIN_ARG:
            candidate = args.get(key)
            if isinstance(candidate, str) and candidate.strip():
                value = candidate
                break
        else:
            for key in ("paths", "include", "todos", "questions"):
                items = args.get(key)
                if isinstance(items, list) and items:
                    strings = [item for item in items if isinstance(item, str)]
                    value = ", ".join(strings) if strings else f"{len(items)} {key}"
                    break
            else:
                value = next((v for v in args.values() if isinstance(v, str) and v.strip()), None)
    return clean(one_line(f"{name}: {value}" if value else name))


def _responses(result: object) -> list[object]:
    """The `response` objects of the functionResponse parts in a tool call's result."""
    return [
        part["functionResponse"].get("response")
        for part in parts_of(result)
        if isinstance(part.get("functionResponse"), dict)
    ]


# --- small helpers ---------------------------------------------------------------------


def cost(digest: Digest | None) -> int:
    """What a message counts towards MAX_SESSION_TEXT."""
    return 0 if digest is None else kept_size(digest.prompt, digest.steps, digest.asks)


def parts_of(value: object) -> list[dict[str, Any]]:
    """A PartListUnion (a string, a Part or a list of both) as a list of Part objects."""
    if isinstance(value, str):
        return [{"text": value}]
    if isinstance(value, dict):
        return [value]
    if isinstance(value, list):
        return [
            {"text": item} if isinstance(item, str) else item
            for item in value
            if isinstance(item, (str, dict))
        ]
    return []


def _text(value: object) -> str | None:
    return value if isinstance(value, str) else None


def _response_text(response: object) -> str:
    """The text of a functionResponse's `response`: its output, then its error."""
    if isinstance(response, dict):
        texts = [response[k] for k in ("output", "error") if isinstance(response.get(k), str)]
        return "\n".join(texts)
    return response if isinstance(response, str) else ""


def _results_text(result: object) -> str:
    texts = []
    for part in parts_of(result):
        response = part.get("functionResponse")
        if isinstance(response, dict):
            texts.append(_response_text(response.get("response")))
        elif isinstance(part.get("text"), str):
            texts.append(part["text"])
    return "\n".join(text for text in texts if text)


def clean(text: str) -> str:
    """The text with any lone surrogate (no Unicode text) replaced."""
    return _SURROGATE.sub("\ufffd", text) if _SURROGATE.search(text) else text
