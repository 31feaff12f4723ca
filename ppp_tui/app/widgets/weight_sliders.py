"""Three walking weight sliders: technical, proactivity and personalization.

The three weights always keep technical + (proactivity + personalization) / 2 = 1,
so each weight's share of the whole is technical, proactivity / 2 and
personalization / 2. Moving one slider sets its share; the other two shares are
rescaled in proportion to what they were (equally when both were 0), so that the
rule holds at every step. One slider can be locked: then moving another moves only
the third, and a move stops where the third reaches 0 or its largest value.

With proactivity = personalization (the pair form: interaction = both), moving the
technical slider keeps them equal, so it behaves exactly as the one slider of the
pair form did.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.message import Message
from textual.timer import Timer
from textual.widgets import Label

from .flip_strip import FlipStrip
from .slider import WeightSlider

Triple = tuple[float, float, float]  # (technical, proactivity, personalization)

# The sliders' order, names (as the bar shows them, wide and narrow) and largest values.
NAMES = ("technical", "proactivity", "personalization")
SHORT = ("tech", "proact", "pers")
MAXIMA = (1.0, 2.0, 2.0)
IDS = ("weights-slider", "weights-proactivity", "weights-personalization")
# The longest a move holds the screen's frames for the screen's answer (`_hold`).
HOLD_S = 0.1


def _clean(value: float) -> float:
    """Binary noise rounded away (0.7000000001 -> 0.7), never below 0."""
    return max(0.0, round(value, 10))


def walk(weights: Triple, moved: int, value: float, locked: int | None = None) -> Triple:
    """The three weights after slider `moved` is set to `value`: the others follow so
    that technical + (proactivity + personalization) / 2 = 1.

    Each weight's share is technical, proactivity / 2, personalization / 2 (they sum to
    1). The moved one's share is set; with no lock the other two keep the ratio of their
    shares (equal halves when both are 0); with `locked` one held, only the third moves,
    and the moved value is clamped to what the locked one leaves. Moving the locked one
    changes nothing.
    """
    if locked == moved:
        return weights
    shares = [weights[0], weights[1] / 2.0, weights[2] / 2.0]
    room = 1.0 - (shares[locked] if locked is not None else 0.0)
    share = min(max(value / (2.0 if moved else 1.0), 0.0), room)
    others = [k for k in range(3) if k != moved]
    rest = 1.0 - share
    if locked is not None:
        free = next(k for k in others if k != locked)
        shares[free] = room - share
    else:
        first, second = others
        total = shares[first] + shares[second]
        # In proportion; the second takes what is left, so the shares always sum to 1
        # (a total of only binary noise counts as 0: equal halves).
        shares[first] = rest * shares[first] / total if total > 1e-12 else rest / 2.0
        shares[second] = rest - shares[first]
    shares[moved] = share
    technical = _clean(shares[0])
    proactivity = _clean(2.0 * shares[1])
    personalization = _clean(2.0 * shares[2])
    return technical, proactivity, personalization


class FreeWeightSlider(WeightSlider):
    """A slider for proactivity or personalization: a value in [0, 2]."""

    BINDINGS = [
        Binding("end", "set_value(2)", "2", tooltip="highest", show=False),
    ]

    def __init__(self, value: float = 0.3, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.set_reactive(WeightSlider.value, self.validate_value(value))

    def validate_value(self, value: float) -> float:
        return min(2.0, max(0.0, round(value, 10)))

    def _position(self, value: float) -> int:
        return round(value / 2.0 * (self._track - 1))

    def _value_at(self, x: int) -> float:
        return round(2.0 * min(max(x, 0), self._track - 1) / (self._track - 1), 2)


class WeightSliders(Vertical):
    """The three sliders in rows, each with its name and value, walking together."""

    DEFAULT_CSS = """
    WeightSliders { height: auto; width: 1fr; }
    WeightSliders > Horizontal { height: 1; }
    WeightSliders .weight-name { width: 16; }
    WeightSliders .weight-value { width: 5; margin-left: 1; }
    WeightSliders .weight-name.-locked { color: $warning; text-style: bold; }
    WeightSliders > FlipStrip { margin: 0 6 0 16; }
    WeightSliders.-narrow .weight-name { width: 7; }
    WeightSliders.-narrow > FlipStrip { margin: 0 6 0 7; }
    """

    @dataclass
    class Changed(Message):
        """The three weights after a step of one slider (the rule holds)."""

        sliders: WeightSliders
        weights: Triple

        @property
        def control(self) -> WeightSliders:
            return self.sliders

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._weights: Triple = (0.7, 0.3, 0.3)  # the pair 0.7 / 0.3 until shown
        self.locked: int | None = None
        self._told_locked = -10.0  # when the user was last told a weight is locked
        self._hold_timer: Timer | None = None  # frames held since a move (`_hold`)

    def compose(self) -> ComposeResult:
        for k in range(3):
            with Horizontal(id=f"{IDS[k]}-row"):
                yield Label(NAMES[k], classes="weight-name", id=f"{IDS[k]}-name")
                if k == 0:
                    yield WeightSlider(self._weights[0], id=IDS[0])
                else:
                    yield FreeWeightSlider(self._weights[k], id=IDS[k])
                yield Label("", classes="weight-value", id=f"{IDS[k]}-value")
            if k == 0:
                yield FlipStrip(id="weights-flips")

    def on_mount(self) -> None:
        self._show_values()

    @property
    def weights(self) -> Triple:
        return self._weights

    def slider(self, k: int) -> WeightSlider:
        return self.query_one(f"#{IDS[k]}", WeightSlider)

    def set_narrow(self, narrow: bool) -> None:
        self.set_class(narrow, "-narrow")
        self._show_names()

    def show(self, weights: Triple) -> None:
        """Reflect three weights without posting a Changed message (the screen's answer
        to a move: the frame held since the move is drawn now, with the figures)."""
        self._paint(weights)
        self._release()

    def _paint(self, weights: Triple) -> None:
        self._weights = weights
        for k in range(3):
            slider = self.slider(k)
            if slider.value != weights[k]:
                with slider.prevent(WeightSlider.Changed):
                    slider.value = weights[k]
            slider.refresh()  # in the same frame as the figures (see WeightSlider.value)
        self._show_values()

    def _show_values(self) -> None:
        for k in range(3):
            label = self.query_one(f"#{IDS[k]}-value", Label)
            content = Content(f"{self._weights[k]:.2f}")
            if label.content != content:
                label.update(content, layout=False)

    def _show_names(self) -> None:
        narrow = self.has_class("-narrow")
        for k in range(3):
            label = self.query_one(f"#{IDS[k]}-name", Label)
            name = SHORT[k] if narrow else NAMES[k]
            label.update(Content(f"{name} ■" if self.locked == k else name))
            label.set_class(self.locked == k, "-locked")

    # -- walking -----------------------------------------------------------------

    def move(self, k: int, value: float) -> None:
        """Set weight `k` to `value` (clamped to what the lock leaves); the others walk."""
        walked = walk(self._weights, k, value, self.locked)
        self._paint(walked)
        self._hold()
        self.post_message(self.Changed(self, walked))

    def place(self, proactivity: float, personalization: float) -> None:
        """Set both free weights at once (the flip map); technical is what the rule
        leaves. The lock does not apply: a point of the map is all three weights."""
        technical = _clean(1.0 - (proactivity + personalization) / 2.0)
        weights = (technical, _clean(proactivity), _clean(personalization))
        self._paint(weights)
        self._hold()
        self.post_message(self.Changed(self, weights))

    # -- one frame per step ----------------------------------------------------------

    def _hold(self) -> None:
        """Hold the screen's frames until the screen shows the new weights' ranking and
        figures (`show`), at most HOLD_S. The Changed message passes several widgets on
        its way to the app; unheld, Textual drew a frame with the sliders alone between
        them, and its frame clock then put the figures' frame 17-33 ms later."""
        if self._hold_timer is not None:
            return  # already held: one hold until the screen answers
        self.app._begin_batch()  # what `App.batch_update` does, across messages
        self._hold_timer = self.set_timer(HOLD_S, self._release)

    def _release(self) -> None:
        timer, self._hold_timer = self._hold_timer, None
        if timer is None:
            return
        timer.stop()
        self.app._end_batch()

    def on_unmount(self) -> None:
        self._release()  # never leave the app's frames held

    def step(self, k: int, delta: float) -> None:
        """Move weight `k` by `delta` (keys), to the nearest multiple of 0.01; a step the
        lock stops is told, not taken."""
        value = round(self._weights[k] + delta, 2)
        if self.locked is not None and walk(self._weights, k, value, self.locked) == self._weights:
            self._tell_locked(k)
            return
        self.move(k, value)

    def cycle_lock(self) -> str:
        """Lock the next weight (none, technical, proactivity, personalization, none);
        returns what is locked now, for a notice."""
        self.locked = 0 if self.locked is None else (self.locked + 1 if self.locked < 2 else None)
        self._show_names()
        return "no weight is locked" if self.locked is None else f"{NAMES[self.locked]} is locked"

    @on(WeightSlider.Changed)
    def _slider_moved(self, event: WeightSlider.Changed) -> None:
        event.stop()
        k = IDS.index(event.slider.id or "")
        if k == self.locked:
            self.show(self._weights)  # a locked weight stays where it is
            self._tell_locked(k)
            return
        self.move(k, event.value)

    def _tell_locked(self, k: int) -> None:
        """Say why weight `k` does not move: it is the locked one, or the locked one
        leaves it no room that way."""
        now = time.monotonic()
        if self.locked is None or now - self._told_locked <= 2.0:
            return  # once per drag (or run of keys), not at every mouse move
        self._told_locked = now
        locked = NAMES[self.locked]
        text = (
            f"{locked} is locked"
            if k == self.locked
            else f"{NAMES[k]} can go no further that way while {locked} is locked"
        )
        self.notify(f"{text} (l cycles the lock)", severity="warning", timeout=2)
