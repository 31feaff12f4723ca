"""The weights bar: the three weight sliders, their scope, presets and live figures."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.widgets import Label, Select

from ...core.sensitivity import Flip
from ...core.settings import PRESETS
from ...core.wording import counted
from ..messages import PresetChosen
from ..text import literal
from ..workspace import Figures
from .flip_strip import FlipStrip
from .slider import WeightSlider
from .weight_sliders import Triple, WeightSliders


class WeightsBar(Horizontal):
    """Shows and edits the weight pair of one scope (global, or a stage's table)."""

    NARROW = 110  # below this width the bar is laid out for small terminals

    def compose(self) -> ComposeResult:
        with Vertical(id="weights-track"):
            yield WeightSliders(id="weights-sliders")
            yield Label("", id="weights-figures")
        with Vertical(id="weights-side"):
            yield Label("", id="weights-pair")
            yield Label("", id="weights-scope")
            yield Label("", id="weights-dirty")
            yield Label("", id="weights-lock")
        yield Select(
            [(p.label, p.key) for p in PRESETS],
            prompt="Preset",
            allow_blank=True,
            id="weights-preset",
        )

    def __init__(self) -> None:
        super().__init__()
        self._figures: Figures | None = None
        self._weights: Triple | None = None
        self._scope: str | None = None  # the scope shown, which a preset applies to

    def on_resize(self) -> None:
        narrow = self.size.width < self.NARROW
        if narrow != self.has_class("-narrow"):
            self.set_class(narrow, "-narrow")
            self.query_one(Select).compact = narrow
            self.sliders.set_narrow(narrow)
            if self._figures is not None:
                self.show_figures(self._figures)
            if self._weights is not None:
                self._set("#weights-pair", self._pair(self._weights))

    def _set(self, label: str, text: str) -> None:
        """Change a label's text; every label here has a fixed size, so no layout pass
        (the slider's hot path)."""
        widget = self.query_one(label, Label)
        content = Content(text)  # never markup: the scope is a stage's name
        if widget.content != content:
            widget.update(content, layout=False)

    @property
    def slider(self) -> WeightSlider:
        """The technical weight's slider."""
        return self.sliders.slider(0)

    @property
    def sliders(self) -> WeightSliders:
        return self.query_one(WeightSliders)

    def show(self, weights: Triple, scope: str | None, dirty: bool) -> None:
        """Reflect the three weights without posting a Changed message."""
        self.sliders.show(weights)
        self._weights = weights
        self._scope = scope
        self._set("#weights-pair", self._pair(weights))
        self._set("#weights-scope", f"scope: {literal(scope, True)}" if scope else "scope: global")
        self._set("#weights-dirty", "● unsaved" if dirty else "")
        self.show_lock()

    def show_lock(self) -> None:
        locked = self.sliders.locked
        self._set("#weights-lock", "" if locked is None else f"lock: {self._names[locked]}")

    @property
    def _names(self) -> tuple[str, str, str]:
        if self.has_class("-narrow"):
            return ("tech", "proact", "pers")
        return ("technical", "proactivity", "personalization")

    def _pair(self, weights: Triple) -> str:
        """Technical against interaction (the mean of the other two: what the rule
        leaves them)."""
        technical, proactivity, personalization = weights
        interaction = (proactivity + personalization) / 2
        if self.has_class("-narrow"):
            return f"tech {technical:.2f} · inter {interaction:.2f}"
        return f"{technical:.2f} · interaction {interaction:.2f}"

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
                f" over {counted(figures.marked_runs, 'marked run')}"
            )
        self._set("#weights-figures", text)

    def on_select_changed(self, event: Select.Changed) -> None:
        event.stop()
        if isinstance(event.value, str):
            self.post_message(PresetChosen(event.value, self._scope))  # the app applies it
            with event.select.prevent(Select.Changed):
                event.select.clear()
