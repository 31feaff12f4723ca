"""The one place where data becomes terminal text: no control character gets through.

Imported runs, config.toml and the command line can carry anything: escape sequences
that set the clipboard (OSC 52) or the window title, clear the screen, or reorder a
line (bidi overrides), and newlines that fake table rows. Both faces show data only
through these functions, which swap every such character for a visible stand-in:

- C0 controls (ESC becomes ␛, a newline ␊) and DEL (␡): their Unicode pictures;
- C1 controls (the 8-bit ESC cousins, such as CSI 0x9b): ``\\x9b``;
- bidi controls (U+202A-U+202E, U+2066-U+2069, U+200E, U+200F, U+061C) and lone
  surrogates (which no terminal encoding can write): ``<U+202E>``.

Tab and newline are kept where text really is several lines (`literal`); a name, id or
stage always stays on one line (`inline`). JSON keeps its values exact but writes the
characters JSON would leave raw as ``\\uXXXX`` escapes (`json_escape`).

This module never parses markup; the app builds textual Content or rich Text from
what it returns, which textual shows as written.
"""

from __future__ import annotations

import re
from typing import IO, Any

_BIDI = "\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
_SURROGATES = "\ud800-\udfff"
# Everything a terminal may act on, tab and newline included.
_UNSAFE = re.compile(f"[\\x00-\\x1f\\x7f-\\x9f{_BIDI}{_SURROGATES}]")
# The same without tab and newline, for text of several lines.
_UNSAFE_IN_TEXT = re.compile(f"[\\x00-\\x08\\x0b-\\x1f\\x7f-\\x9f{_BIDI}{_SURROGATES}]")
# What json.dumps(ensure_ascii=False) leaves raw: DEL, C1, bidi, lone surrogates.
_RAW_IN_JSON = re.compile(f"[\\x7f-\\x9f{_BIDI}{_SURROGATES}]")


def _picture(match: re.Match[str]) -> str:
    code = ord(match.group())
    if code < 0x20:
        return chr(0x2400 + code)  # ␀ … ␟
    if code == 0x7F:
        return "␡"
    if code <= 0x9F:
        return f"\\x{code:02x}"
    return f"<U+{code:04X}>"


def inline(text: object) -> str:
    """One line of data (an id, a name, a stage, a key, a path): every control shown."""
    if text is None:
        return ""
    return _UNSAFE.sub(_picture, str(text))


def literal(text: str | None, one_line: bool = False) -> str:
    """Text with its control characters shown; tab and newline kept, or, if `one_line`,
    every run of white space folded into one space (prose on one row)."""
    if not text:
        return ""
    shown = _UNSAFE_IN_TEXT.sub(_picture, text)
    if one_line:
        shown = " ".join(shown.split())
    return shown


def line_start(text: str | None, length: int) -> str:
    """The start of `literal(text, one_line=True)`: its first `length` characters, and
    one more when it goes on (so a cut shows), without working through the rest of a
    long text (a prompt may be megabytes; a table row needs a screen's width)."""
    if not text:
        return ""
    piece = 2 * length + 64
    while True:
        shown = literal(text[:piece], one_line=True)
        if len(shown) > length or piece >= len(text):
            return shown[: length + 1]
        piece *= 4  # mostly white space so far: read on


def _json_escape(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group()):04x}"


def json_escape(document: str) -> str:
    """JSON text from json.dumps(ensure_ascii=False) with no raw control left: DEL, C1
    and bidi characters and lone surrogates become \\uXXXX escapes, the same JSON value.

    Outside strings such JSON is plain ASCII, so the swap only ever touches strings.
    """
    return _RAW_IN_JSON.sub(_json_escape, document)


def is_terminal(stream: IO[Any]) -> bool:
    """Whether `stream` is an interactive terminal (data written there must be made safe)."""
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # closed or not a real stream
        return False


def number(value: float | None, digits: int = 3, signed: bool = False) -> str:
    """A score as every face prints it: fixed decimals, "—" when absent."""
    if value is None:
        return "—"
    return f"{value:+.{digits}f}" if signed else f"{value:.{digits}f}"


def clean(value: Any) -> Any:
    """Floats without binary noise: 0.645, not 0.6450000000000001."""
    kind = type(value)
    if kind is float:
        return round(value, 10)
    if kind is dict:
        return {key: clean(item) for key, item in value.items()}
    if kind is list or kind is tuple:
        return [clean(item) for item in value]
    if isinstance(value, float):  # numpy floats
        return round(float(value), 10)
    return value
