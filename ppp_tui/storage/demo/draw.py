"""Drawing from the demo's random stream, filling templates, and the runs' times.

The helpers draw from the `random.Random` their caller passes (one stream per chunk,
so the same seed gives the same runs). The run times are drawn once for the whole
demo, denser on weekdays and in working hours, with numpy for a large demo (the very
same draws, in bulk).
"""

from __future__ import annotations

import bisect
import random
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from .tables import _OPTIONS, _V, _Template

# Runs are spread over DAYS days from START, denser on weekdays and working hours.
START = datetime(2025, 9, 1, tzinfo=UTC)
_START_NAIVE = START.replace(tzinfo=None)
DAYS = 90


# --- Helpers ---------------------------------------------------------------------------------


def _choice(rng: random.Random, items: Sequence[Any]) -> Any:
    # random() is cheaper than randrange(), and just as deterministic.
    return items[int(rng.random() * len(items))]


def _randint(rng: random.Random, lo: int, hi: int) -> int:
    return lo + int(rng.random() * (hi - lo + 1))


def _pick(rng: random.Random, items: Sequence[Any], cum: Sequence[float]) -> Any:
    return items[bisect.bisect_right(cum, rng.random() * cum[-1])]


def _fill(rng: random.Random, template: _Template, fixed: Mapping[str, str]) -> str:
    slots = template.slots
    if template.fields is None:
        return template.pattern  # nothing to fill in: the text, unescaped
    values = {}
    draw = rng.random
    for slot in slots:
        if slot in fixed:
            values[slot] = fixed[slot]
        elif slot in _OPTION_SLOTS:
            # _choice, inlined: the same draw.
            a, b, purpose = _OPTIONS[int(draw() * len(_OPTIONS))]
            values.update(a=a, b=b, purpose=purpose, A=a[0].upper() + a[1:])
        else:
            choices = _V[slot]
            values[slot] = choices[int(draw() * len(choices))]
    return template.pattern % template.fields(values)


_OPTION_SLOTS = frozenset({"a", "b", "purpose", "A"})


def _clip(value: float, lo: float, hi: float) -> float:
    return lo if value < lo else hi if value > hi else value


def _iso(moment: datetime) -> str:
    """ISO 8601 in UTC with a Z; `moment` is a naive UTC datetime. Its first 19 characters
    are the date and time to the second (the year has four digits): faster than strftime,
    or than isoformat's timespec."""
    return moment.isoformat()[:19] + "Z"


# From this many runs on, the times are drawn with numpy (the same draws, in bulk).
_BULK_TIMES = 20_000


def _density() -> list[float]:
    """How busy each hour of the period is: more on weekdays and in working hours."""
    weekday = (1.0, 1.0, 1.0, 1.0, 0.9, 0.3, 0.2)
    start_weekday = START.weekday()
    hours = [0.08] * 7 + [0.4, 0.8, 1.0, 1.0, 0.9, 0.7, 1.0, 1.0, 1.0, 0.9, 0.7, 0.5, 0.35]
    hours += [0.25] * (24 - len(hours))
    return [weekday[(start_weekday + d) % 7] * hours[h] for d in range(DAYS) for h in range(24)]


def _timestamps(rng: random.Random, count: int) -> list[float]:
    """`count` seconds after START, sorted: more on weekdays and in working hours.

    Each candidate time takes two draws, the time and whether to keep it; usage grows
    over the period, so later days are a little busier.
    """
    if count >= _BULK_TIMES:
        return _bulk_timestamps(rng, count)
    span = DAYS * 86400.0
    table = _density()
    times: list[float] = []
    append = times.append
    draw = rng.random
    while len(times) < count:
        t = draw() * span
        day, rest = divmod(t, 86400.0)
        if draw() < table[int(day) * 24 + int(rest // 3600)] * (0.7 + 0.3 * t / span):
            append(t)
    times.sort()
    return times


def _bulk_timestamps(rng: random.Random, count: int) -> list[float]:
    """`_timestamps` with numpy: its Mersenne Twister, started from `rng`'s state, draws
    the same numbers as `rng.random()`, and the same float operations keep the same
    times (about five times faster for a large demo)."""
    import numpy as np

    span = DAYS * 86400.0
    table = np.array(_density())
    internal = rng.getstate()[1]
    state = np.random.RandomState()
    state.set_state(("MT19937", np.array(internal[:-1], dtype=np.uint32), internal[-1], 0, 0.0))
    kept: list[Any] = []
    missing = count
    while missing > 0:
        draws = state.random_sample(2 * max(1024, int(missing * 3.2)))
        t = draws[0::2] * span
        day, rest = np.divmod(t, 86400.0)
        hour = day.astype(np.int64) * 24 + (rest // 3600).astype(np.int64)
        found = t[draws[1::2] < table[hour] * (0.7 + 0.3 * t / span)][:missing]
        kept.append(found)
        missing -= len(found)
    times = np.concatenate(kept) if kept else np.empty(0)
    times.sort()
    result: list[float] = times.tolist()
    return result
