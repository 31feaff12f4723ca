"""The weights bar: the technical-weight slider, its scope, presets and live figures."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.widgets import Label, Select

from ..core.sensitivity import Flip
from ..core.settings import PRESETS
from .flip_strip import FlipStrip
from .messages import PresetChosen
from .slider import WeightSlider
from .text import literal
from .workspace import Figures


class WeightsBar(Horizontal):
    """Shows and edits the weight pair of one scope (global, or a stage's table)."""

    NARROW = 110  # below this width the bar is laid out for small terminals

    def compose(self) -> ComposeResult:
        yield Label("technical", id="weights-label")
        with Vertical(id="weights-track"):
            yield WeightSlider(id="weights-slider")
            yield FlipStrip(id="weights-flips")
            yield Label("", id="weights-figures")
        with Vertical(id="weights-side"):
            yield Label("", id="weights-pair")
            yield Label("", id="weights-scope")
            yield Label("", id="weights-dirty")
        yield Select(
            [(p.label, p.key) for p in PRESETS],
            prompt="Preset",
            allow_blank=True,
            id="weights-preset",
        )

    def __init__(self) -> None:
        super().__init__()
        self._figures: Figures | None = None
        self._technical: float | None = None
        self._scope: str | None = None  # the scope shown, which a preset applies to

    def on_resize(self) -> None:
        narrow = self.size.width < self.NARROW
        if narrow != self.has_class("-narrow"):
            self.set_class(narrow, "-narrow")
            self.query_one(Select).compact = narrow
            if self._figures is not None:
                self.show_figures(self._figures)
            if self._technical is not None:
                self._set("#weights-pair", self._pair(self._technical))

    def _set(self, label: str, text: str) -> None:
        """Change a label's text; every label here has a fixed size, so no layout pass
        (the slider's hot path)."""
        widget = self.query_one(label, Label)
        content = Content(text)  # never markup: the scope is a stage's name
        if widget.content != content:
            widget.update(content, layout=False)

    @property
    def slider(self) -> WeightSlider:
        return self.query_one(WeightSlider)

    def show(self, technical: float, scope: str | None, dirty: bool) -> None:
        """Reflect a weight pair without posting a Changed message."""
        slider = self.slider
        if slider.value != technical:
            with slider.prevent(WeightSlider.Changed):
                slider.value = technical
        slider.refresh()  # in the same frame as the figures (see WeightSlider.value)
        self._technical = technical
        self._scope = scope
        self._set("#weights-pair", self._pair(technical))
        self._set("#weights-scope", f"scope: {literal(scope, True)}" if scope else "scope: global")
        self._set("#weights-dirty", "● unsaved" if dirty else "")

    def _pair(self, technical: float) -> str:
        if self.has_class("-narrow"):  # no "technical" label beside the slider
            return f"tech {technical:.2f} · inter {1 - technical:.2f}"
        return f"{technical:.2f} · interaction {1 - technical:.2f}"

    def show_flips(self, flips: tuple[Flip, ...]) -> None:
        """Who ranks first at each weight, under the slider (the open run)."""
        self.query_one(FlipStrip).flips = flips

    def show_figures(self, figures: Figures) -> None:
        self._figures = figures
        if not figures.marked_runs:
            text = "no marked runs (p marks one)"
        elif self.has_class("-narrow"):
            text = f"agree {figures.agreement:.1%} · regret {figures.mean_regret:.4f}"
        else:
            text = (
                f"agreement {figures.agreement:.1%} · mean regret {figures.mean_regret:.4f}"
                f" over {figures.marked_runs:,} marked runs"
            )
        self._set("#weights-figures", text)

    def on_select_changed(self, event: Select.Changed) -> None:
        event.stop()
        if isinstance(event.value, str):
            self.post_message(PresetChosen(event.value, self._scope))  # the app applies it
            with event.select.prevent(Select.Changed):
                event.select.clear()
