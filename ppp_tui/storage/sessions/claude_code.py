"""Claude Code's session transcripts: `~/.claude/projects/<project>/<session>.jsonl`.

One JSON object a line, appended as the session goes. What matters here:

- `user` lines are either prompts (string content, or text blocks) or tool results (a
  list of `tool_result` blocks, plus a top-level `toolUseResult`). Lines marked `isMeta`
  (expanded slash commands, caveats), `isCompactSummary` (the summary a compaction
  writes), command wrappers (`<command-name>`, `<local-command-stdout>`) and injected
  `<ide_selection>`-style blocks are not prompts either.
- One API response (`message.id`) is written as several `assistant` lines, one content
  block each, each repeating the id: blocks are merged by id and never taken twice.
- `AskUserQuestion` puts one to four questions to the person; its `tool_result` carries
  the answers (keyed by question text), a rejection (`is_error`, dismissed) or an error.
- Sub-agents write sidechain lines (`isSidechain: true`): inside the main file (only
  their test evidence counts), or a file of their own (`agent-<id>.jsonl` beside the
  session, or `<session>/subagents/agent-<id>.jsonl`), which reads as a session with the
  parent's id whose first prompt is the sub-agent's task.
- Lines form a tree through `parentUuid` (rewinds, forks); they are read in file order.
- Edit, MultiEdit, Write and NotebookEdit calls change files: edits.py reads them.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from typing import Any

from ...core.sessions.model import (
    Ask,
    Session,
    SessionError,
    SessionTurn,
    SessionWarnings,
    Step,
    StepKind,
    Tool,
)
from .common import (
    TAIL,
    JsonLines,
    Kept,
    LineSource,
    UnknownKinds,
    as_text,
    number_text,
    one_line,
    option_labels,
    read_whole,
    seconds_between,
    tests_in,
)
from .edits import ClaudeEdits

# Line types Claude Code writes that hold no conversation: skipped without a word.
_NOISE = frozenset(
    {
        "agent-name",
        "ai-title",
        "atis-latch",
        "attachment",
        "bridge-session",
        "custom-title",
        "file-history-delta",
        "file-history-snapshot",
        "frame-link",
        "last-prompt",
        "mode",
        "permission-mode",
        "pr-link",
        "progress",
        "queue-operation",
        "relocated",
        "result",
        "started",
        "summary",
        "system",
        "tag",
        "worktree-state",
    }
)

# Tools whose output is a file's text, a search or a form, never a test run of theirs.
_NO_EVIDENCE = frozenset(
    {
        "AskUserQuestion",
        "Edit",
        "ExitPlanMode",
        "Glob",
        "Grep",
        "LS",
        "MultiEdit",
        "NotebookEdit",
        "NotebookRead",
        "Read",
        "TodoRead",
        "TodoWrite",
        "WebFetch",
        "WebSearch",
        "Write",
    }
)

# The argument that tells most about a call of each tool, in order of preference.
_TOOL_ARGS: dict[str, tuple[str, ...]] = {
    "Bash": ("command",),
    "BashOutput": ("bash_id",),
    "Edit": ("file_path",),
    "ExitPlanMode": ("plan",),
    "Glob": ("pattern",),
    "Grep": ("pattern",),
    "KillBash": ("shell_id",),
    "KillShell": ("shell_id",),
    "LS": ("path",),
    "MultiEdit": ("file_path",),
    "NotebookEdit": ("notebook_path",),
    "NotebookRead": ("notebook_path",),
    "Read": ("file_path",),
    "Skill": ("skill", "command"),
    "SlashCommand": ("command",),
    "Agent": ("description", "prompt"),
    "Task": ("description", "prompt"),
    "TaskOutput": ("task_id",),
    "TaskStop": ("task_id",),
    "WebFetch": ("url",),
    "WebSearch": ("query",),
    "Write": ("file_path",),
}
_ANY_TOOL_ARGS = (
    "command",
    "file_path",
    "path",
    "pattern",
    "query",
    "url",
    "description",
    "prompt",
    "skill",
    "name",
    "subject",
    "title",
)

# User lines Claude Code writes itself, whole: a background task's report.
_SYSTEM_MESSAGES = ("<task-notification>",)
_COMPACTION = "This session is being continued from a previous conversation"
_INTERRUPTED = "[Request interrupted by user"
_DISMISSED = ("doesn't want to proceed", "tool use was rejected", "interrupted by user")
_ANSWERS_END = '". You can now continue'
# In a dismissal's text, a question answered before the user chose to clarify.
_CLARIFIED = re.compile(r'^- "(.*)"\n[ \t]+Answer: (.*)$', re.MULTILINE)


def read_claude_code(
    path: str, warnings: SessionWarnings, progress: Callable[[int], None] | None = None
) -> Session:
    """The session in one Claude Code transcript; `progress` gets each line's bytes.

    Raises SessionError (one line) for a file that holds no conversation; every other
    problem (a line cut short or not JSON, a line type not known) is a warning.
    """
    return read_whole(ClaudeReader(path, warnings, progress), path)


class _Thread:
    """The turns of one stream of lines: the main conversation, or the sidechains."""

    def __init__(self) -> None:
        self.turns: list[SessionTurn] = []
        self.conversation = False  # a user or assistant message was seen
        self.session_id: str | None = None
        # message.id -> the blocks of that response already taken
        self.blocks: dict[str, set[tuple[str, str]]] = {}
        # a slash command typed, waiting to see whether the agent answers it
        self.command: tuple[str, str | None] | None = None
        self.prompts_seen: set[tuple[str, str]] = set()

    def new_turn(self, prompt: str, timestamp: str | None) -> None:
        self.turns.append(SessionTurn(prompt, timestamp))

    def turn(self) -> SessionTurn:
        """The turn the agent's next step belongs to (an empty prompt before any)."""
        if self.command is not None:
            prompt, timestamp = self.command
            self.command = None
            self.new_turn(prompt, timestamp)
        if not self.turns:
            self.new_turn("", None)
        return self.turns[-1]


