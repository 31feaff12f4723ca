"""Gemini CLI chat files (`~/.gemini/tmp/<projectHash>/chats/`) as a `Session`.

Gemini CLI has written its chats three ways, told apart here by content, never by name:

1. JSON Lines ChatRecording (2026-04 on): a header line `{sessionId, projectHash,
   startTime, lastUpdated, kind}`, then one line per message write. `{"$set": {...}}`
   lines patch the header (a `$set` of `messages` replaces them all: a checkpoint), a
   message written again under the same `id` replaces the earlier write in its place,
   and `{"$rewindTo": id}` drops that message and every later one (gemini-cli's
   `loadConversationRecord` in packages/core/src/services/chatRecordingService.ts).
2. One pretty-printed ConversationRecord `.json` (2025 to early 2026), the same record
   with every message in `messages`.
3. A saved history (`/chat save`, a checkpoint): the Gemini API's `Content[]`,
   `[{role: "user" | "model", parts: [...]}]`, bare or as `{history: [...]}`; no ids,
   timestamps or models.

Each message is digested as it is read (a later write of a JSONL id replaces its
digest), so tool outputs are never kept: only the last test summary each one holds, and
the edits of files its replace and write_file calls made (edits.py).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, BinaryIO

from ...core.sessions.changes import SessionEdit
from ...core.sessions.model import (
    Ask,
    Session,
    SessionError,
    SessionTurn,
    SessionWarnings,
    Step,
    StepKind,
    TestRun,
    Tool,
)
from .common import (
    MAX_LINE,
    JsonLines,
    Kept,
    UnknownKinds,
    kept_size,
    one_line,
    parse_json,
    size_text,
    tests_in,
    unreadable,
)
from .edits import GEMINI_EDIT_TOOLS, GeminiCalls, gemini_edits
from .gemini_asks import (
    ASK_TOOL,
    PendingAsk,
    Response,
    answer,
    answer_seconds,
    questions,
    resolve,
)

__all__ = ["read_gemini_cli"]

_CHUNK = 1 << 20  # how much is read between two progress calls
# A JSON chat (layouts 2 and 3) is parsed whole, which takes about three times its size;
# Gemini CLI rewrote the whole file at every message, which kept them far smaller.
MAX_DOCUMENT = 256 << 20
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


def read_gemini_cli(
    path: str, warnings: SessionWarnings, progress: Callable[[int], None] | None = None
) -> Session:
    """The session in one Gemini CLI chat file (any of its three layouts).

    Problems that leave the rest readable (a JSONL line cut short or not JSON, messages
    of an unknown type) are added to `warnings`; a file that cannot be a Gemini CLI
    session raises `SessionError`, and nothing else is raised. `progress` is called with
    the number of bytes read since its last call.
    """
    try:
        with open(path, "rb") as handle:
            first = handle.readline(MAX_LINE + 1)
            if progress is not None and first:
                progress(len(first))
            header = _loads(first) if len(first) <= MAX_LINE else None
            if isinstance(header, dict) and (
                "sessionId" in header or "$set" in header or "$rewindTo" in header
            ):
                return _JsonLines(path, warnings, progress).read(first, header, handle)
            data = _read_whole(path, handle, progress)
    except OSError as error:
        raise unreadable(path, error) from None
    return _read_json(path, data, warnings)


# --- reading ---------------------------------------------------------------------------


def _loads(data: bytes) -> object:
    """The JSON value of `data`, or None when it is not JSON; never raises. Lone
    surrogates in its strings are U+FFFD."""
    try:
        return parse_json(data)
    except UnicodeDecodeError:
        try:
            return parse_json(data.decode("utf-8-sig", errors="replace"))
        except (ValueError, RecursionError):
            return None
    except (ValueError, RecursionError):
        return None


def _read_whole(path: str, handle: BinaryIO, progress: Callable[[int], None] | None) -> bytes:
    """The whole file (a JSON chat is parsed at once), at most MAX_DOCUMENT bytes: a larger
    one is refused unread. Read in one piece, so that it is held once."""
    size = os.fstat(handle.fileno()).st_size
    data = b""
    if size <= MAX_DOCUMENT:
        done = handle.tell()
        handle.seek(0)
        data = handle.read(size + 1)  # one byte more: a file still growing
        if progress is not None and len(data) > done:
            progress(len(data) - done)
    if size > MAX_DOCUMENT or len(data) > MAX_DOCUMENT:
        raise SessionError(
            f"{path}: a JSON chat of more than {size_text(MAX_DOCUMENT)}, more than ppp-tui"
            " reads at once; not read"
        )
    return data


def _read_json(path: str, data: bytes, warnings: SessionWarnings) -> Session:
    """A whole-file JSON chat: a ConversationRecord or a saved history."""
    if not data.strip():
        raise SessionError(f"{path}: empty file, no Gemini CLI chat")
    try:
        value: object = parse_json(data)
    except UnicodeDecodeError:
        value = _loads(data)
        if value is None:
            raise SessionError(f"{path}: not UTF-8 JSON, no Gemini CLI chat") from None
    except json.JSONDecodeError as error:
        raise SessionError(
            f"{path}: not valid JSON ({error.msg} at line {error.lineno}); "
            "the file may be cut short"
        ) from None
    except (ValueError, RecursionError):
        raise SessionError(f"{path}: not valid JSON, no Gemini CLI chat") from None
    if isinstance(value, dict):
        if isinstance(value.get("sessionId"), str) and isinstance(value.get("messages"), list):
            return _conversation_record(path, value, len(data), warnings)
        history = value.get("clientHistory", value.get("history"))
        if isinstance(history, list) and _is_history(history):
            return _saved_history(path, history, data, warnings)
    elif isinstance(value, list) and _is_history(value):
        return _saved_history(path, value, data, warnings)
    raise SessionError(
        f"{path}: JSON but no Gemini CLI chat (neither a conversation record with"
        " sessionId and messages nor a saved history of role/parts entries)"
    )


def _is_history(entries: list[object]) -> bool:
    return bool(entries) and all(
        isinstance(entry, dict) and "role" in entry and "parts" in entry for entry in entries[:8]
    )


class _JsonLines:
    """A JSONL ChatRecording, replayed the way gemini-cli loads it."""

    def __init__(
        self, path: str, warnings: SessionWarnings, progress: Callable[[int], None] | None
    ) -> None:
        self.path = path
        self.warnings = warnings
        self.progress = progress
        self.meta: dict[str, object] = {}
        # By id, in the order of first write; None for a message that adds nothing (an
        # info line), kept so that a $rewindTo can name it.
        self.messages: dict[str, _Digest | None] = {}
        self.digester = _Digester(path, warnings)
        self.kept = Kept(path, warnings)  # the text of the messages held now
        self.odd_records = 0
        self.odd_first: int | None = None
        self.rewind_misses = 0

    def read(self, first: bytes, header: dict[str, Any], handle: Any) -> Session:
        """The session, from its header (the first line, already read) and the other
        lines in `handle`."""
        self._record(header, 1)
        lines = JsonLines(self.path, self.warnings, self.progress, batch=_CHUNK)
        if not self.kept.over(1):
            for number, record in lines.objects(handle, start=2):
                self._record(record, number)
                if self.kept.over(number):
                    break
        lines.finish()
        size = len(first) + lines.size
        session_id = self.meta.get("sessionId")
        if not isinstance(session_id, str) or not session_id:
            # One line for the file (its header line is no odd line of a chat).
            raise SessionError(
                f"{self.path}: no Gemini CLI chat (no header line with sessionId and projectHash)"
            )
        if self.odd_records:
            self.warnings.add(
                self.path,
                self.odd_first,
                f"{self.odd_records} line(s) neither a message, a $set nor a $rewindTo (skipped)",
            )
        if self.rewind_misses:
            self.warnings.add(
                self.path,
                None,
                f"{self.rewind_misses} $rewindTo to a message not in the file: every earlier"
                " message dropped, as Gemini CLI does",
            )
        self.digester.report()
        session = _session(session_id, self.path, self.meta, size)
        _assemble(session, (digest for digest in self.messages.values() if digest))
        return session

    def _record(self, record: dict[str, Any], number: int) -> None:
        # The order gemini-cli tests a line in: rewind, message, $set, header.
        rewind = record.get("$rewindTo")
        if isinstance(rewind, str):
            self._rewind(rewind)
        elif isinstance(record.get("id"), str):
            self._put(record["id"], self.digester.message(record, number))
        elif isinstance(record.get("$set"), dict):
            update = record["$set"]
            if isinstance(update.get("messages"), list):
                self._clear()  # a checkpoint: the messages from here on
                self._messages(update["messages"], number)
            self.meta.update({k: v for k, v in update.items() if k != "messages"})
        elif isinstance(record.get("sessionId"), str) and isinstance(
            record.get("projectHash"), str
        ):
            self.meta.update({k: v for k, v in record.items() if k != "messages"})
            if isinstance(record.get("messages"), list):
                self._messages(record["messages"], number)  # a whole record on one line
        else:
            self._odd(number)

    def _messages(self, messages: list[object], number: int) -> None:
        for message in messages:
            if isinstance(message, dict) and isinstance(message.get("id"), str):
                self._put(message["id"], self.digester.message(message, number))

    def _put(self, message_id: str, digest: _Digest | None) -> None:
        """A message written (again: in the place of its first write)."""
        self.kept.total += _cost(digest) - _cost(self.messages.get(message_id))
        self.messages[message_id] = digest

    def _clear(self) -> None:
        self.messages.clear()
        self.kept.total = 0

    def _rewind(self, message_id: str) -> None:
        if message_id not in self.messages:
            self.rewind_misses += 1
            self._clear()
            return
        ids = list(self.messages)
        for dropped in ids[ids.index(message_id) :]:
            self.kept.total -= _cost(self.messages.pop(dropped))

    def _odd(self, number: int) -> None:
        self.odd_records += 1
        if self.odd_first is None:
            self.odd_first = number


def _conversation_record(
    path: str, record: dict[str, Any], size: int, warnings: SessionWarnings
) -> Session:
    digester = _Digester(path, warnings)
    messages = record["messages"]
    odd = sum(1 for message in messages if not isinstance(message, dict))
    numbered = (
        (number, digester.message(message, None))
        for number, message in enumerate(messages, start=1)
        if isinstance(message, dict)
    )
    digests = _within(path, warnings, numbered, "message")
    if odd:
        warnings.add(path, None, f"{odd} message(s) that are not objects (skipped)")
    digester.report()
    session = _session(record["sessionId"], path, record, size)
    _assemble(session, digests)
    return session


def _saved_history(
    path: str, entries: list[object], data: bytes, warnings: SessionWarnings
) -> Session:
    digester = _Digester(path, warnings)
    numbered = (
        (number, digester.content(entry))
        for number, entry in enumerate(entries, start=1)
        if isinstance(entry, dict)
    )
    digests = _within(path, warnings, numbered, "entry")
    session = Session(Tool.GEMINI_CLI, _history_id(entries, data), path, size=len(data))
    _assemble(session, digests)
    return session


def _within(
    path: str,
    warnings: SessionWarnings,
    numbered: Iterable[tuple[int, _Digest | None]],
    what: str,
) -> list[_Digest]:
    """The digests of a whole-file chat, up to the one by which the session keeps more
    than MAX_SESSION_TEXT (a warning naming it)."""
    kept = Kept(path, warnings)
    digests = []
    for number, digest in numbered:
        if digest is not None:
            digests.append(digest)
            kept.total += _cost(digest)
            if kept.over(None, f"{what} {number}"):
                break
    return digests


def _history_id(entries: list[object], data: bytes) -> str:
    """A saved history's id, from its start: the setup, the first prompt and the first
    reply. A later save of the same chat keeps it; two chats differ by their prompt."""
    end = len(entries)
    prompted = False
    for index, entry in enumerate(entries):
        if not isinstance(entry, dict):
            continue
        if entry.get("role") == "user" and _typed_prompt(_parts(entry.get("parts")), None):
            prompted = True
        elif prompted and entry.get("role") == "model":
            end = index + 1
            break
    try:
        canonical = json.dumps(entries[:end], sort_keys=True, ensure_ascii=False, default=str)
        start = canonical.encode("utf-8", errors="surrogatepass")
    except (ValueError, RecursionError):
        start = data[:65536]  # too deep to write back: the file's own first bytes
    digest = hashlib.sha256(start).hexdigest()
    return f"sha256:{digest[:16]}"


def _session(session_id: str, path: str, meta: dict[str, Any], size: int) -> Session:
    started = meta.get("startTime")
    session = Session(
        Tool.GEMINI_CLI,
        _clean(session_id),
        path,
        started=started if isinstance(started, str) and started else None,
        size=size,
    )
    directories = meta.get("directories")
    if isinstance(directories, list) and directories and isinstance(directories[0], str):
        session.cwd = directories[0]  # the workspace's folders, its own first
    return session


# --- messages --------------------------------------------------------------------------


@dataclass
class _Digest:
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


class _Digester:
    """Turns messages into digests; counts the message types it does not know."""

    def __init__(self, path: str, warnings: SessionWarnings) -> None:
        self.path = path
        self.warnings = warnings
        self.unknown = UnknownKinds("message type", "message")

    def report(self) -> None:
        self.unknown.report(self.warnings, self.path)

    def message(self, message: dict[str, Any], line: int | None) -> _Digest | None:
        """A ConversationRecord MessageRecord (layouts 1 and 2); None when skipped."""
        kind = message.get("type")
        if not isinstance(kind, str):
            kind = None
        timestamp = _text(message.get("timestamp"))
        if kind == "user":
            display = message.get("displayContent")
            return _user(
                _parts(message.get("content")),
                None if display is None else _parts(display),
                timestamp,
            )
        if kind in _MODEL_TYPES:
            content = message.get("content", message.get("parts"))
            digest = _model(
                _parts(content),
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

    def content(self, entry: dict[str, Any]) -> _Digest:
        """One `{role, parts}` entry of a saved history (layout 3)."""
        parts = _parts(entry.get("parts"))
        if entry.get("role") == "model":
            return _model(parts, None, None, None)
        return _user(parts, None, None)


def _user(
    parts: list[dict[str, Any]], display: list[dict[str, Any]] | None, ts: str | None
) -> _Digest:
    digest = _Digest(timestamp=ts)
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
    digest.prompt = _typed_prompt(parts, display, text)
    return digest


def _typed_prompt(
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
    return _clean(stripped) if stripped else None


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
            return _clean(folder) if folder.startswith(("/", "~")) or ":" in folder else None
    return None


def _model(
    parts: list[dict[str, Any]], thoughts: object, tool_calls: object, ts: str | None
) -> _Digest:
    digest = _Digest(timestamp=ts)
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


def _flush(digest: _Digest, texts: list[str]) -> None:
    if texts:
        text = "".join(texts)
        texts.clear()
        if text.strip() not in _ACKS:
            _add(digest, StepKind.TEXT, text)


def _add(digest: _Digest, kind: StepKind, text: str) -> None:
    text = text.strip()
    if text:
        digest.steps.append(Step(kind, _clean(text)))


def _tool_call(
    digest: _Digest, record: dict[str, Any], asked: str | None, pending: bool = False
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
    return _clean(one_line(f"{name}: {value}" if value else name))


def _responses(result: object) -> list[object]:
    """The `response` objects of the functionResponse parts in a tool call's result."""
    return [
        part["functionResponse"].get("response")
        for part in _parts(result)
        if isinstance(part.get("functionResponse"), dict)
    ]


