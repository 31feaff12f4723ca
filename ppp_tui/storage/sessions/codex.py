"""Codex CLI rollouts (`~/.codex/sessions/YYYY/MM/DD/rollout-<ts>-<uuid>.jsonl`) as sessions.

Two layouts. From about 0.3x every line is an envelope `{"timestamp", "type",
"payload"}`: `session_meta` (id, cwd, git, source), `turn_context` (the model),
`response_item` (what the model saw and said: messages, reasoning, tool calls and their
outputs), `event_msg` (what the interface showed: typed prompts, agent messages,
reasoning, command ends, token counts...), `compacted`, `world_state`, ... The mid-2025
Rust CLI wrote a bare header `{id, timestamp, git?}` and then bare items, with
`{"record_type": "state"}` markers and no timestamps.

Much is written twice, once as an item and once as an event: the prompt
(`user_message` and a user `message`; codex-cli 0.148 dropped the event), the agent's text
(`agent_message`) and its reasoning summary (`agent_reasoning`). Each is counted once, by
pairing an item with the event of the same text in the same turn. Injected context
(`<environment_context>`, `<user_instructions>`, AGENTS.md, `<turn_aborted>`, developer
messages, compaction summaries) is not a prompt.

Asks are the `request_user_input` tool (Plan mode, about 0.9x on), read in codex_asks.py;
an interrupted turn (`turn_aborted`) dismisses the questions still waiting.

Edits of files are apply_patch calls, however the rollout carries them (patches.py).

Bad input never raises anything but `SessionError`: a line that is not JSON, a record of
an unknown type or an odd shape is a warning (or nothing) and the rest is read.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from datetime import datetime
from typing import Any

from ...core.sessions.model import (
    Session,
    SessionError,
    SessionTurn,
    SessionWarnings,
    Step,
    StepKind,
    TestRun,
    Tool,
)
from .codex_asks import ASK_TOOL, PendingAsk, dismiss, fill, questions
from .common import (
    JsonLines,
    Kept,
    LineSource,
    UnknownKinds,
    as_text,
    one_line,
    parse_json,
    read_whole,
    tests_in,
)
from .patches import CodexEdits

Json = dict[str, Any]

# Record types Codex writes that hold nothing of the conversation (or hold it twice).
_QUIET_RECORDS = frozenset(
    {"compacted", "world_state", "inter_agent_communication", "inter_agent_communication_metadata"}
)
# Response items that are neither a message, reasoning, a tool call nor an output.
_QUIET_ITEMS = frozenset(
    {
        "tool_search_output",
        "ghost_snapshot",
        "compaction",
        "context_compaction",
        "compaction_trigger",
        "additional_tools",
        "agent_message",  # between agents, not to the user
        "other",
    }
)
_CALLS = frozenset(
    {
        "function_call",
        "custom_tool_call",
        "local_shell_call",
        "web_search_call",
        "tool_search_call",
        "image_generation_call",
    }
)
_OUTPUTS = frozenset({"function_call_output", "custom_tool_call_output"})
# Before 0.3x the injected context was a `user_message` event too, of these kinds.
_INJECTED_KINDS = frozenset({"user_instructions", "environment_context"})
_SHELLS = frozenset({"bash", "sh", "zsh", "dash", "fish", "pwsh", "powershell"})
_PATCH_MARKS = ("*** Add File: ", "*** Update File: ", "*** Delete File: ", "*** Move to: ")
# The argument that says what a tool call did, in order of preference.
_DETAIL_KEYS = (
    "command",
    "cmd",
    "path",
    "file_path",
    "query",
    "pattern",
    "url",
    "q",
    "task_name",
    "message",
    "prompt",
)
# Codex's compaction summary, handed back to the model as a user message.
_SUMMARY_PREFIX = "Another language model started to solve this problem"
_IDE_REQUEST = "## My request for Codex:"
_UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")


def read_codex(
    path: str, warnings: SessionWarnings, progress: Callable[[int], None] | None = None
) -> Session:
    """The session of one Codex CLI rollout.

    `progress`, when given, is called with the size in bytes of every line read. Raises
    `SessionError` (one line) for a file that cannot be read or holds no conversation;
    every other problem is added to `warnings`.
    """
    return read_whole(CodexReader(path, warnings, progress), path)


# --------------------------------------------------------------------------- values


def _str(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


def _dict(value: object) -> Json:
    return value if isinstance(value, dict) else {}


def _time(value: object) -> datetime | None:
    if not isinstance(value, str):
        return None
    try:
        return datetime.fromisoformat(value)
    except ValueError:
        return None


def _parts(content: object, kinds: frozenset[str]) -> list[str]:
    """The texts of a message's content: a string, or a list of typed parts."""
    if isinstance(content, str):
        return [content]
    if not isinstance(content, list):
        return []
    texts = []
    for part in content:
        if isinstance(part, dict) and part.get("type") in kinds:
            text = part.get("text")
            if isinstance(text, str):
                texts.append(text)
    return texts


