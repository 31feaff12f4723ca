"""The edits of files in each agent's transcript: which tool calls changed a file, how,
and whether they took effect (docs/sessions.md, "Changes").

The readers call in here where they see a tool call and where they see its result; the
edit's diff is made when the result says it took effect (core/sessions/changes.py), so
a file's whole text is held only that long. A call that failed (a tool error, a
rejection, a cancelled call, a patch that did not apply) changed nothing; a call whose
result never came (the transcript ends first) is not counted either.

- **Claude Code**: `Edit` (old_string, new_string, replace_all), `MultiEdit` (edits),
  `Write` (content) and `NotebookEdit` (new_source, edit_mode). Their result's
  `toolUseResult` carries `structuredPatch` (the hunks Claude Code applied, with line
  numbers), `originalFile` (the text before) and, for Write, `type` create or update;
  older versions carry less, and the call's own arguments are read then.
- **Codex CLI**: `apply_patch`, however the rollout carries it (patches.py).
- **Gemini CLI**: `replace` (also `edit`, `smart_edit`) and `write_file`; a finished
  call's `resultDisplay` is a FileDiff with the file's whole text before and after
  (`originalContent`, `newContent`, `isNewFile`); `status` error or cancelled is a
  failure.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from ...core.sessions.changes import (
    UNKNOWN_BEFORE,
    EditKind,
    Piece,
    SessionEdit,
    diff_edit,
)
from ...core.sessions.model import SessionTurn

Json = dict[str, Any]

_MAX_LINE_NUMBER = 10**9  # a hunk's line number past this is no real file's


def text_of(value: object) -> str | None:
    return value if isinstance(value, str) else None


def number(value: object) -> int | None:
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= _MAX_LINE_NUMBER:
        return value
    return None


def done(edit: SessionEdit | None) -> list[SessionEdit]:
    return [edit] if edit is not None else []


@dataclass
class _Pending:
    name: str
    args: Any
    turn: SessionTurn


# -- Claude Code --------------------------------------------------------------------

CLAUDE_EDIT_TOOLS = frozenset({"Edit", "MultiEdit", "Write", "NotebookEdit"})
_CLAUDE_ERRORS = ("<tool_use_error>", "Error:", "error:")


@dataclass
class ClaudeEdits:
    """Claude Code's edit calls, waiting for their `tool_result`."""

    pending: dict[str, _Pending] = field(default_factory=dict)

    def call(self, tool_id: object, name: str, args: object, turn: SessionTurn | None) -> None:
        if name in CLAUDE_EDIT_TOOLS and isinstance(tool_id, str) and tool_id and turn:
            self.pending[tool_id] = _Pending(name, args if isinstance(args, dict) else {}, turn)

    def result(self, tool_id: str, block: Json, result: object, text: str) -> bool:
        """Take the result of call `tool_id`; False when it is no edit call's."""
        pending = self.pending.pop(tool_id, None)
        if pending is None:
            return False
        if (
            block.get("is_error") is True
            or (isinstance(result, str) and result.startswith("Error"))
            or text.lstrip().startswith(_CLAUDE_ERRORS)
            or (
                isinstance(result, dict)
                and isinstance(result.get("error"), str)
                and result["error"]
            )
        ):
            return True  # it changed nothing
        pending.turn.edits.extend(claude_edits(pending.name, pending.args, result, text))
        return True


def _patch_pieces(patch: object) -> list[Piece] | None:
    """The hunks of a `structuredPatch` as pieces (None when it is not one)."""
    if not isinstance(patch, list) or not patch:
        return None
    pieces = []
    for hunk in patch:
        if not isinstance(hunk, dict) or not isinstance(hunk.get("lines"), list):
            return None
        old: list[str] = []
        new: list[str] = []
        for line in hunk["lines"]:
            if not isinstance(line, str):
                return None
            mark, body = line[:1], line[1:]
            if mark in (" ", "-"):
                old.append(body)
            if mark in (" ", "+"):
                new.append(body)
        pieces.append(
            Piece(
                "\n".join(old) + "\n" if old else "",
                "\n".join(new) + "\n" if new else "",
                number(hunk.get("oldStart")),
                number(hunk.get("newStart")),
            )
        )
    return pieces