class ClaudeReader:
    """A Claude Code transcript read line by line: `feed` reads the lines a file holds (or
    those appended since), `finish` gives the session read so far (again after more
    lines are fed: following a session that grows reads only what was appended)."""

    def __init__(
        self, path: str, warnings: SessionWarnings, progress: Callable[[int], None] | None
    ) -> None:
        self.path = path
        self.warnings = warnings
        self.lines = JsonLines(path, warnings, progress)
        self.kept = Kept(path, warnings)
        self.main = _Thread()
        self.side = _Thread()
        self.session = Session(tool=Tool.CLAUDE_CODE, id="", path=path)
        self.objects = 0  # lines that are JSON objects
        self.messages = 0  # user or assistant lines, with or without content
        self.unknown = UnknownKinds("line type")
        self.tool_names: dict[str, str] = {}  # tool_use id -> tool name
        # tool_use id -> its asks, when asked, the turn and where their steps are
        self.asks: dict[str, tuple[list[Ask], str | None, SessionTurn, list[int]]] = {}
        self.edits = ClaudeEdits()  # edit calls waiting for their result
        self.full = False  # the session keeps all it may: the rest of the file is not read

    def feed(self, handle: LineSource) -> None:
        """Read the lines left in `handle` (the lines after those fed before)."""
        if self.full:
            return
        for number, obj in self.lines.objects(handle, self.lines.lines + 1):
            self.line(obj, number)
            self.kept.count(self.main.turns)
            self.kept.count(self.side.turns)
            if self.kept.over(number):
                self.full = True
                return

    # -- lines --------------------------------------------------------------------

    def line(self, obj: dict[str, Any], number: int) -> None:
        self.objects += 1
        kind = obj.get("type")
        message = obj.get("message")
        if kind is None and isinstance(message, dict):
            kind = message.get("role")  # usage-only lines carry no type
        timestamp = obj.get("timestamp")
        if not isinstance(timestamp, str) or not _is_iso(timestamp):
            timestamp = None
        elif self.session.started is None:
            self.session.started = timestamp
        if kind == "user" or kind == "assistant":
            self.messages += 1
            if not isinstance(message, dict):
                return
            if kind == "user":
                self.user(obj, message, timestamp)
            else:
                self.assistant(obj, message, timestamp)
        elif not isinstance(kind, str) or kind not in _NOISE:
            self.unknown.add(kind if isinstance(kind, str) else None, number)

    def thread(self, obj: dict[str, Any]) -> _Thread | None:
        """The stream a line belongs to; None for a sidechain line of a main file, whose
        only use is its test evidence."""
        if obj.get("isSidechain") is not True:
            thread = self.main
        elif self.main.conversation:
            return None
        else:
            thread = self.side
        if thread.session_id is None:
            sid = obj.get("sessionId")
            if isinstance(sid, str) and sid:
                thread.session_id = sid
        return thread

    def where(self, obj: dict[str, Any]) -> None:
        if self.session.cwd is None:
            cwd = obj.get("cwd")
            if isinstance(cwd, str) and cwd:
                self.session.cwd = cwd
        if self.session.branch is None:
            branch = obj.get("gitBranch")
            if isinstance(branch, str) and branch:
                self.session.branch = branch

    def user(self, obj: dict[str, Any], message: dict[str, Any], timestamp: str | None) -> None:
        content = message.get("content")
        if isinstance(content, list):
            results = [b for b in content if isinstance(b, dict) and b.get("type") == "tool_result"]
            if results:
                thread = self.thread(obj)
                if thread is not None:
                    thread.conversation = True
                    self.where(obj)
                for block in results:
                    self.tool_result(block, obj, timestamp)
                return
            texts = [b.get("text") for b in content if isinstance(b, dict)]
            parts = [t for t in texts if isinstance(t, str)]
        elif isinstance(content, str):
            parts = [content]
        else:
            return
        thread = self.thread(obj)
        if thread is None:
            return
        thread.conversation = True
        self.where(obj)
        if obj.get("isMeta") is True or obj.get("isCompactSummary") is True:
            return
        prompt = self.prompt(thread, parts, timestamp)
        if prompt is None:
            return
        uuid = obj.get("uuid")
        if isinstance(uuid, str) and uuid:
            key = (uuid, prompt)
            if key in thread.prompts_seen:
                return  # the same prompt line written again (a resumed session)
            thread.prompts_seen.add(key)
        thread.command = None
        thread.new_turn(prompt, timestamp)

    def prompt(self, thread: _Thread, parts: list[str], timestamp: str | None) -> str | None:
        """What the person typed in a user line's texts, or None when it is none of theirs.

        A slash command (`<command-name>`) waits in `thread.command`: it becomes a prompt
        when the agent answers it; a local one (/exit, /model) only gets local output.
        """
        kept = []
        for part in parts:
            text = part.strip()
            if text.startswith(("<command-name>", "<command-message>")):
                command = _command(text)
                if command:
                    thread.command = (command, timestamp)
                continue
            if text.startswith(("<local-command-", "<bash-")):
                thread.command = None
                continue
            if text.startswith(_SYSTEM_MESSAGES):
                continue
            text = _without_injected(text)
            if not text or text.startswith((_INTERRUPTED, _COMPACTION)):
                continue
            kept.append(text)
        return "\n\n".join(kept) if kept else None

    def assistant(
        self, obj: dict[str, Any], message: dict[str, Any], timestamp: str | None
    ) -> None:
        model = message.get("model")
        self.session.add_model(model if isinstance(model, str) else None)
        content = message.get("content")
        if isinstance(content, str):
            content = [{"type": "text", "text": content}]
        if not isinstance(content, list):
            return  # a usage record without content
        thread = self.thread(obj)
        if thread is None:
            for block in content:  # the sidechain's tool names (for its evidence) and edits
                if isinstance(block, dict) and block.get("type") == "tool_use":
                    last = self.main.turns[-1] if self.main.turns else None
                    self.edits.call(
                        block.get("id"), self.tool_name(block), block.get("input"), last
                    )
            return
        thread.conversation = True
        self.where(obj)
        mid = message.get("id")
        taken = thread.blocks.setdefault(mid, set()) if isinstance(mid, str) and mid else None
        for block in content:
            if not isinstance(block, dict):
                continue
            kind = block.get("type")
            key: tuple[str, str] | None
            if kind == "text":
                text = block.get("text")
                if not isinstance(text, str) or not text.strip():
                    continue
                key = ("text", text)
            elif kind == "thinking" or kind == "redacted_thinking":
                thinking = block.get("thinking")
                text = thinking if isinstance(thinking, str) else ""
                data = block.get("data")
                key = (kind, text or (data if isinstance(data, str) else ""))
            elif kind == "tool_use" or kind == "server_tool_use":
                tid = block.get("id")
                text = ""
                key = ("tool_use", tid) if isinstance(tid, str) and tid else None
            else:
                continue
            if taken is not None and key is not None:
                if key in taken:
                    continue  # the same block written twice
                taken.add(key)
            turn = thread.turn()
            if kind == "text":
                turn.steps.append(Step(StepKind.TEXT, text))
            elif kind == "thinking" or kind == "redacted_thinking":
                turn.steps.append(Step(StepKind.THINKING, text))
            else:
                self.tool_use(block, turn, timestamp)

    def tool_name(self, block: dict[str, Any]) -> str:
        name = block.get("name")
        name = name if isinstance(name, str) and name else "?"
        tid = block.get("id")
        if isinstance(tid, str) and tid:
            self.tool_names[tid] = name
        return name

    def tool_use(self, block: dict[str, Any], turn: SessionTurn, timestamp: str | None) -> None:
        name = self.tool_name(block)
        args = block.get("input")
        args = args if isinstance(args, dict) else {}
        self.edits.call(block.get("id"), name, args, turn)
        if name != "AskUserQuestion":
            turn.steps.append(Step(StepKind.TOOL, _fold(name, args)))
            return
        asks = _asks(args)
        places = []
        for ask in asks:
            places.append(len(turn.steps))
            turn.steps.append(Step(StepKind.ASK, ask.text))
            turn.asks.append(ask)
        tid = block.get("id")
        if isinstance(tid, str) and tid:
            self.asks[tid] = (asks, timestamp, turn, places)

    def tool_result(
        self, block: dict[str, Any], obj: dict[str, Any], timestamp: str | None
    ) -> None:
        tid = block.get("tool_use_id")
        tid = tid if isinstance(tid, str) else ""
        content = block.get("content")
        if self.edits.result(tid, block, obj.get("toolUseResult"), _result_text(content)[:400]):
            return
        asked = self.asks.pop(tid, None)
        if asked is not None:
            asks, asked_at, turn, places = asked
            if not _answer(asks, block, _result_text(content), obj.get("toolUseResult")):
                # The tool failed (a malformed call): no dialog reached the user, so
                # these were never questions to them; the call stays as a tool step.
                for ask, place in zip(asks, places, strict=True):
                    turn.asks.remove(ask)
                    failed = one_line(f"AskUserQuestion (failed): {ask.text}")
                    turn.steps[place] = Step(StepKind.TOOL, failed)
                return
            seconds = seconds_between(asked_at, timestamp)
            for ask in asks:
                ask.seconds = seconds
            return
        if self.tool_names.get(tid) in _NO_EVIDENCE:
            return
        run = tests_in(_result_text(content, TAIL))
        if run is not None:
            self.session.tests = run

    # -- the end ------------------------------------------------------------------

    def finish(self) -> Session:
        self.lines.finish()
        self.unknown.report(self.warnings, self.path)
        if self.main.conversation:
            thread = self.main
        elif self.side.conversation:
            thread = self.side  # a sub-agent's own transcript
        else:
            raise SessionError(f"{self.path}: no conversation in it ({self.why_empty()})")
        session = self.session
        session.id = self.session_id(thread)
        session.subagent = thread is self.side
        session.turns = thread.turns
        session.size = self.lines.size
        return session

    def session_id(self, thread: _Thread) -> str:
        sid = thread.session_id
        if thread is self.side and (sid is None or sid.startswith("agent-")):
            # <session-id>/subagents/agent-<id>.jsonl: the folder names the parent
            folder = os.path.dirname(os.path.abspath(self.path))
            if os.path.basename(folder) == "subagents":
                parent = os.path.basename(os.path.dirname(folder))
                if parent:
                    return as_text(parent)
        if sid:
            return sid
        name = as_text(os.path.basename(self.path))  # bytes of no encoding: U+FFFD
        return name[: -len(".jsonl")] if name.endswith(".jsonl") else name

    def why_empty(self) -> str:
        lines = self.lines
        if lines.lines == 0:
            return "the file is empty"
        if self.objects == 0:
            if lines.not_json or lines.cut is not None:
                return f"none of its {lines.lines} lines is a JSON object"
            return "no JSON object in it"
        if self.messages:
            return "only token-usage records, no user or assistant message"
        if set(self.unknown.seen) == {None}:
            return "not a Claude Code transcript: no line has a type or a message"
        return "no user or assistant message in it"