# --- assembling ------------------------------------------------------------------------


def _assemble(session: Session, digests: Iterable[_Digest]) -> None:
    """Turns from digests in order: each typed prompt opens one; the agent's steps go to
    the latest (a turn with no prompt holds any that come before the first)."""
    turn: SessionTurn | None = None
    pending: list[PendingAsk] = []
    calls = GeminiCalls()
    started = session.started
    for digest in digests:
        if started is None and digest.timestamp:
            started = session.started = digest.timestamp
        if digest.cwd and session.cwd is None:
            session.cwd = digest.cwd
        for response in digest.responses:
            resolve(pending, response, digest.timestamp)
            edits = calls.response(response.call_id, response.name, response.response)
            if turn is not None:
                turn.edits.extend(edits)
        if digest.prompt is not None:
            turn = SessionTurn(digest.prompt, digest.timestamp)
            session.turns.append(turn)
        if digest.steps or digest.asks:
            if turn is None:
                turn = SessionTurn("", digest.timestamp)
                session.turns.append(turn)
            turn.steps.extend(digest.steps)
            turn.asks.extend(digest.asks)
            turn.edits.extend(digest.edits)
        pending.extend(digest.pending)
        for call in digest.edit_calls:
            calls.call(*call)
        session.add_model(digest.model)
        if digest.tests is not None:
            session.tests = digest.tests


# --- small helpers ---------------------------------------------------------------------


def _cost(digest: _Digest | None) -> int:
    """What a message counts towards MAX_SESSION_TEXT."""
    return 0 if digest is None else kept_size(digest.prompt, digest.steps, digest.asks)


def _parts(value: object) -> list[dict[str, Any]]:
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
    for part in _parts(result):
        response = part.get("functionResponse")
        if isinstance(response, dict):
            texts.append(_response_text(response.get("response")))
        elif isinstance(part.get("text"), str):
            texts.append(part["text"])
    return "\n".join(text for text in texts if text)


def _clean(text: str) -> str:
    """The text with any lone surrogate (no Unicode text) replaced."""
    return _SURROGATE.sub("\ufffd", text) if _SURROGATE.search(text) else text
