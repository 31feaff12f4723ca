"""The rule checkers: whether an agent's questions comply with the stated preferences,
where a rule can decide it.

Per-question rules (no commas, capitals, JSON, three sentences, a snippet, Italian,
options to pick from, concise) cost one violation per question that breaks them, as the
paper's simulated user tags each such question. The rules over the whole trajectory
(no_ask, only_begin, ask_many, answer_more, one_question) work on the asking turns. An
`ask_question` call of the paper is one turn here: the questions an agent asks in the
same turn were one query to the user.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from types import MappingProxyType

from .catalogue import ANSWER_MORE_MIN_TURNS, CONCISE_MAX_WORDS, LENGTH_SENTENCES, canonical
from .counting import question_count
from .language import is_capitals, is_italian_ask
from .options import offers_options
from .text import COMMAS, has_snippet, is_json, prose_of, sentence_count
from .text import SNIPPET_MIN_LINES as SNIPPET_MIN_LINES


@dataclass(frozen=True)
class AskedQuestion:
    """A question the agent asked the user."""

    text: str
    turn: int | None = None  # 1-based turn the question was asked in; None = unknown


@dataclass(frozen=True)
class RuleViolation:
    """A preference that the agent's questions broke."""

    preference: str  # canonical name
    # The offending question. Whole-trajectory rules name the question that first broke
    # them where there is one (no_ask, only_begin, ask_many) and None where there is not
    # (answer_more: a question that was never asked).
    question: str | None
    turn: int | None


@dataclass(frozen=True)
class CheckResult:
    """What the rule checkers decided about one agent's questions."""

    violations: tuple[RuleViolation, ...]
    # Stated preferences no rule can decide (canonical names), in stated order, no duplicates.
    unchecked: tuple[str, ...]


def _is_concise(text: str) -> bool:
    prose = prose_of(text)
    return sentence_count(prose) <= 1 and len(prose.split()) <= CONCISE_MAX_WORDS


# --- Per-question rules: True when the question complies -------------------------------------

_QUESTION_RULES: Mapping[str, Callable[[str], bool]] = MappingProxyType(
    {
        # A comma anywhere (ASCII or full-width) breaks it, code included: the agent can
        # always leave code out of a question.
        # A comma anywhere breaks it, code included: the agent can always leave code out
        # of a question.
        "commas": lambda text: not any(c in COMMAS for c in text),
        "capital": is_capitals,
        "json": is_json,
        "length": lambda text: sentence_count(prose_of(text)) == LENGTH_SENTENCES,
        "snippet": has_snippet,
        # A question with no words at all (only code) has nothing to translate.
        "lang_ita": is_italian_ask,
        "do_selection": offers_options,
        "concise_question": _is_concise,
    }
)

# A rule returns its violations, or None when the questions lack what it needs to decide
# (their turns).
_Rule = Callable[[str, Sequence[AskedQuestion]], tuple[RuleViolation, ...] | None]


# Question texts whose answer each per-question rule remembers: the same questions come
# back run after run (an agent's stock questions).
_RULE_CACHE_SIZE = 4096


def _each_question(complies: Callable[[str], bool]) -> _Rule:
    # The paper penalises every question the user tags [Reward 0], so one violation each.
    complies = lru_cache(maxsize=_RULE_CACHE_SIZE)(complies)

    def rule(name: str, questions: Sequence[AskedQuestion]) -> tuple[RuleViolation, ...]:
        return tuple(RuleViolation(name, q.text, q.turn) for q in questions if not complies(q.text))

    return rule


def _by_turn(
    questions: Sequence[AskedQuestion],
) -> tuple[dict[int, list[AskedQuestion]], list[AskedQuestion]]:
    """Questions grouped by known turn, in turn order, and those whose turn is unknown."""
    known: dict[int, list[AskedQuestion]] = {}
    unknown: list[AskedQuestion] = []
    for q in questions:
        if q.turn is None:
            unknown.append(q)
        else:
            known.setdefault(q.turn, []).append(q)
    return dict(sorted(known.items())), unknown


