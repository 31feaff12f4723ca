"""The screens that show the workspace, as the app sees them: it tells the one on top
when the weights or the marks change, asks it which weights it edits (the `[` and `]`
keys, the palette's presets) and which runs it shows (the palette's export)."""

from __future__ import annotations

from textual.screen import Screen


class WorkspaceView(Screen[None]):
    """A screen that shows the workspace: the app tells it when weights or marks change
    (only while it is on top; under another screen it catches up when it shows again)."""

    @property
    def scope(self) -> str | None:
        """The weights this screen edits: a stage's own table, or None for global."""
        return None

    def workspace_changed(self) -> None:
        """The weights or the marks changed: show them."""
        raise NotImplementedError

    def shown_run_ids(self) -> list[str] | None:
        """The runs this screen shows, for an export (None: every run)."""
        return None
