"""What a screen may ask of the app: a small typed interface, so that no screen imports
the app module itself.

A screen reads the workspace (the runs, the weights, the marks) and waits for the
load; everything it wants done (open a run, mark an agent, change the weights) it asks
for with a message (messages.py), which the app handles in one place.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from textual.app import App
from textual.screen import Screen

if TYPE_CHECKING:
    from .workspace import Workspace


class AppServices(App[None]):
    """The app as its screens see it (PPPApp is the one): the workspace once loaded, the
    event set when the load ends, and the runs list's stage."""

    workspace: Workspace | None
    load_done: asyncio.Event
    stage_filter: str | None  # the stage the runs list is filtered by
    team_store: bool  # the runs are a team store's, on a PostgreSQL server


class WorkspaceView(Screen[None]):
    """A screen that shows the workspace: the app tells it when weights or marks change
    (only while it is on top; under another screen it catches up when it shows again),
    asks it which weights it edits (the `[` and `]` keys, the palette's presets) and
    which runs it shows (the palette's export)."""

    app: AppServices

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