def _turns_unknowable(questions: Sequence[AskedQuestion], unknown: list[AskedQuestion]) -> bool:
    # With two or more questions and a turn missing, the number of asking turns is unknown.
    return bool(unknown) and len(questions) > 1


def _no_ask(name: str, questions: Sequence[AskedQuestion]) -> tuple[RuleViolation, ...]:
    # Paper: -int(ask_turn > 0), one penalty however many questions were asked.
    if not questions:
        return ()
    first = questions[0]
    return (RuleViolation(name, first.text, first.turn),)


def _only_begin(name: str, questions: Sequence[AskedQuestion]) -> tuple[RuleViolation, ...] | None:
    # Paper: -int('ask_question' in str(messages[3:])), i.e. one penalty if any question
    # comes after the agent's first response.
    late = [q for q in questions if q.turn is not None and q.turn > 1]
    if late:
        first = min(late, key=lambda q: q.turn or 0)
        return (RuleViolation(name, first.text, first.turn),)
    if any(q.turn is None for q in questions):
        return None
    return ()


def _ask_many(name: str, questions: Sequence[AskedQuestion]) -> tuple[RuleViolation, ...] | None:
    # Paper: -int(ask_turn > 1), one penalty once questions are spread over two turns.
    known, unknown = _by_turn(questions)
    if len(known) >= 2:
        first_of_second_turn = list(known.values())[1][0]
        return (RuleViolation(name, first_of_second_turn.text, first_of_second_turn.turn),)
    if _turns_unknowable(questions, unknown):
        return None
    return ()


def _answer_more(name: str, questions: Sequence[AskedQuestion]) -> tuple[RuleViolation, ...] | None:
    # Paper: min(ask_turn - 3, 0), one penalty per asking turn short of three.
    known, unknown = _by_turn(questions)
    if len(known) >= ANSWER_MORE_MIN_TURNS:
        return ()
    if _turns_unknowable(questions, unknown):
        return None
    missing = ANSWER_MORE_MIN_TURNS - len(known) - len(unknown)
    return tuple(RuleViolation(name, None, None) for _ in range(missing))


def _one_question(
    name: str, questions: Sequence[AskedQuestion]
) -> tuple[RuleViolation, ...] | None:
    # The paper's user judges each ask_question call, so a turn asking two or more questions
    # is one violation, named by the question that went past the first.
    known, unknown = _by_turn(questions)
    asks = [*known.values(), *([q] for q in unknown)]
    violations: list[RuleViolation] = []
    for ask in asks:
        asked = 0
        for q in ask:
            asked += question_count(q.text)
            if asked > 1:
                violations.append(RuleViolation(name, q.text, q.turn))
                break
    if not violations and _turns_unknowable(questions, unknown):
        return None
    return tuple(violations)


_CHECKERS: Mapping[str, _Rule] = MappingProxyType(
    {
        **{name: _each_question(complies) for name, complies in _QUESTION_RULES.items()},
        "no_ask": _no_ask,
        "only_begin": _only_begin,
        "ask_many": _ask_many,
        "answer_more": _answer_more,
        "one_question": _one_question,
    }
)


def has_checker(name: str) -> bool:
    """Whether a rule decides compliance with `name` (no_preference needs none)."""
    return canonical(name) in _CHECKERS


def check_questions(preferences: Sequence[str], questions: Sequence[AskedQuestion]) -> CheckResult:
    """Decide which stated preferences the agent's questions break.

    Violations come in stated-preference order. A preference no rule covers, an unknown
    name, or a turn-based rule facing questions without turns is reported unchecked.
    """
    violations: list[RuleViolation] = []
    unchecked: list[str] = []
    for name in dict.fromkeys(canonical(p) for p in preferences):
        if name == "no_preference":
            continue
        rule = _CHECKERS.get(name)
        found = rule(name, questions) if rule is not None else None
        if found is None:
            unchecked.append(name)
        else:
            violations.extend(found)
    return CheckResult(tuple(violations), tuple(unchecked))