# -- helpers ----------------------------------------------------------------------


def _is_iso(value: str) -> bool:
    return len(value) >= 10 and value[:4].isdigit() and value[4] == "-"


def _fold(name: str, args: dict[str, Any]) -> str:
    """A tool call as one line: its name and the argument that tells most."""
    value: str | None = None
    if name == "TodoWrite":
        todos = args.get("todos")
        if isinstance(todos, list):
            value = f"{len(todos)} todo" + ("" if len(todos) == 1 else "s")
    else:
        for key in _TOOL_ARGS.get(name, _ANY_TOOL_ARGS):
            candidate = args.get(key)
            if isinstance(candidate, str) and candidate.strip():
                value = candidate
                break
        else:
            for candidate in args.values():
                if isinstance(candidate, str) and candidate.strip():
                    value = candidate
                    break
    return one_line(f"{name}: {value}" if value else name)


def _command(text: str) -> str:
    """`/name args` from a `<command-name>` wrapper ("" when it names none)."""
    name = _between(text, "<command-name>", "</command-name>").strip()
    if not name:
        return ""
    if not name.startswith("/"):
        name = "/" + name
    args = _between(text, "<command-args>", "</command-args>").strip()
    return f"{name} {args}" if args else name


def _between(text: str, start: str, end: str) -> str:
    i = text.find(start)
    if i < 0:
        return ""
    i += len(start)
    j = text.find(end, i)
    return text[i:] if j < 0 else text[i:j]


