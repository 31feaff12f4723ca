"""Small wording and ordering rules shared by the app's screens."""

from __future__ import annotations

from collections.abc import Iterable

from ..core.settings import Weights
from ..core.stages import NO_STAGE, ordered

__all__ = ["NO_STAGE", "NO_STAGE_VALUE", "stage_order", "stage_tables", "weights_text"]

NO_STAGE_VALUE = "\x00no-stage"  # its value: no real stage name can be this


def stage_order(stages: Iterable[str | None]) -> list[str]:
    """The distinct named stages: the six pipeline stages in pipeline order, then any
    others alphabetically (runs without a stage are left out)."""
    return [stage for stage in ordered(stages) if stage]


def stage_tables(count: int) -> str:
    """'1 stage table', '3 stage tables'."""
    return f"{count} stage table" if count == 1 else f"{count} stage tables"


def weights_text(weights: Weights) -> str:
    """Weights in a status line: technical/interaction in the pair form (0.70/0.30),
    else technical/proactivity/personalization (0.70/0.40/0.20)."""
    if weights.is_pair:
        return f"{weights.technical:.2f}/{weights.interaction:.2f}"
    return f"{weights.technical:.2f}/{weights.proactivity:.2f}/{weights.personalization:.2f}"
