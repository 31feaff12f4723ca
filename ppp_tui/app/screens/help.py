"""The help screen (`?`): every key, from the screens' own bindings, and what the
scores mean."""

from __future__ import annotations

import textwrap
from collections.abc import Iterator
from typing import Any

from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.content import Content
from textual.dom import DOMNode
from textual.screen import ModalScreen, Screen
from textual.widgets import Label, Static

KEY_WIDTH = 14  # the key column
LINE_WIDTH = 72  # the help box's text at 80 columns, beside its scroll bar: no line wraps


def help_groups(app: type[DOMNode]) -> list[tuple[str, list[type[DOMNode]]]]:
    """Each part of the app (whose class is `app`) whose keys the help lists, with the
    classes that bind them.

    Imported here, not at the top: a run's screen, the tuning panel and the dashboard
    load when they first open, and the help only when it is asked for.
    """
    from ..widgets.changes import ChangesPanel
    from ..widgets.conversation import Conversation
    from ..widgets.runs_table import RunsTable
    from ..widgets.slider import WeightSlider
    from .dashboard import DashboardScreen
    from .leaderboard import LeaderboardScreen
    from .run import RunScreen
    from .runs import RunsScreen
    from .tuning import TuningScreen

    return [
        ("Everywhere", [app, App, Screen]),
        ("The runs list", [RunsScreen, RunsTable]),
        ("A run", [RunScreen, Conversation, WeightSlider, ChangesPanel]),
        ("The tuning panel", [TuningScreen]),
        ("The dashboard", [DashboardScreen]),
        ("The leaderboard", [LeaderboardScreen]),
        ("This help", [HelpScreen]),
    ]


def bindings_of(node_class: type[DOMNode]) -> list[Binding]:
    """The bindings a class and its bases in this app declare, as textual merges them (a
    key bound again lower in the hierarchy is left out). Textual's own widgets' keys
    (scrolling, focus, copy) are listed once, under "Everywhere"."""
    found: dict[str, Binding] = {}
    for cls in node_class.__mro__:
        if not cls.__module__.startswith("ppp_tui") and node_class.__module__.startswith("ppp_tui"):
            continue
        declared: list[BindingType] = list(cls.__dict__.get("BINDINGS", []))
        for binding in Binding.make_bindings(declared):
            if not binding.system:
                found.setdefault(binding.key, binding)
    return list(found.values())


def _described(binding: Binding) -> str:
    return binding.tooltip or binding.description


def key_lines(app: App[Any]) -> Iterator[tuple[str, str]]:
    """(keys, what they do) per line of the help, under a heading per part (keys "")."""
    palette = Binding(
        app.COMMAND_PALETTE_BINDING,
        "command_palette",
        "Palette",
        tooltip="Command palette: open a run by id, tune, presets, save, export, themes",
    )
    for title, classes in help_groups(type(app)):
        yield "", title
        # A key the app binds again (ctrl+q) is listed as the app binds it, not also as
        # Textual's base class does.
        by_key: dict[str, Binding] = {}
        for cls in classes:
            for binding in bindings_of(cls):
                by_key.setdefault(binding.key, binding)
        bindings = list(by_key.values())
        if title == "Everywhere" and app.ENABLE_COMMAND_PALETTE:
            bindings.append(palette)
        # One line per action: "up/down" for move(-1) and move(1), "escape/q/?" for one.
        lines: dict[str, tuple[list[str], list[str]]] = {}
        for binding in bindings:
            keys, texts = lines.setdefault(binding.action.split("(")[0], ([], []))
            keys.append(app.get_key_display(binding))
            if _described(binding) not in texts:
                texts.append(_described(binding))
        for keys, texts in lines.values():
            yield "/".join(keys), " / ".join(texts)


def keys_text(app: App[Any]) -> Content:
    """The keys part of the help, wrapped to the help box."""
    lines: list[Content | str] = []
    for keys, text in key_lines(app):
        if not keys:
            lines += [""] if lines else []
            lines.append(Content.styled(text, "bold"))
            continue
        body = textwrap.wrap(text, LINE_WIDTH - KEY_WIDTH - 2) or [""]
        lines.append(f"  {keys:<{KEY_WIDTH}}{body[0]}")
        lines += [f"  {'':<{KEY_WIDTH}}{line}" for line in body[1:]]
    return Content("\n").join(lines)


class HelpScreen(ModalScreen[None]):
    """Every key, and what the scores mean."""

    BINDINGS = [Binding("escape,q,question_mark", "dismiss", "Close")]
    VERTICAL_BREAKPOINTS = [(0, "-short"), (42, "-tall")]  # taller than this: no scrolling

    # What the marks and the scores mean. Every line fits the help box at 80 columns.
    ABOUT = """\
A run's agents
  mark        selected: ranked first under the weights; ★ preferred:
              your mark; ★ selected: both
  ⚑           waiting for you: its session's last turn ends on a
              question you have not answered (in the runs list, the
              mark is before the task)

Scores
  R_Proact     +0.05 with no questions or only low-effort ones,
               else -(0.1 x medium + 0.5 x high)
  R_Pers       -(sum of violation penalties);
               else +0.05 if the run states a preference
  interaction  R_Proact + R_Pers
  final        w_t x technical + w_p x R_Proact + w_s x R_Pers,
               where w_t + (w_p + w_s) / 2 = 1
               (w_p = w_s: the interaction weight, the pair form)
               (no trajectory: technical)
  regret       final(selected) - final(preferred), over the runs you
               marked
"""

    def compose(self) -> ComposeResult:
        with Vertical(id="help"):
            yield Label("ppp-tui help", id="help-title")
            with VerticalScroll(id="help-body"):  # scrolls on a small terminal
                yield Static(keys_text(self.app), id="help-keys")
                yield Static(Content("\n" + self.ABOUT), id="help-about")
            yield Label("escape to close · up/down scroll", id="help-close")