def _replaced(original: str, changes: list[tuple[str, str, bool]]) -> str | None:
    """`original` with each (old, new, all) replacement made in turn; None when an old
    string is not in it (the text the tool saw was another)."""
    text = original
    for old, new, every in changes:
        if not old or old not in text:
            return None
        text = text.replace(old, new) if every else text.replace(old, new, 1)
    return text


def _replacements(name: str, args: Json, details: Json) -> list[tuple[str, str, bool]]:
    """The (old, new, every) replacements an Edit or MultiEdit made: as its result says
    (what the user may have changed in the proposal included), else as it asked."""
    if name == "MultiEdit":
        items = details.get("edits")
        items = items if isinstance(items, list) else args.get("edits")
    elif isinstance(details.get("oldString"), str) and isinstance(details.get("newString"), str):
        items = [
            {
                "old_string": details["oldString"],
                "new_string": details["newString"],
                "replace_all": details.get("replaceAll"),
            }
        ]
    else:
        items = [args]
    found = []
    for item in items if isinstance(items, list) else []:
        if isinstance(item, dict):
            old, new = text_of(item.get("old_string")), text_of(item.get("new_string"))
            if old is not None and new is not None:
                found.append((old, new, item.get("replace_all") is True))
    return found


def claude_edits(name: str, args: Json, result: object, text: str) -> list[SessionEdit]:
    """The edit a Claude Code edit call made, from its arguments and `toolUseResult`."""
    details: Json = result if isinstance(result, dict) else {}
    if name == "NotebookEdit":
        return done(_notebook_edit(args, details))
    path = text_of(args.get("file_path")) or text_of(details.get("filePath"))
    if not path:
        return []
    pieces = _patch_pieces(details.get("structuredPatch"))
    original = details.get("originalFile", details.get("originalFileContents"))
    if name == "Write":
        # What was written: the result's text (the user may have changed the proposal).
        content = text_of(details.get("content"))
        if content is None:
            content = text_of(args.get("content")) or ""
        created = details.get("type") == "create" or (
            not details and "created" in text[:200].lower()
        )
        if created:
            return done(diff_edit(path, [Piece("", content)], EditKind.CREATE))
        if isinstance(original, str):
            return done(diff_edit(path, [Piece(original, content, 1, 1)]))
        if pieces is not None:
            return done(diff_edit(path, pieces))
        if details.get("type") == "update" and details.get("structuredPatch") == []:
            return []  # written as it was
        return done(diff_edit(path, [Piece("", content)], note=UNKNOWN_BEFORE))
    changes = _replacements(name, args, details)
    if isinstance(original, str):
        after = _replaced(original, changes)
        if after is not None:
            return done(diff_edit(path, [Piece(original, after, 1, 1)]))
    if pieces is not None:
        return done(diff_edit(path, pieces))
    return done(diff_edit(path, [Piece(old, new) for old, new, _ in changes]))


def _cell_source(notebook: object, cell_id: str | None) -> str | None:
    """A cell's text in a notebook's JSON, found by its id (or `cell-N`, its index)."""
    if not isinstance(notebook, str) or cell_id is None:
        return None
    try:
        data = json.loads(notebook)
    except (ValueError, RecursionError):
        return None
    cells = data.get("cells") if isinstance(data, dict) else None
    if not isinstance(cells, list):
        return None
    found = next((c for c in cells if isinstance(c, dict) and c.get("id") == cell_id), None)
    if found is None and re.fullmatch(r"cell-\d{1,9}", cell_id):
        index = int(cell_id[5:])
        found = cells[index] if index < len(cells) and isinstance(cells[index], dict) else None
    source = found.get("source") if found is not None else None
    if isinstance(source, list):
        return "".join(part for part in source if isinstance(part, str))
    return text_of(source)


def _notebook_edit(args: Json, details: Json) -> SessionEdit | None:
    path = text_of(args.get("notebook_path")) or text_of(details.get("notebook_path"))
    if not path:
        return None
    mode = text_of(args.get("edit_mode")) or "replace"
    new = text_of(args.get("new_source")) or ""
    cell = text_of(args.get("cell_id")) or text_of(details.get("cell_id"))
    before = _cell_source(details.get("original_file"), cell)
    if mode == "insert":
        return diff_edit(path, [Piece("", new)])
    if mode == "delete":
        return diff_edit(path, [Piece(before or "", "")], note=None if before else UNKNOWN_CELL)
    if before is None:
        return diff_edit(path, [Piece("", new)], note=UNKNOWN_BEFORE)
    return diff_edit(path, [Piece(before, new)])


