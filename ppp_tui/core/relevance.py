"""The task type of a run's task text, and relevance x confidence weighting."""

from __future__ import annotations

import re
from enum import StrEnum
from functools import cache

# Agents below this self-assessed relevance get the "low relevance" flag.
LOW_RELEVANCE = 0.5


class TaskType(StrEnum):
    DOCUMENTATION = "documentation"
    CODE_GENERATION = "code_generation"
    REFACTORING = "refactoring"
    DEBUGGING = "debugging"
    OPTIMIZATION = "optimization"
    GENERAL = "general"


# Cue stems per task type. A task names its kind of work with a verb or noun; the
# type with the most cues wins, and on a tie the earlier type in this order wins,
# because "fix the slow query" is a debugging task before it is an optimisation.
_CUES: tuple[tuple[TaskType, str], ...] = (
    (
        TaskType.DEBUGGING,
        r"fix(es|ed|ing)?|bugs?|debug\w*|crash\w*|errors?(?!\s+handling)|exceptions?|fail\w*|broken|"
        r"regressions?|traceback|stack ?traces?|diagnos\w*|troubleshoot\w*|hangs?|"
        r"flaky|leaks?|not working|doesn'?t work|investigat\w*|root cause|panics?",
    ),
    (
        TaskType.OPTIMIZATION,
        r"optimi[sz]\w*|speed ?up|faster|slow(er|ness)?|performance|latency|throughput|"
        r"memory (usage|footprint)|reduce (the )?(time|cost|memory|cpu|size)|cach(e|ing)|"
        r"profil\w*|benchmark\w*|bottlenecks?|efficien\w*|scal(e|ing|ability)",
    ),
    (
        TaskType.REFACTORING,
        r"refactor\w*|restructur\w*|clean ?up|cleanup|reorgani[sz]\w*|rename\w*|"
        r"extract\w*|simplif\w*|decouple|split (up|out|into)|dedup\w*|moderni[sz]\w*|"
        r"migrat\w*|tidy|rewrite|technical debt",
    ),
    (
        TaskType.DOCUMENTATION,
        r"document\w*|docs?|readme|docstrings?|comments?|changelog|guide|tutorial|"
        r"explain\w*|describe|write[- ]?up|api reference|wiki|usage examples?|man ?page",
    ),
    (
        TaskType.CODE_GENERATION,
        r"add\w*|implement\w*|creat\w*|build\w*|generat\w*|write|new|introduc\w*|"
        r"support|integrat\w*|endpoints?|features?|scaffold\w*|set ?up|develop\w*|"
        r"handl(e|ing)",
    ),
)
# Creation verbs ("add", "create", "write") go with every kind of task, so they count
# half: "Create implementation plan documentation" is documentation.
_CUE_WEIGHT = {TaskType.CODE_GENERATION: 0.5}


@cache
def _patterns() -> tuple[tuple[TaskType, re.Pattern[str]], ...]:
    """The cue patterns, compiled on first use: 2 ms the app's first screen does without."""
    return tuple((kind, re.compile(rf"\b(?:{cues})\b", re.IGNORECASE)) for kind, cues in _CUES)


@cache
def _lower_patterns() -> tuple[tuple[TaskType, re.Pattern[str]], ...]:
    """The cue patterns matching case, for a lower-cased ASCII text. They match there just
    where `_patterns` match the text itself (only A-Z change case in ASCII, and the cues
    are written in lower case), about three times faster."""
    return tuple((kind, re.compile(rf"\b(?:{cues})\b")) for kind, cues in _CUES)


def task_type(task: str | None) -> TaskType:
    """Classify a run's task text."""
    if not task:
        return TaskType.GENERAL
    if task.isascii():
        text, patterns = task.lower(), _lower_patterns()
    else:
        text, patterns = task, _patterns()
    best, best_hits = TaskType.GENERAL, 0.0
    for kind, pattern in patterns:
        hits = len(pattern.findall(text)) * _CUE_WEIGHT.get(kind, 1.0)
        if hits > best_hits:
            best, best_hits = kind, hits
    return best


def relevance_weight(relevance: float | None, confidence: float | None) -> float | None:
    """The synthesis weight: relevance x confidence (None if either is unknown)."""
    if relevance is None or confidence is None:
        return None
    return relevance * confidence
