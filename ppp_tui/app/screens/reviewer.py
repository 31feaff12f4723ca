"""Switching the reviewer: whose marks the app shows and counts, and whom `p` marks for."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Input, Label, OptionList
from textual.widgets.option_list import Option

from ...core.errors import PPPError
from ...storage.reviewers import checked, shown
from ..text import literal


class ReviewerScreen(ModalScreen[str | None]):
    """The reviewers with marks (and how many), and a field for another name; dismissed
    with the chosen reviewer's stored name, or None."""

    BINDINGS = [Binding("escape", "dismiss(None)", "Cancel")]

    def __init__(self, current: str, counts: list[tuple[str, int]]) -> None:
        super().__init__()
        self.current = current
        self.counts = counts

    def compose(self) -> ComposeResult:
        with Vertical(id="reviewer"):
            yield Label(
                f"Reviewer now: {literal(shown(self.current), True)}. Whose marks to show,"
                " count and record?",
                markup=False,
            )
            # Names are shown as they are: a Content is never read as markup.
            options = [
                Option(
                    Content(f"{literal(shown(name), True)}  ({n:,} marked run{'s' * (n != 1)})"),
                    id=f"r:{name}",
                )
                for name, n in self.counts
            ]
            if not any(name == self.current for name, _ in self.counts):
                current = Content(f"{literal(shown(self.current), True)}  (no marks yet)")
                options.insert(0, Option(current, id=f"r:{self.current}"))
            yield OptionList(*options, id="reviewer-list")
            yield Input(placeholder="or type another name, then enter", id="reviewer-name")
            yield Label("", id="reviewer-error", markup=False)

    def on_mount(self) -> None:
        listing = self.query_one(OptionList)
        for index in range(listing.option_count):
            if listing.get_option_at_index(index).id == f"r:{self.current}":
                listing.highlighted = index
        listing.focus()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        option_id = event.option.id or ""
        self.dismiss(option_id.removeprefix("r:"))

    def on_input_submitted(self, event: Input.Submitted) -> None:
        try:
            name = checked(event.value)
        except PPPError as error:
            self.query_one("#reviewer-error", Label).update(str(error).removeprefix("reviewer: "))
            return
        self.dismiss(name)
