"""Showing data literally in the app: no markup, no terminal escape sequences; and the
wording and ordering rules the screens share (stages, weights).

Control characters are made visible by `ppp_tui.safe_text` (ESC becomes ␛), the one
place both faces turn data into terminal text; here that text becomes textual
`Content` and rich `Text`, which are never parsed as markup, so `[bold]` or `[/]`
in a name stays brackets.
"""

from __future__ import annotations

from collections.abc import Iterable

from rich.text import Text
from textual.content import Content

from ..core.settings import Weights
from ..core.stages import NO_STAGE, ordered
from ..safe_text import inline, line_start, literal

__all__ = [
    "NO_STAGE",
    "NO_STAGE_VALUE",
    "cell",
    "inline",
    "line_start",
    "literal",
    "plain",
    "stage_order",
    "stage_tables",
    "weights_text",
]


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


# -- wording and ordering the screens share -------------------------------------------


NO_STAGE_VALUE = "\x00no-stage"  # its value: no real stage name can be this


def stage_order(stages: Iterable[str | None]) -> list[str]:
    """The distinct named stages: the six pipeline stages in pipeline order, then any
    others alphabetically (runs without a stage are left out)."""
    return [stage for stage in ordered(stages) if stage]


def stage_tables(count: int) -> str:
    """'1 stage table', '3 stage tables'."""
    return f"{count} stage table" if count == 1 else f"{count} stage tables"


def weights_text(weights: Weights) -> str:
    """Weights in a status line: technical/interaction in the pair form (0.70/0.30),
    else technical/proactivity/personalization (0.70/0.40/0.20)."""
    if weights.is_pair:
        return f"{weights.technical:.2f}/{weights.interaction:.2f}"
    return f"{weights.technical:.2f}/{weights.proactivity:.2f}/{weights.personalization:.2f}"
