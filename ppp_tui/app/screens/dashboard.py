"""The dashboard (`d`): interaction over time, the most violated preferences, question
effort by source, agreement by stage, PPP on vs off (McNemar's exact test under the
table) with the runs whose pick changes, and early stop over the iteration series.
Figures come from `ppp_tui.analysis.dashboard`, computed in a worker thread; the stage
filter at the top applies to all of them."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.geometry import Size
from textual.widgets import DataTable, Footer, Header, Select, Static

from ...analysis.dashboard import Dashboard, StageFigures
from ...core.ab_test import ABTest
from ...core.scores import Scores
from ...core.settings import Settings
from ...core.wording import counted
from ...safe_text import number
from ...storage.store import Store
from ..messages import OpenRun
from ..services import AppServices
from ..text import cell, literal, stage_tables, weights_text
from ..widgets.colours import BAD, CAUTION, CURRENT, GOOD, cell_style, plot_colour, watch_theme
from ..widgets.dashboard import Chart, WholeText, nice_ticks, spread_ticks
from ..widgets.table_rows import refill
from .recomputing import RecomputingScreen

if TYPE_CHECKING:
    from rich.text import Text

    from ..workspace import Workspace

CHANGED_PICKS_SHOWN = 1000  # rows of the changed picks' list (there can be tens of thousands)
NAME_WIDTH = 16  # preference names in the bar chart
# Effort: the theme variable of its colour.
EFFORT_COLOURS = {"low": GOOD, "medium": CAUTION, "high": BAD}
# Period attribute: (legend, theme variable of its colour).
TIMELINE_SERIES = {"selected": ("selected agent", CURRENT), "agents_mean": ("all agents", CAUTION)}
# Bars end a little short of the frame's right edge.
X_MARGIN = 1.04


def _percent(value: float | None) -> str:
    return "—" if value is None else f"{value:.1%}"


def _short(text: str, width: int) -> str:
    shown = literal(text, one_line=True)
    return shown if len(shown) <= width else shown[: width - 1] + "…"


def _mcnemar(test: ABTest) -> str:
    """McNemar's test of PPP on vs off in a line: the runs where only one pick is the
    preferred agent, each way, and the exact p-value."""
    if not test.marked_runs:
        return "McNemar: no marked runs"
    return (
        f"McNemar: only on right {test.ppp_only:,}, only off right {test.technical_only:,},"
        f" p = {test.p_value:.2g}"
    )


def _count(value: int) -> str:
    if value >= 10_000:
        return f"{value / 1000:.0f}k"
    return f"{value:,}"


@dataclass(frozen=True)
class Request:
    """What the figures are computed from: the stage (None: all), and the workspace's
    weights and marks (`state`; the database and arrays go with it)."""

    stage: str | None
    state: object
    store: Store = field(compare=False)
    settings: Settings = field(compare=False)
    scores: Scores = field(compare=False)


class DashboardScreen(RecomputingScreen[Request, Dashboard]):
    """Whole-database figures, for every run or one stage's."""

    BINDINGS = [Binding("escape", "app.pop_screen", "Back", id="dashboard.back")]
    STATUS = "#dashboard-status"
    STAGE_SELECT = "#dashboard-stage"
    # Below 110 columns the panels stack (the screen gets the -narrow class).
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (110, "-wide")]

    app: AppServices

    def __init__(self, stage: str | None = None) -> None:
        super().__init__()
        self.stage = stage
        self.dashboard: Dashboard | None = None
        self._note = ""  # how the shown figures were computed, for the status line

    def compose(self) -> ComposeResult:
        yield Header()
        with Horizontal(id="dashboard-tools"):
            yield Select([], prompt="All stages", id="dashboard-stage", allow_blank=True)
            yield Static("", id="dashboard-status")
        with VerticalScroll(id="dashboard-body"):
            with Horizontal(id="dashboard-top", classes="row"):
                yield Chart(id="timeline", classes="panel wide")
                yield Chart(id="violations", classes="panel narrow")
            with Horizontal(id="dashboard-middle"):
                yield DataTable(id="stages", classes="panel wide", cursor_type="none")
                yield Static(id="early-stop", classes="panel")
                yield Static(id="agreement", classes="panel")
            with Horizontal(id="dashboard-bottom", classes="row"):
                yield DataTable(
                    id="pick-changes", classes="panel wide", cursor_type="row", zebra_stripes=True
                )
                with Vertical(id="effort-panel", classes="panel narrow"):
                    yield Chart(id="effort")
                    yield Static(id="effort-legend")
                    yield WholeText(id="effort-counts")
        yield Footer()

    def on_mount(self) -> None:
        titles = {
            "#timeline": "Interaction over time",
            "#violations": "Most violated preferences",
            "#stages": "By stage: agreement with your marks, PPP on vs off (technical only)",
            "#early-stop": "Early stop",
            "#agreement": "Reviewers' agreement",
            "#pick-changes": "Runs whose pick changes with PPP off",
            "#effort-panel": "Question effort by label source",
        }
        for selector, title in titles.items():
            self.query_one(selector).border_title = title
        self.query_one("#pick-changes", DataTable).add_columns(
            "run", "stage", "PPP on", "PPP off", "preferred"
        )
        self.runs_loaded()
        self._focus_first()
        watch_theme(self, self._redraw)  # chart and cell colours come from the theme
        self.recompute(now=True)

    def _focus_first(self) -> None:
        width, height = self.app.size
        if width < 110 or height < 40:
            # The page scrolls: the keys scroll it first (tab reaches the runs list).
            self.query_one("#dashboard-body").focus(scroll_visible=False)
        else:
            self.query_one("#pick-changes", DataTable).focus(scroll_visible=False)

    # -- computing -----------------------------------------------------------------

    def request(self, workspace: Workspace) -> Request:
        assert workspace.scores is not None
        return Request(
            self.stage, workspace.state(), workspace.store, workspace.settings, workspace.scores
        )

    def started(self, request: Request) -> None:
        super().started(request)
        if self.dashboard is None or self.dashboard.stage != request.stage:
            self._set_loading(True)

    def compute(self, request: Request) -> Dashboard:
        return Dashboard.load(request.store, request.settings, request.stage, scores=request.scores)

    def show(self, result: Dashboard, seconds: float) -> None:
        self._loaded()
        self.dashboard = result
        self._note = f"computed in {seconds:.2f} s"
        self._show(self._note)

    def shown_run_ids(self) -> list[str] | None:
        """The runs of the stage shown (None: all of them)."""
        workspace = self.app.workspace
        if self.stage is None or workspace is None:
            return None
        return [info.id for info in workspace.infos if info.stage == self.stage]

    def _redraw(self) -> None:
        if self.dashboard is not None:
            self._show(self._note)

    def failed(self, error: str) -> None:
        self._loaded()
        super().failed(error)

    def _loaded(self) -> None:
        self._set_loading(False)
        if (
            self.dashboard is None
            and self.focused is not None
            and self.focused.id == "dashboard-stage"
        ):
            # The first figures' loading blurred the list: its focus goes back.
            self._focus_first()

    def _set_loading(self, loading: bool) -> None:
        for widget in self.query(".panel"):
            widget.loading = loading

    @on(Select.Changed, "#dashboard-stage")
    def _stage_changed(self, event: Select.Changed) -> None:
        self.stage = event.value if isinstance(event.value, str) else None
        self.recompute(now=True)

    @on(DataTable.RowSelected, "#pick-changes")
    def _open_pick_change(self, event: DataTable.RowSelected) -> None:
        if event.row_key.value is not None:
            self.post_message(OpenRun(event.row_key.value))

    # -- showing -------------------------------------------------------------------

    def _show(self, note: str) -> None:
        dashboard = self.dashboard
        assert dashboard is not None
        workspace = self.app.workspace
        assert workspace is not None
        settings = workspace.settings
        scope = "all stages" if dashboard.stage is None else f"stage {dashboard.stage}"
        parts = [
            literal(scope, True),
            f"{dashboard.runs:,} run{'s' * (dashboard.runs != 1)}",
            f"global weights {weights_text(settings.weights)}",
        ]
        if settings.stage_weights:
            parts.append(stage_tables(len(settings.stage_weights)))
        if not settings.enabled:
            parts.append("PPP is off in config.toml")
        parts.append(note)
        self.query_one("#dashboard-status", Static).update(Content("  ·  ".join(parts)))
        self._stages(dashboard, settings)
        self._early_stop(dashboard)
        self._agreement(dashboard)
        self._pick_changes(dashboard)
        self._timeline(dashboard)
        self._violations(dashboard)
        self._effort(dashboard)

    def _timeline(self, dashboard: Dashboard) -> None:
        timeline = dashboard.timeline
        chart = self.query_one("#timeline", Chart)
        chart.border_title = Content.assemble(
            f"Interaction over time, per {timeline.unit}  ",
            *(
                part
                for label, colour in TIMELINE_SERIES.values()
                for part in (Content.styled("━━", f"${colour}"), f" {label}  ")
            ),
        )
        chart.border_subtitle = (
            f"{counted(timeline.undated, 'run')} without a date left out"
            if timeline.undated
            else ""
        )
        periods = timeline.periods

        def draw(plt: Any, size: Size) -> None:
            if not periods:
                plt.title("no dated runs")
                return
            for attribute, (_, colour) in TIMELINE_SERIES.items():
                points = [
                    (i, value)
                    for i, period in enumerate(periods)
                    if (value := getattr(period, attribute)) is not None
                ]
                if points:
                    xs, ys = zip(*points, strict=True)
                    plt.plot(xs, ys, color=plot_colour(self.app, colour), marker="dot")
            values = [
                v
                for p in periods
                for v in (p.selected, p.agents_mean)
                if v is not None and math.isfinite(v)  # no ticks from an infinity or NaN
            ]
            if values:
                ticks = nice_ticks(min(values), max(values))
                digits = max(2, math.ceil(-math.log10(ticks[1] - ticks[0])))
                plt.yticks(ticks, [f"{v:+.{digits}f}" for v in ticks])
                plt.ylim(ticks[0], ticks[-1])
            # As many date labels as fit under the chart.
            fit = max(2, (size.width - 10) // (len(periods[0].label) + 3))
            shown = spread_ticks(len(periods), fit)
            plt.xticks(shown, [periods[i].label for i in shown])
            plt.xlim(0, max(1, len(periods) - 1))

        chart.show(draw)

    def _violations(self, dashboard: Dashboard) -> None:
        chart = self.query_one("#violations", Chart)
        chart.border_subtitle = (
            f"{dashboard.violations:,} violations of {dashboard.violated_preferences} preferences"
            if dashboard.violations
            else ""
        )
        preferences = dashboard.preferences

        def draw(plt: Any, size: Size) -> None:
            # One text row per bar, the most violated at the top: as many as there are rows.
            rows = max(1, size.height - 3)
            top = preferences[:rows]
            if not top:
                plt.title("no violations")
                return
            positions = [rows - i for i in range(len(top))]
            counts = [p.violations for p in top]
            plt.bar(
                positions,
                counts,
                orientation="horizontal",
                width=0.2,
                color=plot_colour(self.app, BAD),
            )
            plt.yticks(positions, [_short(p.preference, NAME_WIDTH) for p in top])
            plt.ylim(1, max(2, rows))  # the limits are the centres of the end rows
            most = max(counts)
            plt.xlim(0, most * X_MARGIN)
            plt.xticks([0, most / 2, most], ["0", _count(most // 2), _count(most)])

        chart.show(draw)

    def _effort(self, dashboard: Dashboard) -> None:
        rows = [row for row in dashboard.effort if row.total]
        legend: list[Content | str] = []
        counts = ""
        if rows:
            total = sum(row.total for row in rows)
            for effort, colour in EFFORT_COLOURS.items():
                share = sum(getattr(row, effort) for row in rows) / total
                legend += [Content.styled("■", f"${colour}"), f" {effort} {share:.0%}  "]
            counts = "\n".join(
                f"{row.label:<11}{row.low:>8,}{row.medium:>8,}{row.high:>8,}" for row in rows
            )
            counts = f"{'':<11}{'low':>8}{'medium':>8}{'high':>8}\n{counts}"
        self.query_one("#effort-legend", Static).update(Content.assemble(*legend))
        self.query_one("#effort-counts", WholeText).text = counts

        def draw(plt: Any, size: Size) -> None:
            if not rows:
                plt.title("no questions")
                return
            # Each source as 100%, so the labelled and the classified mix compare
            # directly; one text row per bar, a blank row between.
            positions = [2 * (len(rows) - i) - 1 for i in range(len(rows))]
            plt.stacked_bar(
                positions,
                [[100 * getattr(row, e) / row.total for row in rows] for e in EFFORT_COLOURS],
                orientation="horizontal",
                width=0.2,
                color=[plot_colour(self.app, c) for c in EFFORT_COLOURS.values()],
            )
            plt.yticks(positions, [f"{row.label} {_count(row.total)}" for row in rows])
            plt.ylim(1, max(2, positions[0]))
            plt.xlim(0, 100 * X_MARGIN)
            plt.xticks([0, 50, 100], ["0%", "50%", "100%"])

        self.query_one("#effort", Chart).show(draw)

    def _stages(self, dashboard: Dashboard, settings: Settings) -> None:
        table = self.query_one("#stages", DataTable)
        # Weights per stage only when stages have tables of their own; otherwise the
        # global pair in the status line applies to every stage.
        weights = bool(settings.stage_weights)
        table.clear(columns=True)
        table.add_columns(
            "stage",
            *(["weights"] if weights else []),
            "runs",
            "marked",
            "agree",
            "regret",
            "changed",
            "agree off",
        )
        table.border_subtitle = _mcnemar(dashboard.total.ab)
        rows: list[StageFigures] = list(dashboard.stages)
        if len(rows) > 1:
            rows.append(dashboard.total)
        for row in rows:
            w = row.weights
            share = row.changed_picks / row.runs if row.runs else None
            table.add_row(
                cell(row.label, "bold" if w is None else ""),
                *([] if not weights else ["" if w is None else weights_text(w)]),
                f"{row.runs:,}",
                f"{row.marked_runs:,}",
                _percent(row.agreement),
                number(row.mean_regret, 4),
                f"{row.changed_picks:,} ({_percent(share)})",
                _percent(row.ppp_off_agreement),
            )

    def _early_stop(self, dashboard: Dashboard) -> None:
        figures = dashboard.early_stop
        widget = self.query_one("#early-stop", Static)
        if not figures.runs:
            widget.update("No run has an iteration series.")
            return
        lines = [
            f"{counted(figures.runs, 'run')} with iterations, {figures.iterations:,} in all",
            f"{figures.stopped:,} would stop early:",
            *(f"  {r.reason:<10} {r.runs:>6,} runs, {r.saved:,} saved" for r in figures.reasons),
            f"saved {figures.saved:,} iterations ({_percent(figures.saved_share)}):",
            f"  {number(figures.mean_saved, 2)} per run,"
            f" {number(figures.mean_saved_stopped, 2)} per stopped run",
        ]
        if figures.worse:
            lines += [
                f"best score lower in {figures.worse:,} stopped runs,",
                f"  by {number(figures.mean_loss, 2)} on average",
            ]
        widget.update(Content("\n".join(lines)))

    def _agreement(self, dashboard: Dashboard) -> None:
        from ...storage.reviewers import shown

        figures = dashboard.agreement
        widget = self.query_one("#agreement", Static)
        if not figures.shared_runs:
            reviewers = len(figures.reviewers)
            widget.update(
                Content(
                    "No run is marked by two reviewers yet"
                    f" ({reviewers} reviewer{'s' * (reviewers != 1)} with marks)."
                )
            )
            return
        alpha = "undefined" if figures.alpha is None else f"{figures.alpha:.3f}"
        lines = [
            f"{counted(figures.shared_runs, 'run')} marked by 2+ of"
            f" {counted(len(figures.reviewers), 'reviewer')}",
            f"Krippendorff's alpha {alpha}",
            f"raw agreement {_percent(figures.raw)}",
            "Cohen's kappa:",
        ]
        # Each name cut on its own, to what the panel's width leaves them.
        width = widget.size.width
        if not width:  # not laid out yet: what the layout will give it
            screen = self.app.size.width
            width = screen - 2 if self.has_class("-narrow") else (screen - 72) // 2
        inner = max(width - 4, 30)
        each = max((inner - 17) // 2, 6)
        for pair in figures.by_pair:
            kappa = "—" if pair.kappa is None else f"{pair.kappa:.2f}"
            names = f"{_short(shown(pair.first), each)} / {_short(shown(pair.second), each)}"
            lines.append(f"  {names:<{2 * each + 3}} {pair.runs:>5,} {kappa:>5}")
        widget.update(Content("\n".join(lines)))

    def _pick_changes(self, dashboard: Dashboard) -> None:
        table = self.query_one("#pick-changes", DataTable)
        changes = dashboard.pick_changes
        title = f"Runs whose pick changes with PPP off: {len(changes):,}"
        if len(changes) > CHANGED_PICKS_SHOWN:
            title += f", the first {CHANGED_PICKS_SHOWN:,} listed"
        table.border_title = title
        table.border_subtitle = "enter opens a run" if len(changes) else ""
        rows: dict[str, tuple[Text, ...]] = {}
        for change in changes.rows(CHANGED_PICKS_SHOWN):
            agrees = change.preferred is not None and change.preferred == change.ppp_on
            rows[change.run_id] = (
                cell(change.run_id),
                cell(change.stage or "—"),
                cell(change.ppp_on, "bold"),
                cell(change.ppp_off),
                cell(change.preferred or "—", cell_style(self.app, GOOD) if agrees else ""),
            )
        # The same run stays under the cursor while weights or marks change.
        refill(table, rows)
