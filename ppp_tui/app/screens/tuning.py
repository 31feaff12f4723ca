"""The regret and tuning panel (`t`): curves over the technical weight, the exact
optimum with its cross-validated figures and bootstrap interval, per-stage optima,
and "use optimal", which moves the weights (saving stays ctrl+s)."""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

import numpy as np
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.widgets import Button, Footer, Header, Select, Static
from textual_plotext import PlotextPlot

from ...core.arrays import Lines
from ...core.scores import Scores, provenance, tune_scope, tune_stages
from ...core.settings import Weights
from ...core.tuning import Tuning
from ...core.wording import counted
from ..messages import WeightsChanged
from ..services import AppServices
from ..text import cell, literal, stage_order
from ..widgets.colours import BAD, CAUTION, CURRENT, GOOD, plot_colour, watch_theme
from ..widgets.fitted_table import Column, FittedTable, numbers
from ..widgets.heat_map import Heat, RegretHeatMap, heat_figures, regret_heat
from .recomputing import RecomputingScreen

if TYPE_CHECKING:
    from rich.text import Text

    from ..workspace import Workspace


@dataclass(frozen=True)
class Request:
    """What a tuning is computed from: the scope, and the workspace's weights and marks
    (`state`; the arrays under the weights being edited go with it)."""

    scope: str | None  # None: the global weights
    state: object
    scores: Scores = field(compare=False)


@dataclass(frozen=True)
class Result:
    """One computation: the chosen scope's tuning and every stage's."""

    scope: str | None  # None: the global weights
    current: float  # the scope's technical weight when computed
    tuning: Tuning | None
    stages: list[tuple[str, Tuning]]
    heat: Heat | None = None  # mean regret over both free weights, and their optimum
    free: tuple[float, float] = (0.3, 0.3)  # the scope's free weights when computed


# The per-stage optima: a figure cut at the table's edge is left out.
STAGE_COLUMNS = (
    Column("stage"),
    *numbers("marked", "current", "optimum", "95% interval", "mean regret", "agreement"),
)


