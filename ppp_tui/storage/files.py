"""Reading runs from JSON, JSON Lines or standard input.

Each decoded run comes with its location (file and line for JSON Lines, file and
JSON path for JSON), so every error can name where it is.
"""

from __future__ import annotations

import csv
import json
import os
import re
import stat
import sys
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from ..core.errors import PPPError, RunError, too_many_digits
from ..core.model import Run
from ..core.runs import run_from_dict

FileFormat = Literal["auto", "json", "jsonl"]

# The largest input read (a file, a pipe or standard input): more is refused with a
# clear line rather than read until memory runs out (a stream that never ends).
MAX_INPUT_BYTES = 1 << 30
# A "\ud800"-"\udfff" escape: JSON can spell a lone surrogate, which is no Unicode text.
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
_SURROGATE = re.compile("[\ud800-\udfff]")
_NOT_SPACE = re.compile(r"\S")


@dataclass(frozen=True)
class Record:
    """One decoded run object and where it came from."""

    source: str  # file name, or "<stdin>"
    line: int | None  # 1-based line for JSON Lines
    path: str  # JSON path of the run object: "$" or "$[3]"
    raw: Any
    error: str | None = None  # a line that is not JSON: reported when parsed
    # A JSON Lines line, decoded when parsed (raw is then None): reading a file stays
    # cheap, and an import decides where its lines are decoded (Store.import_records).
    text: str | None = None
    # The JSON text has a surrogate escape: its strings are checked for lone surrogates.
    surrogates: bool = False

    @property
    def where(self) -> str:
        return f"{self.source}:{self.line}" if self.line is not None else self.source

    def parse(self) -> Run:
        """The validated run; errors name file, line and JSON path."""
        return self.run_of(*self.decoded())

    def decoded(self) -> tuple[Any, bool]:
        """(the run's JSON value, whether its strings are to be checked for lone
        surrogates); a line that is not JSON is reported here, when parsed, so that
        --skip-invalid can skip just that line."""
        if self.error is not None:
            raise PPPError(f"{self.where}: {self.error}")
        if self.text is None:
            return self.raw, self.surrogates
        return decoded_line(self.source, self.line, self.text)

    def run_of(self, raw: Any, surrogates: bool, fast: bool = True) -> Run:
        """The validated run of the record's `decoded` value (`fast`: run_from_dict's)."""
        try:
            if surrogates:
                _check_strings(raw, self.path)
            return run_from_dict(raw, self.path, fast)
        except RunError as error:
            raise PPPError(f"{self.where}: {error}") from None
        except RecursionError:
            raise PPPError(f"{self.where}: {self.path}: {_TOO_DEEP}") from None


def decoded_line(source: str, number: int | None, text: str) -> tuple[Any, bool]:
    """`Record.decoded` of JSON Lines line `number` of `source`, holding `text`."""
    try:
        raw = json.loads(text)
    except (ValueError, RecursionError):
        where = source if number is None else f"{source}:{number}"
        _loads(text, where, line=False)  # the PPPError that names it
        raise
    return raw, "\\u" in text and _SURROGATE_ESCAPE.search(text) is not None


_TOO_DEEP = "nested too deeply (a run needs only a few levels of lists and objects)"


def _loads(text: str, where: str, line: bool = True) -> Any:
    """json.loads, with every way it fails as one PPPError line naming `where`."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        at = f"line {error.lineno}, column {error.colno}" if line else f"column {error.colno}"
        raise PPPError(f"{where}: invalid JSON: {error.msg} ({at})") from None
    except RecursionError:
        raise PPPError(f"{where}: invalid JSON: {_TOO_DEEP}") from None
    except ValueError as error:
        if (digits := too_many_digits(error)) is None:
            raise
        raise PPPError(f"{where}: invalid JSON: {digits}") from None


def _check_strings(raw: Any, path: str) -> None:
    """Refuse a lone surrogate ("\\ud800" unpaired) in any string or key, naming its path."""
    stack: list[tuple[Any, str]] = [(raw, path)]
    while stack:
        value, where = stack.pop()
        if isinstance(value, str):
            found = _SURROGATE.search(value)
            if found is not None:
                code = f"\\u{ord(found.group()):04x}"
                raise RunError(f"a lone surrogate {code} is not Unicode text", where)
        elif isinstance(value, dict):
            for key, item in value.items():
                found = _SURROGATE.search(key)
                if found is not None:
                    code = f"\\u{ord(found.group()):04x}"
                    raise RunError(f"a key with a lone surrogate {code} is not Unicode text", where)
                stack.append((item, f"{where}{_member(key)}"))
        elif isinstance(value, list):
            stack.extend((item, f"{where}[{i}]") for i, item in enumerate(value))


def _member(key: str) -> str:
    """A key as a JSON path step: `.name`, or `["..."]` with JSON's escapes for any other."""
    if key.isidentifier() and key.isascii():
        return f".{key}"
    return f"[{json.dumps(key)}]"


