"""What the screens ask of the app, as typed messages.

A screen never calls another screen or the app's internals: it posts one of these,
the message bubbles from the screen to the app, and the app handles it in one place
(it owns the workspace, the database and the screen stack). The app then tells the
screen on top that the workspace changed (`WorkspaceView.workspace_changed`); the
screens under it catch up when they show again.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from textual.message import Message

from ..core.settings import Weights


@dataclass
class OpenRun(Message):
    """Open one run side by side (from the runs list, the dashboard, the palette); with
    `instead`, in place of the screen on top (a run's screen opening the next to mark)."""

    run_id: str
    instead: bool = field(default=False, kw_only=True)


@dataclass
class WeightsChanged(Message):
    """The user moved the weights of one scope (a slider, a key, "use optimal").

    `scope` is a stage whose own table is edited, or None for the global weights;
    `started` is when the input arrived (`time.perf_counter()`), for the step latency;
    `provenance`, when the weights come from the tuner, is written beside them on save.
    """

    weights: Weights
    scope: str | None
    started: float
    provenance: str | None = field(default=None, kw_only=True)


@dataclass
class MarkChanged(Message):
    """Mark `agent` as the run's preferred one (None clears the mark)."""

    run_id: str
    agent: str | None


@dataclass
class TechnicalRated(Message):
    """The user rated `agent`'s technical quality by hand: a score in [0, 1]."""

    run_id: str
    agent: str
    technical: float


@dataclass
class PresetChosen(Message):
    """Apply a preset (its key) to one scope: a stage's table, or None for global."""

    key: str
    scope: str | None


@dataclass
class WeightsReset(Message):
    """Back to the weights config.toml holds."""


@dataclass
class StageFiltered(Message):
    """The runs list is now filtered by this stage (None: every stage); the dashboard
    opens on it."""

    stage: str | None


@dataclass
class GroupRuns(Message):
    """Make one run of these runs' agents (runs read from sessions), with the id `name`
    (None: the id an import gives their sessions as one run)."""

    run_ids: tuple[str, ...]
    name: str | None


@dataclass
class UngroupRun(Message):
    """Give each session of this run its own run again."""

    run_id: str
