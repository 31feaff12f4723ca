"""Run times (`created_at`): text as given, read as ISO 8601 where it can be.

A time is read as a moment to put runs in time order (whatever its offset or
precision; one naming no zone is taken as UTC), and shown compactly as written: in
the offset it was recorded in, so a run's date is the one the dashboard counts it
on.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from datetime import UTC, date, datetime
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt


def parse_time(text: str | None) -> datetime | None:
    """An ISO 8601 time as an aware datetime (UTC if it names no zone), or None."""
    if not isinstance(text, str) or not text:  # not text: a database edited outside
        return None
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment


def moment(text: str | None) -> float | None:
    """A time as seconds since 1970 (UTC), or None when it is missing or unreadable."""
    parsed = parse_time(text)
    return None if parsed is None else parsed.timestamp()


def moments(texts: Sequence[str | None]) -> npt.NDArray[np.float64]:
    """`moment` of each time, nan where there is none (about 50 ms for 100k)."""
    import numpy as np  # not at import: the app's first frame comes before numpy

    return np.fromiter(
        (math.nan if at is None else at for at in map(moment, texts)), np.float64, len(texts)
    )


def compact_time(text: str | None, with_time: bool = True) -> str | None:
    """`2026-11-26 14:03` (or the date alone), as recorded; None when unreadable.

    A date without a time of day is shown as the date alone whatever `with_time` says.
    """
    parsed = parse_time(text)
    if parsed is None:
        return None
    day = f"{parsed.year:04d}-{parsed.month:02d}-{parsed.day:02d}"
    if not with_time or _date_only(text):
        return day
    return f"{day} {parsed.hour:02d}:{parsed.minute:02d}"


def _date_only(text: str | None) -> bool:
    try:
        date.fromisoformat(text or "")
    except ValueError:
        return False
    return True
