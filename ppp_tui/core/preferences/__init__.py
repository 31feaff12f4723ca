"""The PPP paper's user preferences: the catalogue (`catalogue`: names, categories,
penalties) and the rule checkers (`checkers`: whether an agent's questions comply).

The checkers load when one of their names is first used: their patterns take about
20 ms to compile, which the app's first screen and most commands never need.
"""

from typing import TYPE_CHECKING, Any

from .catalogue import (
    ALIASES,
    ANSWER_MORE_MIN_TURNS,
    CATALOGUE,
    CONCISE_MAX_WORDS,
    LENGTH_SENTENCES,
    UNKNOWN_PENALTY,
    Category,
    Preference,
    canonical,
    is_known,
    paper_penalties,
)

if TYPE_CHECKING:
    from .checkers import (
        SNIPPET_MIN_LINES,
        AskedQuestion,
        CheckResult,
        RuleViolation,
        check_questions,
        has_checker,
    )

_CHECKERS = frozenset(
    {
        "SNIPPET_MIN_LINES",
        "AskedQuestion",
        "CheckResult",
        "RuleViolation",
        "check_questions",
        "has_checker",
    }
)


def __getattr__(name: str) -> Any:
    if name in _CHECKERS:
        from . import checkers

        return getattr(checkers, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "ALIASES",
    "ANSWER_MORE_MIN_TURNS",
    "CATALOGUE",
    "CONCISE_MAX_WORDS",
    "LENGTH_SENTENCES",
    "SNIPPET_MIN_LINES",
    "UNKNOWN_PENALTY",
    "AskedQuestion",
    "Category",
    "CheckResult",
    "Preference",
    "RuleViolation",
    "canonical",
    "check_questions",
    "has_checker",
    "is_known",
    "paper_penalties",
]