def _without_injected(text: str) -> str:
    """The text without the blocks Claude Code puts before a prompt (`<ide_selection>`,
    `<system-reminder>`, `<task-notification>` ...): tags with "_" or "-" in their name,
    which HTML a person might type does not have."""
    while text.startswith("<"):
        close = text.find(">", 1, 80)
        if close < 0:
            break
        tag = text[1:close]
        if not tag or not ("_" in tag or "-" in tag) or not _tag_name(tag):
            break
        end = text.find(f"</{tag}>", close)
        if end < 0:
            break
        text = text[end + len(tag) + 3 :].strip()
    return text


def _tag_name(tag: str) -> bool:
    return tag[0].isalpha() and all(c.isalnum() or c in "_-" for c in tag)


def _result_text(content: object, tail: int | None = None) -> str:
    """A tool result's text (its last `tail` characters if given)."""
    if isinstance(content, str):
        return content if tail is None else content[-tail:]
    if not isinstance(content, list):
        return ""
    texts: list[str] = []
    length = 0
    for block in reversed(content):
        if isinstance(block, dict) and isinstance(block.get("text"), str):
            texts.append(block["text"])
            length += len(block["text"])
            if tail is not None and length >= tail:
                break
    text = "\n".join(reversed(texts))
    return text if tail is None else text[-tail:]


