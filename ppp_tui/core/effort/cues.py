"""The effort classifier's cue tables: what in a question says what answering it costs.

Each table is a cue list (`gates._cues`) or a precompiled pattern with the gate words
that any match needs (the `_GATES` and `_STARTS` beside it): work the user has to do,
decisions of system-wide scope, requests, facts only the user knows, decisions, offered
options, confirmations, question and verb words, lead-ins and split points. The
classifier (`classifier`) reads them; nothing here decides an effort.
"""

from __future__ import annotations

import re

from .gates import PREFIX, _cues, _gate, _starting, _word

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
