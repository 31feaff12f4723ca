"""The tuning panel's plots take their colours from the theme, and follow a change of it."""

from __future__ import annotations

from pathlib import Path

from helpers import computed, opened
from rich.style import Style
from rich.text import Text
from textual.color import Color
from textual_plotext import PlotextPlot

from ppp_tui.app.screens.tuning import TuningScreen


def _colours(plot: PlotextPlot) -> set[str]:
    text = plot.render()
    assert isinstance(text, Text)
    return {
        span.style.color.triplet.hex
        for span in text.spans
        if isinstance(span.style, Style) and span.style.color and span.style.color.triplet
    }


async def test_the_tuning_plots_follow_the_theme(db: Path, tmp_path: Path) -> None:
    async with opened(db, tmp_path, (140, 45)) as (app, pilot):
        await pilot.press("t")
        screen = await computed(app, pilot, TuningScreen)
        regret = screen.query_one("#regret-plot", PlotextPlot)
        agreement = screen.query_one("#agreement-plot", PlotextPlot)

        def theme(variable: str) -> str:
            return Color.parse(app.theme_variables[variable]).hex.lower()

        app.theme = "textual-dark"
        await pilot.pause()
        error, success = theme("error"), theme("success")
        assert error in _colours(regret) and success in _colours(agreement)
        app.theme = "gruvbox"
        await pilot.pause()
        assert (theme("error"), theme("success")) != (error, success)
        assert theme("error") in _colours(regret) and error not in _colours(regret)
        assert theme("success") in _colours(agreement)