def _asks(args: dict[str, Any]) -> list[Ask]:
    """The questions of one AskUserQuestion call (a malformed call: one Ask of its text)."""
    asks = []
    questions = args.get("questions")
    if isinstance(questions, list):
        for question in questions:
            if not isinstance(question, dict):
                continue
            text = question.get("question")
            header = question.get("header")
            asks.append(
                Ask(
                    text=text if isinstance(text, str) else "",
                    options=option_labels(question.get("options")),
                    header=header if isinstance(header, str) and header else None,
                    multi_select=question.get("multiSelect") is True,
                )
            )
    if not asks:
        text = args.get("question")
        asks.append(Ask(text=text if isinstance(text, str) else ""))
    return asks


def _answer(asks: list[Ask], block: dict[str, Any], text: str, result: object) -> bool:
    """Fill the asks from their tool result: answers, or a dismissal (with the answers
    given before it). False for a tool error: the dialog never reached the user."""
    if block.get("is_error") is True:
        if not any(sign in text for sign in _DISMISSED):
            return False
        # "The user wants to clarify these questions": answers given before it are
        # listed under their question ("- "Q"\n  Answer: A"); the rest were not answered.
        given = {
            " ".join(m.group(1).split()): m.group(2).strip() for m in _CLARIFIED.finditer(text)
        }
        for ask in asks:
            answer = given.get(" ".join(ask.text.split()))
            if answer:
                ask.answer = answer
            else:
                ask.dismissed = True
        return True
    answers = result.get("answers") if isinstance(result, dict) else None
    if not isinstance(answers, dict):
        answers = {}
    by_space = {" ".join(str(k).split()): v for k, v in answers.items()}
    from_text: dict[str, str] | None = None
    for ask in asks:
        value = answers.get(ask.text)
        if value is None:
            value = by_space.get(" ".join(ask.text.split()))
        if value is None:
            if from_text is None:
                from_text = _answers_in_text(text, [a.text for a in asks])
            value = from_text.get(ask.text)
        ask.answer = _answer_value(value)
    return True


def _answer_value(value: object) -> str | None:
    """An answer as text: a label or the text typed, a list of labels joined by ", ", a
    number as written; an object, a boolean, NaN or null is no answer of the user's."""
    if isinstance(value, list):
        return ", ".join(text for text in map(_answer_text, value) if text) or None
    return _answer_text(value)


def _answer_text(value: object) -> str | None:
    if isinstance(value, str):
        return value or None
    return number_text(value)


def _answers_in_text(text: str, questions: list[str]) -> dict[str, str]:
    """Answers from `User has answered your questions: "<q>"="<a>", ... You can now...`."""
    found: dict[str, str] = {}
    for question in questions:
        if not question:
            continue
        marker = f'"{question}"="'
        start = text.find(marker)
        if start < 0:
            continue
        start += len(marker)
        end = -1
        for other in questions:
            if other and other != question:
                j = text.find(f'", "{other}"="', start)
                if j >= 0 and (end < 0 or j < end):
                    end = j
        if end < 0:
            end = text.find(_ANSWERS_END, start)
        if end < 0:
            end = text.rfind('"')
        if end >= start:
            found[question] = text[start:end]
    return found
