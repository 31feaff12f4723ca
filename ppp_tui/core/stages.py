"""The one order stages are listed in, everywhere: menus, tables, messages.

The six spec-kit stages come in pipeline order (plan, tasks, implement, validate,
audit, unlock), then any other stage name alphabetically, then runs without a stage.
"""

from __future__ import annotations

from collections.abc import Iterable

from .settings import STAGES

# How runs without a stage are named in lists, and how a filter selects them.
NO_STAGE = "(no stage)"

_PIPELINE = {name: position for position, name in enumerate(STAGES)}


def ordered(stages: Iterable[str | None]) -> list[str | None]:
    """The distinct `stages` in pipeline order, other names alphabetically, None last."""
    present = set(stages)
    named = [s for s in present if s is not None]
    named.sort(key=lambda s: (_PIPELINE.get(s, len(_PIPELINE)), s))
    result: list[str | None] = list(named)
    if None in present:
        result.append(None)
    return result


def label(stage: str | None) -> str:
    """A stage as lists show it: its name, or "(no stage)"."""
    return NO_STAGE if stage is None else stage


# How the global weights' scope is named in output. Inside, the global scope is None
# everywhere; a stage that happens to be called "global" is a stage like any other.
GLOBAL = "global"


def scope_label(scope: str | None) -> str:
    """A weights scope as output names it: "global" for the global weights (None),
    else the stage's name."""
    return GLOBAL if scope is None else scope


def listing(stages: Iterable[str | None]) -> str:
    """The distinct `stages` in order, comma-separated ("plan, tasks, (no stage)")."""
    return ", ".join(label(s) for s in ordered(stages)) or "none"
