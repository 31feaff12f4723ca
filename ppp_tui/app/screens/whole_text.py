"""A step of a session's conversation opened whole (`o` on the conversation): the text
the conversation cut to a few lines, or the tool call it folded to one row.

The text can be megabytes (a file read, a log pasted): it is shown by the
conversation's own view, which wraps it with plain string slicing and draws only the
rows on screen, so opening it takes a moment however long it is.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Label

from ...core.wording import counted
from ..widgets.conversation import Conversation, whole_lines


class WholeTextScreen(ModalScreen[None]):
    """One step's whole text, scrolled with the keys or the mouse."""

    BINDINGS = [Binding("escape,q", "dismiss", "Close", id="whole.close")]
    DEFAULT_CSS = """
    WholeTextScreen { align: center middle; }
    #whole {
        width: 100%;
        height: 100%;
        padding: 0 1;
        border: thick $primary;
        background: $surface;
    }
    #whole-title { text-style: bold; }
    #whole-close { color: $text-muted; }
    """

    def __init__(self, text: str, title: str) -> None:
        super().__init__()
        self.text = text
        self.title_text = title

    def compose(self) -> ComposeResult:
        lines = self.text.count("\n") + 1
        size = f"{counted(lines, 'line')}, {counted(len(self.text), 'character')}"
        with Vertical(id="whole"):
            yield Label(Content(f"{self.title_text} · {size}"), id="whole-title")
            yield Conversation(id="whole-text")
            yield Label("escape closes · ↑/↓ pgup/pgdn home/end scroll", id="whole-close")

    def on_mount(self) -> None:
        view = self.query_one(Conversation)
        view.show(whole_lines(self.text))
        view.focus()
