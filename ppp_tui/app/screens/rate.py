"""The box that asks for an agent's technical score by hand (`e` on a run).

A score from 0 to 1, or 1 to 5 stars mapped onto [0, 1] as (n - 1) / 4. A bare "1"
could be either (one star is 0, a score of 1 is the best), so it is refused until
written "1*" or "1.0".
"""

from __future__ import annotations

import math
import re

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Input, Label, Static

from ..text import literal

PROMPT = (
    "A score from 0 to 1 (0.8), or stars: a whole number from 1 to 5, mapped onto"
    " [0, 1] as (n - 1) / 4 (4 stars is 0.75). Write one star as 1*."
)
# Stars: "4", "4*", "4 stars", "★★★★".
_STARS = re.compile(r"(?P<n>[1-5])\s*(\*|★|stars?)?|(?P<glyphs>★{1,5})", re.IGNORECASE)


def parse_rating(text: str) -> float:
    """The technical score `text` gives; ValueError with what is wrong, in one line."""
    typed = text.strip()
    if not typed:
        raise ValueError("type a score from 0 to 1, or 1 to 5 stars")
    if typed == "1":
        raise ValueError("1 could be one star (0) or the best score: type 1* or 1.0")
    stars = _STARS.fullmatch(typed)
    if stars is not None:
        count = int(stars["n"]) if stars["n"] else len(stars["glyphs"])
        return (count - 1) / 4
    try:
        value = float(typed)
    except ValueError:
        shown = literal(typed, True)
        shown = shown if len(shown) <= 20 else f"{shown[:19]}…"
        raise ValueError(f"“{shown}” is not a score: type 0.8, or 4 for stars") from None
    if not math.isfinite(value) or not 0.0 <= value <= 1.0:
        raise ValueError("a score is from 0 to 1, stars from 1 to 5")
    return value


class RateScreen(ModalScreen[float | None]):
    """Asks for one agent's technical score; dismissed with it, or None if cancelled."""

    BINDINGS = [Binding("escape", "dismiss(None)", "Cancel")]

    def __init__(self, agent: str, current: str) -> None:
        super().__init__()
        self.agent = agent
        self.current = current  # its technical score as shown now

    def compose(self) -> ComposeResult:
        with Vertical(id="rate"):
            yield Label(
                Content.assemble(
                    ("Rate the technical quality of ", "bold"),
                    (literal(self.agent, True), "bold"),
                ),
                id="rate-title",
            )
            yield Static(Content(f"now: {self.current}"), id="rate-current")
            yield Static(PROMPT, id="rate-prompt", markup=False)
            yield Input(placeholder="0.8, or 4 for four stars", id="rate-input")
            yield Label("", id="rate-message")
            yield Label("enter saves · escape cancels", id="rate-close")

    @on(Input.Changed, "#rate-input")
    def _typed(self, event: Input.Changed) -> None:
        """What the text gives so far, or nothing while it is not a rating yet."""
        message = self.query_one("#rate-message", Label)
        message.remove_class("-error")
        try:
            message.update(Content(f"technical {parse_rating(event.value):.2f}"))
        except ValueError:
            message.update("")

    @on(Input.Submitted, "#rate-input")
    def _submitted(self, event: Input.Submitted) -> None:
        try:
            value = parse_rating(event.value)
        except ValueError as error:
            message = self.query_one("#rate-message", Label)
            message.add_class("-error")
            message.update(Content(str(error)))
            return
        self.dismiss(value)
