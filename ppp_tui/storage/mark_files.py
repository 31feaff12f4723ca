"""Marks in a file (`prefer --file`): CSV with a header, or JSON Lines, each mark a
run id, an agent, a reviewer and optionally when it was made (ISO 8601).

The whole file is read and checked before anything is written: a line that is not a
mark is an error naming it, and nothing is recorded.
"""

from __future__ import annotations

import csv
import io
import json
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

from ..core.errors import PPPError
from .files import check_csv_header, json_lines
from .reviewers import checked

FIELDS = ("run_id", "agent", "reviewer")
# A file larger than this is refused before it is read (a mark is a short line).
MAX_BYTES = 256 * 1024 * 1024


class MarkFileError(PPPError):
    """A marks file that cannot be read, or a line of it that is not a mark."""


@dataclass(frozen=True)
class FileMark:
    run_id: str
    agent: str
    reviewer: str
    at: str | None  # UTC, as ppp-tui writes times; None: when recorded
    where: str = ""  # the file and line it came from, for messages


def read_marks(path: Path, data: bytes | None = None) -> list[FileMark]:
    """Every mark of the file (or of `data`, read from standard input), in order; a
    MarkFileError for the first bad line."""
    import stat

    try:
        if data is None:
            info = path.stat()
            if not stat.S_ISREG(info.st_mode):
                raise MarkFileError(f"{path}: not a regular file")
            if info.st_size > MAX_BYTES:
                raise MarkFileError(f"{path}: larger than {MAX_BYTES // 2**20} MiB")
            data = path.read_bytes()
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise MarkFileError(f"{path}: not UTF-8 text") from None
    except FileNotFoundError:
        raise MarkFileError(f"{path}: no such file") from None
    except OSError as error:
        raise MarkFileError(f"{path}: cannot read ({error.strerror})") from None
    stripped = text.lstrip()
    if not stripped:
        raise MarkFileError(f"{path}: no marks in the file")
    if stripped.startswith("{"):
        return _json_lines(path, text)
    return _csv(path, text)


def _json_lines(path: Path, text: str) -> list[FileMark]:
    marks = []
    for number, line in enumerate(json_lines(text), 1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except (json.JSONDecodeError, RecursionError):
            raise MarkFileError(f"{path}:{number}: not a JSON object") from None
        if not isinstance(obj, dict):
            raise MarkFileError(f"{path}:{number}: not a JSON object")
        marks.append(_mark(path, number, obj))
    return marks


def _csv(path: Path, text: str) -> list[FileMark]:
    try:
        reader = csv.DictReader(io.StringIO(text, newline=""), strict=True)
        check_csv_header(reader, str(path), FIELDS, may="at", error=MarkFileError)
        marks = []
        for row in reader:
            if not any((value or "").strip() for value in row.values() if isinstance(value, str)):
                continue
            if None in row:
                raise MarkFileError(f"{path}:{reader.line_num}: more values than the header")
            marks.append(_mark(path, reader.line_num, row))
    except csv.Error as error:
        raise MarkFileError(f"{path}:{reader.line_num}: not CSV ({error})") from None
    return marks


def _mark(path: Path, number: int, obj: dict[str, object]) -> FileMark:
    where = f"{path}:{number}"
    values = []
    for name in FIELDS:
        value = obj.get(name)
        if not isinstance(value, str) or not value.strip():
            raise MarkFileError(f"{where}: {name} is missing or empty")
        values.append(value.strip())
    run_id, agent, reviewer = values
    try:
        reviewer = checked(reviewer, f"{where}: reviewer")
    except PPPError as error:
        raise MarkFileError(str(error)) from None
    at = obj.get("at")
    if at in (None, ""):
        return FileMark(run_id, agent, reviewer, None, where)
    if not isinstance(at, str):
        raise MarkFileError(f"{where}: at must be an ISO 8601 time")
    return FileMark(run_id, agent, reviewer, _utc(at, where), where)


def _utc(text: str, where: str) -> str:
    """`text` (ISO 8601) as ppp-tui writes times: UTC to the second, ending in Z. A time
    without a zone is taken as UTC."""
    try:
        moment = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=UTC)
        moment = moment.astimezone(UTC)
    except (ValueError, OverflowError):
        shown = text if len(text) <= 40 else f"{text[:40]}…"
        raise MarkFileError(f"{where}: at {shown!r} is not an ISO 8601 time") from None
    # A mark from the future would stay every later mark's "latest".
    if moment > datetime.now(UTC) + timedelta(days=1):
        raise MarkFileError(f"{where}: at {text!r} is in the future")
    return moment.isoformat(timespec="seconds").replace("+00:00", "Z")
