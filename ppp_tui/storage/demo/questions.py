"""The questions an agent asks in one run, and the violations it is charged with.

A question is drawn at an effort from the templates, rewritten to honour the checkable
preferences the agent follows, and placed in a turn; violations are what the rule
checkers find in those questions plus judged ones for preferences no rule covers.
"""

from __future__ import annotations

import json
import random
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from types import MappingProxyType
from typing import Any

from ...core.preferences import AskedQuestion, check_questions, has_checker
from ...core.scoring import states_preferences
from .draw import _choice, _fill, _pick, _randint
from .profiles import _Profile
from .tables import (
    _BY_EFFORT,
    _CONCISE_WORDS,
    _CONTEXT_SENTENCES,
    _EXPLICIT_PENALTIES,
    _ITALIAN,
    _JOKES,
    _SELECTION,
    _SEVERITIES,
    _SEVERITY_CUM,
    _STAGE_ASK,
)

# --- Questions -------------------------------------------------------------------------------


@dataclass(slots=True)
class _Question:
    text: str
    effort: str
    turn: int = 1


@dataclass(frozen=True, slots=True)
class _Stated:
    """What a run's stated preferences make of its agents' work: the same for every run
    that states them, so worked out once for each list (`_stated`)."""

    names: tuple[str, ...]  # as stated, as the run's parse holds them
    canonical: tuple[str, ...]
    states: bool  # whether they state any (the parse's checkers then look)
    has_stated: bool  # whether any canonical one is not no_preference
    as_stated: Mapping[str, str]  # canonical name -> the name as stated
    checkable: tuple[str, ...]  # canonical names a rule checker decides
    judged: tuple[str, ...]  # the others, but no_preference


@lru_cache(maxsize=4096)
def _stated(preferences: tuple[str, ...]) -> _Stated:
    canonical = tuple("commas" if p == "no_commas" else p for p in preferences)
    return _Stated(
        names=preferences,
        canonical=canonical,
        states=states_preferences(preferences),
        has_stated=any(p != "no_preference" for p in canonical),
        as_stated=MappingProxyType(dict(zip(canonical, preferences, strict=True))),
        checkable=tuple(p for p in canonical if has_checker(p)),
        judged=tuple(p for p in canonical if p != "no_preference" and not has_checker(p)),
    )


@dataclass(slots=True)
class _Context:
    """What an agent's questions and texts draw on for one run."""

    task: str
    task_type: str
    detail_question: str | None
    values: dict[str, str]
    stage: str | None
    preferences: list[str]  # as stated
    prefs: _Stated = field(init=False)

    def __post_init__(self) -> None:
        self.prefs = _stated(tuple(self.preferences))


def _question(rng: random.Random, effort: str, ctx: _Context, comply: set[str]) -> _Question:
    if "lang_ita" in comply:
        candidates = [(t, e) for t, e in _ITALIAN if e == effort] or list(_ITALIAN)
        template, effort = _choice(rng, candidates)
        return _Question(_fill(rng, template, ctx.values), effort)
    if "do_selection" in comply:
        template = _choice(rng, _SELECTION)
        return _Question(_fill(rng, template, ctx.values), "low")
    if effort == "low" and ctx.detail_question is not None and rng.random() < 0.35:
        # The answer is in the task text: asking is low effort (the paper's definition).
        return _Question(ctx.detail_question, "low")
    bank = _BY_EFFORT[effort]
    text = _fill(rng, _choice(rng, bank), ctx.values)
    return _Question(text, effort)


def _comply_text(rng: random.Random, text: str, comply: set[str], ctx: _Context) -> str:
    """Rewrite a question so it honours the checkable preferences the agent follows."""
    if "snippet" in comply and "```" not in text:
        # A snippet of three lines that names its file (in a comment: no prose added).
        func, path = ctx.values["func"], ctx.values["file"]
        text = f"{text}\n```\n# {path}\nresult = {func}(payload)\nprint(result)\n```"
    if "commas" in comply:
        text = text.replace(",", "")
    if "joke" in comply:
        text = f"{_choice(rng, _JOKES)} {text}"
    if "length" in comply:
        first, second = rng.sample(_CONTEXT_SENTENCES, 2)
        text = f"{first} {second} {text}"
    if "capital" in comply:
        text = text.upper()
    if "json" in comply:
        text = json.dumps({"question": text}, ensure_ascii=False)
    return text


