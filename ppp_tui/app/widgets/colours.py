"""The colours of charts and table cells, from the app's theme.

Widgets styled in app.tcss and `Content` take the theme's variables (`$success`)
directly; plotext charts and rich table cells do not, so they ask here for the
variable's value under the theme in use, and draw again when the theme changes
(`watch_theme`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from textual.app import App
from textual.color import Color
from textual.dom import DOMNode

# What each colour means, by the theme variable that gives it.
GOOD = "success"  # agreement, low effort, a pick that matches the mark
CAUTION = "warning"  # all agents' mean, medium effort, the tuned optimum
BAD = "error"  # violations, high effort, regret
CURRENT = "primary"  # the selected agent's series, the current weight


def colour(app: App[Any], variable: str) -> Color:
    """The theme's value of `variable` (e.g. "success")."""
    return Color.parse(app.theme_variables[variable])


def plot_colour(app: App[Any], variable: str) -> tuple[int, int, int]:
    """The theme's `variable` as plotext takes a colour: an RGB triple."""
    return colour(app, variable).rgb


def cell_style(app: App[Any], variable: str, bold: bool = False) -> str:
    """The theme's `variable` as a rich style for a table cell ("bold #4EBF71")."""
    return f"{'bold ' if bold else ''}{colour(app, variable).hex}"


def watch_theme(node: DOMNode, redraw: Callable[[], None]) -> None:
    """Call `redraw` whenever the app's theme changes, while `node` is mounted."""

    def again() -> None:
        if node.is_attached:
            redraw()

    def changed(_theme: str) -> None:
        # The new theme's variables are set when the app refreshes its CSS, which the
        # change has queued: the redraw goes after it.
        node.app.call_next(again)

    node.watch(node.app, "theme", changed, init=False)
