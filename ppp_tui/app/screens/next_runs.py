"""The runs to mark next (core.next_mark), as the app's screens ask for them: the runs
list narrows to them (`n` there), a run's screen opens the first of them in its own
place (`n` there), so that a reviewer marks run after run.

Both compute from the marks as they are now, for the stage the runs list is filtered
by, in a worker (a tenth of a second at 100k runs); this module holds what they share.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from ...core.stages import NO_STAGE
from ..text import NO_STAGE_VALUE

if TYPE_CHECKING:
    from ...core.arrays import Lines
    from ...core.next_mark import NextMarks
    from ...core.settings import Settings
    from ..workspace import Workspace

# What a worker computes from: the loaded lines (with a copy of the marks), the
# settings, and the stage (None: every stage; NO_STAGE: the runs without one).
NextRequest = tuple["Lines", "Settings", str | None]


def next_request(workspace: Workspace, stage_filter: str | None) -> NextRequest | None:
    """What to compute the runs to mark next from, for the stage menu's choice
    `stage_filter`; None until the scores are loaded."""
    scores = workspace.scores
    if scores is None:
        return None
    # A copy of the marks: the UI thread patches the loaded ones in place.
    arrays = replace(scores.arrays, preferred=scores.arrays.preferred.copy())
    stage = NO_STAGE if stage_filter == NO_STAGE_VALUE else stage_filter
    return replace(scores.lines, arrays=arrays), workspace.settings, stage


def next_marks(request: NextRequest) -> NextMarks:
    """The runs to mark next, the most telling first (run it off the UI thread)."""
    from ...core.next_mark import NEXT_RUNS, scopes, suggest

    lines, settings, stage = request
    return suggest(lines, scopes(lines.arrays, settings, stage), NEXT_RUNS)


def none_left(result: NextMarks, stage_filter: str | None) -> str:
    """Why there is no run to mark next."""
    where = "" if stage_filter is None else " in this stage"
    if not result.unmarked_runs:
        return f"No unmarked runs{where}: every run is marked."
    return f"No unmarked run{where} changes its pick with the technical weight."
