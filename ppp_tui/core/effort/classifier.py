"""The question-effort classifier.

It starts from a keyword-and-length decision tree (high-effort cues override, short
selection questions are low, then length) and follows the paper's definitions
more closely:

- low: the user answers at once: a choice among offered options, a yes/no
  confirmation, or something the run's task text already says;
- medium: the user has to decide something open-ended, but needs no research;
- high: the user has to do work or fetch knowledge beyond the prompt:
  investigate, run or measure something, dig up logs or credentials, explain at
  length, or settle a broad architecture or strategy question.

So the cues are about what the answer costs the user, not about single words: an
investigation verb aimed at the agent's own next step ("Should I add a test?") is
still a yes/no confirmation, while "Could you check what the staging server
returns?" asks the user to go and look. Multi-part questions take the highest
part's effort. Everything is precompiled regular expressions over one lower-cased
string, so the classifier is deterministic; and nearly each is gated by a cheap test
(see below), so it is fast too (see benchmarks/). A task text is prepared once for all
the questions asked about it (`task_text._task`).

The cue tables are in `cues`, the gate machinery in `gates`, and what a task text
answers in `task_text`.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache

from ..model import Effort
from .cues import (
    _AUX_STARTS,
    _CONFIRM_END,
    _CONFIRM_END_GATES,
    _CONFIRM_ENDS,
    _CONFIRM_START,
    _CONFIRM_STARTS,
    _CONJUNCTION,
    _CONJUNCTION_INITIALS,
    _CONJUNCTIONS,
    _DECISION,
    _DECISION_FIRST,
    _DECISION_FIRST_STEMS,
    _DECISION_GATES,
    _DECISION_WORDS,
    _EXCLAMATION_END,
    _FACT,
    _FACT_GATES,
    _FIRST_WORD,
    _LEAD_QUESTION,
    _LEAD_THEN,
    _LETTER_OPTION,
    _MARK_LEADS,
    _OPEN_PREFERENCE,
    _OPEN_PREFERENCE_GATES,
    _OPEN_PREFERENCE_STARTS,
    _OPTION_WORD,
    _PASSIVE,
    _QUESTION_END,
    _REQUEST,
    _REQUEST_FIRST,
    _REQUEST_GATES,
    _REQUEST_START,
    _REQUEST_START_GATES,
    _REQUEST_STARTS,
    _REQUEST_VERB_GATES,
    _SCOPE,
    _SCOPE_GATES,
    _SENTENCE_END,
    _SLASH_OPTION,
    _SLASH_OPTION_FIRST,
    _SPACED_DASH,
    _SPLIT_CONJOINED,
    _SPLIT_GATES,
    _SPLIT_SEMICOLON,
    _STATEMENT_END,
    _SWITCH,
    _TWO_WORDS,
    _VALUE_NOUN,
    _VALUE_NOUN_GATES,
    _VERB,
    _VERB_FIRST,
    _VERB_GATES,
    _VERB_WORDS,
    _WH,
    _WH_PHRASE_STARTS,
    _WH_STARTS,
    _WORK,
    _WORK_GATES,
    _enumerates,
)
from .gates import _FIRST, _MARKS, _NON_WORD_TO_SPACE, _STARTS, _WORDS, _gate, _matches
from .task_text import _SLOT_GATES, _TASKS, _answered, _task, restates_problem

_LOW, _MEDIUM, _HIGH = Effort.LOW, Effort.MEDIUM, Effort.HIGH
_ORDER = {_LOW: 0, _MEDIUM: 1, _HIGH: 2}


def _gate_words(lower: str) -> frozenset[bytes]:
    """The gate words (_GATE_WORDS) among the \\w+ runs of `lower`, cut to PREFIX characters.

    They serve for any text within `lower` that starts and ends at a word boundary too
    (a part of a question, its core): a gate word of one is a gate word of `lower`.
    """
    if not lower.isascii():
        # The usual non-ASCII characters are punctuation: spaces as well.
        for mark in _MARKS:
            lower = lower.replace(mark, " ")
        if not lower.isascii():
            return _non_ascii_gate_words(lower)
    return _GATE_WORDS.intersection(
        map(_FIRST, lower.encode().translate(_NON_WORD_TO_SPACE).split())
    )


def _non_ascii_gate_words(lower: str) -> frozenset[bytes]:
    words = _WORDS.findall(lower)
    gates = _GATE_WORDS.intersection(map(str.encode, map(_FIRST, words)))
    # `_starting` spells out ASCII words only.
    starts = {start for word in words for start in _STARTS if word.startswith(start)}
    return gates.union(start.encode() for start in starts)


# Every word a gate tests.
_GATE_WORDS = _gate("you").union(
    _WORK_GATES,
    _SCOPE_GATES,
    _REQUEST_GATES,
    _REQUEST_START_GATES,
    _REQUEST_VERB_GATES,
    _OPEN_PREFERENCE_GATES,
    _FACT_GATES,
    _DECISION_GATES,
    _VERB_GATES,
    _VALUE_NOUN_GATES,
    _SPLIT_GATES,
    _CONFIRM_END_GATES,
    _SLOT_GATES,
)


def _sentences(text: str) -> list[str]:
    """_SENTENCE.split(text), from _SENTENCE_END: each end keeps its "?", "." or "!"."""
    pieces = []
    start = 0
    for match in _SENTENCE_END.finditer(text):
        pieces.append(text[start : match.start() + 1])
        start = match.end()
    pieces.append(text[start:])
    return pieces


def _split(sentence: str, words: frozenset[bytes]) -> list[str]:
    """_SPLIT.split(sentence), from _SPLIT_SEMICOLON and the _SPLIT_CONJOINED (`words`: the
    gate words of a text holding `sentence`). A fresh question's match starts at the
    spaces before its "and" (with a comma before them, at the comma)."""
    cuts = (
        [match.span() for match in _SPLIT_SEMICOLON.finditer(sentence)] if ";" in sentence else []
    )
    for word in words & _SPLIT_GATES:
        for match in _SPLIT_CONJOINED[word].finditer(sentence):
            # The spaces before the match, found backwards (not by slicing the text
            # before it, which made long texts quadratic).
            start = match.start()
            while start and sentence[start - 1].isspace():
                start -= 1
            if start and sentence[start - 1] == ",":
                start -= 1
            cuts.append((start, match.end()))
    return _cut(sentence, cuts)


def _cut(text: str, cuts: list[tuple[int, int]]) -> list[str]:
    """`text` split at `cuts`, as re.split does: from the left, skipping a cut that
    overlaps the one before."""
    if not cuts:
        return [text]
    pieces = []
    end = 0
    for start, stop in sorted(cuts):
        if start >= end:
            pieces.append(text[end:start])
            end = stop
    pieces.append(text[end:])
    return pieces


# A selection or yes/no question stays low up to this length; past it the user has to
# read and weigh a lot before answering.
SELECTION_WORDS = 45
# Text this short has at most SELECTION_WORDS words (n words take 2n - 1 characters).
_SHORT = 2 * SELECTION_WORDS
# A selection or yes/no question: low, unless longer than SELECTION_WORDS words.
_BY_LENGTH = {True: _LOW, False: _MEDIUM}


@dataclass(frozen=True)
class Part:
    text: str
    effort: Effort


@dataclass(frozen=True)
class Classification:
    question: str
    effort: Effort
    parts: tuple[Part, ...]
    # True when the run's task text already answers the question (the paper's low).
    answered_by_context: bool = False


def split_parts(question: str) -> list[str]:
    """Split a multi-part question into its question parts (at least one).

    Sentences that are statements ("The plan adds 3 resources.") are context for the
    question beside them, not parts of their own.
    """
    return _split_parts(question, _gate_words(question.lower()))[0]


def _split_parts(question: str, words: frozenset[bytes]) -> tuple[list[str], bool]:
    """split_parts, given the gate words of the question (lower-cased); and whether the
    one part is the whole question (but for spaces and commas around it)."""
    stripped = question.strip()
    end = stripped.find("?")
    # _SENTENCE splits after a "?", "." or "!" with more text after it; _SPLIT at a ";",
    # or at "and", "also", "plus" before a fresh question.
    sentences = (
        (
            0 <= end < len(stripped) - 1
            and ("? " in stripped or _QUESTION_END.search(stripped, end) is not None)
        )
        or ("." in stripped and _STATEMENT_END.search(stripped) is not None)
        or ("!" in stripped and _EXCLAMATION_END.search(stripped) is not None)
    )
    conjoined = bool(
        not words.isdisjoint(_SPLIT_GATES)
        and _matches(stripped, words & _SPLIT_GATES, _SPLIT_CONJOINED)
    )
    if not (sentences or conjoined or ";" in stripped):
        part = stripped.strip(" ,")
        return [part or stripped], True
    if sentences:
        # The sentences of a stripped text are stripped, and not empty: each ends at a
        # "?", "." or "!", or at the end of the text, and starts after the spaces before it.
        asked = _sentences(stripped)
        asked = [p for p in asked if p.endswith("?")] or asked
    else:
        asked = [stripped] if stripped else []
    if conjoined:
        parts = [part.strip(" ,") for sentence in asked for part in _split(sentence, words)]
    elif ";" in stripped:
        parts = [
            part.strip(" ,") for sentence in asked for part in _SPLIT_SEMICOLON.split(sentence)
        ]
    else:
        parts = [sentence.strip(" ,") for sentence in asked]
    return list(filter(None, parts)) or [stripped], False


def _core(lower: str) -> str:
    """The question proper, without a lead-in clause ("Two quick ones: ...")."""
    core = (
        _CONJUNCTION.sub("", lower)
        if lower[:1] in _CONJUNCTION_INITIALS and lower.startswith(_CONJUNCTIONS)
        else lower
    )
    # A lead-in needs a _LEAD followed by a question word: one of the _LEAD_QUESTION.
    if (
        ("," in lower and _LEAD_QUESTION[","].search(lower) is not None)
        or (":" in lower and _LEAD_QUESTION[":"].search(lower) is not None)
        or (";" in lower and _LEAD_QUESTION[";"].search(lower) is not None)
        or ("-" in lower and _LEAD_QUESTION["-"].search(lower) is not None)
        or ("\u2014" in lower and _LEAD_QUESTION["\u2014"].search(lower) is not None)
        or ("\u2013" in lower and _LEAD_QUESTION["\u2013"].search(lower) is not None)
    ):
        # The last _LEAD followed by a question word and another word.
        if ("-" in lower or "\u2014" in lower or "\u2013" in lower) and _SPACED_DASH.search(lower):
            last = 0
            for match in _LEAD_THEN.finditer(lower):
                if match.group(1) is not None:
                    end = match.end()
                    if _TWO_WORDS.match(lower, end):
                        last = end  # cut once, after the loop: linear in long texts
            if last:
                core = lower[last:]
        else:
            last = 0
            for mark, lead in _MARK_LEADS:
                if mark in lower:
                    found = lead.search(lower)
                    while found is not None:
                        end = found.end()
                        if end > last and _TWO_WORDS.match(lower, end):
                            last = end
                        found = lead.search(lower, end)
            if last:
                core = lower[last:]
    return core


def _prepare(part: str) -> tuple[str, str]:
    """A part lower-cased, and its core."""
    lower = part.lower().replace("\u2019", "'")
    return lower, _core(lower)


def _part_effort(
    lower: str, core: str, whole: str, words: frozenset[bytes], you: bool, exact: bool
) -> Effort:
    """The effort of one part (`lower`, `core`: `_prepare`) of the question `whole`.

    `words`: the gate words of `whole`, lower-cased; `exact`: they are the gate words
    of `core` too. `you`: whether _REQUEST matches `whole` (else it matches no part).
    """
    # The first word, the \w+ run `core` starts with: up to a space if all \w characters
    # (isalnum, and no "_").
    first = core.partition(" ")[0]
    if not first.isalnum():
        # Up to an apostrophe ("what's"), if all \w characters; else from _FIRST_WORD.
        first = first.partition("'")[0]
        if not first.isalnum():
            match = _FIRST_WORD.match(core)
            first = match.group() if match else ""
    if (first in _REQUEST_FIRST and _REQUEST_START.match(core)) or (
        you and _matches(core, words & _REQUEST_GATES, _REQUEST)
    ):
        return _HIGH
    # A confirmation of what the agent is about to do. _CONFIRM_END ends in a word,
    # optional space and an optional "?" ("$" allows one final newline): the stripped
    # text ends with the word (so not with a character none of the words ends with,
    # before a final "?").
    confirm = (first in _CONFIRM_STARTS and _CONFIRM_START.match(core) is not None) or (
        not words.isdisjoint(_CONFIRM_END_GATES)
        and (core[-1:] != "?" or core[-2:-1] in "tkys?" or core[-2:-1].isspace())
        and core.rstrip().rstrip("?").rstrip().endswith(_CONFIRM_ENDS)
        and _CONFIRM_END.search(core[-32:]) is not None
    )
    if (
        not confirm
        and not words.isdisjoint(_SCOPE_GATES)
        and _matches(lower, words & _SCOPE_GATES, _SCOPE)
    ):
        return _HIGH
    # Whether the answer is a pick among offered alternatives: known here only if needed.
    options: bool | None = None
    if (
        first in _OPEN_PREFERENCE_STARTS
        and not words.isdisjoint(_OPEN_PREFERENCE_GATES)
        and _OPEN_PREFERENCE.match(core)
    ):
        if not _offers_options(core):
            return _MEDIUM
        options = True
    wh = first in _WH_STARTS or (first in _WH_PHRASE_STARTS and _WH.match(core) is not None)
    aux = first in _AUX_STARTS
    verb: bool | None = None
    # A question about how things are (in production, on their machine, in a system
    # outside the repository): only the user can find out. Unless it is a decision:
    # a confirmation, or a wish or preference stated with no fact asked for.
    if not confirm and (wh or aux):
        if not words.isdisjoint(_FACT_GATES) and _matches(core, words & _FACT_GATES, _FACT):
            return _HIGH
        decides = (
            first in _DECISION_FIRST  # _DECISION_START or a one-word _DECISION cue matches
            or (first[:1] in "pe" and first.startswith(_DECISION_FIRST_STEMS))
            or (exact and not words.isdisjoint(_DECISION_WORDS))
            # the most common _DECISION cues, without a search
            or (b"shoul" in words and " should " in core)
            or (b"like" in words and " would you like " in core)
            or bool((hits := words & _DECISION_GATES) and _matches(core, hits, _DECISION))
        )
        if not decides:
            verb = first in _VERB_FIRST or _has_verb(core, words, exact)
            if verb:
                return _HIGH
    if confirm or (options if options is not None else _offers_options(core) or _enumerates(whole)):
        return _BY_LENGTH[len(lower) <= _SHORT or len(lower.split()) <= SELECTION_WORDS]
    if wh:
        # Open: the user has to come up with the answer.
        return _MEDIUM
    if not aux and not (
        (first in _VERB_FIRST or _has_verb(core, words, exact)) if verb is None else verb
    ):
        # A verbless fragment asks for a value ("Default branch name?") or a yes/no
        # ("Draft PR?", "Dark mode on by default?").
        if (
            not words.isdisjoint(_VALUE_NOUN_GATES)
            and _matches(core, words & _VALUE_NOUN_GATES, _VALUE_NOUN)
            and not _SWITCH.search(core)
        ):
            return _MEDIUM
        return _LOW
    return _BY_LENGTH[len(lower) <= _SHORT or len(lower.split()) <= SELECTION_WORDS]


def _offers_options(text: str) -> bool:
    """A pick among offered alternatives. Literal substring tests gate the regular
    expressions: most questions have no "/" or ")" at all."""
    return (
        " or " in text
        or " vs" in text
        or "versus" in text
        or "either" in text
        or "one of" in text
        or ("which o" in text and ("which one" in text or "which of" in text))
        or (
            "/" in text
            and (
                _SLASH_OPTION.search(text) is not None
                or _SLASH_OPTION_FIRST.match(text) is not None
            )
        )
        or (")" in text and _LETTER_OPTION.search(text) is not None)
        or ("option" in text and _OPTION_WORD.search(text) is not None)
    )


def _has_verb(core: str, words: frozenset[bytes], exact: bool) -> bool:
    """A _VERB cue or _PASSIVE matches `core` (`exact`: `words` are the gate words of
    `core` itself, not of a text holding it)."""
    return (
        (exact and not words.isdisjoint(_VERB_WORDS))
        or bool((hits := words & _VERB_GATES) and _matches(core, hits, _VERB))
        or _PASSIVE.search(core) is not None
    )


def answered_by(question: str, context: str | None) -> bool:
    """True when the run's task text already states the answer, so asking is low effort.

    The task must give a concrete value (a number, a duration, a quoted literal)
    right beside a word the question asks about ("a line length of 100" answers "What
    line length?"), or a value of the kind the question asks for ("for PostgreSQL 16"
    answers "Which database version?"). Merely sharing the subject ("Add an admin
    API" vs "What auth method for the admin API?") is not enough.
    """
    if not context:
        return False
    lower = question.lower()
    words = _gate_words(lower)
    task = _task(context)
    if not task.positions and words.isdisjoint(_SLOT_GATES):
        return False
    return _answered(_prepare(_split_parts(question, words)[0][0])[1], lower, words, task)


def _demands_work(lower: str, words: frozenset[bytes], you: bool) -> bool:
    """Investigation, fetching or depth anywhere in the question (`you`: _REQUEST matches)."""
    if not words.isdisjoint(_WORK_GATES) and _matches(lower, words & _WORK_GATES, _WORK):
        return True
    return you or (
        not words.isdisjoint(_REQUEST_START_GATES)
        and lower.startswith(_REQUEST_STARTS)
        and _REQUEST_START.match(lower) is not None
    )


def _asks_you(lower: str, words: frozenset[bytes]) -> bool:
    """_REQUEST matches (`words`: the gate words of `lower`)."""
    return (
        b"you" in words
        and not words.isdisjoint(_REQUEST_VERB_GATES)
        and _matches(lower, words & _REQUEST_GATES, _REQUEST)
    )


def _highest(efforts: Iterable[Effort]) -> Effort:
    return max(efforts, key=_ORDER.__getitem__)


@lru_cache(maxsize=65536)
def classify(question: str, context: str | None = None) -> Classification:
    """Classify a question's effort; `context` is the run's task text, if known."""
    lower = question.lower()
    words = _gate_words(lower)
    you = _asks_you(lower, words)
    texts, whole = _split_parts(question, words)
    prepared = [(text, *_prepare(text)) for text in texts]
    parts = tuple(
        Part(
            text, _part_effort(part_lower, core, question, words, you, core == part_lower and whole)
        )
        for text, part_lower, core in prepared
    )
    if restates_problem(question, context):
        return Classification(question, Effort.LOW, parts, answered_by_context=True)
    if _demands_work(lower, words, you):
        # Investigation, fetching or depth anywhere in it (these cues override all others), and
        # no task text can do that work for the user.
        return Classification(question, Effort.HIGH, parts)
    if (
        context
        and ((task := _task(context)).positions or not words.isdisjoint(_SLOT_GATES))
        and _answered(prepared[0][2], lower, words, task)
    ):
        return Classification(question, Effort.LOW, parts, answered_by_context=True)
    return Classification(question, _highest(p.effort for p in parts), parts)


@lru_cache(maxsize=65536)
def classify_effort(question: str, context: str | None = None) -> Effort:
    """Just the effort, as `classify` decides it, without building the parts (import's hot path)."""
    if context is not None and restates_problem(question, context):
        return _LOW
    best, core, lower, words = _own_effort(question)
    # A task text that answers the question makes it low (as in `classify`, which looks
    # first); a low question, or one that demands work, needs no look.
    if core is None or not context:
        return best
    task = _TASKS.get(context) or _task(context)
    # `_answered`, where its first tests pass: a probe in the core, or a gate word of a
    # slot's cue.
    if (
        (task.probes and any(map(core.__contains__, task.probes)))
        or not words.isdisjoint(_SLOT_GATES)
    ) and _answered(core, lower, words, task):
        return _LOW
    return best


# The same question comes with many task texts (an agent's stock questions in many runs):
# what its own words say is worked out once. (Fewer entries than classify_effort's cache:
# each holds the question lower-cased, its core and its gate words.)
@lru_cache(maxsize=16384)
def _own_effort(question: str) -> tuple[Effort, str | None, str, frozenset[bytes]]:
    """The effort `classify_effort` gives `question` before any task text is looked at,
    and what a task text is tested against: the core of its first part (None when no task
    text can lower the effort: it is low already, or demands work), the question lower-cased
    and its gate words."""
    lower = question.lower()
    if lower.isascii():
        encoded = lower.encode()
        spaced = encoded.translate(_NON_WORD_TO_SPACE)
        words = _GATE_WORDS.intersection(map(_FIRST, spaced.split()))
        # No punctuation, or just a "?" at the end (and no spaces but " ").
        plain = encoded == spaced or encoded == spaced[:-1] + b"?"
    else:
        words = _gate_words(lower)
        plain = False
    # Investigation, fetching or depth anywhere in it (_demands_work).
    if (
        (not words.isdisjoint(_WORK_GATES) and _matches(lower, words & _WORK_GATES, _WORK))
        or (
            b"you" in words
            and not words.isdisjoint(_REQUEST_GATES)
            and not words.isdisjoint(_REQUEST_VERB_GATES)
            and _matches(lower, words & _REQUEST_GATES, _REQUEST)
        )
        or (
            not words.isdisjoint(_REQUEST_START_GATES)
            and lower.startswith(_REQUEST_STARTS)
            and _REQUEST_START.match(lower) is not None
        )
    ):
        return _HIGH, None, lower, words
    # _REQUEST matches no part of the question now.
    if plain and (
        words.isdisjoint(_SPLIT_GATES)
        or not _matches(question, words & _SPLIT_GATES, _SPLIT_CONJOINED)
    ):
        # A plain question: one part, the whole question, and no lead-in (_LEAD needs
        # punctuation).
        whole = True
        part_lower = lower.strip()
        core = (
            _CONJUNCTION.sub("", part_lower)
            if part_lower[:1] in _CONJUNCTION_INITIALS and part_lower.startswith(_CONJUNCTIONS)
            else part_lower
        )
        parts = None
    else:
        parts, whole = _split_parts(question, words)
        part = parts[0]
        part_lower = (lower if part is question else part.lower()).replace("\u2019", "'")
        core = _core(part_lower)
    best = _part_effort(part_lower, core, question, words, False, whole and core == part_lower)
    if parts is not None and len(parts) > 1:
        for text in parts[1:]:
            if best is _HIGH:
                break
            text_lower, text_core = _prepare(text)
            effort = _part_effort(text_lower, text_core, question, words, False, False)
            if _ORDER[effort] > _ORDER[best]:
                best = effort
    return best, None if best is _LOW else core, lower, words