_INPUT_TEXT = frozenset({"input_text", "text"})
_OUTPUT_TEXT = frozenset({"output_text", "text"})
_SUMMARY_TEXT = frozenset({"summary_text", "text"})
_REASONING_TEXT = frozenset({"reasoning_text", "text"})


def _injected(text: str) -> bool:
    """Context Codex adds to the conversation as a user message: not a prompt."""
    head = text.lstrip()
    return (
        head.startswith("<")
        or head.startswith("# AGENTS.md instructions")
        or head.startswith(_SUMMARY_PREFIX)
    )


def _request(text: str) -> str:
    """A prompt sent from an IDE extension without the IDE context put before it."""
    if text.startswith("# Context from my IDE setup:"):
        at = text.find(_IDE_REQUEST)
        if at != -1:
            return text[at + len(_IDE_REQUEST) :].strip()
    return text.strip()


def _same_prompt(a: str, b: str) -> bool:
    return a == b or bool(a and b and (a.endswith(b) or b.endswith(a)))


def _output_text(value: object) -> str:
    """A tool output as text: a string, a list of content parts, or an object."""
    if isinstance(value, str):
        if value.startswith('{"output":'):  # before 0.4x a shell output was JSON in a string
            try:
                inner = parse_json(value)
            except (ValueError, RecursionError):
                return value
            if isinstance(inner, dict) and isinstance(inner.get("output"), str):
                return str(inner["output"])
        return value
    if isinstance(value, list):
        return "\n".join(_parts(value, frozenset({"input_text", "output_text", "text"})))
    if isinstance(value, dict):
        for key in ("content", "text", "output"):
            inner = value.get(key)
            if isinstance(inner, str):
                return inner
            if isinstance(inner, list):
                return _output_text(inner)
    return ""


def _arguments(value: object) -> object:
    """A call's arguments: the JSON object in its string, or the string itself."""
    if isinstance(value, str):
        if value.lstrip().startswith("{"):
            try:
                return parse_json(value)
            except (ValueError, RecursionError):
                return value
        return value
    return value


def _command(value: object) -> str | None:
    """A shell command, an argument list joined (`bash -lc SCRIPT` as its script)."""
    if isinstance(value, str):
        return value
    if not isinstance(value, list):
        return None
    words = [word for word in value if isinstance(word, str)]
    if (
        len(words) == 3
        and os.path.basename(words[0]) in _SHELLS
        and words[1] in ("-lc", "-c", "-l", "-Command")
    ):
        return words[2]
    return " ".join(words) or None


def _patch_files(patch: str) -> list[str]:
    """The files an apply_patch envelope adds, updates, deletes or moves to, in order."""
    files: list[str] = []
    start = 0
    while True:
        if patch.startswith("*** ", start):
            end = patch.find("\n", start)
            line = patch[start : end if end != -1 else len(patch)].rstrip("\r")
            for mark in _PATCH_MARKS:
                if line.startswith(mark):
                    name = line[len(mark) :].strip()
                    if name and name not in files:
                        files.append(name)
        following = patch.find("\n*** ", start)
        if following == -1:
            return files
        start = following + 1


