"""What an agent changed in its files: each edit's unified diff and its lines added and
removed, from the text it replaced and the text it wrote (docs/sessions.md, "Changes").

A reader hands over an edit as pieces: the old and new text of the whole file, or of the
stretches it touched, with their first line numbers when the transcript gives them.
`diff_edit` compares them line by line with difflib and writes the unified diff (three
lines of context), bounded; `agent_edits` numbers a session's edits by turn, shows each
path relative to the folder the session ran in, and heads each diff with it. Pure: no I/O.
"""

from __future__ import annotations

import difflib
import ntpath
import posixpath
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import TYPE_CHECKING

from ..model import Edit

if TYPE_CHECKING:
    from .model import Session

CONTEXT = 3  # unchanged lines shown around a change, as `diff -u`
MAX_EDIT_DIFF = 200_000  # characters kept of one edit's diff; the rest is cut with a note
MAX_AGENT_DIFF = 20_000_000  # characters of diffs kept for one agent; then counts only
# Changed lines past which a stretch is not matched line by line (difflib's matching can
# take quadratic time): it counts as all removed and all added.
MAX_MATCHED_LINES = 20_000
# Texts of fewer lines are compared whole, exactly as difflib.unified_diff does; longer
# ones first lose their common start and end (the same diff, found much faster).
_WHOLE = 2_000

UNKNOWN_BEFORE = "the file's earlier text is not in the transcript: every line counts as added"
_WINDOWS = re.compile(r"^[A-Za-z]:[\\/]|^\\\\")


class EditKind(StrEnum):
    CREATE = "create"  # a new file: every line added
    UPDATE = "update"
    DELETE = "delete"  # the file removed: every line it had removed


@dataclass(frozen=True)
class Piece:
    """A stretch of a file before and after an edit: the whole file, or the lines one
    change touched. `old_start` and `new_start` are the 1-based numbers of its first
    lines in the file, None when the transcript does not say (numbered from 1 then)."""

    old: str
    new: str
    old_start: int | None = None
    new_start: int | None = None


@dataclass(frozen=True)
class SessionEdit:
    """One edit of one file as a reader saw it: the path as the tool named it, the lines
    added and removed, and the diff's hunks (from the first `@@`), bounded."""

    path: str
    kind: EditKind
    added: int
    removed: int
    hunks: str
    moved_from: str | None = None


@dataclass(frozen=True)
class FileChange:
    """What an agent did to one file over all its edits: lines added and removed."""

    path: str
    added: int
    removed: int
    edits: int = 1


@dataclass
class _Output:
    """A diff being written, bounded to `limit` characters; lines past it are counted."""

    limit: int
    parts: list[str] = field(default_factory=list)
    size: int = 0
    cut: int = 0  # lines not kept

    def add(self, line: str) -> None:
        if self.cut or self.size + len(line) > self.limit:
            self.cut += 1
            return
        self.parts.append(line)
        self.size += len(line)

    def text(self) -> str:
        if self.cut:
            lines = "line" if self.cut == 1 else "lines"
            self.parts.append(
                f"\\ diff cut here: {self.cut:,} more {lines} not kept"
                " (the counts are the whole edit's)\n"
            )
        return "".join(self.parts)


def lines(text: str) -> list[str]:
    """A text's lines, split at newlines only (as diff does); a last newline ends the
    last line, it does not start another."""
    if not text:
        return []
    parts = text.split("\n")
    if parts[-1] == "":
        parts.pop()
    return parts


Opcode = tuple[str, int, int, int, int]


