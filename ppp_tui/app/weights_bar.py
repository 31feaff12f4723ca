"""The weights bar: the technical-weight slider, its scope, presets and live figures."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.message import Message
from textual.widgets import Label, Select

from ..core.settings import PRESETS
from .slider import WeightSlider
from .workspace import Figures


class WeightsBar(Horizontal):
    """Shows and edits the weight pair of one scope (global, or a stage's table)."""

    DEFAULT_CSS = """
    WeightsBar {
        height: 3;
        padding: 0 1;
        background: $panel;
    }
    WeightsBar > Label { padding: 1 1 0 0; }
    WeightsBar > WeightSlider { margin: 1 1 0 0; }
    WeightsBar #weights-pair { width: 24; }
    WeightsBar #weights-scope { width: auto; color: $text-muted; }
    WeightsBar #weights-figures { width: auto; }
    WeightsBar #weights-dirty { width: auto; color: $warning; }
    WeightsBar > Select { width: 24; }
    """

    class PresetChosen(Message):
        def __init__(self, key: str) -> None:
            super().__init__()
            self.key = key

    def compose(self) -> ComposeResult:
        yield Label("technical", id="weights-label")
        yield WeightSlider(id="weights-slider")
        yield Label("", id="weights-pair")
        yield Label("", id="weights-scope")
        yield Label("", id="weights-figures")
        yield Label("", id="weights-dirty")
        yield Select(
            [(p.label, p.key) for p in PRESETS],
            prompt="Preset",
            allow_blank=True,
            id="weights-preset",
        )

    @property
    def slider(self) -> WeightSlider:
        return self.query_one(WeightSlider)

    def show(self, technical: float, scope: str | None, dirty: bool) -> None:
        """Reflect a weight pair without posting a Changed message."""
        slider = self.slider
        if slider.value != technical:
            with slider.prevent(WeightSlider.Changed):
                slider.value = technical
        self.query_one("#weights-pair", Label).update(
            f"{technical:.2f} · interaction {1 - technical:.2f}"
        )
        self.query_one("#weights-scope", Label).update(
            f"scope: {scope}" if scope else "scope: global"
        )
        self.query_one("#weights-dirty", Label).update("● unsaved" if dirty else "")

    def show_figures(self, figures: Figures) -> None:
        if not figures.marked_runs:
            text = "no marked runs (p marks one)"
        else:
            text = (
                f"agreement {figures.agreement:.1%} · mean regret {figures.mean_regret:.4f}"
                f" · {figures.marked_runs:,} marked"
            )
        self.query_one("#weights-figures", Label).update(text)

    def on_select_changed(self, event: Select.Changed) -> None:
        event.stop()
        if isinstance(event.value, str):
            self.post_message(self.PresetChosen(event.value))
            with event.select.prevent(Select.Changed):
                event.select.clear()