def _patch_line(name: str, patch: str) -> str:
    files = _patch_files(patch)
    return one_line(f"{name}: {', '.join(files)}") if files else name


def _shell_line(name: str, command: str) -> str:
    if command.startswith(("apply_patch", "applypatch")):
        return _patch_line("apply_patch", command)
    return one_line(f"{name}: {command}")


def _function_line(name: str, args: object) -> str:
    """A function call folded to one line: `shell: pytest -q`, `apply_patch: app.py`."""
    if isinstance(args, dict):
        if name == "apply_patch":
            patch = args.get("input", args.get("patch"))
            return _patch_line(name, patch) if isinstance(patch, str) else name
        for key in _DETAIL_KEYS:
            value = args.get(key)
            if key in ("command", "cmd"):
                command = _command(value)
                if command:
                    return _shell_line(name, command)
            elif isinstance(value, str) and value.strip():
                return one_line(f"{name}: {value}")
        return name
    if isinstance(args, str) and args.strip():
        if name == "apply_patch":
            return _patch_line(name, args)
        return one_line(f"{name}: {args}")
    return name


def _web_search_line(action: Json) -> str:
    detail = _str(action.get("query")) or _str(action.get("url")) or _str(action.get("pattern"))
    queries = action.get("queries")
    if detail is None and isinstance(queries, list) and queries:
        detail = _str(queries[0])
    return one_line(f"web_search: {detail}") if detail else "web_search"


# --------------------------------------------------------------------------- reading


