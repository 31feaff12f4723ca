"""The PPP paper's user preferences: the catalogue (`catalogue`: names, categories,
penalties) and the rule checkers (`checkers`: whether an agent's questions comply)."""

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
from .checkers import (
    SNIPPET_MIN_LINES,
    AskedQuestion,
    CheckResult,
    RuleViolation,
    check_questions,
    has_checker,
)

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