UNKNOWN_CELL = "the deleted cell's text is not in the transcript"


# -- Gemini CLI ---------------------------------------------------------------------

GEMINI_EDIT_TOOLS = frozenset({"replace", "edit", "smart_edit", "write_file"})
_GEMINI_DONE = frozenset({"success"})
_GEMINI_FAILED = frozenset({"error", "cancelled"})


def _responses(result: object) -> Iterator[object]:
    """The responses of a tool result: functionResponse parts, or one response."""
    for part in result if isinstance(result, list) else [result]:
        if isinstance(part, dict) and isinstance(part.get("functionResponse"), dict):
            yield part["functionResponse"].get("response")
        else:
            yield part


def _response_error(result: object) -> bool:
    """Whether a tool result holds an error."""
    return any(isinstance(r, dict) and r.get("error") for r in _responses(result))


def _response_output(result: object) -> str:
    """A tool result's first output text ("" without one)."""
    for response in _responses(result):
        if isinstance(response, dict) and isinstance(response.get("output"), str):
            return str(response["output"])
    return ""


def gemini_edits(name: str, args: object, record: Json) -> list[SessionEdit]:
    """The edits of a Gemini CLI edit call, from its ToolCallRecord (in a saved history,
    its call and response): none when it failed or has not finished."""
    status = record.get("status")
    status = status if isinstance(status, str) or status is None else "?"
    result = record.get("result")
    if status in _GEMINI_FAILED or _response_error(result):
        return []
    if (status is not None and status not in _GEMINI_DONE) or (status is None and result is None):
        return []
    arguments: Json = args if isinstance(args, dict) else {}
    display = record.get("resultDisplay")
    if isinstance(display, dict) and isinstance(display.get("newContent"), str):
        path = text_of(display.get("filePath")) or text_of(arguments.get("file_path"))
        before = display.get("originalContent")
        after = display["newContent"]
        if not path:
            return []
        if display.get("isNewFile") is True or before is None:
            return done(diff_edit(path, [Piece("", after)], EditKind.CREATE))
        if isinstance(before, str):
            return done(diff_edit(path, [Piece(before, after, 1, 1)]))
    path = text_of(arguments.get("file_path")) or text_of(arguments.get("absolute_path"))
    if not path:
        return []
    said = _response_output(result).lower()
    if name == "write_file":
        content = text_of(arguments.get("content")) or ""
        if "created" in said and "new file" in said:
            return done(diff_edit(path, [Piece("", content)], EditKind.CREATE))
        return done(diff_edit(path, [Piece("", content)], note=UNKNOWN_BEFORE))
    old, new = text_of(arguments.get("old_string")), text_of(arguments.get("new_string"))
    if old is None or new is None:
        return []
    if old == "" and "created" in said:
        return done(diff_edit(path, [Piece("", new)], EditKind.CREATE))
    return done(diff_edit(path, [Piece(old, new)]))


@dataclass
class GeminiCalls:
    """Edit calls of a saved history (`/chat save`), whose responses come in the next
    message: matched by call id, else the oldest open call of that tool."""

    pending: list[tuple[str | None, str, object]] = field(default_factory=list)

    def call(self, call_id: str | None, name: str, args: object) -> None:
        if name in GEMINI_EDIT_TOOLS:
            self.pending.append((call_id, name, args))

    def response(
        self, call_id: str | None, name: str | None, response: object
    ) -> list[SessionEdit]:
        """The edits of the call `response` answers (none when it failed or is no edit's)."""
        match = next((item for item in self.pending if call_id and item[0] == call_id), None)
        if match is None:
            match = next(
                (item for item in self.pending if item[1] == name and not (item[0] and call_id)),
                None,
            )
        if match is None:
            return []
        self.pending.remove(match)
        return gemini_edits(match[1], match[2], {"result": response})
