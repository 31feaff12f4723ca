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
the questions asked about it (`_task`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from itertools import filterfalse
from operator import itemgetter
from string import ascii_lowercase

from .model import Effort

_LOW, _MEDIUM, _HIGH = Effort.LOW, Effort.MEDIUM, Effort.HIGH
_ORDER = {_LOW: 0, _MEDIUM: 1, _HIGH: 2}


# Every pattern below is gated (but a few seldom searched ones whose words are too
# common to gate them, such as _PASSIVE): a cheap test that any match needs (a word
# among the question's words, a literal substring, its first word) runs first, and a
# regular expression only where it passes. The words are the question's \w+ runs, each cut to
# its first PREFIX characters (`_gate_words`), so a gate word of PREFIX characters or
# more stands for every word that starts with it, and a shorter one for exactly that
# word. A gate may pass where its pattern does not match, never the other way round:
# the gates change the speed, not the result.
#
# The alternatives of a cue list (`_cues`) are split by their gate words: a text
# matches the list if the pattern of one of its gate words matches it. Each of those
# patterns starts with a literal, which the regular expression engine finds fast (a
# pattern that starts with a character class or `\b` is tried at every position); the
# `\b` before it becomes a look-behind after it (`_word`).
PREFIX = 5
_FIRST = itemgetter(slice(None, PREFIX))
# ASCII text: every byte that is not a \w character becomes a space.
_NON_WORD_TO_SPACE = bytes(
    c if (48 <= c <= 57 or 65 <= c <= 90 or 97 <= c <= 122 or c == 95) else 32 for c in range(256)
)
_WORDS = re.compile(r"\w+")


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


# Non-ASCII punctuation (no \w characters) common in questions.
_MARKS = "\u2014\u2013\u2019\u2018\u201c\u201d\u2026\xa0"


def _gate(words: str) -> frozenset[bytes]:
    return frozenset(word[:PREFIX].encode() for word in words.split())


# The \w characters of ASCII text.
_WORD_CHARACTERS = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ_abcdefghijklmnopqrstuvwxyz"
# Literals shorter than PREFIX that may run on: see `_starting`.
_STARTS = ("gdpr", "pci", "cqrs", "soc2", "logs")


def _starting(start: str) -> frozenset[bytes]:
    """The gate words of the words that start with `start` (one of _STARTS): all the
    ways an ASCII word can go on to PREFIX characters (`_non_ascii_gate_words` adds
    `start` itself for a non-ASCII word)."""
    words = {start}
    for _ in range(PREFIX - len(start)):
        words |= {word + c for word in words for c in _WORD_CHARACTERS}
    return frozenset(word[:PREFIX].encode() for word in words)


def _word(literal: str) -> str:
    """r"\\b" + `literal` (which starts with a \\w character), the literal first."""
    return f"{literal}(?<!\\w.{{{len(literal)}}})"


def _any_word(*alternatives: str) -> str:
    """r"\\b(?:" + "|".join(alternatives) + ")", each alternative's leading letters first
    (`_word`): the engine then tries the pattern only where one of their first letters
    stands."""
    words = []
    for alternative in alternatives:
        end = len(alternative) - len(alternative.lstrip(ascii_lowercase))
        words.append(_word(alternative[:end]) + alternative[end:])
    return f"(?:{'|'.join(words)})"


# A cue list: each gate word's pattern.
_Cues = dict[bytes, re.Pattern[str]]


def _cues(*cues: tuple[str | frozenset[bytes], str]) -> _Cues:
    """A list of (gate words, pattern): each gate word's pattern, the alternatives it gates.

    A cue's pattern can only match a text that has one of its gate words (`_gate`).
    """
    gated: dict[bytes, list[str]] = {}
    for words, pattern in cues:
        for word in _gate(words) if isinstance(words, str) else words:
            gated.setdefault(word, []).append(pattern)
    return {word: re.compile("|".join(patterns)) for word, patterns in gated.items()}


def _matches(text: str, hits: frozenset[bytes], cues: _Cues) -> bool:
    """Whether one of `cues` matches `text`, whose gate words among `cues` are `hits`
    (or fewer): `words & _X_GATES` for the cue list _X."""
    for word in hits:  # noqa: SIM110 (a loop is faster than any() over a generator)
        if cues[word].search(text):
            return True
    return False


# Work the user would have to do, or knowledge only they can dig up. A word used
# as the name of an artefact ("the research notebook", "the architecture diagram")
# is not the act, hence the lookahead.
_ARTEFACT = (
    r"(?!\s+(?:diagrams?|notebooks?|docs?|documents?|folders?|director(?:y|ies)|sections?"
    r"|pages?|teams?))"
)
_WORK = _cues(
    ("investigat", _word("investigat")),
    ("research", _word("research") + r"\w*" + _ARTEFACT),
    ("look", _word("look") + r"\s+into"),
    ("dig", _word("dig") + r"\s+(?:into|up)"),
    ("find", _word("find") + r"\s+out"),
    ("figure", _word("figure") + r"\s+out"),
    ("analyse", _word("analy") + r"[sz]"),
    ("audit", _word("audit") + r"(?:ing|ed|s)?(?![\w-])" + _ARTEFACT),
    ("profile", _word("profil") + r"(?:e|ing)\b"),
    ("benchmark", _word("benchmark")),
    ("reproduce", _word("reproduc")),
    ("repro", _word("repro") + r"\b"),
    ("diagnose", _word("diagnos")),
    ("troubleshoot", _word("troubleshoot")),
    ("root", _word("root") + r"[\s-]cause"),
    ("stack", _word("stack") + r"\s*traces?"),
    ("traceback", _word("traceback")),
    ("core", _word("core") + r"\s+dumps?"),
    ("heap", _word("heap") + r"\s+dumps?"),
    ("crash", _word("crash") + r"\s+dumps?"),
    ("flame", _word("flame") + r"\s*graphs?"),
    ("credential", _word("credential")),
    ("api", _word("api") + r"\s+keys?"),
    ("access", _word("access") + r"\s+tokens?"),
    ("access", _word("read") + r"\s+access"),
    ("access", _word("write") + r"\s+access"),
    ("access", _word("admin") + r"\s+access"),
    ("access", _word("ssh") + r"\s+access"),
    ("secret", _word("secret")),
    (
        "before",
        _word("before") + r"\s+(?:i\s+|we\s+)?(?:proceed|continu|go(?:ing)?\s+further|mov)",
    ),
    ("blocking", _word("blocking")),
    ("detail depth", _word("in") + r"\s+(?:detail|depth)"),
    ("thoroughly", _word("thoroughly")),
    ("step", _word("step") + r"[\s-]by[\s-]step"),
    ("walk", _word("walk") + r"\s+me\s+through"),
    ("elaborate", _word("elaborate")),
    ("load", _word("load") + r"[\s-]test"),
    ("analytics", _word("analytics")),
    ("full", _word("full") + r"\s+list"),
    ("complete", _word("complete") + r"\s+list"),
    ("exhaustive", _word("exhaustive") + r"\s+list"),
    # Logs: "server logs", "logs from ...". The pattern starts with another word, but
    # needs "logs" (which may run on: "server logstash").
    *(
        (_starting("logs"), _word(word) + r"\s+logs")
        for word in ("crash", "error", "server", "build", "ci", "access", "audit", "debug")
    ),
    (_starting("logs"), _word("prod") + r"\w*\s+logs"),
    (_starting("logs"), _word("logs") + r"\s+(?:from|of)"),
)
_WORK_GATES = frozenset(_WORK)

# Decisions of system-wide scope: the user has to weigh trade-offs well beyond the
# prompt (architecture / strategy / trade-off cues).
_SCOPE = _cues(
    ("architecture", _word("architectur") + r"\w*" + _ARTEFACT),
    ("trade", _word("trade") + r"[\s-]?offs?"),
    ("strategy", _word("strateg") + r"(?:y|ies|ic)"),
    ("long", _word("long") + r"[\s-]term"),
    ("roadmap", _word("roadmap")),
    ("threat", _word("threat") + r"\s+model"),
    ("shard", _word("shard")),
    ("partitioning", _word("partitioning")),
    ("monolith", _word("monolith")),
    ("microservice", _word("microservice")),
    ("multi", _word("multi") + r"[\s-]?tenan"),
    ("schema", _word("schema") + r"[\s-]per[\s-]tenant"),
    ("tenant", _word("tenant") + r"\s+isolation"),
    ("model guarantee", _word("consistency") + r"\s+(?:model|guarantees?)"),
    ("replication", _word("replication")),
    ("failover", _word("failover")),
    ("disaster", _word("disaster") + r"\s+recovery"),
    ("high", _word("high") + r"\s+availability"),
    ("residency", _word("data") + r"\s+residency"),
    ("soc", _word("soc") + r"\s*2"),
    (_starting("soc2"), _word("soc2")),
    ("compliance", _word("compliance")),
    (_starting("gdpr"), _word("gdpr")),
    (_starting("pci"), _word("pci")),
    (_starting("cqrs"), _word("cqrs")),
    ("hipaa", _word("hipaa")),
    ("plugin", _word("plugin") + r"\s+(?:system|architecture)"),
    ("event", _word("event") + r"\s+sourcing"),
    ("migration", _word("migration") + r"\s+plan"),
    ("rollout", _word("rollout") + r"\s+plan"),
    ("capacity", _word("capacity") + r"\s+plan"),
    ("scale scaling", _word("scal") + r"(?:e|ing)\s+(?:to|beyond|past)"),
    ("design", _word("design") + r"\s+(?:the|a|our)\s+\w+\s+system"),
)
_SCOPE_GATES = frozenset(_SCOPE)


# The user is asked to go and do something: run, check, send, describe...
_REQUEST = _cues(
    *(
        (
            modal,
            _word(modal) + r"\s+you\s+(?:please\s+)?(?:also\s+)?(?:quickly\s+)?"
            r"(?:run|check|verify|test|try|send|share|provide|paste|upload|attach|collect|gather"
            r"|grab|pull|export|dump|capture|record|find|locate|look|describe|explain|list"
            r"|document|measure|time|monitor|ask|contact|get|fetch|give\s+me|dig|write\s+up"
            r"|sketch|outline|summari[sz]e|spell\s+out|detail|enumerate|map\s+out|go\s+through"
            r"|confirm\s+with)\b",
        )
        for modal in ("can", "could", "would", "will")
    )
)
_REQUEST_GATES = frozenset(_REQUEST)
# _REQUEST can only match a text with one of these gate words too: what the user is asked
# to do is a word of the text.
_REQUEST_VERB_GATES = _gate(
    "run check verify test try send share provide paste upload attach collect gather grab"
    " pull export dump capture record find locate look describe explain list document measure"
    " time monitor ask contact get fetch give dig write sketch outline summarise spell detail"
    " enumerate map go confirm"
)
_REQUEST_START = re.compile(
    r"(?:please\s+)?(?:send|share|provide|paste|upload|attach|describe|explain)\b"
)
_REQUEST_STARTS = (
    "please",
    "send",
    "share",
    "provide",
    "paste",
    "upload",
    "attach",
    "describe",
    "explain",
)
# _REQUEST_START can only match where the first word (_FIRST_WORD) is one of these; and
# only a text with one of these gate words (its verb is a word of the text).
_REQUEST_FIRST = frozenset(_REQUEST_STARTS)
_REQUEST_START_GATES = _gate(" ".join(_REQUEST_STARTS[1:]))

# Knowledge the user is asked to report: what they have, know, or see out there.
_FACT = _cues(
    (
        "know have remember recall",
        _word("do") + r"\s+you\s+(?:happen\s+to\s+)?(?:know|have|remember|recall)\b",
    ),
    ("actually", _word("actually") + r"\b"),
    ("currently", _word("currently") + r"\b"),
    ("now", _word("right") + r"\s+now\b"),
    ("today", _word("today") + r"\b"),
    ("prod production", _word("in") + r"\s+prod(?:uction)?\b"),
    ("prod", _word("on") + r"\s+prod\b"),
    (
        "there",
        _word("is") + r"\s+there\s+(?:any|a)\s+(?:doc\w*|record|spec\w*|ticket|history)\b",
    ),
    ("got", _word("got") + r"\s+the\b"),
)
_FACT_GATES = frozenset(_FACT)

# The user decides rather than reports: a wish, a preference, a requirement.
_DECISION = _cues(
    *(
        (word, _word(word) + r"\b")
        for word in ("should", "shall", "want", "wanted", "wish", "rather")
    ),
    ("prefer", _word("prefer") + r"\w*\b"),
    ("preference", _word("preference") + r"\b"),
    ("like", _word("like") + r"\s+(?:it|them|me|us|to)\b"),
    ("like", _word("would") + r"\s+you\s+like\b"),
    ("like", r"'d(?<=\w'd)\s+like\b"),
    ("feel feels", _word("feel") + r"s?\s+right\b"),
    ("sensible", _word("sensible") + r"\b"),
    ("reasonable", _word("reasonable") + r"\b"),
    ("view", _word("in") + r"\s+your\s+view\b"),
    ("mind", _word("in") + r"\s+mind\b"),
    ("thought", _word("thought") + r"s?\b"),
    ("ok okay", _word("ok") + r"(?:ay)?\b"),
    ("fine", _word("fine") + r"\b"),
    ("happy", _word("happy") + r"\s+with\b"),
    ("alright", _word("alright") + r"\b"),
    ("can", _word("can") + r"\s+i\b"),
    ("may", _word("may") + r"\s+i\b"),
    ("let lets", _word("let") + r"'?s\b"),
    ("need needs needed", _word("need") + r"(?:s|ed)?\s+to\b"),
    ("supposed", _word("supposed") + r"\s+to\b"),
    ("mean", _word("mean") + r"\b"),
    ("convention", _word("convention") + r"\b"),
    ("expect", _word("expect") + r"\w*\b"),
    *(
        (
            "work sound look suit",
            _word(verb) + r"\s+(?:that|this|it)\s+(?:work|sound|look|suit)\b",
        )
        for verb in ("do", "does", "would")
    ),
)
_DECISION_GATES = frozenset(_DECISION)
# A decision too: a part that starts with one of these words (a command): that is,
# r"^(?:want|keep|use|...|move)\b" matches, or its first word (_FIRST_WORD) is one.
_DECISION_STARTS = frozenset(
    (
        *("want", "keep", "use", "add", "run", "merge", "pin", "open", "go", "switch"),
        *("stick", "make", "leave", "drop", "remove", "rename", "split", "move"),
    )
)
# The first word of a part is a word of it: _DECISION matches if the first word is one
# of these one-word cues (or starts with one of the stems, prefer\w*, expect\w*).
_DECISION_FIRST = _DECISION_STARTS | frozenset(
    (
        *("should", "shall", "want", "wanted", "wish", "rather", "sensible", "reasonable"),
        *("thought", "thoughts", "ok", "okay", "fine", "alright", "mean", "convention"),
        *("lets", "preference"),
    )
)
_DECISION_FIRST_STEMS = ("prefer", "expect")
# One-word decision cues shorter than PREFIX: among the gate words of a text, such a
# word is a word of the text.
_DECISION_WORDS = _gate("want wish ok okay fine mean lets")


# The answer is a pick among offered alternatives. Literal substring tests gate the
# regular expressions: most questions have no "/" or ")" at all.
# (Possessive: the runs of [a-z0-9] never give back characters, which could only
# stand where "/" or the look-ahead need others.)
# r"(?:^|[\s(])[a-z0-9]++/[a-z0-9]++(?=[\s?,.)]|$)" matches where one of these does: the
# first after a space or "(" (the engine tries it only there), the second at the start.
_SLASH_OPTION = re.compile(r"[\s(][a-z0-9]++/[a-z0-9]++(?=[\s?,.)]|$)")
_SLASH_OPTION_FIRST = re.compile(r"[a-z0-9]++/[a-z0-9]++(?=[\s?,.)]|$)")
# r"(?:^|\s)\(?[a-d1-4]\)\s|\boptions?\s*(?:\(?[a-d1-4]\)|[:-])" matches where one of
# these does, each starting with a literal: "a) ", "(a) " at the start or after a space
# (r"(?<!\S)"), the ")" first; "option" and what follows it.
_LETTER_OPTION = re.compile(r"\)(?:(?<=(?<!\S)[a-d1-4]\))|(?<=(?<!\S)\([a-d1-4]\)))\s")
_OPTION_WORD = re.compile(_word("option") + r"s?\s*(?:\(?[a-d1-4]\)|[:-])")


# A confirmation of what the agent is about to do: yes or no, nothing to weigh.
_CONFIRM_START = re.compile(
    r"""
    (?:just\s+to\s+(?:confirm|check|be\s+sure)|to\s+confirm|can\s+you\s+confirm|confirm)\b
    |(?:so\s+)?you\s+(?:want|'d\s+like|would\s+like)\s+me\s+to\b
    """,
    re.VERBOSE,
)
_CONFIRM_STARTS = frozenset(("just", "to", "can", "confirm", "so", "you"))
_CONFIRM_END = re.compile(
    r"\b(?:right|correct|ok(?:ay)?|still\s+what\s+you\s+want|as\s+(?:it\s+)?is)\s*\??$"
)
_CONFIRM_ENDS = ("right", "correct", "ok", "okay", "want", "is")
_CONFIRM_END_GATES = _gate(" ".join(_CONFIRM_ENDS))

_AUX_WORDS = (
    r"(?:should|shall|can|may|could|would|will|do|does|did|is|are|am|was|were|have|has|had"
    r"|want|ok(?:ay)?|mind|any|need|must|might)\b"
)
_WH_WORDS = r"(?:what|how|where|when|who|whom|whose|why|which|in\s+what|at\s+what|after\s+how)\b"
# r"^" + _AUX_WORDS matches a part where its first word (_FIRST_WORD) is one of the
# _AUX_STARTS; r"^" + _WH_WORDS where it is one of the _WH_STARTS, or maybe (_WH) where it
# is one of the _WH_PHRASE_STARTS.
_AUX_STARTS = frozenset(
    (
        *("should", "shall", "can", "may", "could", "would", "will", "do", "does", "did"),
        *("is", "are", "am", "was", "were", "have", "has", "had", "want", "ok", "okay"),
        *("mind", "any", "need", "must", "might"),
    )
)
_WH_STARTS = frozenset(("what", "how", "where", "when", "who", "whom", "whose", "why", "which"))
_WH_PHRASE_STARTS = frozenset(("in", "at", "after"))
_FIRST_WORD = re.compile(r"\w*")
_WH = re.compile("^" + _WH_WORDS)
# A verb: one of these words, or a passive / third person before a preposition.
_VERB_ONE_WORD = (
    *("is", "are", "am", "was", "were", "be", "been", "being", "do", "does", "did", "has"),
    *("have", "had", "can", "could", "will", "would", "should", "shall", "may", "might"),
    *("must", "goes", "go", "get", "gets", "add", "adds"),
)
_VERB_ONE_WORD_S = ("run", "use", "return", "show", "handle", "happen", "work")  # and +s
_VERB = _cues(
    *((word, _word(word) + r"\b") for word in _VERB_ONE_WORD),
    ("s", r"'s(?<=\w's)\b"),
    ("re", r"'re(?<=\w're)\b"),
    *((f"{word} {word}s", _word(word) + r"s?\b") for word in _VERB_ONE_WORD_S),
)
_VERB_GATES = frozenset(_VERB)
# A verb too: r"\w+(?:ed|s)\s+(?:by|on|...)\b", without the backtracking of \w+. Not a
# _VERB cue: its words are too common to gate it, and it is seldom searched (`_has_verb`).
_PASSIVE = re.compile(r"(?:d(?<=\wed)|s(?<=\ws))\s+(?:by|on|in|to|from|at|between)\b")
# A one-word _VERB cue matches if the first word is one of these (see _DECISION_FIRST);
# and if one of them shorter than PREFIX is a gate word (see _DECISION_WORDS).
_VERB_FIRST = frozenset(
    (*_VERB_ONE_WORD, *_VERB_ONE_WORD_S, *(word + "s" for word in _VERB_ONE_WORD_S))
)
_VERB_WORDS = frozenset(word.encode() for word in _VERB_FIRST if len(word) < PREFIX)


# Nouns whose value the user has to come up with: "Default branch name?"
_VALUE_NOUN = _cues(
    *(
        (f"{noun} {noun}s", _word(noun) + r"s?\b")
        for noun in (
            *("name", "naming", "label", "title", "wording", "text", "copy", "format"),
            *("default", "value", "limit", "timeout", "size", "number", "port", "path"),
            *("location", "version", "order", "convention", "prefix", "schedule", "message"),
        )
    ),
    ("color colors colour colours", _word("colo") + r"u?rs?\b"),
)
_VALUE_NOUN_GATES = frozenset(_VALUE_NOUN)
# An option list written out after the question: "A) keep it, B) remove it". (That is
# r"(?:^|\s)\(?[a-c1-3]\)\s.*\s\(?[b-d2-4]\)\s", its first ")" first: see _LETTER_OPTION.)
_ENUMERATED = re.compile(
    r"\)(?:(?<=(?<!\S)[a-c1-3]\))|(?<=(?<!\S)\([a-c1-3]\)))\s.*\s\(?[b-d2-4]\)\s", re.IGNORECASE
)
# _ENUMERATED in two halves, for `_enumerates`: its first option and a later one.
_ENUMERATED_FIRST = re.compile(_ENUMERATED.pattern.partition(".*")[0], re.IGNORECASE)
_ENUMERATED_LATER = re.compile(_ENUMERATED.pattern.partition(".*")[2], re.IGNORECASE)


# The question `_enumerates` answered last, and its answer: by identity, as a cache
# keyed by value would compare a long question with an equal one at every part.
_ENUMERATED_LAST: tuple[str | None, bool] = (None, False)


def _enumerates(whole: str) -> bool:
    """Whether _ENUMERATED matches `whole`; worked out once per question, not per part."""
    global _ENUMERATED_LAST
    last = _ENUMERATED_LAST  # one read: another thread may replace it
    if last[0] is not whole:
        last = _ENUMERATED_LAST = (whole, _enumerated(whole))
    return last[1]


def _enumerated(whole: str) -> bool:
    """Whether _ENUMERATED matches `whole`, in linear time (the pattern's ".*" goes to the
    end of the line from every first option, and back).

    A first option at `first` (its match ends at `start`) and a later one at `later` match
    if no newline stands in whole[start:later]. The first later option at or after `start`
    decides (a further one only adds text); of the first options it serves, the last is
    the nearest, so only that one is tested.
    """
    if ")" not in whole:
        return False
    later: re.Match[str] | None = None
    last = -1
    for first in _ENUMERATED_FIRST.finditer(whole):
        start = first.end()
        if later is not None and later.start() < start:
            if whole.find("\n", last, later.start()) < 0:
                return True
            later = None
        if later is None:
            later = _ENUMERATED_LATER.search(whole, start)
            if later is None:
                return False
        last = start
    return later is not None and whole.find("\n", last, later.start()) < 0


_CONJUNCTION = re.compile(r"^(?:and|but|so|also|plus|then)\s+")
_CONJUNCTIONS = ("and", "but", "so", "also", "plus", "then")
_CONJUNCTION_INITIALS = "".join(sorted({word[0] for word in _CONJUNCTIONS}))
# "Any preference on how...?", "Is there a particular order you'd like?": yes/no in
# form, but the user still has to come up with the answer.
_OPEN_PREFERENCE = re.compile(
    r"^(?:any|is\s+there\s+(?:a|any)|do\s+you\s+have\s+(?:a|any))\s+(?:particular\s+|specific\s+)?"
    r"(?:preference|thoughts?|ideas?|opinions?|conventions?|order|format|style|naming)\b"
)
_OPEN_PREFERENCE_STARTS = frozenset(("any", "is", "do"))
# _OPEN_PREFERENCE can only match a text with one of these gate words (its noun).
_OPEN_PREFERENCE_GATES = _gate(
    "preference thought thoughts idea ideas opinion opinions convention conventions order"
    " format style naming"
)
_SWITCH = re.compile(r"\b(?:on|off|enabled?|disabled?)\b")
# Leading context before the question proper: "Two quick ones:", "I checked X; ..."
# (That is r"(?:[:;,]|\s[\u2014\u2013-]{1,2}\s)\s*(?:(?:and|but|...)\s+)?", written to
# start with a character class, so the engine skips the positions no match starts at.)
_LEAD = re.compile(
    r"[:;,\s](?:(?<=[:;,])|(?<=\s)[\u2014\u2013-]{1,2}\s)\s*(?:(?:and|but|so|also|then|plus)\s+)?"
)
# _LEAD, and whether a question word (_WH_WORDS, _AUX_WORDS) follows it: then its group 1
# matched (the empty string). The look-ahead takes nothing, so the matches are _LEAD's.
_LEAD_THEN = re.compile(rf"{_LEAD.pattern}(?:(?=(?:{_WH_WORDS}|{_AUX_WORDS}))()|)")
# At least two words from a position on: `len(text[end:].split()) >= 2` without copying
# the rest of the text at every lead (linear time on long texts).
_TWO_WORDS = re.compile(r"\s*+\S++\s++\S")
# A lead starts at a space only before a dash, so only where this matches.
_SPACED_DASH = re.compile(r"[\u2014\u2013-](?<=\s.)")
# Elsewhere the leads start at a ":", ";" or ",", and none holds the start of another;
# for each of these characters, the leads there that a question word follows (a lead
# without one would only give back spaces or its "and": neither is followed by one).
_MARK_LEADS = tuple(
    (
        mark,
        re.compile(
            rf"{mark}\s*(?:(?:and|but|so|also|then|plus)\s+)?(?=(?:{_WH_WORDS}|{_AUX_WORDS}))"
        ),
    )
    for mark in ",:;"
)
# Where _LEAD is followed by a question word (a necessary condition for a lead-in),
# for each character a lead can start with: patterns that start with a literal
# character are searched much faster than those that start with a character class.
_LEAD_QUESTION_TAIL = rf"\s*(?:(?:and|but|so|also|then|plus)\s+)?(?:{_WH_WORDS}|{_AUX_WORDS})"
_LEAD_QUESTION = {
    **{mark: re.compile(re.escape(mark) + _LEAD_QUESTION_TAIL) for mark in ",:;"},
    **{
        dash: re.compile(rf"{dash}(?<=\s{dash})[\u2014\u2013-]?\s{_LEAD_QUESTION_TAIL}")
        for dash in ("-", "\u2014", "\u2013")
    },
}

# Multi-part questions: split at sentence ends, semicolons, and "and"/"also" before
# a fresh question.
_OPENER = (
    r"(?:what|which|how|where|when|who|why|should|shall|can|could|would|will|do|does|did"
    r"|is|are|have|has|may|if)\b"
)
# The split points: _SENTENCE and _SPLIT. Both are tried at every position, so they are
# not searched as such: `_sentences` and `_split` find the same, faster.
_SENTENCE = re.compile(r"(?<=[?.!])\s+(?=\S)")
_SPLIT = re.compile(rf";\s+|,?\s+(?:and|also|plus)\s+(?:also\s+)?(?={_OPENER})")
# Where _SENTENCE splits: a "?", "." or "!" before a space (the _ENDS: and more text).
_QUESTION_END = re.compile(r"\?\s")
_STATEMENT_END = re.compile(r"\.\s")
_EXCLAMATION_END = re.compile(r"!\s")
# _SENTENCE, from the end of a sentence: a pattern that starts with a character class
# (not a look-behind) is tried only where one of its characters stands.
_SENTENCE_END = re.compile(r"[?.!]\s+(?=\S)")
# What _SPLIT needs but at a ";": a fresh question after "and", "also" or "plus".
_SPLIT_CONJOINED = _cues(
    *(
        (word, rf"{word}(?<=\s{word})\s+(?:also\s+)?(?={_OPENER})")
        for word in ("and", "also", "plus")
    )
)
_SPLIT_GATES = frozenset(_SPLIT_CONJOINED)
# _SPLIT where none of _SPLIT_CONJOINED matches
_SPLIT_SEMICOLON = re.compile(r";\s+")


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


_WORD = re.compile(r"[a-z0-9][a-z0-9._+#:-]*")
_STOP = frozenset(
    [
        "a",
        "an",
        "the",
        "and",
        "or",
        "of",
        "to",
        "in",
        "on",
        "for",
        "with",
        "by",
        "at",
        "from",
        "as",
        "is",
        "are",
        "was",
        "were",
        "be",
        "been",
        "being",
        "do",
        "does",
        "did",
        "should",
        "shall",
        "can",
        "could",
        "would",
        "will",
        "may",
        "might",
        "must",
        "i",
        "we",
        "you",
        "it",
        "this",
        "that",
        "these",
        "those",
        "there",
        "here",
        "what",
        "which",
        "how",
        "where",
        "when",
        "who",
        "why",
        "whom",
        "whose",
        "your",
        "our",
        "my",
        "me",
        "us",
        "they",
        "them",
        "their",
        "use",
        "using",
        "used",
        "want",
        "need",
        "like",
        "prefer",
        "preferred",
        "please",
        "just",
        "also",
        "any",
        "some",
        "all",
        "more",
        "most",
        "go",
        "ahead",
        "make",
        "get",
        "set",
        "have",
        "has",
        "had",
        "not",
        "no",
        "yes",
        "okay",
        "ok",
        "so",
        "if",
        "then",
        "than",
        "into",
        "about",
        "over",
        "via",
        "per",
        "new",
        "existing",
        "current",
        "one",
        "two",
        "i'm",
        "i'll",
        "we're",
        "you'd",
        "it's",
        "what's",
        "there's",
        "let's",
        "sure",
        "right",
        "should",
        "i",
        "we'll",
        "keep",
        "add",
    ]
)

# A selection or yes/no question stays low up to this length (the first rules: under 15 words);
# past it the user has to read and weigh a lot before answering.
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


def _stem(word: str) -> str:
    """`word` without "._-:" around it, and without "ing" (past six characters), "ed" or
    "es" (past five) or "s" (past four) at its end: only those its last character allows
    are tried."""
    word = word.strip("._-:")
    n = len(word)
    last = word[-1:]
    if last == "s":
        if n > 5 and word[-2] == "e":
            return word[:-2]
        return word[:-1] if n > 4 else word
    if last == "d":
        return word[:-2] if n > 5 and word[-2] == "e" else word
    if last == "g":
        return word[:-3] if n > 6 and word.endswith("ing") else word
    return word


def _content_words(text: str) -> set[str]:
    return {
        _stem(w) for w in _WORD.findall(text.lower()) if w not in _STOP and len(w.strip("._-:")) > 2
    }


# Slots whose value a task text states without naming the slot: "for PostgreSQL 16"
# answers "Which database version?": (question cue, value in the task text, and what
# the value needs: a digit (r"\d"), or one of some characters, or one of some words).
# The cue is a cue list (`_cues`). The value is one or more patterns, apart by
# spaces; "#" marks those whose every match starts with a digit, searched from the
# text's first digit on.
_Slot = tuple[
    _Cues, frozenset[bytes], tuple[tuple[re.Pattern[str], bool], ...], bool, str, tuple[str, ...]
]
_SLOT_SPECS: tuple[tuple[tuple[tuple[str, str], ...], str, bool, str, str], ...] = (
    (
        # \b(?:version|msrv|minimum|sdk|target\w*)\b
        (
            *((word, _word(word) + r"\b") for word in ("version", "msrv", "minimum", "sdk")),
            ("target", _word("target") + r"\w*\b"),
        ),
        # #\d+\.\d+ \b(?:v|version|msrv(?:\s+of)?|ios|...|api\s+level)\s*\d+
        r"#\d+\.\d+ "
        + _any_word(
            *("v", "version", r"msrv(?:\s+of)?", "ios", "android", "python", "node"),
            *(r"postgres(?:ql)?", "java", "go", "rust", "php", "ruby", r"api\s+level"),
        )
        + r"\s*\d+",
        True,
        "",
        "",
    ),
    (
        # \b(?:what\s+time|schedul\w*|cron|when)\b
        (
            ("time", _word("what") + r"\s+time\b"),
            ("schedule", _word("schedul") + r"\w*\b"),
            ("cron", _word("cron") + r"\b"),
            ("when", _word("when") + r"\b"),
        ),
        # #\b\d{1,2}:\d{2}\b|\b\d{1,2}\s*(?:am|pm)\b (r"\b\d", the digit first)
        r"#\d(?<!\w.)\d?(?::\d{2}\b|\s*(?:am|pm)\b)",
        True,
        "",
        "",
    ),
    (
        # \b(?:how\s+long|duration|ttl|timeout|expir\w*|valid|retention|delay|kept)\b
        (
            ("long", _word("how") + r"\s+long\b"),
            *(
                (word, _word(word) + r"\b")
                for word in ("duration", "ttl", "timeout", "valid", "retention", "delay", "kept")
            ),
            ("expire", _word("expir") + r"\w*\b"),
        ),
        r"#\d(?<!\w.)\d*\s*-?\s*(?:ms|milliseconds?|s|secs?|seconds?|mins?|minutes?|h|hours?"
        r"|days?|weeks?|months?|years?)\b",
        True,
        "",
        "",
    ),
    (
        # \btime\s*zone|\btimezone
        (("time timezone", _word("time") + r"\s*zone"),),
        _any_word("utc", "gmt", "cet", "est", "pst") + r"\b \b[a-z]+/[a-z_]+\b",
        False,
        "/",
        "utc gmt cet est pst",
    ),
    (
        # \b(?:name|call|called|named)\b
        tuple((word, _word(word) + r"\b") for word in ("name", "call", "called", "named")),
        _any_word("named", "called") + r"\s+[`'\"]?\w",
        False,
        "",
        "named called",
    ),
    (
        # \b(?:where|which\s+(?:directory|folder|path)|live)\b
        (
            ("where", _word("where") + r"\b"),
            ("directory folder path", _word("which") + r"\s+(?:directory|folder|path)\b"),
            ("live", _word("live") + r"\b"),
        ),
        _any_word("in", "under", "into", "to") + r"\s+`?[\w.-]*/",
        False,
        "/",
        "",
    ),
    (
        # \b(?:severity|level)\b
        tuple((word, _word(word) + r"\b") for word in ("severity", "level")),
        _any_word("debug", "info", "warning", "warn", "error", "critical") + r"\s+level\b",
        False,
        "",
        "level",
    ),
    (
        # \b(?:return|look|output|respond|format|body)\b
        tuple(
            (word, _word(word) + r"\b")
            for word in ("return", "look", "output", "respond", "format", "body")
        ),
        # \{|\b(?:json|yaml|csv|xml|markdown|html)\b #\b[1-5]\d\d\b (the alternatives apart:
        # each starts with a literal)
        "|".join(
            (
                r"\{",
                *(
                    _word(word) + r"\b"
                    for word in ("json", "yaml", "csv", "xml", "markdown", "html")
                ),
            )
        )
        + r" #[1-5](?<!\w.)\d\d\b",
        True,
        "{",
        "json yaml csv xml markdown html",
    ),
)
_SLOTS: tuple[_Slot, ...] = tuple(
    (
        (cues := _cues(*cue)),
        frozenset(cues),
        tuple(
            (re.compile(value.removeprefix("#")), value.startswith("#"))
            for value in values.split(" ")
        ),
        digit,
        characters,
        tuple(words.split()),
    )
    for cue, values, digit, characters, words in _SLOT_SPECS
)
_DIGIT = re.compile(r"\d")
# ASCII: digits become "0", the rest "x".
_DIGITS_TO_ZERO = bytes(48 if 48 <= c <= 57 else 120 for c in range(256))
# Each gate word of the slots' cues: the slots (by index) it gates, with its pattern.
_SLOT_CUES: dict[bytes, tuple[tuple[int, re.Pattern[str]], ...]] = {
    word: tuple((index, slot[0][word]) for index, slot in enumerate(_SLOTS) if word in slot[1])
    for word in sorted(frozenset().union(*(slot[1] for slot in _SLOTS)))
}
_SLOT_GATES = frozenset(_SLOT_CUES)
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

# A stated value: a number or quantity ("100", "30s", "19%", "02:00") or a quoted
# literal. Backticked names are usually the subject of the task, not an answer.
_VALUE = re.compile(r"^\d|^['\"]")
_TOKEN = re.compile(r"`[^`]*`|'[^']*'|\"[^\"]*\"|[\w./%:+-]+")
# The same for an ASCII text (for which an ASCII \w is a \w), without the Unicode tests.
_TOKEN_ASCII = re.compile(_TOKEN.pattern, re.ASCII)
# How close (in words) a value must stand to the thing asked about in the task text.
VALUE_WINDOW = 3
# What a question asks about: the first content words after its opening words.
HEAD_WORDS = 4


class _Task:
    """A task text, prepared once for all the questions asked about it (`_task`)."""

    __slots__ = ("first_digit", "lower", "positions", "probes", "stated")

    def __init__(
        self, lower: str, first_digit: int, positions: dict[str, frozenset[str] | None]
    ) -> None:
        # the text lower-cased, and the index of its first decimal digit (-1: none)
        self.lower = lower
        self.first_digit = first_digit
        # stem -> what a question's head (`_head`) needs for a value beside the stem to
        # answer it, for the stems with a value beside them (a number before or a value
        # after): nothing (None) if a number stands before it, else that the stems of the
        # values after it (`_VALUE`) are not all asked about themselves. Stems of two
        # characters or less are left out: a question's head has none.
        self.positions = positions
        # a question's core has one of these if a stem of its head is among the positions
        self.probes = tuple(_probes(positions)) if positions else ()
        # for each slot (_SLOTS), whether the text states its kind of value: None until a
        # question asks (`states`)
        self.stated: list[bool | None] = [None] * len(_SLOTS)

    def states(self, index: int) -> bool:
        """Whether the text states a value of the kind slot `index` asks for."""
        stated = self.stated[index]
        if stated is None:
            stated = self.stated[index] = _states(self.lower, self.first_digit, _SLOTS[index])
        return stated


def _probes(stems: Iterable[str]) -> Iterable[str]:
    """Substrings one of which a core has if one of `stems` is a stem of its head.

    A stem of the head is the start of a word of the core, and the word is no _STOP word:
    so a _STOP word is a stem of the head only as the start of a longer word, which goes
    on with a character `_head` strips (one of "._-:"), or, if it has four characters or
    more, with a suffix it strips ("s", "es", "ed", "ing").
    """
    for stem in stems:
        if stem not in _STOP:
            yield stem
        else:
            yield from (stem + end for end in ("._-:sei" if len(stem) > 3 else "._-:"))


# The task texts prepared so far, by text: the questions of a run share its task text.
# Emptied when it holds TASK_CACHE_SIZE of them.
_TASKS: dict[str, _Task] = {}
TASK_CACHE_SIZE = 4096


def _task(context: str) -> _Task:
    """The task text `context`, prepared (once, while it is in _TASKS)."""
    task = _TASKS.get(context)
    if task is None:
        if len(_TASKS) >= TASK_CACHE_SIZE:
            _TASKS.clear()
        task = _TASKS[context] = _prepare_task(context)
    return task


def _prepare_task(context: str) -> _Task:
    lower = context.lower()
    ascii_text = lower.isascii()
    if ascii_text:
        first_digit = lower.encode().translate(_DIGITS_TO_ZERO).find(b"0")
        digit = first_digit >= 0
        values = digit or "'" in lower or '"' in lower
    else:
        match = _DIGIT.search(lower)
        first_digit = match.start() if match else -1
        digit = values = True
    positions: dict[str, frozenset[str] | None] = {}
    # Without a number or a quote, no token has a value beside it.
    if values:
        tokens = (_TOKEN_ASCII if ascii_text else _TOKEN).findall(lower)
        count = len(tokens)
        # The indexes with a number among the VALUE_WINDOW tokens before them, and those
        # with a value (_VALUE: a decimal digit or a quote first) among the VALUE_WINDOW
        # tokens after them, with the values' stems.
        numbered: set[int] = set()
        valued: dict[int, set[str]] = {}
        for index, token in enumerate(tokens):
            first = token[0]
            if first.isdigit():
                numbered.update(range(index + 1, min(index + VALUE_WINDOW + 1, count)))
            if first.isdecimal() or first == "'" or first == '"':
                value = _stem(token)
                for before in range(max(0, index - VALUE_WINDOW), index):
                    valued.setdefault(before, set()).add(value)
        # Quantities stand either side of what they measure ("a 10-minute TTL", "a line
        # length of 100"); a quoted literal follows it ("fill X with 'unknown'").
        for index in numbered.union(valued):
            stem = _stem(tokens[index])
            if len(stem) > 2:
                if index in numbered:
                    positions[stem] = None
                elif (after := positions.get(stem, _NOTHING)) is not None:
                    positions[stem] = after.union(valued[index])
    return _Task(lower, first_digit, positions)


def _states(lower: str, first_digit: int, slot: _Slot) -> bool:
    """Whether a task text (`lower`, with its first digit at `first_digit`, -1: none)
    states a value of the kind `slot` asks for."""
    _, _, values, digit, character, words = slot
    # A value may be there only where the text has what every value of the slot needs:
    # a digit, a character or one of some words.
    if not (
        (digit and first_digit >= 0)
        or (character and character in lower)
        or (words and any(map(lower.__contains__, words)))
    ):
        return False
    for pattern, from_digit in values:
        if from_digit:
            if first_digit >= 0 and pattern.search(lower, first_digit):
                return True
        elif pattern.search(lower):
            return True
    return False


_NOTHING: frozenset[str] = frozenset()


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


def _answered(core: str, lower: str, words: frozenset[bytes], task: _Task) -> bool:
    """answered_by, given the core of the question's first part, the question
    lower-cased, its gate words, and the task (`_task`)."""
    if task.probes and any(map(core.__contains__, task.probes)):
        positions = task.positions
        asked = _head(core)
        for stem in asked:
            if stem in positions:
                after = positions[stem]
                if after is None or not after <= asked:
                    return True
    if not words.isdisjoint(_SLOT_GATES):
        # A slot's cue matches (`_matches` with the slot's cues), and the task states
        # the slot's kind of value.
        stated = task.stated
        for word in words & _SLOT_GATES:
            for index, cue in _SLOT_CUES[word]:
                known = stated[index]
                if (task.states(index) if known is None else known) and cue.search(lower):
                    return True
    return False


def _head(core: str) -> set[str]:
    """What a part asks about: the stems of the first HEAD_WORDS content words of its core."""
    asked: set[str] = set()
    count = 0
    for word in filterfalse(_STOP.__contains__, _WORD.findall(core)):
        # _stem, inline: the word starts with [a-z0-9], so only its end can be stripped,
        # and only the suffixes its last character allows are tried.
        last = word[-1]
        if last in "._-:":
            word = word.rstrip("._-:")
            last = word[-1:]
        n = len(word)
        if n > 2:
            if last == "s":
                if n > 5 and word[-2] == "e":
                    word = word[:-2]
                elif n > 4:
                    word = word[:-1]
            elif last == "d":
                if n > 5 and word[-2] == "e":
                    word = word[:-2]
            elif last == "g" and n > 6 and word.endswith("ing"):
                word = word[:-3]
            asked.add(word)
            count += 1
            if count == HEAD_WORDS:
                break
    return asked


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


# --- A question the task's problem statement already answers ---------------------------
#
# The paper's simulated user knows the precise task: a question about the problem itself
# (how to reproduce it, the code, what happens and what should, which function or file it
# is about) costs that user nothing when the problem statement says it, even when the
# question asks the user to "provide" or "share" it. Only a full problem statement can: a
# one-line task has no details to give.

PROBLEM_STATEMENT_WORDS = 40
# Asks about the problem's own details, and what the statement must hold to answer each.
_PROBLEM_ASKS: tuple[tuple[re.Pattern[str], re.Pattern[str]], ...] = (
    (
        re.compile(r"\b(?:reproduc\w*|example|snippet|code|steps?|regex|pattern|call)\b"),
        re.compile(r"```|>>>|`[^`]+`|\w\([^)]*\)|^\s{4}\S|\w'[^'\s]{3,}'", re.MULTILINE),
    ),
    (
        re.compile(r"\b(?:expected|actual|wrong|behaviou?r|happens?|output|result)\b"),
        re.compile(r"\b(?:expected|should|instead|but|wrong|incorrect|returns?|gives?)\b"),
    ),
    (
        re.compile(r"\b(?:error|traceback|exception|message)\b"),
        re.compile(r"\b(?:error|traceback|exception|raises?)\b|\w+Error\b"),
    ),
    (
        re.compile(r"\bwhich\s+(?:\w+\s+)?(?:function|method|class|model|module)s?\b"),
        re.compile(r"\b[a-z]+_[a-z_]+\b|\b[A-Z][a-z]+[A-Z]\w*|\w\("),
    ),
    (
        # which part of the code has the problem: "Which validators are affected?"
        re.compile(
            r"\bwhich\b.*\b(?:affected|failing|fails?|broken|buggy|giving|returning|"
            r"causing|miss(?:es|ing)?|wrong)\b"
        ),
        re.compile(r"\b[a-z]+_[a-z_]+\b|\b[A-Z][a-z]+[A-Z]\w*|\w\("),
    ),
    (
        re.compile(r"\b(?:which|what)\s+(?:\w+\s+)?(?:file|path)s?\b"),
        re.compile(r"\b[\w-]+(?:/[\w.-]+)*\.(?:py|js|ts|java|go|rs|rb|c|cpp|h|php)\b"),
    ),
)
# Words of such an ask that say what is asked for, not what it is about.
_ASK_TEXT = """provide share give tell more detail details issue problem bug such specific exactly
    expected actual versus example minimal reproduce reproduction snippet code step steps
    wrong behavior behaviour happen happens output result error traceback exception message
    which what function method class model module file path could would can you please
    show paste describe explain the exact now current use uses used giving gives get gets
    affected failing fails broken buggy returning causing misses missing"""
_ASK_WORDS = frozenset(_ASK_TEXT.split())
# Decisions are the user's to make, whatever the statement says.
_DECISION_ASK = re.compile(r"\s*(?:how|should|shall|do you (?:want|prefer)|would you|may i)\b")
PROBLEM_OVERLAP = 0.5


def restates_problem(question: str, context: str | None) -> bool:
    """Whether the question asks for details of the problem that its statement gives."""
    if not context or len(context.split()) < PROBLEM_STATEMENT_WORDS:
        return False
    lower = question.lower()
    if _DECISION_ASK.match(lower) or not any(
        ask.search(lower) and holds.search(context) for ask, holds in _PROBLEM_ASKS
    ):
        return False
    about = {w for w in _content_words(lower) if w not in _ASK_WORDS}
    if not about:
        return True
    stated = context.lower()
    return sum(w in stated for w in about) >= PROBLEM_OVERLAP * len(about)


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
        # Investigation, fetching or depth anywhere in it (these override), and
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
        return _HIGH
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
    # A task text that answers the question makes it low (as in `classify`, which looks
    # first); a low question needs no look.
    if best is _LOW or not context:
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
