"""What the session readers (Claude Code, Codex CLI, Gemini CLI) share.

The formats differ; the chores around them do not: reading a JSON Lines file line by line
(with progress, lines that are not JSON and a last line cut short), counting records of
kinds a reader does not know, folding a tool call to one line, the seconds between two
timestamps and the test run at the end of a tool's output. Each is here once, so the
same problem reads the same in every reader's warnings.

So are the bounds on what one transcript may cost (docs/input-limits.md): the longest
line read, the longest text kept, and how much text one session keeps.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Iterator, Sequence
from datetime import datetime
from typing import Any, Protocol

from ...core.sessions import agents as session_agents
from ...core.sessions.evidence import find_test_run
from ...core.sessions.model import (
    Ask,
    Session,
    SessionError,
    SessionTurn,
    SessionWarnings,
    Step,
    TestRun,
)

FOLD_WIDTH = 120  # a tool call folded to one line is cut to this many characters
TAIL = 8192  # how much of a tool's output (its end) is searched for a test summary
MAX_LINE_WARNINGS = 20  # bad lines named one by one, of each problem; then one summary
MAX_UNKNOWN_KINDS = 20  # unknown kinds named one by one; then one summary
CUT_SHORT = "cut short (the session may still be being written)"
# What one transcript may cost (docs/input-limits.md). A line is parsed whole, so the
# longest one bounds the memory a line takes (about four times its size); no real line
# comes near (tools cut their outputs to a few MB).
MAX_LINE = 64 << 20  # bytes of one JSON Lines line; a longer one is skipped unread
# Characters of one string kept (a prompt, a reply, a question, an answer, a tool's
# arguments or output): more than any model writes in one answer. A longer one keeps its
# first and last halves (a test summary ends an output).
MAX_TEXT = 1 << 20
# Characters one session keeps (prompts, texts, thinking, questions, folded tool calls),
# each step counted STEP_COST more (about what holding one costs); past it the rest of
# its file is not read. Real sessions keep a few MB in some thousands of steps.
MAX_SESSION_TEXT = 64 << 20
STEP_COST = 512
_SKIP = 1 << 20  # how much of a line too long to read is passed over at a time
# JSON can spell a lone surrogate (an unpaired "\ud800"), which is no Unicode text: it
# could not be written to the database, hashed or printed. Such lines are rare (a raw
# UTF-8 file cannot hold one), so only a line with such an escape is looked through.
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")
_SURROGATE_TEXT_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
_SURROGATE = re.compile("[\ud800-\udfff]")
_BOM = b"\xef\xbb\xbf"


def size_text(size: int) -> str:
    """A size in a message: "64 MB", "2.3 MB", or bytes below a megabyte."""
    if size < 1 << 20:
        return f"{size:,} bytes"
    return f"{size >> 20} MB" if size % (1 << 20) == 0 else f"{size / (1 << 20):.1f} MB"


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
    return _each_string(value, as_text)


def cut_text(text: str) -> str:
    """`text`, or when longer than MAX_TEXT its first and last halves of that, with the
    number of characters left out between them."""
    if len(text) <= MAX_TEXT:
        return text
    half = MAX_TEXT // 2
    return f"{text[:half]}\n[… {len(text) - 2 * half:,} characters not kept …]\n{text[-half:]}"


def was_cut(text: str) -> bool:
    """Whether `text` is what `cut_text` kept of a longer one."""
    half = MAX_TEXT // 2
    return len(text) > MAX_TEXT and text.startswith("\n[… ", half)


def bounds_met(path: str, session: Session) -> list[str]:
    """The warnings for what of `session` a bound cut: texts kept as their two ends, and
    the text that ends turns past what is read for questions."""
    warnings = []
    texts = (
        text
        for turn in session.turns
        for text in (
            turn.prompt,
            *(step.text for step in turn.steps),
            *(ask.answer or "" for ask in turn.asks),
        )
    )
    if cut := sum(1 for text in texts if was_cut(text)):
        texts_were = "1 text" if cut == 1 else f"{cut} texts"
        whose = "its" if cut == 1 else "their"
        limit = size_text(MAX_TEXT)
        warnings.append(f"{path}: {texts_were} longer than {limit} cut to {whose} two ends")
    if (text := session_agents.question_text(session)) > session_agents.QUESTION_TEXT:
        warnings.append(
            f"{path}: {size_text(text)} of text ends the agent's turns; questions are read"
            f" from its first {size_text(session_agents.QUESTION_TEXT)}"
        )
    return warnings


def _each_string(value: Any, change: Callable[[str], str]) -> Any:
    """`value` with `change` applied to every string and key in it (lists and objects are
    changed in place, however deep)."""
    if isinstance(value, str):
        return change(value)
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            pairs = list(item.items())
            item.clear()
            for key, inner in pairs:
                if isinstance(inner, str):
                    inner = change(inner)
                elif isinstance(inner, (dict, list)):
                    stack.append(inner)
                item[change(key)] = inner
        elif isinstance(item, list):
            for index, inner in enumerate(item):
                if isinstance(inner, str):
                    item[index] = change(inner)
                elif isinstance(inner, (dict, list)):
                    stack.append(inner)
    return value


def _long_int(digits: str) -> float:
    """An integer longer than Python reads from text (4,300 digits unless changed with
    sys.set_int_max_str_digits): infinity, a number no answer or count can be."""
    return float(digits)


def parse_json(text: str | bytes) -> Any:
    """The JSON value of `text` (JSON held in a string: a tool's arguments or output),
    made text (lone surrogates as U+FFFD) and cut (strings to MAX_TEXT). An integer too
    long for Python is infinity rather than an error. ValueError or RecursionError when
    it is not JSON."""
    try:
        value = json.loads(text)
    except (json.JSONDecodeError, UnicodeDecodeError):
        raise
    except ValueError:  # an integer past Python's digit limit
        value = json.loads(text, parse_int=_long_int)
    return _readable(value, text)


def _readable(value: Any, raw: str | bytes) -> Any:
    """A value parsed from `raw`, its lone surrogates replaced and its strings cut."""
    if isinstance(raw, str):
        surrogates = "\\u" in raw and _SURROGATE_TEXT_ESCAPE.search(raw) is not None
    else:
        surrogates = has_surrogate_escape(raw)
    if surrogates:
        value = text_only(value)
    if len(raw) > MAX_TEXT:  # no string of a shorter text can be longer
        value = _each_string(value, cut_text)
    return value


def number_text(value: object) -> str | None:
    """A number given as an answer, as written; None for a boolean, NaN, an infinity
    (or an integer too long to be read) and what is no number."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return str(value)


def kept_size(prompt: str | None, steps: Sequence[Step], asks: Sequence[Ask]) -> int:
    """What a turn's prompt, steps and asks count towards MAX_SESSION_TEXT (an ask's
    question is its step's text)."""
    size = 0 if prompt is None else len(prompt) + STEP_COST
    for step in steps:
        size += len(step.text) + STEP_COST
    for ask in asks:
        size += sum(map(len, ask.options)) + len(ask.header or "")
    return size


class Kept:
    """How much text one session keeps, to stop reading it past MAX_SESSION_TEXT: a
    reader counts what its turns gained after each line (`count`), then asks `over`."""

    def __init__(self, path: str, warnings: SessionWarnings) -> None:
        self.path = path
        self.warnings = warnings
        self.total = 0
        # id of a list of turns -> (turns counted, steps and asks counted of its last)
        self._counted: dict[int, tuple[int, int, int]] = {}

    def count(self, turns: list[SessionTurn]) -> None:
        """Count what `turns` (a list only added to) gained since it was last counted."""
        done, steps, asks = self._counted.get(id(turns), (0, 0, 0))
        if done:
            last = turns[done - 1]
            if done == len(turns) and len(last.steps) == steps and len(last.asks) == asks:
                return  # most lines add nothing kept (tool outputs, usage, events)
            self.total += kept_size(None, last.steps[steps:], last.asks[asks:])
        for turn in turns[done:]:
            self.total += kept_size(turn.prompt, turn.steps, turn.asks)
        if turns:
            self._counted[id(turns)] = (len(turns), len(turns[-1].steps), len(turns[-1].asks))

    def over(self, line: int | None, at: str = "this line") -> bool:
        """Whether the session keeps more than MAX_SESSION_TEXT (a warning naming `line`,
        or `at` where no line is known, after which the rest of the file is not read)."""
        if self.total <= MAX_SESSION_TEXT:
            return False
        self.warnings.add(
            self.path,
            line,
            f"the session keeps more than {size_text(MAX_SESSION_TEXT)} of text by {at};"
            " the rest of the file is not read",
        )
        return True


def tests_in(output: str) -> TestRun | None:
    """The last test run a tool's output reports (only its end is searched: a runner's
    summary comes last)."""
    return find_test_run(output[-TAIL:]) if output else None


class LineSource(Protocol):
    """What JSON Lines are read from: a binary file, or a part of one (`WholeLines`)."""

    def readline(self, size: int = -1, /) -> bytes: ...


class LineReader(Protocol):
    """A JSON Lines transcript's reader kept between reads: `feed` reads the lines a
    file holds (or those appended since), `finish` gives the session read so far."""

    def feed(self, handle: LineSource) -> None: ...

    def finish(self) -> Session: ...


def read_whole(reader: LineReader, path: str) -> Session:
    """The session of the file at `path`, read whole by `reader`."""
    try:
        with open(path, "rb") as handle:
            reader.feed(handle)
    except OSError as error:
        raise unreadable(path, error) from None
    return reader.finish()


class WholeLines:
    """The lines of a binary file from where it stands up to `end` (the end of its last
    whole line): a line still being written is left for when it is whole."""

    def __init__(self, handle: LineSource, start: int, end: int) -> None:
        self.handle = handle
        self.left = end - start

    def readline(self, size: int = -1, /) -> bytes:
        if self.left <= 0:
            return b""
        line = self.handle.readline(self.left if size < 0 else min(size, self.left))
        self.left -= len(line)
        return line


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
        self.too_long = 0  # lines longer than MAX_LINE, passed over
        self.cut: int | None = None  # the line cut short

    def objects(self, handle: LineSource, start: int = 1) -> Iterator[tuple[int, dict[str, Any]]]:
        """The objects of the lines left in `handle`, the first of them numbered `start`.
        A line longer than MAX_LINE is passed over, never held whole (a warning)."""
        progress, batch, loads = self.progress, self.batch, json.loads
        number, size, parsed = start - 1, self.size, self.parsed  # kept in locals: faster
        readline, limit = handle.readline, MAX_LINE
        unreported = 0
        try:
            while raw := readline(limit + 1):
                number += 1
                length = len(raw)
                if length > limit:
                    length += self._pass_over(handle, number, raw)
                    raw = b""
                size += length
                if progress is not None:
                    unreported += length
                    if unreported >= batch:
                        progress(unreported)
                        unreported = 0
                if not raw:
                    continue
                if number == 1 and raw.startswith(_BOM):
                    raw = raw[len(_BOM) :]  # an editor's byte order mark, no part of the JSON
                text = raw.decode("utf-8", "replace")
                try:
                    try:
                        value = loads(text)
                    except ValueError as error:
                        if isinstance(error, json.JSONDecodeError):
                            raise
                        value = loads(text, parse_int=_long_int)  # past Python's digit limit
                except (ValueError, RecursionError):
                    if raw.strip():
                        self._not_json(number, cut=not raw.endswith(b"\n"))
                    continue
                parsed += 1
                if length > MAX_TEXT or b"\\u" in raw:
                    value = _readable(value, raw)
                if isinstance(value, dict):
                    yield number, value
                else:
                    self._not_object(number)
            if progress is not None and unreported:
                progress(unreported)
        finally:
            self.lines, self.size, self.parsed = number, size, parsed

    def _pass_over(self, handle: LineSource, number: int, raw: bytes) -> int:
        """Read past the rest of line `number` (`raw` its start), longer than MAX_LINE, a
        piece at a time; a warning. The bytes of the rest."""
        self.too_long += 1
        if self.too_long <= MAX_LINE_WARNINGS:
            self.warnings.add(self.path, number, f"longer than {size_text(MAX_LINE)}, skipped")
        rest = 0
        while not raw.endswith(b"\n"):
            raw = handle.readline(_SKIP)
            if not raw:
                break
            rest += len(raw)
        return rest

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
        if self.too_long > MAX_LINE_WARNINGS:
            more = self.too_long - MAX_LINE_WARNINGS
            self.warnings.add(self.path, None, f"{more} more lines too long, skipped")


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
