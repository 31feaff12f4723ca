"""Codex CLI's edits of files: its apply_patch calls (docs/sessions.md, "Changes").

A patch comes as a `custom_tool_call` (the patch is its input), a `function_call`
(`{"input": patch}`), or a shell command that runs apply_patch (`["apply_patch", patch]`,
or `bash -lc "apply_patch <<'EOF' ... EOF"`, maybe after `cd DIR &&`), the forms
codex-rs/apply-patch/src/invocation.rs accepts. The patch is `*** Begin Patch`, then
`*** Add File:` / `*** Update File:` (with an optional `*** Move to:`) / `*** Delete
File:` sections, then `*** End Patch` (codex-rs/apply-patch/src/parser.rs). The call's
output, or the `patch_apply_end` event's `success`, says whether it applied; the event's
`changes` stand in for a patch the rollout does not hold (a patch applied from a script).
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field

from ...core.sessions.changes import EditKind, Piece, SessionEdit, diff_edit, lines
from ...core.sessions.model import SessionTurn
from .edits import Json, done, number, text_of

_PATCH_TOOLS = frozenset({"apply_patch", "applypatch"})
_SHELLS = frozenset({"bash", "sh", "zsh", "dash"})
_HEREDOC = re.compile(
    r"""\A\s*(?:cd\s+(?P<cd>'[^']*'|"[^"]*"|[^\s;&|'"]+)\s*&&\s*)?"""
    r"""(?:apply_patch|applypatch)\s*<<-?\s*(?P<quote>['"]?)(?P<tag>[A-Za-z_][\w]*)(?P=quote)"""
    r"""[^\n]*\n(?P<body>.*?)\n[ \t]*(?P=tag)\s*\Z""",
    re.DOTALL,
)
_EXIT_CODE = re.compile(r"\A\s*Exit code: (-?\d{1,9})")
_PATCH_FAILURES = (
    "apply_patch verification failed",
    "patch rejected",
    "failed",
    "error",
    "invalid patch",
    "aborted",
    "rejected",
    "exec command rejected",
    "execution error",
)
UNKNOWN_DELETED = "the deleted file's text is not in the transcript"


@dataclass
class PatchFile:
    """One file section of an apply_patch patch."""

    path: str
    kind: EditKind
    pieces: list[Piece] = field(default_factory=list)
    moved_to: str | None = None


def parse_patch(text: str) -> list[PatchFile] | None:
    """The file sections of an apply_patch patch; None when it is not one (no `*** Begin
    Patch` line first). Read as leniently as Codex does: spaces around the markers, a
    patch wrapped in `<<'EOF'` ... `EOF`."""
    rows = [row.rstrip("\r") for row in text.strip().split("\n")]
    if (
        len(rows) >= 4
        and rows[0].strip() in ("<<EOF", "<<'EOF'", '<<"EOF"')
        and rows[-1].endswith("EOF")
    ):
        rows = rows[1:-1]
    if not rows or rows[0].strip() != "*** Begin Patch":
        return None
    body = rows[1:-1] if rows[-1].strip() == "*** End Patch" else rows[1:]
    files: list[PatchFile] = []
    index = 0
    while index < len(body):
        head = body[index].strip()
        index += 1
        if head.startswith("*** Add File: "):
            added = []
            while index < len(body) and body[index].startswith("+"):
                added.append(body[index][1:])
                index += 1
            content = "".join(f"{row}\n" for row in added)
            files.append(PatchFile(head[14:].strip(), EditKind.CREATE, [Piece("", content)]))
        elif head.startswith("*** Delete File: "):
            files.append(PatchFile(head[17:].strip(), EditKind.DELETE))
        elif head.startswith("*** Update File: "):
            section = PatchFile(head[17:].strip(), EditKind.UPDATE)
            if index < len(body) and body[index].startswith("*** Move to: "):
                section.moved_to = body[index][13:].strip()
                index += 1
            index = _chunks(body, index, section.pieces)
            files.append(section)
        # any other line between sections is passed over, as nothing a patch changes
    return files


def _chunks(body: list[str], index: int, pieces: list[Piece]) -> int:
    """The chunks of an Update File section from `index` on; where the section ends."""
    old: list[str] = []
    new: list[str] = []

    def close() -> None:
        if old or new:
            pieces.append(Piece("".join(f"{r}\n" for r in old), "".join(f"{r}\n" for r in new)))
        old.clear()
        new.clear()

    while index < len(body):
        row = body[index]
        if row.startswith("*"):
            if row.strip() == "*** End of File":
                index += 1
                continue
            break
        index += 1
        if row.startswith("@@"):
            close()
        elif row.startswith("+"):
            new.append(row[1:])
        elif row.startswith("-"):
            old.append(row[1:])
        elif row.startswith(" ") or row == "":
            old.append(row[1:])
            new.append(row[1:])
    close()
    return index


