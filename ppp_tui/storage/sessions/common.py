"""What the session readers (Claude Code, Codex CLI, Gemini CLI) share.

The formats differ; the chores around them do not: reading a JSON Lines file line by line
(with progress, lines that are not JSON and a last line cut short), counting records of
kinds a reader does not know, folding a tool call to one line, the seconds between two
timestamps and the test run at the end of a tool's output. Each is here once, so the
same problem reads the same in every reader's warnings.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from datetime import datetime
from typing import IO, Any

from ...core.sessions.evidence import find_test_run
from ...core.sessions.model import SessionError, SessionWarnings, TestRun

FOLD_WIDTH = 120  # a tool call folded to one line is cut to this many characters
TAIL = 8192  # how much of a tool's output (its end) is searched for a test summary
MAX_LINE_WARNINGS = 20  # bad lines named one by one, of each problem; then one summary
MAX_UNKNOWN_KINDS = 20  # unknown kinds named one by one; then one summary
CUT_SHORT = "cut short (the session may still be being written)"
# JSON can spell a lone surrogate (an unpaired "\ud800"), which is no Unicode text: it
# could not be written to the database, hashed or printed. Such lines are rare (a raw
# UTF-8 file cannot hold one), so only a line with such an escape is looked through.
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")
_SURROGATE = re.compile("[\ud800-\udfff]")
_BOM = b"\xef\xbb\xbf"


def unreadable(path: str, error: OSError) -> SessionError:
    """The one-line error for a transcript that cannot be opened or read (missing, a
    folder, no permission, a failing disk)."""
    return SessionError(f"{path}: cannot be read ({error.strerror or error})")


def one_line(text: str, width: int = FOLD_WIDTH) -> str:
    """`text` on one line (every run of white space, newlines too, as one space), cut to
    `width` characters with "…" when longer. Only its start is looked at, unless that
    start is mostly white space."""
    folded = " ".join(text[: width * 4].split())
    if len(folded) <= width and len(text) > width * 4:
        folded = " ".join(text.split())
    return folded if len(folded) <= width else folded[: width - 1] + "…"


def option_labels(options: object) -> list[str]:
    """The labels of an ask's options: a list of `{"label": ...}` objects or of bare
    strings, blank or odd ones left out (every agent's ask tool offers them so)."""
    labels = []
    for option in options if isinstance(options, list) else []:
        label = option.get("label") if isinstance(option, dict) else option
        if isinstance(label, str) and label.strip():
            labels.append(label)
    return labels


def seconds_between(start: str | None, end: str | None) -> float | None:
    """Seconds from one ISO 8601 time to another; None when either is missing or
    unreadable, one has a time zone and the other none, or the end comes before the
    start (clocks that disagree, a hand-edited file: no time anyone took)."""
    if start is None or end is None:
        return None
    try:
        seconds = (datetime.fromisoformat(end) - datetime.fromisoformat(start)).total_seconds()
    except (ValueError, TypeError):
        return None
    return seconds if seconds >= 0 else None


def has_surrogate_escape(raw: bytes) -> bool:
    """Whether JSON text may spell a lone surrogate (`text_only` then makes it text)."""
    return b"\\u" in raw and _SURROGATE_ESCAPE.search(raw) is not None


def as_text(text: str) -> str:
    """`text` with every lone surrogate (a JSON escape, or a file name's byte of no
    encoding) as U+FFFD."""
    return _SURROGATE.sub("\ufffd", text)


def text_only(value: Any) -> Any:
    """A parsed JSON value with every lone surrogate in its strings and keys replaced by
    U+FFFD (lists and objects are changed in place, however deep)."""
    if isinstance(value, str):
        return as_text(value)
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            pairs = list(item.items())
            item.clear()
            for key, inner in pairs:
                if isinstance(inner, str):
                    inner = as_text(inner)
                elif isinstance(inner, (dict, list)):
                    stack.append(inner)
                item[as_text(key)] = inner
        elif isinstance(item, list):
            for index, inner in enumerate(item):
                if isinstance(inner, str):
                    item[index] = as_text(inner)
                elif isinstance(inner, (dict, list)):
                    stack.append(inner)
    return value


def tests_in(output: str) -> TestRun | None:
    """The last test run a tool's output reports (only its end is searched: a runner's
    summary comes last)."""
    return find_test_run(output[-TAIL:]) if output else None


class JsonLines:
    """The JSON objects of a JSON Lines file, each with its line number.

    Blank lines are passed over. A line that is not JSON is a warning ("not JSON"),
    unless it is the last one and has no newline yet: that one is still being written
    ("cut short"). A JSON value that is not an object is a warning too. Past
    MAX_LINE_WARNINGS of either problem the rest are counted, and `finish` sums them up.
    `progress` is told the bytes read: every line's, or with `batch` once at least that
    many have come (and the rest at the end), which costs less on a long file.
    """

    def __init__(
        self,
        path: str,
        warnings: SessionWarnings,
        progress: Callable[[int], None] | None,
        batch: int = 1,
    ) -> None:
        self.path = path
        self.warnings = warnings
        self.progress = progress
        self.batch = batch
        self.lines = 0  # lines read, blank ones too
        self.size = 0  # bytes read
        self.parsed = 0  # lines that are JSON (objects or not)
        self.not_json = 0  # lines that are not JSON, the one cut short left out
        self.not_object = 0  # lines that are JSON but not an object
        self.cut: int | None = None  # the line cut short

    def objects(self, handle: IO[bytes], start: int = 1) -> Iterator[tuple[int, dict[str, Any]]]:
        """The objects of the lines left in `handle`, the first of them numbered `start`."""
        progress, batch, loads = self.progress, self.batch, json.loads
        number, size, parsed = start - 1, self.size, self.parsed  # kept in locals: faster
        unreported = 0
        try:
            for number, raw in enumerate(handle, start):
                size += len(raw)
                if progress is not None:
                    unreported += len(raw)
                    if unreported >= batch:
                        progress(unreported)
                        unreported = 0
                if number == 1 and raw.startswith(_BOM):
                    raw = raw[len(_BOM) :]  # an editor's byte order mark, no part of the JSON
                try:
                    value = loads(raw.decode("utf-8", "replace"))
                except (ValueError, RecursionError):
                    if raw.strip():
                        self._not_json(number, cut=not raw.endswith(b"\n"))
                    continue
                parsed += 1
                if has_surrogate_escape(raw):
                    value = text_only(value)
                if isinstance(value, dict):
                    yield number, value
                else:
                    self._not_object(number)
            if progress is not None and unreported:
                progress(unreported)
        finally:
            self.lines, self.size, self.parsed = number, size, parsed

    def _not_json(self, number: int, cut: bool) -> None:
        if cut:  # only the last line can end without a newline
            self.cut = number
            self.warnings.add(self.path, number, CUT_SHORT)
            return
        self.not_json += 1
        if self.not_json <= MAX_LINE_WARNINGS:
            self.warnings.add(self.path, number, "not JSON, skipped")

    def _not_object(self, number: int) -> None:
        self.not_object += 1
        if self.not_object <= MAX_LINE_WARNINGS:
            self.warnings.add(self.path, number, "not a JSON object, skipped")

    def finish(self) -> None:
        """The summary of the bad lines past the ones named."""
        if self.not_json > MAX_LINE_WARNINGS:
            more = self.not_json - MAX_LINE_WARNINGS
            self.warnings.add(self.path, None, f"{more} more lines not JSON, skipped")
        if self.not_object > MAX_LINE_WARNINGS:
            more = self.not_object - MAX_LINE_WARNINGS
            self.warnings.add(self.path, None, f"{more} more lines not a JSON object, skipped")


class UnknownKinds:
    """Records of kinds a reader does not know: one warning for each kind (at its first
    line), `unknown line type 'x': 2 lines skipped`. `what` names the kind ("line
    type"), `unit` what is counted ("line"). Past MAX_UNKNOWN_KINDS kinds the rest are
    one summary."""

    def __init__(self, what: str, unit: str = "line") -> None:
        self.what = what
        self.unit = unit
        # kind (None: a record with none) -> (its first line, how many)
        self.seen: dict[str | None, tuple[int | None, int]] = {}
        self.more = 0  # records of kinds past the first MAX_UNKNOWN_KINDS

    def add(self, kind: str | None, line: int | None) -> None:
        if kind is not None:
            kind = kind[:60]
        seen = self.seen.get(kind)
        if seen is not None:
            self.seen[kind] = (seen[0], seen[1] + 1)
        elif len(self.seen) < MAX_UNKNOWN_KINDS:
            self.seen[kind] = (line, 1)
        else:
            self.more += 1

    def report(self, warnings: SessionWarnings, path: str) -> None:
        for kind, (first, count) in self.seen.items():
            name = "(none)" if kind is None else repr(kind)
            units = self.unit if count == 1 else self.unit + "s"
            warnings.add(path, first, f"unknown {self.what} {name}: {count} {units} skipped")
        if self.more:
            units = self.unit if self.more == 1 else self.unit + "s"
            warnings.add(path, None, f"{self.more} more {units} of unknown {self.what}s skipped")