class CodexReader:
    """A Codex rollout read line by line: `feed` reads the lines a file holds (or those
    appended since), `finish` gives the session read so far (again after more lines are
    fed: following a session that grows reads only what was appended)."""

    def __init__(
        self, path: str, warnings: SessionWarnings, progress: Callable[[int], None] | None = None
    ) -> None:
        self.path = path
        self.warnings = warnings
        self.lines = JsonLines(path, warnings, progress)
        self.kept = Kept(path, warnings)
        self.full = False  # the session keeps all it may: the rest of the file is not read
        self.id: str | None = None
        self.started: str | None = None
        self.cwd: str | None = None
        self.repository: str | None = None
        self.branch: str | None = None
        self.models: list[str] = []
        self.turns: list[SessionTurn] = []
        self.tests: TestRun | None = None
        self.meta = False  # the first session_meta (or legacy header) has been read
        self.replay_before: datetime | str | None = None  # a sub-agent's copy of its parent
        self.subagent = False
        self.turn: SessionTurn | None = None
        self.prompt_from: str | None = None  # "item" or "event": where the turn's prompt came
        self.prompt_paired = False  # ... and whether its copy from the other has come too
        self.echoes: dict[tuple[str, str], int] = {}  # texts seen once, awaiting their copy
        self.asks: dict[str, PendingAsk] = {}
        self.scanned: set[str] = set()  # call ids whose output was searched for tests
        self.edits = CodexEdits()  # apply_patch calls waiting for their outcome
        self.unknown = UnknownKinds("record type")
        self.kinds: dict[str, None] = {}  # what the file holds, for "no conversation"

    # ---- the file

    def feed(self, handle: LineSource) -> None:
        """Read the lines left in `handle` (the lines after those fed before)."""
        if self.full:
            return
        for number, obj in self.lines.objects(handle, self.lines.lines + 1):
            try:
                self._record(obj, number)
            except (AttributeError, KeyError, IndexError, TypeError, ValueError) as exc:
                self.warnings.add(self.path, number, f"skipped: an odd {type(exc).__name__} shape")
            self.kept.count(self.turns)
            if self.kept.over(number):
                self.full = True
                return

    def finish(self) -> Session:
        """The session read so far (again after more lines are fed)."""
        lines = self.lines
        lines.finish()
        self.unknown.report(self.warnings, self.path)
        size = lines.size
        if size == 0:
            raise SessionError(f"{self.path}: empty file, no conversation in it")
        if lines.parsed == 0:
            raise SessionError(f"{self.path}: not a Codex rollout (no line of it is JSON)")
        if not self.turns:
            held = ", ".join(list(self.kinds)[:6])
            only = f"; only {held}" if held else ""
            raise SessionError(
                f"{self.path}: no conversation in it (no prompt, reply or tool call{only})"
            )
        session = Session(
            tool=Tool.CODEX,
            id=self.id or _file_id(self.path),
            path=self.path,
            started=self.started or self.turns[0].timestamp,
            cwd=self.cwd,
            repository=self.repository,
            branch=self.branch,
            turns=self.turns,
            tests=self.tests,
            size=size,
            subagent=self.subagent,
        )
        for model in self.models:
            session.add_model(model)
        return session

    def _note(self, kind: str) -> None:
        if len(self.kinds) < 12:
            self.kinds[kind] = None

    # ---- records

    def _record(self, obj: Json, number: int) -> None:
        kind = obj.get("type")
        if "payload" in obj:  # the envelope layout
            timestamp = obj.get("timestamp")
            if self.replay_before is not None:
                if self._replayed(timestamp):
                    return
                self.replay_before = None
            payload = obj.get("payload")
            if not isinstance(payload, dict):
                return  # an odd shape: nothing to read in it
            if kind == "session_meta":
                self._note("session_meta")
                self._session_meta(payload, timestamp)
            elif kind == "turn_context":
                self._note("turn_context")
                self._turn_context(payload)
            elif kind == "response_item":
                self._item(payload, timestamp, number, "response_item ")
            elif kind == "event_msg":
                self._event(payload, timestamp)
            elif isinstance(kind, str) and kind in _QUIET_RECORDS:
                self._note(kind)
            else:
                self.unknown.add(None if kind is None else str(kind), number)
            return
        if "record_type" in obj:  # the legacy layout's state markers
            return
        if not self.meta and kind is None and "id" in obj and "role" not in obj:
            self._header(obj)  # the legacy layout's first line
            return
        self._item(obj, None, number, "")  # a legacy bare item

    def _replayed(self, timestamp: object) -> bool:
        """Whether a line of a sub-agent's rollout is its copy of the parent's lines,
        written with their own (earlier) times."""
        if not isinstance(timestamp, str):
            return False
        boundary = self.replay_before
        if isinstance(boundary, datetime):
            moment = _time(timestamp)
            if moment is not None:
                try:
                    return moment < boundary
                except TypeError:
                    return False
        return isinstance(boundary, str) and timestamp < boundary

    def _session_meta(self, payload: Json, timestamp: object) -> None:
        if self.meta:
            return  # resumed or forked: the first one is the session
        self.meta = True
        self.id = _str(payload.get("id")) or _str(payload.get("session_id"))
        self.started = _str(payload.get("timestamp")) or _str(timestamp)
        self.cwd = _str(payload.get("cwd"))
        self._git(payload.get("git"))
        source = payload.get("source")
        if isinstance(source, dict) and isinstance(source.get("subagent"), dict):
            spawn = _dict(source["subagent"].get("thread_spawn"))
            parent = _str(spawn.get("parent_thread_id")) or _str(payload.get("parent_thread_id"))
            if parent:
                self.id = parent  # a sub-agent's thread belongs to its parent's session
                self.subagent = True
                since = _str(timestamp) or self.started
                if since:
                    self.replay_before = _time(since) or since

    def _header(self, obj: Json) -> None:
        self.meta = True
        self._note("header")
        self.id = _str(obj.get("id"))
        self.started = _str(obj.get("timestamp"))
        self.cwd = _str(obj.get("cwd"))
        self._git(obj.get("git"))

    def _git(self, value: object) -> None:
        git = _dict(value)
        self.repository = _str(git.get("repository_url"))
        self.branch = _str(git.get("branch"))

    def _turn_context(self, payload: Json) -> None:
        model = _str(payload.get("model"))
        if model and model not in self.models:
            self.models.append(model)
        if self.cwd is None:
            self.cwd = _str(payload.get("cwd"))

    def _item(self, item: Json, timestamp: object, number: int, label: str) -> None:
        kind = item.get("type")
        if kind == "message" or (kind is None and "role" in item):
            self._note("message")
            role = item.get("role")
            if role == "user":
                self._user_item(item.get("content"), timestamp)
            elif role == "assistant":
                text = "".join(_parts(item.get("content"), _OUTPUT_TEXT))
                self._text(StepKind.TEXT, text, timestamp, "item")
        elif kind == "reasoning":
            self._note("reasoning")
            parts = _parts(item.get("summary"), _SUMMARY_TEXT)
            if not any(part.strip() for part in parts):
                parts = _parts(item.get("content"), _REASONING_TEXT)
            for part in parts:
                self._text(StepKind.THINKING, part, timestamp, "item")
        elif isinstance(kind, str) and kind in _CALLS:
            self._note(kind)
            self._call(kind, item, timestamp)
        elif isinstance(kind, str) and kind in _OUTPUTS:
            self.edits.output(_str(item.get("call_id")), item.get("output"))
            self._output(_str(item.get("call_id")), _output_text(item.get("output")), timestamp)
        elif isinstance(kind, str) and kind in _QUIET_ITEMS:
            return
        else:
            self.unknown.add(f"{label}{kind}" if label or kind is not None else None, number)

    def _event(self, event: Json, timestamp: object) -> None:
        kind = event.get("type")
        if isinstance(kind, str):
            self._note(kind)
        if kind == "user_message":
            message = event.get("message")
            if (
                isinstance(message, str)
                and event.get("kind") not in _INJECTED_KINDS
                and not _injected(message)
            ):
                self._prompt(_request(message), timestamp, "event")
        elif kind == "agent_message":
            message = event.get("message")
            if isinstance(message, str):
                self._text(StepKind.TEXT, message, timestamp, "event")
        elif kind == "agent_reasoning":
            text = event.get("text")
            if isinstance(text, str):
                self._text(StepKind.THINKING, text, timestamp, "event")
        elif kind == "exec_command_end":
            output = event.get("aggregated_output")
            if not isinstance(output, str) or not output:
                output = event.get("formatted_output")
            if not isinstance(output, str) or not output:
                stdout, stderr = event.get("stdout"), event.get("stderr")
                output = "\n".join(s for s in (stdout, stderr) if isinstance(s, str) and s)
            self._evidence(_str(event.get("call_id")), output)
        elif kind == "mcp_tool_call_end":
            result = _dict(event.get("result"))
            content = _dict(result.get("Ok")).get("content")
            texts = _parts(content, frozenset({"text"}))
            self._evidence(_str(event.get("call_id")), "\n".join(texts))
        elif kind == "patch_apply_end":
            self.edits.event(event, self._current(timestamp))
        elif kind == "turn_aborted":
            dismiss(self.asks.values(), _str(timestamp))

    # ---- turns and steps

    def _user_item(self, content: object, timestamp: object) -> None:
        parts = _parts(content, _INPUT_TEXT)
        kept = [part for part in parts if not _injected(part)]
        if parts and not kept:
            return  # injected context only
        if not parts and not any(
            isinstance(part, dict) and part.get("type") == "input_image"
            for part in (content if isinstance(content, list) else [])
        ):
            return  # nothing typed, nothing attached
        self._prompt(_request("\n".join(kept)), timestamp, "item")

    def _prompt(self, text: str, timestamp: object, source: str) -> None:
        turn = self.turn
        if (
            turn is not None
            and not self.prompt_paired
            and self.prompt_from is not None
            and self.prompt_from != source
            and _same_prompt(turn.prompt, text)
        ):
            self.prompt_paired = True  # the other copy of this turn's prompt
            if turn.timestamp is None:
                turn.timestamp = _str(timestamp)
            return
        self._new_turn(text, timestamp)
        self.prompt_from = source

    def _new_turn(self, prompt: str, timestamp: object) -> SessionTurn:
        turn = SessionTurn(prompt=prompt, timestamp=_str(timestamp))
        self.turns.append(turn)
        self.turn = turn
        self.prompt_from = None
        self.prompt_paired = False
        self.echoes.clear()
        return turn

    def _current(self, timestamp: object) -> SessionTurn:
        """The turn steps go to: one with no prompt when none has been typed yet."""
        return self.turn if self.turn is not None else self._new_turn("", timestamp)

    def _text(self, kind: StepKind, text: str, timestamp: object, source: str) -> None:
        """A text written both as an item and as an event: kept the first time."""
        if not text.strip():
            return
        key = text.strip()
        other = (f"{kind.value}:{'event' if source == 'item' else 'item'}", key)
        waiting = self.echoes.get(other)
        if waiting:
            if waiting == 1:
                del self.echoes[other]
            else:
                self.echoes[other] = waiting - 1
            return
        mine = (f"{kind.value}:{source}", key)
        self.echoes[mine] = self.echoes.get(mine, 0) + 1
        self._current(timestamp).steps.append(Step(kind, text))

    def _call(self, kind: str, item: Json, timestamp: object) -> None:
        name = _str(item.get("name")) or kind
        namespace = _str(item.get("namespace"))
        if kind == "function_call" and name == ASK_TOOL and namespace is None:
            self._ask(item, timestamp)
            return
        if namespace:
            name = f"{namespace}.{name}"
        self.edits.call(kind, item, name, self._current(timestamp))
        if kind == "function_call":
            line = _function_line(name, _arguments(item.get("arguments")))
        elif kind == "custom_tool_call":
            line = _function_line(name, _arguments(item.get("input")))
        elif kind == "local_shell_call":
            command = _command(_dict(item.get("action")).get("command"))
            line = _shell_line("shell", command) if command else "shell"
        elif kind == "web_search_call":
            line = _web_search_line(_dict(item.get("action")))
        elif kind == "tool_search_call":
            line = _function_line("tool_search", item.get("arguments"))
        else:
            line = "image_generation"
        self._current(timestamp).steps.append(Step(StepKind.TOOL, line))

    def _output(self, call_id: str | None, output: str, timestamp: object) -> None:
        pending = self.asks.pop(call_id, None) if call_id is not None else None
        if pending is not None:
            fill(pending, output, _str(timestamp))
        else:
            self._evidence(call_id, output)

    def _evidence(self, call_id: str | None, output: str) -> None:
        """The last test run in one command's output (each command's output once)."""
        if call_id is not None:
            if call_id in self.scanned:
                return
            self.scanned.add(call_id)
        found = tests_in(output)
        if found is not None:
            self.tests = found

    # ---- asks

    def _ask(self, item: Json, timestamp: object) -> None:
        found = questions(_arguments(item.get("arguments")))
        turn = self._current(timestamp)
        if found is None:
            turn.steps.append(Step(StepKind.TOOL, ASK_TOOL))  # malformed: no question in it
            return
        asks, ids = found
        for ask in asks:
            turn.steps.append(Step(StepKind.ASK, ask.text))
            turn.asks.append(ask)
        call_id = _str(item.get("call_id"))
        if call_id is not None and asks:
            self.asks[call_id] = PendingAsk(asks, ids, _str(timestamp))


def _file_id(path: str) -> str:
    """A rollout's id from its name (`rollout-<time>-<uuid>.jsonl`) when no line says."""
    stem = as_text(os.path.basename(path))  # bytes of no encoding: U+FFFD
    for suffix in (".jsonl", ".json"):
        if stem.endswith(suffix):
            stem = stem[: -len(suffix)]
    match = _UUID.search(stem)
    return match.group(0) if match else stem