@dataclass(frozen=True)
class ParsedRecord(Record):
    """A run for `Store.import_records` that is parsed already: no second parse."""

    parsed: Run | None = None

    def parse(self) -> Run:
        return self.parsed if self.parsed is not None else super().parse()


def read_text(name: str) -> tuple[str, str]:
    """(source name for messages, text) of a file or of standard input ("-"): UTF-8, at
    most MAX_INPUT_BYTES."""
    if name == "-":
        source = "<stdin>"
        stream = getattr(sys.stdin, "buffer", None)
        if stream is None:  # a text-only stream (tests): already decoded
            data = sys.stdin.read(MAX_INPUT_BYTES + 1).encode("utf-8", "surrogateescape")
        else:
            data = stream.read(MAX_INPUT_BYTES + 1)
    else:
        source = name
        data = _read_file(name)
    if len(data) > MAX_INPUT_BYTES:
        raise _too_big(source)
    try:
        # A leading byte order mark (Excel's and PowerShell's UTF-8) is not content.
        return source, data.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError as error:
        raise PPPError(f"{source}: not UTF-8 text ({error.reason} at byte {error.start})") from None


def _too_big(source: str) -> PPPError:
    limit = MAX_INPUT_BYTES
    size = f"{limit / (1 << 30):g} GB" if limit >= 1 << 30 else f"{limit:,} bytes"
    return PPPError(f"{source}: more than {size}; split the runs into several files")


def check_csv_header(
    reader: csv.DictReader[str],
    where: str,
    needs: Sequence[str],
    may: str = "",
    error: type[PPPError] = PPPError,
) -> None:
    """Make `reader`'s header its names stripped of spaces, each of `needs` there once
    (`may`: what else it may name, for the message); else `error`, naming `where`."""
    header = [name.strip() for name in reader.fieldnames or ()]
    doubled = sorted({name for name in header if header.count(name) > 1})
    if doubled:
        raise error(f"{where}: the CSV header names {', '.join(doubled)} twice")
    missing = [name for name in needs if name not in header]
    if missing:
        also = f" and may have {may}" if may else ""
        raise error(
            f"{where}: the CSV header lacks {', '.join(missing)}"
            f" (it needs {', '.join(needs)}{also})"
        )
    reader.fieldnames = header


def _read_file(name: str) -> bytes:
    """A run file's bytes. Devices (a terminal, /dev/zero) are refused unread; a pipe
    (`<(...)`) is read like standard input."""
    try:
        with open(name, "rb") as file:
            status = os.fstat(file.fileno())
            if not (stat.S_ISREG(status.st_mode) or stat.S_ISFIFO(status.st_mode)):
                raise PPPError(f"{name}: not a regular file or a pipe; give a run file")
            if status.st_size > MAX_INPUT_BYTES:  # refused without reading it
                raise _too_big(name)
            return file.read(MAX_INPUT_BYTES + 1)
    except FileNotFoundError:
        raise PPPError(f"{name}: no such file") from None
    except IsADirectoryError:
        raise PPPError(f"{name}: is a directory, not a run file") from None
    except OSError as error:
        raise PPPError(f"{name}: cannot read ({error.strerror})") from None


def json_lines(text: str) -> list[str]:
    """The lines of a JSON Lines text, cut at each "\\n", "\\r\\n" or lone "\\r" (which
    JSON never holds unescaped) and only there: a JSON string may hold U+2028, U+0085
    and the other characters `str.splitlines` also cuts at (and it is twice as slow)."""
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return text.split("\n")


# A JSON Lines line not made a Record yet: (file name, 1-based line number, text).
Line = tuple[str, int, str]


