"""The question asked before quitting with unsaved weights."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Label

from ..text import literal


class QuitScreen(ModalScreen[str]):
    """Asked before quitting with unsaved weights: save, discard, or stay."""

    BINDINGS = [Binding("escape", "dismiss('cancel')", "Cancel")]

    def __init__(self, config_name: str = "config.toml") -> None:
        super().__init__()
        self.config_name = config_name  # the file saving writes (the demo has its own)

    def compose(self) -> ComposeResult:
        with Vertical(id="quit"):
            name = literal(self.config_name, True)
            yield Label(f"The weights have unsaved changes. Save them to {name}?", markup=False)
            with Horizontal(id="quit-buttons"):
                yield Button("Save and quit", variant="primary", id="save")
                yield Button("Quit without saving", variant="error", id="discard")
                yield Button("Cancel", id="cancel")

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id or "cancel")
