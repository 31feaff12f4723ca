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
from collections.abc import Callable, Iterable
from typing import Any, BinaryIO

from ...core.sessions.model import (
    Session,
    SessionError,
    SessionTurn,
    SessionWarnings,
    Tool,
)
from .common import (
    MAX_LINE,
    JsonLines,
    Kept,
    parse_json,
    size_text,
    unreadable,
)
from .edits import GeminiCalls
from .gemini_asks import (
    PendingAsk,
    resolve,
)
from .gemini_messages import Digest, Digester, clean, cost, parts_of, typed_prompt

__all__ = ["read_gemini_cli"]

_CHUNK = 1 << 20  # how much is read between two progress calls
# A JSON chat (layouts 2 and 3) is parsed whole, which takes about three times its size;
# Gemini CLI rewrote the whole file at every message, which kept them far smaller.
MAX_DOCUMENT = 256 << 20


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
        self.messages: dict[str, Digest | None] = {}
        self.digester = Digester(path, warnings)
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

    def _put(self, message_id: str, digest: Digest | None) -> None:
        """A message written (again: in the place of its first write)."""
        self.kept.total += cost(digest) - cost(self.messages.get(message_id))
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
            self.kept.total -= cost(self.messages.pop(dropped))

    def _odd(self, number: int) -> None:
        self.odd_records += 1
        if self.odd_first is None:
            self.odd_first = number


def _conversation_record(
    path: str, record: dict[str, Any], size: int, warnings: SessionWarnings
) -> Session:
    digester = Digester(path, warnings)
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
    digester = Digester(path, warnings)
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
    numbered: Iterable[tuple[int, Digest | None]],
    what: str,
) -> list[Digest]:
    """The digests of a whole-file chat, up to the one by which the session keeps more
    than MAX_SESSION_TEXT (a warning naming it)."""
    kept = Kept(path, warnings)
    digests = []
    for number, digest in numbered:
        if digest is not None:
            digests.append(digest)
            kept.total += cost(digest)
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
        if entry.get("role") == "user" and typed_prompt(parts_of(entry.get("parts")), None):
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
        clean(session_id),
        path,
        started=started if isinstance(started, str) and started else None,
        size=size,
    )
    directories = meta.get("directories")
    if isinstance(directories, list) and directories and isinstance(directories[0], str):
        session.cwd = directories[0]  # the workspace's folders, its own first
    return session


# --- assembling ------------------------------------------------------------------------


def _assemble(session: Session, digests: Iterable[Digest]) -> None:
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