def patch_edits(patch: str, workdir: str | None = None) -> list[SessionEdit] | None:
    """The edits of an apply_patch patch (None when it is not one); relative paths
    are taken in `workdir` (a `cd DIR &&` before the command) when given."""
    files = parse_patch(patch)
    if files is None:
        return None
    edits: list[SessionEdit] = []
    for section in files:
        path = _in(workdir, section.path)
        if section.kind is EditKind.DELETE:
            edits.extend(done(diff_edit(path, [], EditKind.DELETE, note=UNKNOWN_DELETED)))
            continue
        target = _in(workdir, section.moved_to) if section.moved_to else path
        moved = path if section.moved_to else None
        edits.extend(done(diff_edit(target, section.pieces, section.kind, moved_from=moved)))
    return edits


def _in(workdir: str | None, path: str) -> str:
    """`path` taken in the folder `workdir` (an absolute path stays as it is)."""
    if not workdir or path.startswith("/") or re.match(r"[A-Za-z]:[\\/]", path):
        return path
    return f"{workdir.rstrip('/')}/{path}"


def patch_in_command(command: object) -> tuple[str, str | None] | None:
    """(the patch, the folder it runs in) when a shell command runs apply_patch: `[
    "apply_patch", PATCH]`, or a shell script `apply_patch <<'EOF' ... EOF`, maybe after
    `cd DIR &&`; None for any other command."""
    script: str | None = None
    if isinstance(command, list):
        words = [word for word in command if isinstance(word, str)]
        if len(words) != len(command):
            return None
        if len(words) == 2 and os.path.basename(words[0]) in _PATCH_TOOLS:
            return words[1], None
        if (
            len(words) == 3
            and os.path.basename(words[0]) in _SHELLS
            and words[1] in ("-lc", "-c", "-l")
        ):
            script = words[2]
    elif isinstance(command, str):
        script = command
    if script is None:
        return None
    match = _HEREDOC.match(script)
    if match is None:
        return None
    folder = match.group("cd")
    if folder is not None and folder[:1] in "'\"":
        folder = folder[1:-1]
    return match.group("body"), folder


def patch_failed(output: object) -> bool:
    """Whether an apply_patch call's output says it did not apply: a non-zero exit
    code, or a message of failure or rejection."""
    text = ""
    if isinstance(output, str):
        text = output
        if text.lstrip().startswith("{"):
            try:
                output = json.loads(text)
            except (ValueError, RecursionError):
                output = None
    if isinstance(output, dict):
        metadata = output.get("metadata")
        code = metadata.get("exit_code") if isinstance(metadata, dict) else None
        if isinstance(code, int) and not isinstance(code, bool):
            return code != 0
        inner = output.get("output", output.get("content"))
        text = inner if isinstance(inner, str) else ""
    elif isinstance(output, list):
        text = "\n".join(
            part["text"]
            for part in output
            if isinstance(part, dict) and isinstance(part.get("text"), str)
        )
    match = _EXIT_CODE.match(text)
    if match:
        return int(match.group(1)) != 0
    return text.strip()[:200].lower().startswith(_PATCH_FAILURES)


def _change_pieces(change: Json) -> tuple[EditKind, list[Piece], str | None] | None:
    """A `patch_apply_end` change: `{"type": "add", "content"}`, `{"type": "delete",
    "content"}`, `{"type": "update", "unified_diff", "move_path"}`, or the older
    `{"add": {...}}` shape."""
    kind = change.get("type")
    if not isinstance(kind, str):
        for name in ("add", "delete", "update"):
            if isinstance(change.get(name), dict):
                kind, change = name, change[name]
                break
        else:
            return None
    content = text_of(change.get("content"))
    unified = text_of(change.get("unified_diff"))
    moved = text_of(change.get("move_path"))
    if kind == "add":
        if content is None and unified is not None:
            return EditKind.CREATE, unified_pieces(unified), None
        return EditKind.CREATE, [Piece("", content or "")], None
    if kind == "delete":
        return EditKind.DELETE, [Piece(content or "", "")], None
    if kind == "update" and unified is not None:
        return EditKind.UPDATE, unified_pieces(unified), moved
    return None


