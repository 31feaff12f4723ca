"""Turning one decoded JSON run into a `Run`, completing what is missing.

Validation names the JSON path of the first problem ($.agents[1].technical_score).
Where the data leaves labels out, the core fills them in and records the source:
questions extracted from turn responses, efforts from the classifier (with the
run's task text as context), violations from the preference rule checkers.

Two parsers build the run: the fast one (`fast`) for the usual shapes, and the checked
one (`checked`) for everything it declines, which names the first problem. They give
the same run for every document the fast one takes.
"""

from __future__ import annotations

from typing import Any

from ..model import Run
from .checked import _checked_run, content_id
from .fast import _fast_run, _Unusual

__all__ = ["content_id", "run_from_dict"]


def run_from_dict(raw: Any, path: str = "$", fast: bool = True) -> Run:
    """Validate and complete one run; raises `RunError` naming the JSON path. Without
    `fast`, the checked parser alone (for a run the fast one was seen to decline)."""
    if fast and type(raw) is dict:
        try:
            return _fast_run(raw)
        except _Unusual:
            pass  # something to report (or an unusual value): the checked path decides
    return _checked_run(raw, path)
