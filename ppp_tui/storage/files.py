"""Reading runs from JSON, JSON Lines or standard input (SPEC 1).

Each decoded run comes with its location (file and line for JSON Lines, file and
JSON path for JSON), so every error can name where it is.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from ..core.errors import PPPError, RunError
from ..core.model import Run
from ..core.runs import run_from_dict

FileFormat = Literal["auto", "json", "jsonl"]


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

    @property
    def where(self) -> str:
        return f"{self.source}:{self.line}" if self.line is not None else self.source

    def parse(self) -> Run:
        """The validated run; errors name file, line and JSON path."""
        if self.error is not None:
            raise PPPError(f"{self.where}: {self.error}")
        raw = self.raw
        if self.text is not None:
            try:
                raw = json.loads(self.text)
            except json.JSONDecodeError as error:
                # Reported when parsed, so --skip-invalid can skip just this line.
                message = f"invalid JSON: {error.msg} (column {error.colno})"
                raise PPPError(f"{self.where}: {message}") from None
        try:
            return run_from_dict(raw, self.path)
        except RunError as error:
            raise PPPError(f"{self.where}: {error}") from None


@dataclass(frozen=True)
class ParsedRecord(Record):
    """A run for `Store.import_records` that is parsed already: no second parse."""

    parsed: Run | None = None

    def parse(self) -> Run:
        return self.parsed if self.parsed is not None else super().parse()


def read_text(name: str) -> tuple[str, str]:
    """(source name for messages, text) of a UTF-8 file or standard input ("-")."""
    if name == "-":
        return "<stdin>", sys.stdin.read()
    path = Path(name)
    try:
        return name, path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise PPPError(f"{name}: no such file") from None
    except IsADirectoryError:
        raise PPPError(f"{name}: is a directory, not a file") from None
    except UnicodeDecodeError as error:
        raise PPPError(f"{name}: not UTF-8 text ({error.reason} at byte {error.start})") from None
    except OSError as error:
        raise PPPError(f"{name}: cannot read ({error.strerror})") from None


def _lines(source: str, lines: list[str]) -> Iterator[Record]:
    for number, line in enumerate(lines, start=1):
        if line and not line.isspace():
            yield Record(source, number, "$", None, None, line)


def _document(source: str, text: str) -> Iterator[Record]:
    try:
        raw = json.loads(text)
    except json.JSONDecodeError as error:
        raise PPPError(
            f"{source}: invalid JSON: {error.msg} (line {error.lineno}, column {error.colno})"
        ) from None
    if isinstance(raw, list):
        for index, item in enumerate(raw):
            yield Record(source, None, f"$[{index}]", item)
    else:
        yield Record(source, None, "$", raw)


def _looks_like_lines(text: str) -> bool:
    """JSON Lines or one JSON document, by content whatever the file's name: JSON Lines
    when the first line is a whole JSON object and more text follows it; a JSON array,
    a pretty-printed object or a single line is a document."""
    stripped = text.lstrip()
    if not stripped.startswith("{"):
        return False
    first, _, rest = stripped.partition("\n")
    if not rest.strip():
        return False
    try:
        return isinstance(json.loads(first), dict)
    except (json.JSONDecodeError, RecursionError):
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
        lines = text.splitlines()
        total = sum(1 for line in lines if line and not line.isspace())
        return RecordFile(total, _lines(source, lines))
    records = list(_document(source, text))
    return RecordFile(len(records), iter(records))


def read_records(name: str, fmt: FileFormat = "auto") -> Iterator[Record]:
    """Decode the runs of one file (or "-" for standard input)."""
    return open_records(name, fmt).records