class TuningScreen(RecomputingScreen[Request, Result]):
    """Mean regret and agreement over the technical weight, and where they are best."""

    # Below 110 columns the figures and the per-stage table stack (class -narrow).
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (110, "-wide")]
    BINDINGS = [
        Binding("escape", "app.pop_screen", "Back", id="tuning.back"),
        Binding(
            "u",
            "use_optimal",
            "Use optimal",
            tooltip="Move the weights to the optimum (ctrl+s saves them)",
            id="tuning.use",
        ),
    ]

    app: AppServices

    def __init__(self, scope: str | None = None) -> None:
        super().__init__()
        self._scope = scope  # None: the global weights
        # The scope menu's values are positions in this list (a stage may be named anything).
        self._scopes: list[str | None] = [None]
        self.result: Result | None = None

    @property
    def scope(self) -> str | None:
        """The stage whose weights are tuned; None for the global pair (the app's `[` and
        `]` move this scope's weight)."""
        return self._scope

    def compose(self) -> ComposeResult:
        yield Header()
        with Horizontal(id="tuning-tools"):
            yield Select([("global weights", 0)], value=0, id="tuning-scope")
            yield Button("Use optimal (u)", id="tuning-use", variant="primary", disabled=True)
            yield Static("", id="tuning-status")
        with VerticalScroll(id="tuning-body"):  # scrolls on a small terminal
            with Horizontal(id="tuning-plots"):
                yield PlotextPlot(id="regret-plot")
                yield PlotextPlot(id="agreement-plot")
            with Horizontal(id="tuning-heat"):
                yield RegretHeatMap(id="regret-heat")
                yield Static("", id="tuning-heat-figures")
            with Horizontal(id="tuning-lower"):
                yield Static("", id="tuning-figures")
                with Vertical(id="tuning-stages-box"):
                    yield Static(
                        Content.styled("Per-stage optima", "bold"), id="tuning-stages-title"
                    )
                    yield FittedTable(
                        STAGE_COLUMNS, id="tuning-stages", cursor_type="row", zebra_stripes=True
                    )
        yield Footer()

    STATUS = "#tuning-status"

    def on_mount(self) -> None:
        self.runs_loaded()
        watch_theme(self, self._redraw)  # the plots' colours come from the theme
        self.recompute(now=True)

    def runs_loaded(self) -> None:
        """The scope menu: global, and each stage with runs."""
        workspace = self.app.workspace
        if workspace is None or workspace.scores is None:
            return
        stages = stage_order(workspace.scores.arrays.stages)
        self._scopes = [None, *stages]
        options = [(Content("global weights"), 0)]
        options += [(Content(f"stage {literal(s, True)}"), i) for i, s in enumerate(stages, 1)]
        select = self.query_one("#tuning-scope", Select)
        if self._scope not in self._scopes:
            self._scope = None
        with select.prevent(Select.Changed):
            select.set_options(options)
            select.value = self._scopes.index(self._scope)

    # -- computing -------------------------------------------------------------------

    def request(self, workspace: Workspace) -> Request:
        assert workspace.scores is not None
        # The arrays under the weights being edited (their penalties are the loaded ones).
        scores = replace(workspace.scores, settings=workspace.settings)
        return Request(self._scope, workspace.state(), scores)

    def started(self, request: Request) -> None:
        self._set_status("tuning…")

    def compute(self, request: Request) -> Result:
        scores = request.scores
        stage = request.scope
        _, tuning = tune_scope(scores, stage)
        weights = scores.settings.weights_for(stage)
        free = (weights.proactivity, weights.personalization)
        heat = regret_heat(_scope_lines(scores, stage), free)
        return Result(
            request.scope, weights.technical, tuning, tune_stages(scores), heat=heat, free=free
        )

    def show(self, result: Result, seconds: float) -> None:
        self.result = result
        self._show()

    def _redraw(self) -> None:
        if self.result is not None:
            self._show()

    @property
    def scopes(self) -> list[str | None]:
        """The scopes the menu offers, in its order: None (global weights), then stages."""
        return list(self._scopes)

    def choose_scope(self, scope: str | None) -> None:
        """Select `scope` in the menu (a stage with runs, or None for the global weights)."""
        self.query_one("#tuning-scope", Select).value = self._scopes.index(scope)

    @on(Select.Changed, "#tuning-scope")
    def _scope_changed(self, event: Select.Changed) -> None:
        # The menu's value now, not the message's: the message of the menu's first value
        # (global) arrives after the menu was set to the scope the panel opened on.
        value = event.select.value
        if isinstance(value, int) and 0 <= value < len(self._scopes):
            scope = self._scopes[value]
            if scope != self._scope:
                self._scope = scope
                self.recompute(now=True)

    # -- showing -----------------------------------------------------------------------

    def _show(self) -> None:
        result = self.result
        assert result is not None
        tuning = result.tuning
        status = self.query_one("#tuning-status", Static)
        use = self.query_one("#tuning-use", Button)
        name = "global weights" if result.scope is None else f"stage {result.scope}"
        if tuning is None:
            workspace = self.app.workspace
            marked = workspace is not None and workspace.figures().marked_runs > 0
            why = (
                "no marked run uses them (each marked run's stage has its own table):"
                " pick a stage above"
                if result.scope is None and marked
                else "no marked runs to tune on (p marks one)"
            )
            status.update(Content(f"{literal(name, True)}: {why}"))
            use.disabled = True
            self._plot(None, None)
        else:
            status.update(
                Content(
                    f"{literal(name, True)}: {counted(tuning.marked_runs, 'marked run')} ·"
                    f" tuned {time.strftime('%H:%M:%S')}"
                )
            )
            use.disabled = abs(tuning.technical - result.current) < 5e-5
            self._plot(tuning, result.current)
        self._figures(result)
        self._stages(result)
        self._show_heat(result)

    def _show_heat(self, result: Result) -> None:
        """The heat map over both free weights; "use optimal" goes to its optimum."""
        heat_map = self.query_one(RegretHeatMap)
        heat_map.heat = result.heat
        heat_map.current = result.free
        self.query_one("#tuning-heat-figures", Static).update(heat_figures(result.heat))
        if result.heat is not None:
            best = result.heat.optimum
            self.query_one("#tuning-use", Button).disabled = (
                abs(best.proactivity - result.free[0]) < 5e-5
                and abs(best.personalization - result.free[1]) < 5e-5
            )

    def _plot(self, tuning: Tuning | None, current: float | None) -> None:
        points = tuning.curve if tuning is not None else ()
        xs = [p.technical for p in points]
        for plot_id, title, values, colour in (
            ("#regret-plot", "mean regret", [p.mean_regret for p in points], BAD),
            ("#agreement-plot", "agreement %", [100 * p.agreement for p in points], GOOD),
        ):
            widget = self.query_one(plot_id, PlotextPlot)
            plt = widget.plt
            plt.clear_data()
            plt.clear_figure()
            plt.title(title)
            plt.xlabel("technical weight")
            plt.xlim(0, 1)
            if xs:
                plt.plot(xs, values, color=plot_colour(self.app, colour), marker="braille")
                ticks = {0.0, 1.0}
                if current is not None:
                    plt.vline(current, plot_colour(self.app, CURRENT))
                    ticks.add(round(current, 2))
                if tuning is not None:
                    plt.vline(tuning.technical, plot_colour(self.app, CAUTION))
                    ticks.add(round(tuning.technical, 2))
                plt.xticks(sorted(ticks))
            widget.refresh()

    def _figures(self, result: Result) -> None:
        tuning = result.tuning
        widget = self.query_one("#tuning-figures", Static)
        if tuning is None:
            widget.update("")
            return
        lines: list[Content | str] = [
            Content.styled("current ", f"bold ${CURRENT}"),
            f"technical {_weight(result.current)}: mean regret {tuning.before_mean_regret:.4f},"
            f" agreement {tuning.before_agreement:.1%}\n",
            Content.styled("optimal ", f"bold ${CAUTION}"),
            f"technical {tuning.technical:.4f}: mean regret {tuning.mean_regret:.4f},"
            f" agreement {tuning.agreement:.1%}\n",
        ]
        if tuning.ci is not None:
            lines.append(
                f"95% interval of the optimum: {tuning.ci[0]:.4f}–{tuning.ci[1]:.4f}"
                f" ({tuning.ci_resamples} bootstrap resamples)\n"
            )
        if tuning.cv_folds:
            lines.append(
                f"{tuning.cv_folds}-fold cross-validation: mean regret"
                f" {tuning.cv_mean_regret:.4f}, agreement {tuning.cv_agreement:.1%}\n"
            )
        lines.append(
            Content.styled(
                "u moves the weights to the optimum over both free weights (above);"
                " ctrl+s saves them to config.toml",
                "dim",
            )
        )
        widget.update(Content.assemble(*lines))

    def _stages(self, result: Result) -> None:
        workspace = self.app.workspace
        assert workspace is not None
        rows: dict[str, tuple[Text | str, ...]] = {}
        for stage, tuning in result.stages:
            current = workspace.settings.weights_for(stage).technical
            interval = f"{tuning.ci[0]:.2f}–{tuning.ci[1]:.2f}" if tuning.ci else "—"
            rows[stage] = (
                cell(stage),
                f"{tuning.marked_runs:,}",
                _weight(current),
                f"{tuning.technical:.4f}",
                interval,
                f"{tuning.before_mean_regret:.4f} → {tuning.mean_regret:.4f}",
                f"{tuning.before_agreement:.1%} → {tuning.agreement:.1%}",
            )
        # The cursor stays on its stage as the figures change.
        self.query_one("#tuning-stages", FittedTable).show_rows(rows)

    # -- acting ------------------------------------------------------------------------

    @on(Button.Pressed, "#tuning-use")
    def _use_pressed(self) -> None:
        self.action_use_optimal()

    def action_use_optimal(self) -> None:
        """Move the scope's weights to the optimum (not saved until ctrl+s)."""
        result = self.result
        if result is None or result.tuning is None:
            self.notify("nothing tuned yet", severity="warning")
            return
        stage = result.scope
        weights = Weights.from_technical(result.tuning.technical)
        note = provenance(result.tuning)
        if result.heat is not None:
            # The optimum over both free weights: all three sliders move to it.
            best = result.heat.optimum
            weights = best.weights
            note = (
                f"{note.split(';')[0]}; both free weights;"
                f" mean regret {result.tuning.before_mean_regret:.4f} -> {best.mean_regret:.4f}"
            )
        # Saving these weights writes where they came from beside them.
        self.post_message(WeightsChanged(weights, stage, time.perf_counter(), provenance=note))
        where = "global weights" if stage is None else f"stage {literal(stage, True)}"
        self.notify(
            f"{where}: technical {weights.technical:.4f}, proactivity"
            f" {weights.proactivity:.4f}, personalization {weights.personalization:.4f}"
            " (ctrl+s saves them)",
            markup=False,
        )


def _scope_lines(scores: Scores, stage: str | None) -> Lines:
    """The runs a scope's weights govern: a stage's own, or (global) every run whose
    stage has no table of its own."""
    if stage is None:
        tables = scores.settings.stage_weights
        governed = np.array([s not in tables for s in scores.arrays.stages], dtype=bool)
        return scores.lines.subset(governed)
    return scores.lines.subset(scores.arrays.stage_mask(stage))


def _weight(value: float) -> str:
    """0.70 for a slider step, 0.6269 for a tuned weight."""
    return f"{value:.2f}" if abs(value * 100 - round(value * 100)) < 1e-9 else f"{value:.4f}"
