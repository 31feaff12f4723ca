"""Small wording and ordering rules shared by the app's screens."""

from __future__ import annotations

from collections.abc import Iterable

from ..core.settings import STAGES

NO_STAGE = "(no stage)"  # the stage menus' entry for runs without a stage
NO_STAGE_VALUE = "\x00no-stage"  # its value: no real stage name can be this


def stage_order(stages: Iterable[str | None]) -> list[str]:
    """The distinct named stages: the six pipeline stages in pipeline order, then any
    others alphabetically (runs without a stage are left out)."""
    named = {stage for stage in stages if stage}
    return [s for s in STAGES if s in named] + sorted(named - set(STAGES))


def stage_tables(count: int) -> str:
    """'1 stage table', '3 stage tables'."""
    return f"{count} stage table" if count == 1 else f"{count} stage tables"
