"""The question asked before quitting with unsaved weights."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Label


class QuitScreen(ModalScreen[str]):
    """Asked before quitting with unsaved weights: save, discard, or stay."""

    BINDINGS = [Binding("escape", "dismiss('cancel')", "Cancel")]

    def compose(self) -> ComposeResult:
        with Vertical(id="quit"):
            yield Label("The weights have unsaved changes. Save them to config.toml?")
            with Horizontal(id="quit-buttons"):
                yield Button("Save and quit", variant="primary", id="save")
                yield Button("Quit without saving", variant="error", id="discard")
                yield Button("Cancel", id="cancel")

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id or "cancel")
