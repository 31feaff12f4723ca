"""Showing agent text literally: no markup, no terminal escape sequences.

Imported text (tasks, questions, responses, outputs) reaches the screen through
`literal`, which swaps every control character for its visible Unicode picture
(ESC becomes ␛), and through `Content` objects built from plain strings, which
textual never parses as markup.
"""

from __future__ import annotations

import re

from rich.text import Text
from textual.content import Content

# C0 controls except tab and newline, DEL, and the C1 range (ESC's 8-bit cousins).
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f\x80-\x9f]")


def _picture(match: re.Match[str]) -> str:
    code = ord(match.group())
    if code < 0x20:
        return chr(0x2400 + code)  # ␀ … ␟
    if code == 0x7F:
        return "␡"
    return f"\\x{code:02x}"


def literal(text: str | None, one_line: bool = False) -> str:
    """`text` with control characters made visible; newlines folded if `one_line`."""
    if not text:
        return ""
    shown = _CONTROL.sub(_picture, text)
    if one_line:
        shown = " ".join(shown.split())
    return shown


def plain(text: str | None, style: str = "", one_line: bool = False) -> Content:
    """A Content of literal text: brackets such as [bold] stay brackets."""
    return (
        Content.styled(literal(text, one_line), style)
        if style
        else Content(literal(text, one_line))
    )


def cell(text: str | None, style: str = "") -> Text:
    """A DataTable cell of literal one-line text (rich Text is never parsed as markup)."""
    return Text(literal(text, one_line=True), style=style, no_wrap=True)