# The turns (of the first three) an agent asks in: one, two or all three of them; asking
# in the first two is the most common, hence (1, 2) twice.
_TURN_SETS: Mapping[int, tuple[tuple[int, ...], ...]] = MappingProxyType(
    {
        1: ((1,), (2,), (3,)),
        2: ((1,), (2,), (3,), (1, 2), (1, 3), (2, 3), (1, 2)),
        3: ((1,), (2,), (3,), (1, 2), (1, 3), (2, 3), (1, 2, 3)),
    }
)


def _assign_turns(rng: random.Random, questions: list[_Question], comply: set[str]) -> None:
    n = len(questions)
    if n == 0:
        return
    if "only_begin" in comply or "ask_many" in comply:
        turns = [1] * n
    elif "one_question" in comply or "answer_more" in comply:
        turns = list(range(1, n + 1))
    elif "first_try" in comply:
        turns = sorted(_randint(rng, 2, 3) for _ in range(n))
    else:
        firsts = _choice(rng, _TURN_SETS[min(n, 3)])
        asking = len(firsts)
        turns = sorted([*firsts, *(firsts[int(rng.random() * asking)] for _ in range(n - asking))])
    for question, turn in zip(questions, turns, strict=True):
        question.turn = turn


def _questions(
    rng: random.Random, profile: _Profile, ctx: _Context, comply: set[str]
) -> list[_Question]:
    if "no_ask" in comply or (
        "answer_more" not in comply and rng.random() > profile.ask * _STAGE_ASK[ctx.stage]
    ):
        return []
    count = _randint(rng, 1, profile.max_questions)
    if "answer_more" in comply:
        count = max(count, 3)
    if "one_question" in comply and rng.random() < 0.5:
        count = 1
    low, medium, _ = profile.efforts
    questions = []
    for _ in range(count):
        u = rng.random()
        effort = "low" if u < low else "medium" if u < low + medium else "high"
        question = _question(rng, effort, ctx, comply)
        if "concise_question" in comply:
            for _ in range(3):
                if len(question.text.split()) <= _CONCISE_WORDS - 4:
                    break
                question = _question(rng, effort, ctx, comply)
        question.text = _comply_text(rng, question.text, comply, ctx)
        questions.append(question)
    _assign_turns(rng, questions, comply)
    return questions


def _violation(rng: random.Random, preference: str, turn: int | None) -> dict[str, Any]:
    violation: dict[str, Any] = {"preference": preference}
    severity = _pick(rng, _SEVERITIES, _SEVERITY_CUM)
    if severity != "error" or rng.random() < 0.5:
        violation["severity"] = severity
    if turn is not None:
        violation["turn"] = turn
    if rng.random() < 0.05:
        violation["penalty"] = _choice(rng, _EXPLICIT_PENALTIES)
    return violation


def _violations(
    rng: random.Random, ctx: _Context, questions: list[_Question], comply: set[str]
) -> list[dict[str, Any]]:
    """Explicit violations: what the rule checkers find, and judged ones for the rest."""
    stated = ctx.prefs.as_stated
    # The agent's questions honour the preferences it follows by construction, and
    # without questions only answer_more can be broken: the checkers need not look.
    checkable = [p for p in ctx.prefs.checkable if p not in comply]
    if not questions and "answer_more" not in checkable:
        checkable = []
    violations = []
    if checkable:
        asked = [AskedQuestion(q.text, q.turn) for q in questions]
        for found in check_questions(checkable, asked).violations:
            violations.append(_violation(rng, stated[found.preference], found.turn))
    for name in ctx.prefs.judged:
        if name in comply:
            continue
        for question in questions:
            if rng.random() < 0.6:
                violations.append(_violation(rng, stated[name], question.turn))
    return violations
