"""The leaderboard (`b`): the agents ranked by Bradley-Terry strength fitted to your
marks, beside the same fit to the picks under the weights being edited. Computed in a
worker thread by `ppp_tui.core.leaderboard`; the stage filter at the top applies to it."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.content import Content
from textual.widgets import DataTable, Footer, Header, Select, Static

from ...core.leaderboard import PRIOR_GAMES, Fit, Leaderboard, leaderboard_under
from ...core.scores import Scores
from ...core.settings import Settings
from ...core.wording import counted
from ..services import AppServices
from ..text import cell, literal, stage_tables, weights_text
from ..widgets.fitted_table import Column, FittedTable, numbers
from .recomputing import RecomputingScreen

if TYPE_CHECKING:
    from ..workspace import Workspace

# What the figures mean, under the table.
NOTES = (
    "rating: Bradley-Terry log-strength × 400/ln 10, centred on the mean (Elo-like: 174"
    " points apart, the first wins 73% of the time). 95% int.: {resamples} bootstrap"
    " resamples of the marked runs. won: pairwise win rate · marks: runs taken part in ·"
    " pref: times preferred · weights: the same fit to the weights' picks."
    " * never lost or never won: the rating rests on the prior (each agent plays"
    f" {PRIOR_GAMES:g} virtual win and {PRIOR_GAMES:g} virtual loss against a rating of 0)."
)


@dataclass(frozen=True)
class Request:
    """What the leaderboard is computed from: the stage (None: all), and the workspace's
    weights and marks (`state`; the arrays and the settings go with it)."""

    stage: str | None
    state: object
    settings: Settings = field(compare=False)
    scores: Scores = field(compare=False)


@dataclass(frozen=True)
class Result:
    stage: str | None
    board: Leaderboard | None  # None: no marked run


# A figure cut at the table's edge is left out.
BOARD_COLUMNS = (
    Column("agent"),
    *numbers("rating", "95% int.", "won", "marks", "pref", "weights", "95% int.", "picked"),
)


class LeaderboardScreen(RecomputingScreen[Request, Result]):
    """Every agent of the marked runs: its strength under your marks and the weights'."""

    BINDINGS = [Binding("escape", "app.pop_screen", "Back", id="leaderboard.back")]
    STATUS = "#leaderboard-status"
    STAGE_SELECT = "#leaderboard-stage"

    app: AppServices

    def __init__(self, stage: str | None = None) -> None:
        super().__init__()
        self.stage = stage
        self.result: Result | None = None
        self._note = ""  # how the shown figures were computed, for the status line

    def compose(self) -> ComposeResult:
        yield Header()
        with Horizontal(id="leaderboard-tools"):
            yield Select([], prompt="All stages", id="leaderboard-stage", allow_blank=True)
            yield Static("", id="leaderboard-status")
        with VerticalScroll(id="leaderboard-body"):
            yield FittedTable(
                BOARD_COLUMNS, id="leaderboard-table", cursor_type="row", zebra_stripes=True
            )
            yield Static(id="leaderboard-notes")
        yield Footer()

    def on_mount(self) -> None:
        table = self.query_one("#leaderboard-table", DataTable)
        table.border_title = "Agents by strength under your marks"
        table.border_subtitle = "weights: the picks under the weights being edited"
        self.runs_loaded()
        table.focus()
        self.recompute(now=True)

    # -- computing -----------------------------------------------------------------

    def request(self, workspace: Workspace) -> Request:
        assert workspace.scores is not None
        return Request(self.stage, workspace.state(), workspace.settings, workspace.scores)

    def started(self, request: Request) -> None:
        super().started(request)
        table = self.query_one("#leaderboard-table", DataTable)
        table.loading = self.result is None or self.result.stage != request.stage

    def compute(self, request: Request) -> Result:
        arrays = request.scores.arrays
        if request.stage is not None:
            arrays = arrays.subset(arrays.stage_mask(request.stage))
        return Result(request.stage, leaderboard_under(arrays, request.settings))

    def show(self, result: Result, seconds: float) -> None:
        self.query_one("#leaderboard-table", DataTable).loading = False
        self.result = result
        self._note = f"computed in {seconds:.2f} s"
        self._show()

    def failed(self, error: str) -> None:
        self.query_one("#leaderboard-table", DataTable).loading = False
        super().failed(error)

    @on(Select.Changed, "#leaderboard-stage")
    def _stage_changed(self, event: Select.Changed) -> None:
        self.stage = event.value if isinstance(event.value, str) else None
        self.recompute(now=True)

    # -- showing -------------------------------------------------------------------

    def _show(self) -> None:
        result = self.result
        workspace = self.app.workspace
        assert result is not None and workspace is not None
        settings = workspace.settings
        board = result.board
        scope = "all stages" if result.stage is None else f"stage {result.stage}"
        parts = [literal(scope, True)]
        if board is not None:
            parts.append(f"{counted(board.marked_runs, 'marked run')}")
            parts.append(counted(board.comparisons, "pairwise win"))
        parts.append(f"weights {weights_text(settings.weights_for(result.stage))}")
        if result.stage is None and settings.stage_weights:
            parts.append(stage_tables(len(settings.stage_weights)))
        parts.append(self._note)
        self.query_one("#leaderboard-status", Static).update(Content("  ·  ".join(parts)))
        table = self.query_one("#leaderboard-table", FittedTable)
        notes = self.query_one("#leaderboard-notes", Static)
        if board is None:
            table.show_rows({})
            notes.update(
                "No marked runs here yet: mark the agent you prefer in a run (p on its"
                " screen) and the agents are ranked by your marks."
            )
            return
        notes.update(Content(NOTES.format(resamples=board.resamples)))
        marks, picks = board.marks, board.picks
        rows: dict[str, tuple[Text, ...]] = {}
        for i, agent in enumerate(board.agents):
            figures = (
                _rating(marks, i),
                _interval(marks, i),
                _percent(marks.win_rate[i]),
                f"{board.runs[i]:,}",
                f"{marks.chosen[i]:,}",
                _rating(picks, i),
                _interval(picks, i),
                f"{picks.chosen[i]:,}",
            )
            rows[agent] = (cell(agent, "bold"), *(Text(text, justify="right") for text in figures))
        # The same agent stays under the cursor while marks re-order the agents.
        table.show_rows(rows)


def _rating(fit: Fit, i: int) -> str:
    return f"{fit.rating[i]:+.0f}{'*' if fit.one_sided[i] else ''}"


def _interval(fit: Fit, i: int) -> str:
    return f"{fit.rating_low[i]:+.0f}…{fit.rating_high[i]:+.0f}"


def _percent(value: float) -> str:
    return "—" if math.isnan(value) else f"{value:.0%}"