_HUNK = re.compile(r"@@ -(\d{1,10})(?:,\d{1,10})? \+(\d{1,10})(?:,\d{1,10})? @@")


def unified_pieces(diff: str) -> list[Piece]:
    """The hunks of a unified diff as pieces, with their line numbers."""
    pieces: list[Piece] = []
    old: list[str] = []
    new: list[str] = []
    starts: tuple[int | None, int | None] = (None, None)

    def close() -> None:
        if old or new:
            pieces.append(
                Piece(
                    "".join(f"{r}\n" for r in old),
                    "".join(f"{r}\n" for r in new),
                    *starts,
                )
            )
        old.clear()
        new.clear()

    for row in lines(diff):
        match = _HUNK.match(row)
        if match:
            close()
            starts = (number(int(match.group(1))), number(int(match.group(2))))
        elif row.startswith(("--- ", "+++ ", "\\")):
            continue
        elif row.startswith("+"):
            new.append(row[1:])
        elif row.startswith("-"):
            old.append(row[1:])
        elif row.startswith(" "):
            old.append(row[1:])
            new.append(row[1:])
    close()
    return pieces


def event_edits(changes: object) -> list[SessionEdit]:
    """The edits a `patch_apply_end` event lists, in the order given."""
    edits: list[SessionEdit] = []
    if not isinstance(changes, dict):
        return edits
    for path, change in changes.items():
        found = _change_pieces(change) if isinstance(change, dict) else None
        if found is None:
            continue
        kind, pieces, moved = found
        target, origin = (moved, path) if moved else (path, None)
        edits.extend(done(diff_edit(target, pieces, kind, moved_from=origin)))
    return edits


@dataclass
class CodexEdits:
    """Codex's apply_patch calls, waiting for their output or `patch_apply_end`."""

    pending: dict[str, tuple[list[SessionEdit] | None, SessionTurn]] = field(default_factory=dict)
    decided: set[str] = field(default_factory=set)

    def call(self, kind: str, item: Json, name: str, turn: SessionTurn) -> None:
        """A tool call: remembered when it applies a patch."""
        call_id = text_of(item.get("call_id")) or text_of(item.get("id"))
        if not call_id:
            return
        found = _call_patch(kind, item, name)
        if found is not None:
            patch, workdir = found
            self.pending[call_id] = (patch_edits(patch, workdir), turn)

    def output(self, call_id: str | None, output: object) -> None:
        """A call's output: the patch applied unless it says otherwise."""
        if call_id is None or call_id not in self.pending or call_id in self.decided:
            return
        self.decided.add(call_id)
        edits, turn = self.pending.pop(call_id)
        if edits is not None and not patch_failed(output):
            turn.edits.extend(edits)

    def event(self, event: Json, turn: SessionTurn) -> None:
        """A `patch_apply_end` event: whether the call's patch applied, and what it did."""
        call_id = text_of(event.get("call_id"))
        if call_id is not None:
            if call_id in self.decided:
                return
            self.decided.add(call_id)
        edits, at = self.pending.pop(call_id, (None, turn)) if call_id else (None, turn)
        if event.get("success") is not True:
            return  # it changed nothing
        at.edits.extend(edits if edits is not None else event_edits(event.get("changes")))


def _call_patch(kind: str, item: Json, name: str) -> tuple[str, str | None] | None:
    """(the patch, its folder) of a call that applies one, else None."""
    if kind == "custom_tool_call":
        value = item.get("input")
        return (value, None) if name in _PATCH_TOOLS and isinstance(value, str) else None
    if kind == "local_shell_call":
        action = item.get("action")
        return patch_in_command(action.get("command")) if isinstance(action, dict) else None
    if kind != "function_call":
        return None
    raw = item.get("arguments")
    args: object = raw
    if isinstance(raw, str) and raw.lstrip().startswith("{"):
        try:
            args = json.loads(raw)
        except (ValueError, RecursionError):
            args = raw
    if name in _PATCH_TOOLS:
        if isinstance(args, dict):
            patch = args.get("input", args.get("patch"))
            return (patch, None) if isinstance(patch, str) else None
        return (args, None) if isinstance(args, str) else None
    if isinstance(args, dict):
        for key in ("command", "cmd"):
            if key in args:
                found = patch_in_command(args[key])
                if found is not None:
                    patch, folder = found
                    # The call's own folder (`workdir`), and a `cd` inside it.
                    workdir = text_of(args.get("workdir"))
                    if workdir:
                        folder = _in(workdir, folder) if folder else workdir
                    return patch, folder
    return None