def line_record(source: str, number: int, text: str) -> Record:
    """The record of a JSON Lines line, decoded when parsed. Its fields are set in one go,
    as Record(source, number, "$", None, None, text) would set them one by one (the frozen
    class's __init__), in a third of the time."""
    record: Record = object.__new__(Record)
    record.__dict__.update(
        source=source, line=number, path="$", raw=None, error=None, text=text, surrogates=False
    )
    return record


class LineRecords(Iterator[Record]):
    """The records of a JSON Lines file, one per line that is not blank; `take` gives the
    next lines without making their records (an import's parse workers make them)."""

    def __init__(self, source: str, lines: list[str]) -> None:
        self._source = source
        self._lines = lines
        self._next = 0  # index of the next line to look at

    def __next__(self) -> Record:
        lines = self._lines
        while self._next < len(lines):
            text = lines[self._next]
            self._next += 1
            if text and not text.isspace():
                return line_record(self._source, self._next, text)
        raise StopIteration

    def take(self, most: int) -> list[Line]:
        """Up to `most` of the next lines that are not blank, as `Line`s; none at the end."""
        source, lines, start = self._source, self._lines, self._next
        taken: list[Line] = []
        end = start
        while len(taken) < most and end < len(lines):
            stop = min(len(lines), end + most - len(taken))
            taken += [
                (source, number, text)
                for number, text in enumerate(lines[end:stop], start=end + 1)
                if text and not text.isspace()
            ]
            end = stop
        self._next = end
        return taken


class ChainedRecords(Iterator[Record]):
    """The records of several files in turn, as itertools.chain gives them, with
    `LineRecords.take` of the file being read."""

    def __init__(self, files: Iterable[Iterator[Record]]) -> None:
        self._files = iter(files)
        self._file: Iterator[Record] | None = None

    def __next__(self) -> Record:
        while True:
            if self._file is None:
                self._file = next(self._files)  # StopIteration: the last one is done
            record = next(self._file, None)
            if record is not None:
                return record
            self._file = None

    def take(self, most: int) -> list[Line]:
        """`LineRecords.take` of the file being read; none if it is not JSON Lines."""
        return self._file.take(most) if isinstance(self._file, LineRecords) else []


def _document(source: str, text: str) -> Iterator[Record]:
    raw = _loads(text, source)
    surrogates = "\\u" in text and _SURROGATE_ESCAPE.search(text) is not None
    if isinstance(raw, list):
        for index, item in enumerate(raw):
            yield Record(source, None, f"$[{index}]", item, surrogates=surrogates)
    else:
        yield Record(source, None, "$", raw, surrogates=surrogates)


def _looks_like_lines(text: str) -> bool:
    """JSON Lines or one JSON document, by content whatever the file's name: JSON Lines
    when the first line is a whole JSON object and more text follows it; a JSON array,
    a pretty-printed object or a single line is a document. Looked at in place: copying
    the rest of a large file (to strip it) would take longer than reading it."""
    start = _NOT_SPACE.search(text)
    if start is None or text[start.start()] != "{":
        return False
    end = text.find("\n", start.start())
    if end < 0 or _NOT_SPACE.search(text, end + 1) is None:
        return False
    try:
        return isinstance(json.loads(text[start.start() : end]), dict)
    except (ValueError, RecursionError):  # not JSON (or too deep, too long a number)
        return False


@dataclass(frozen=True)
class RecordFile:
    """The runs of one file, decoded lazily, and how many there are (for progress)."""

    total: int
    records: Iterator[Record]


def open_records(name: str, fmt: FileFormat = "auto") -> RecordFile:
    """Read one file (or "-" for standard input); JSON Lines lines decode when parsed."""
    source, text = read_text(name)
    if fmt == "jsonl" or (fmt == "auto" and _looks_like_lines(text)):
        lines = json_lines(text)
        total = sum(1 for line in lines if line and not line.isspace())
        if not total:
            raise PPPError(f"{source}: no runs in it (an empty input is an error)")
        return RecordFile(total, LineRecords(source, lines))
    if not text or text.isspace():
        raise PPPError(f"{source}: no runs in it (an empty input is an error)")
    records = list(_document(source, text))
    if not records:
        raise PPPError(f"{source}: no runs in it (an empty list)")
    return RecordFile(len(records), iter(records))


def read_records(name: str, fmt: FileFormat = "auto") -> Iterator[Record]:
    """Decode the runs of one file (or "-" for standard input)."""
    return open_records(name, fmt).records
