"""How much answering a question costs the user: low, medium or high effort.

`classify` gives a question's effort with its parts; `classify_effort` gives the same
effort alone (the import's hot path); `answered_by` and `restates_problem` tell whether
the run's task text already answers it.

The decision is in `classifier`; the cue tables it reads in `cues`; the cheap tests that
let it skip most patterns in `gates`; and what a task text answers in `task_text`.
"""

from .classifier import (
    SELECTION_WORDS,
    Classification,
    Part,
    answered_by,
    classify,
    classify_effort,
    split_parts,
)
from .task_text import restates_problem

__all__ = [
    "SELECTION_WORDS",
    "Classification",
    "Part",
    "answered_by",
    "classify",
    "classify_effort",
    "restates_problem",
    "split_parts",
]
