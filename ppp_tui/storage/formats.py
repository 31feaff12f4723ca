"""The import formats, and which one a file is in, by its content.

`import FILE` without `--format` looks at the file itself, never at its name: a file
that starts with SQLite's header is a database (spec-kit's consensus database is the
one ppp-tui reads); anything else is JSON or JSON Lines, told apart by content
(files.py). To add a format, add its opener to `OPENERS` and, if it can be recognised,
a test to `detect`.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from pathlib import Path

from .files import RecordFile, open_records

Warn = Callable[[str], None]
Opener = Callable[[str, Warn], RecordFile]

SQLITE_HEADER = b"SQLite format 3\x00"


def _json(name: str, warn: Warn) -> RecordFile:
    return open_records(name, "json")


def _jsonl(name: str, warn: Warn) -> RecordFile:
    return open_records(name, "jsonl")


def _auto_text(name: str, warn: Warn) -> RecordFile:
    return open_records(name, "auto")


def _speckit(name: str, warn: Warn) -> RecordFile:
    from .speckit import open_speckit

    return open_speckit(name, warn)


def _userville(name: str, warn: Warn) -> RecordFile:
    from .userville import open_userville

    return open_userville(name)


#: Format name -> how to open a file in it.
OPENERS: dict[str, Opener] = {
    "json": _json,
    "jsonl": _jsonl,
    "spec-kit": _speckit,
    "userville": _userville,
}

# How much of a text file is read to recognise the PPP paper's rollouts.
_SNIFF_BYTES = 200_000


def detect(name: str) -> str | None:
    """The format a file's content shows (`spec-kit` for a SQLite database, `userville`
    for the PPP paper's rollouts), or None for other text (JSON or JSON Lines, decided
    when it is read)."""
    from .userville import looks_like_userville

    if name == "-":
        return None
    try:
        if not stat.S_ISREG(os.stat(name).st_mode):
            return None  # a pipe is read once, by its reader; a device is refused there
        with Path(name).open("rb") as handle:
            head = handle.read(_SNIFF_BYTES)
    except OSError:
        return None  # reading it again reports the problem
    if head.startswith(SQLITE_HEADER):
        return "spec-kit"
    if looks_like_userville(head.decode("utf-8", errors="replace")):
        return "userville"
    return None


def open_any(name: str, fmt: str, warn: Warn) -> RecordFile:
    """Open one file in format `fmt`, or (`auto`) the format its content shows."""
    if fmt == "auto":
        fmt = detect(name) or "auto"
    return OPENERS.get(fmt, _auto_text)(name, warn)