def _opcodes(old: list[str], new: list[str]) -> list[Opcode]:
    """difflib's opcodes from `old` to `new`. Long texts lose their common start and end
    first; a changed stretch too long to match line by line is one replacement."""
    if len(old) + len(new) <= _WHOLE:
        whole: list[Opcode] = list(difflib.SequenceMatcher(None, old, new).get_opcodes())
        return whole
    same = min(len(old), len(new))
    start = 0
    while start < same and old[start] == new[start]:
        start += 1
    end = 0
    while end < same - start and old[-1 - end] == new[-1 - end]:
        end += 1
    codes: list[Opcode] = []
    if start:
        codes.append(("equal", 0, start, 0, start))
    old_end, new_end = len(old) - end, len(new) - end
    middle_old, middle_new = old[start:old_end], new[start:new_end]
    if not middle_new and middle_old:
        codes.append(("delete", start, old_end, start, start))
    elif not middle_old and middle_new:
        codes.append(("insert", start, start, start, new_end))
    elif len(middle_old) + len(middle_new) > MAX_MATCHED_LINES:
        codes.append(("replace", start, old_end, start, new_end))
    elif middle_old:
        matcher = difflib.SequenceMatcher(None, middle_old, middle_new)
        for tag, i1, i2, j1, j2 in matcher.get_opcodes():
            codes.append((tag, i1 + start, i2 + start, j1 + start, j2 + start))
    if end:
        codes.append(("equal", old_end, len(old), new_end, len(new)))
    return codes


def _groups(codes: list[Opcode]) -> Iterator[list[Opcode]]:
    """The opcodes in hunks: each change with CONTEXT unchanged lines around it, changes
    closer than twice that in one hunk (difflib's grouping)."""
    if not any(tag != "equal" for tag, *_ in codes):
        return
    codes = list(codes)
    tag, i1, i2, j1, j2 = codes[0]
    if tag == "equal":
        codes[0] = (tag, max(i1, i2 - CONTEXT), i2, max(j1, j2 - CONTEXT), j2)
    tag, i1, i2, j1, j2 = codes[-1]
    if tag == "equal":
        codes[-1] = (tag, i1, min(i2, i1 + CONTEXT), j1, min(j2, j1 + CONTEXT))
    group: list[Opcode] = []
    for tag, i1, i2, j1, j2 in codes:
        if tag == "equal" and i2 - i1 > 2 * CONTEXT:
            group.append((tag, i1, min(i2, i1 + CONTEXT), j1, min(j2, j1 + CONTEXT)))
            yield group
            group = []
            i1, j1 = max(i1, i2 - CONTEXT), max(j1, j2 - CONTEXT)
        group.append((tag, i1, i2, j1, j2))
    if group and not (len(group) == 1 and group[0][0] == "equal"):
        yield group


def _range(start: int, length: int) -> str:
    """A hunk's line range as `diff -u` writes it (0-based `start`)."""
    if length == 1:
        return str(start + 1)
    return f"{start if length == 0 else start + 1},{length}"


def diff_edit(
    path: str,
    pieces: Sequence[Piece],
    kind: EditKind = EditKind.UPDATE,
    moved_from: str | None = None,
    note: str | None = None,
    limit: int = MAX_EDIT_DIFF,
) -> SessionEdit | None:
    """The edit of `path` that turned each piece's old text into its new text; None when
    it changes nothing (an update that leaves the text as it was). `note`, when given,
    is said in the diff (a `\\` line, which no diff line count reads)."""
    out = _Output(limit)
    if note:
        out.add(f"\\ {note}\n")
    added = removed = 0
    shift = 0  # how many lines the pieces before this one added, less those removed
    for piece in pieces:
        old, new = lines(piece.old), lines(piece.new)
        old_base = max(piece.old_start - 1, 0) if piece.old_start is not None else 0
        if piece.new_start is not None:
            new_base = max(piece.new_start - 1, 0)
        else:
            new_base = old_base + shift if piece.old_start is not None else 0
        codes = _opcodes(old, new)
        for tag, i1, i2, j1, j2 in codes:
            if tag in ("replace", "delete"):
                removed += i2 - i1
            if tag in ("replace", "insert"):
                added += j2 - j1
        shift += len(new) - len(old)
        for group in _groups(codes):
            first, last = group[0], group[-1]
            out.add(
                f"@@ -{_range(old_base + first[1], last[2] - first[1])}"
                f" +{_range(new_base + first[3], last[4] - first[3])} @@\n"
            )
            for tag, i1, i2, j1, j2 in group:
                if tag == "equal":
                    for line in old[i1:i2]:
                        out.add(f" {line}\n")
                    continue
                for line in old[i1:i2]:
                    out.add(f"-{line}\n")
                for line in new[j1:j2]:
                    out.add(f"+{line}\n")
    if kind is EditKind.UPDATE and not added and not removed and not note and moved_from is None:
        return None
    return SessionEdit(path, kind, added, removed, out.text(), moved_from)


