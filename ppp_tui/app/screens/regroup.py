"""The boxes that ask before runs read from sessions are grouped (`g` on the runs list,
with a field for the grouped run's id) or ungrouped (`u` on a run)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, Static

from ...core.wording import counted
from ..text import literal

if TYPE_CHECKING:
    from ...core.model import Run
    from ...storage.store import RunInfo

LISTED = 6  # runs the grouping box names; the rest are counted


def run_line(run_id: str, agents: int, task: str | None, width: int = 64) -> str:
    """One run as the boxes name it: its id, its agents and its task, on one line."""
    from ..widgets.conversation import cut  # the run screen's module: loaded when a box opens

    head = f"{literal(run_id, True)} · {agents} agent{'s' * (agents != 1)}"
    shown = literal(task, True)
    return cut(f"{head} · {shown}" if shown else head, width)


class GroupScreen(ModalScreen[str | None]):
    """Asks before grouping runs, with a field for the grouped run's name; dismissed with
    the name ("" for the default id) or None if cancelled."""

    BINDINGS = [Binding("escape", "dismiss(None)", "Cancel")]

    def __init__(self, runs: Sequence[RunInfo], default: str, taken: Callable[[str], bool]) -> None:
        super().__init__()
        self.runs = runs
        self.default = default
        self.taken = taken  # whether a name is another run's id

    def compose(self) -> ComposeResult:
        lines = [run_line(i.id, i.agents, i.task) for i in self.runs[:LISTED]]
        if len(self.runs) > LISTED:
            lines.append(f"… and {len(self.runs) - LISTED} more")
        with Vertical(id="group"):
            yield Label(
                Content.styled(
                    f"Group {counted(len(self.runs), 'run')} into one run of their agents", "bold"
                )
            )
            yield Static(Content("\n".join(lines)), id="group-runs")
            yield Static(
                "Marks, their history and ratings by hand go with the agents.",
                id="group-note",
                markup=False,
            )
            yield Input(placeholder=f"its id (empty: {self.default})", id="group-name")
            yield Label("", id="group-message", markup=False)
            yield Label("enter groups · escape cancels", id="group-close")

    @on(Input.Submitted, "#group-name")
    def _submitted(self, event: Input.Submitted) -> None:
        name = event.value
        if not name.strip():
            self.dismiss("")  # the default id
        elif self.taken(name):
            from ..widgets.conversation import cut

            shown = cut(literal(name, True), 30)
            self.query_one("#group-message", Label).update(
                f"run {shown} exists already: choose another name"
            )
        else:
            self.dismiss(name)


class UngroupScreen(ModalScreen[bool]):
    """Asks before giving each session of a run its own run again."""

    BINDINGS = [Binding("escape", "dismiss(False)", "Cancel")]

    def __init__(self, run: Run) -> None:
        super().__init__()
        self.run = run

    def compose(self) -> ComposeResult:
        with Vertical(id="ungroup"):
            yield Label(Content.styled("Ungroup this run?", "bold"))
            run = self.run
            yield Static(Content(run_line(run.id, len(run.agents), run.task)), id="ungroup-run")
            yield Static(
                f"Each of its {counted(len(run.agents), 'session')} becomes a run of its own"
                " again; marks, their history and ratings by hand go with the agents.",
                id="ungroup-note",
                markup=False,
            )
            with Horizontal(id="ungroup-buttons"):
                yield Button("Ungroup", variant="warning", id="ungroup-yes")
                yield Button("Cancel", id="ungroup-no")

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "ungroup-yes")
