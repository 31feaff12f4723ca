"""Following session files as they are written: each file read again when it changes,
only what was appended where the format allows it.

Claude Code and Codex CLI append JSON lines: their readers are kept between reads and fed
the lines added since, up to the end of the last whole line (a line still being written
is read once it is whole). Gemini CLI writes its record again as it goes: it is read
whole each time it changes. A file that became shorter or was replaced is read again
from its start. A file deleted is forgotten here; what was imported of it stays.

The sessions handed out are copies, so merging a sub-agent's transcript into its parent
(grouping.merge_parts changes the parent) never changes what the readers hold.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import BinaryIO

from ...core.sessions.model import Session, SessionError, SessionWarnings, Tool
from .claude_code import ClaudeReader
from .codex import CodexReader
from .common import LineReader, WholeLines, bounds_met, unreadable
from .discover import is_sidecar, sniff
from .importing import SessionReport, reader_for

# How much of a file's end is read at a time looking for its last newline.
_TAIL = 64 * 1024


@dataclass
class _Followed:
    tool: Tool
    reader: LineReader | None  # None: read whole at every change
    identity: tuple[int, int]  # (device, inode) of the file read
    read_to: int = 0  # bytes read (for a reader kept: to the end of the last whole line)
    changed: float = 0.0  # its modification time when last read
    warnings: SessionWarnings = field(default_factory=SessionWarnings)
    told: set[str] = field(default_factory=set)  # warnings already reported
    session: Session | None = None


class Following:
    """The session files followed, with what was read of each."""

    def __init__(self) -> None:
        self.files: dict[str, _Followed] = {}
        self._not_sessions: set[str] = set()  # files told once to be no transcript

    def forget(self, path: str) -> None:
        """`path` is gone: a file made again under its name is read from its start."""
        self.files.pop(path, None)
        self._not_sessions.discard(path)

    def read(self, paths: Iterable[str], report: SessionReport) -> list[Session]:
        """The sessions of the files among `paths` that changed since they were last read
        (with the other parts of those sessions: a sub-agent's transcript and its
        parent's are written together). Problems go to `report`, each told once."""
        changed: set[str] = set()
        for path in sorted(set(paths)):
            session = self._read(path, report)
            if session is not None:
                changed.add(session.id)
        return [
            _copy(item.session)
            for item in self.files.values()
            if item.session is not None and item.session.id in changed
        ]

    def _read(self, path: str, report: SessionReport) -> Session | None:
        if is_sidecar(path) or not path.endswith((".jsonl", ".json")):
            return None
        try:
            info = os.stat(path)
        except (OSError, ValueError):
            self.forget(path)
            return None
        if not stat.S_ISREG(info.st_mode):
            return None
        identity = (info.st_dev, info.st_ino)
        item = self.files.get(path)
        if item is not None and (item.identity != identity or info.st_size < item.read_to):
            item = None  # replaced, or cut back: read from the start
        if item is None:
            item = self._start(path, identity, info.st_size, report)
            if item is None:
                return None
        try:
            if item.reader is not None:
                session = self._append(path, item, info.st_size)
            else:
                session = self._whole(path, item, info.st_size, info.st_mtime)
        except SessionError as error:
            # Most often a file just made, with no conversation in it yet: said once.
            _tell(item, str(error), report)
            return None
        except OSError as error:
            _tell(item, str(unreadable(path, error)), report)
            return None
        for line in [*item.warnings.lines, *(bounds_met(path, session) if session else [])]:
            _tell(item, line, report)
        item.warnings.lines.clear()
        if session is None or (not session.turns and not session.subagent):
            return None
        item.session = session
        report.files += 1
        return session

    def _start(
        self, path: str, identity: tuple[int, int], size: int, report: SessionReport
    ) -> _Followed | None:
        """A file met for the first time (or again from its start): its reader."""
        if size == 0:
            return None  # just made: what it is shows when something is written
        try:
            tool = sniff(path)
        except (OSError, ValueError):
            return None
        if tool is None:
            if path not in self._not_sessions:
                self._not_sessions.add(path)
                report.warnings.append(f"{path}: not a session transcript (skipped)")
            return None
        item = _Followed(tool, None, identity)
        if tool is Tool.CLAUDE_CODE:
            item.reader = ClaudeReader(path, item.warnings, None)
        elif tool is Tool.CODEX:
            item.reader = CodexReader(path, item.warnings)
        self.files[path] = item
        return item

    def _append(self, path: str, item: _Followed, size: int) -> Session | None:
        """The lines appended since the last read, up to the last whole one."""
        reader = item.reader
        assert reader is not None
        with open(path, "rb") as handle:
            end = _last_line_end(handle, item.read_to, size)
            if end == item.read_to:
                return None
            handle.seek(item.read_to)
            reader.feed(WholeLines(handle, item.read_to, end))
        item.read_to = end
        return reader.finish()

    def _whole(self, path: str, item: _Followed, size: int, changed: float) -> Session | None:
        """A file written again whole: read again, when it changed."""
        if size == item.read_to and changed == item.changed:
            return None
        session = reader_for(item.tool)(path, item.warnings, None)
        item.read_to, item.changed = size, changed
        return session


def _tell(item: _Followed, line: str, report: SessionReport) -> None:
    if line not in item.told:
        item.told.add(line)
        report.warnings.append(line)


def _last_line_end(file: BinaryIO, start: int, size: int) -> int:
    """Where the last whole line of the file ends (after its newline), at `start` or
    past it: read backwards from the end, a piece at a time."""
    at = size
    while at > start:
        piece = min(_TAIL, at - start)
        file.seek(at - piece)
        chunk = file.read(piece)
        newline = chunk.rfind(b"\n")
        if newline >= 0:
            return at - piece + newline + 1
        at -= piece
    return start


def _copy(session: Session) -> Session:
    """`session` with lists of its own, to be merged and written while its reader goes on."""
    return replace(
        session,
        models=list(session.models),
        turns=[
            replace(turn, steps=list(turn.steps), asks=list(turn.asks), edits=list(turn.edits))
            for turn in session.turns
        ],
    )
