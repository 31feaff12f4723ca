"""Showing data literally in the app: no markup, no terminal escape sequences.

Control characters are made visible by `ppp_tui.safe_text` (ESC becomes ␛), the one
place both faces turn data into terminal text; here that text becomes textual
`Content` and rich `Text`, which are never parsed as markup, so `[bold]` or `[/]`
in a name stays brackets.
"""

from __future__ import annotations

from rich.text import Text
from textual.content import Content

from ..safe_text import inline, line_start, literal

__all__ = ["cell", "inline", "line_start", "literal", "plain"]


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
