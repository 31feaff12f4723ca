"""The help screen (`?`): every key, and what the scores mean."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Label, Static


class HelpScreen(ModalScreen[None]):
    """Every key, and what the scores mean."""

    BINDINGS = [Binding("escape,q,question_mark", "dismiss", "Close")]
    VERTICAL_BREAKPOINTS = [(0, "-short"), (47, "-tall")]  # the help box is 46 rows high

    # Every line fits the help box at 80 columns (74 characters), so none wraps.
    TEXT = """\
Keys
  enter       open the highlighted run
  escape      back
  left/right  move the focused slider by 0.01 (pageup/pagedown: 0.1)
  [ / ]       technical weight -0.05 / +0.05, from anywhere
  ( / )       in a run: proactivity -0.05 / +0.05 (< / >: personalization)
              the other weights follow, keeping w_t + (w_p + w_s) / 2 = 1
  l           in a run: lock one weight (the next; then none)
  m           in a run: flip map, who ranks first at every weight
              (click or drag on it to set the weights)
  p           mark the highlighted agent as the one you preferred
              (again: clear the mark)
  g           slider scope: global weights, or the run's stage table
  r           reset the weights to what config.toml holds
  ctrl+s      save the weights to config.toml
  t           tuning panel: regret and agreement curves, the optimum
              (u uses it)
  d           dashboard: interaction over time, violations, effort,
              PPP on vs off
  /           search runs by id, spec or task
  s / S       sort the runs by the next column / reverse it
              (or click a header)
  ctrl+p      command palette, themes included
  ?           this help
  q, ctrl+q   quit (asks first if weights are unsaved)

A run's agents
  mark        selected: ranked first under the weights; ★ preferred:
              your mark; ★ selected: both

Scores
  R_Proact     +0.05 with no questions or only low-effort ones,
               else -(0.1 x medium + 0.5 x high)
  R_Pers       -(sum of violation penalties);
               else +0.05 if the run states a preference
  interaction  R_Proact + R_Pers
  final        w_t x technical + w_p x R_Proact + w_s x R_Pers,
               w_t + (w_p + w_s) / 2 = 1 (w_p = w_s: interaction's weight)
               (no trajectory: technical)
  regret       final(selected) - final(preferred), over the runs you
               marked
"""

    def compose(self) -> ComposeResult:
        with Vertical(id="help"):
            yield Label("ppp-tui help", id="help-title")
            with VerticalScroll(id="help-body"):  # scrolls on a small terminal
                yield Static(Content(self.TEXT))
            yield Label("escape to close · up/down scroll", id="help-close")