def relative(path: str, cwd: str | None) -> str:
    """`path` relative to the folder `cwd` when it lies inside it, else as given (a
    relative path is taken as relative to `cwd` already)."""
    if not path or not cwd:
        return path
    windows = _WINDOWS.match(cwd) is not None
    module = ntpath if windows else posixpath
    if not module.isabs(path):
        normal = module.normpath(path)
        return normal if normal not in (".", "") and not normal.startswith("..") else path
    root = module.normpath(cwd)
    full = module.normpath(path)
    separator = "\\" if windows else "/"
    prefix = root if root.endswith(separator) else root + separator
    inside = full.lower().startswith(prefix.lower()) if windows else full.startswith(prefix)
    return full[len(prefix) :] if inside and len(full) > len(prefix) else path


def _header_path(path: str, side: str) -> str:
    """A path as a diff header line holds it: on one line, `a/` or `b/` before a
    relative one (an absolute path stays as it is)."""
    shown = path.replace("\r", "\\r").replace("\n", "\\n")
    return shown if shown.startswith("/") or _WINDOWS.match(shown) else f"{side}/{shown}"


def headed(edit: SessionEdit, path: str, moved_from: str | None) -> str:
    """The edit's diff with its `--- a/OLD` and `+++ b/NEW` header lines."""
    old = _header_path(moved_from if moved_from is not None else path, "a")
    return f"--- {old}\n+++ {_header_path(path, 'b')}\n{edit.hunks}"


def agent_edits(session: Session, limit: int = MAX_AGENT_DIFF) -> tuple[Edit, ...]:
    """A session's edits in order, numbered by turn, with paths relative to its folder.

    Past `limit` characters of diffs in all, an edit keeps its counts and a one-line
    note in place of its diff."""
    edits: list[Edit] = []
    left = limit
    for number, turn in enumerate(session.turns, start=1):
        for edit in turn.edits:
            path = relative(edit.path, session.cwd)
            moved = relative(edit.moved_from, session.cwd) if edit.moved_from else None
            diff = headed(edit, path, moved)
            if len(diff) > left:
                kept = SessionEdit(
                    edit.path,
                    edit.kind,
                    edit.added,
                    edit.removed,
                    "\\ diff not kept: this agent's diffs passed"
                    f" {limit:,} characters (the counts are kept)\n",
                )
                diff = headed(kept, path, moved)
            left = max(left - len(diff), 0)
            edits.append(Edit(number, path, edit.added, edit.removed, diff))
    return tuple(edits)


def file_changes(edits: Iterable[Edit]) -> list[FileChange]:
    """Lines added and removed per file over `edits`, files in the order first touched."""
    totals: dict[str, FileChange] = {}
    for edit in edits:
        found = totals.get(edit.path)
        if found is None:
            totals[edit.path] = FileChange(edit.path, edit.added, edit.removed)
        else:
            totals[edit.path] = FileChange(
                edit.path, found.added + edit.added, found.removed + edit.removed, found.edits + 1
            )
    return list(totals.values())


def _time(value: str | None) -> datetime | None:
    if not value:
        return None
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return moment if moment.tzinfo is not None else None


def adopt_edits(main: Session, part: Session) -> None:
    """A sub-agent's edits (from its own transcript) into its parent session: in the
    turn the parent was in when the sub-agent started (the last one, when unknown)."""
    edits = [edit for turn in part.turns for edit in turn.edits]
    if not edits or not main.turns:
        return
    target = main.turns[-1]
    started = _time(part.started)
    if started is not None:
        for turn in main.turns:
            moment = _time(turn.timestamp)
            if moment is not None and moment <= started:
                target = turn
    target.edits.extend(edits)
