"""The question-effort classifier of SPEC 3.

It starts from ADR-001-002's decision tree (high-effort cues override, short
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
string, so the classifier is deterministic and fast (see benchmarks/).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache

from .model import Effort

_ORDER = {Effort.LOW: 0, Effort.MEDIUM: 1, Effort.HIGH: 2}


# Work the user would have to do, or knowledge only they can dig up. A word used
# as the name of an artefact ("the research notebook", "the architecture diagram")
# is not the act, hence the lookahead.
_ARTEFACT = (
    r"(?!\s+(?:diagrams?|notebooks?|docs?|documents?|folders?|director(?:y|ies)|sections?"
    r"|pages?|teams?))"
)
_WORK = re.compile(
    rf"""
    \b(?:investigat\w*|research\w*{_ARTEFACT}|look\s+into|dig\s+(?:into|up)|find\s+out
      |figure\s+out|analy[sz]\w*|audit(?:ing|ed|s)?(?![\w-]){_ARTEFACT}|profil(?:e|ing)\b|benchmark\w*|reproduc\w*
      |repro\b|diagnos\w*|troubleshoot\w*|root[\s-]cause|stack\s*traces?|tracebacks?
      |(?:core|heap|crash)\s+dumps?|flame\s*graphs?|credentials?
      |(?:prod\w*|crash|error|server|build|ci|access|audit|debug)\s+logs|logs\s+(?:from|of)
      |api\s+keys?|access\s+tokens?|(?:read|write|admin|ssh)\s+access|secrets?
      |before\s+(?:i\s+|we\s+)?(?:proceed|continu|go(?:ing)?\s+further|mov)\w*|blocking
      |in\s+(?:detail|depth)|thoroughly|step[\s-]by[\s-]step|walk\s+me\s+through|elaborate
      |load[\s-]test\w*|analytics|(?:full|complete|exhaustive)\s+list
      )
    """,
    re.VERBOSE,
)

# Decisions of system-wide scope: the user has to weigh trade-offs well beyond the
# prompt (ADR-001-002's architecture / strategy / trade-off cues).
_SCOPE = re.compile(
    rf"""
    \b(?:architectur\w*{_ARTEFACT}|trade[\s-]?offs?|strateg(?:y|ies|ic)|long[\s-]term|roadmap
      |threat\s+model\w*|shard\w*|partitioning|monolith\w*|microservices?|multi[\s-]?tenan\w*
      |schema[\s-]per[\s-]tenant|tenant\s+isolation|consistency\s+(?:model|guarantees?)|replication|failover|disaster\s+recovery
      |high\s+availability|data\s+residency|compliance|soc\s*2|hipaa|gdpr|pci
      |plugin\s+(?:system|architecture)|event\s+sourcing|cqrs|migration\s+plan|rollout\s+plan
      |capacity\s+plan\w*|scal(?:e|ing)\s+(?:to|beyond|past)|design\s+(?:the|a|our)\s+\w+\s+system
      )
    """,
    re.VERBOSE,
)

# The user is asked to go and do something: run, check, send, describe...
_REQUEST = re.compile(
    r"""
    \b(?:can|could|would|will)\s+you\s+(?:please\s+)?(?:also\s+)?(?:quickly\s+)?
      (?:run|check|verify|test|try|send|share|provide|paste|upload|attach|collect|gather|grab
        |pull|export|dump|capture|record|find|locate|look|describe|explain|list|document
        |measure|time|monitor|ask|contact|get|fetch|give\s+me|dig|write\s+up|sketch|outline
        |summari[sz]e|spell\s+out|detail|enumerate|map\s+out|go\s+through|confirm\s+with)\b
    """,
    re.VERBOSE,
)
_REQUEST_START = re.compile(
    r"(?:please\s+)?(?:send|share|provide|paste|upload|attach|describe|explain)\b"
)


def _requests(text: str) -> bool:
    """The user is asked to go and do something (every such cue but one says "you")."""
    if _REQUEST_START.match(text):
        return True
    return "you" in text and _REQUEST.search(text) is not None


# Knowledge the user is asked to report: what they have, know, or see out there.
_FACT = re.compile(
    r"""
    \bdo\s+you\s+(?:happen\s+to\s+)?(?:know|have|remember|recall)\b|\bactually\b|\bcurrently\b
    |\bright\s+now\b|\btoday\b|\bin\s+prod(?:uction)?\b|\bon\s+prod\b|\bis\s+there\s+(?:any|a)\s+
    (?:doc\w*|record|spec\w*|ticket|history)\b|\bgot\s+the\b
    """,
    re.VERBOSE,
)

# Every _FACT cue holds one of these: a cheap test before the regular expression.
_FACT_GATES = ("you", "actually", "currently", "now", "today", "prod", "there", "got")

# The user decides rather than reports: a wish, a preference, a requirement.
_DECISION = re.compile(
    r"""
    \b(?:should|shall|want|wanted|wish|rather|prefer\w*|preference|like\s+(?:it|them|me|us|to)
      |would\s+you\s+like|'d\s+like|feels?\s+right|sensible|reasonable|in\s+your\s+view
      |in\s+mind|thoughts?|ok(?:ay)?|fine|happy\s+with|alright|can\s+i|may\s+i|let'?s
      |need(?:s|ed)?\s+to|supposed\s+to|mean|convention|expect\w*)\b
    |\b(?:do|does|would)\s+(?:that|this|it)\s+(?:work|sound|look|suit)\b
    |^(?:want|keep|use|add|run|merge|pin|open|go|switch|stick|make|leave|drop|remove|rename
        |split|move)\b
    """,
    re.VERBOSE,
)

# The answer is a pick among offered alternatives. Literal substring tests gate the
# regular expressions: most questions have no "/" or ")" at all.
_OPTION_WORDS = (" or ", " vs", "versus", "either", "one of", "which one", "which of")
_SLASH_OPTION = re.compile(r"(?:^|[\s(])[a-z0-9]+/[a-z0-9]+(?=[\s?,.)]|$)")
_LETTER_OPTION = re.compile(r"(?:^|\s)\(?[a-d1-4]\)\s|\boptions?\s*(?:\(?[a-d1-4]\)|[:-])")


def _offers_options(text: str) -> bool:
    if any(word in text for word in _OPTION_WORDS):
        return True
    if "/" in text and _SLASH_OPTION.search(text):
        return True
    return ("option" in text or ")" in text) and _LETTER_OPTION.search(text) is not None


# A confirmation of what the agent is about to do: yes or no, nothing to weigh.
_CONFIRM_START = re.compile(
    r"""
    (?:just\s+to\s+(?:confirm|check|be\s+sure)|to\s+confirm|can\s+you\s+confirm|confirm)\b
    |(?:so\s+)?you\s+(?:want|'d\s+like|would\s+like)\s+me\s+to\b
    """,
    re.VERBOSE,
)
_CONFIRM_END = re.compile(
    r"\b(?:right|correct|ok(?:ay)?|still\s+what\s+you\s+want|as\s+(?:it\s+)?is)\s*\??$"
)


def _confirms(core: str) -> bool:
    return _CONFIRM_START.match(core) is not None or _CONFIRM_END.search(core[-32:]) is not None


_AUX = re.compile(
    r"^(?:should|shall|can|may|could|would|will|do|does|did|is|are|am|was|were|have|has|had"
    r"|want|ok(?:ay)?|mind|any|need|must|might)\b"
)
_WH = re.compile(
    r"^(?:what|how|where|when|who|whom|whose|why|which|in\s+what|at\s+what|after\s+how)\b"
)
_VERB = re.compile(
    r"\b(?:is|are|am|was|were|be|been|being|'s|'re|do|does|did|has|have|had|can|could|will"
    r"|would|should|shall|may|might|must|runs?|uses?|returns?|shows?|handles?|happens?|works?"
    r"|goes|go|get|gets|add|adds)\b|\w+(?:ed|s)\s+(?:by|on|in|to|from|at|between)\b"
)
# Nouns whose value the user has to come up with: "Default branch name?"
_VALUE_NOUN = re.compile(
    r"\b(?:name|naming|label|title|wording|text|copy|format|default|value|limit|timeout|size"
    r"|number|port|path|location|version|colou?r|order|convention|prefix|schedule|message)s?\b"
)
# An option list written out after the question: "A) keep it, B) remove it".
_ENUMERATED = re.compile(r"(?:^|\s)\(?[a-c1-3]\)\s.*\s\(?[b-d2-4]\)\s", re.IGNORECASE)
_CONJUNCTION = re.compile(r"^(?:and|but|so|also|plus|then)\s+")
# "Any preference on how...?", "Is there a particular order you'd like?": yes/no in
# form, but the user still has to come up with the answer.
_OPEN_PREFERENCE = re.compile(
    r"^(?:any|is\s+there\s+(?:a|any)|do\s+you\s+have\s+(?:a|any))\s+(?:particular\s+|specific\s+)?"
    r"(?:preference|thoughts?|ideas?|opinions?|conventions?|order|format|style|naming)\b"
)
_SWITCH = re.compile(r"\b(?:on|off|enabled?|disabled?)\b")
# Leading context before the question proper: "Two quick ones:", "I checked X; ..."
_LEAD = re.compile(r"(?:[:;,]|\s[\u2014\u2013-]{1,2}\s)\s*(?:(?:and|but|so|also|then|plus)\s+)?")

# Multi-part questions: split at sentence ends, semicolons, and "and"/"also" before
# a fresh question (ADR-001-002 Phase 2).
_OPENER = (
    r"(?:what|which|how|where|when|who|why|should|shall|can|could|would|will|do|does|did"
    r"|is|are|have|has|may|if)\b"
)
_SENTENCE = re.compile(r"(?<=[?.!])\s+(?=\S)")
_SPLIT = re.compile(rf";\s+|,?\s+(?:and|also|plus)\s+(?:also\s+)?(?={_OPENER})")

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

# A selection or yes/no question stays low up to this length (ADR: under 15 words);
# past it the user has to read and weigh a lot before answering.
SELECTION_WORDS = 45


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
    sentences = [p.strip() for p in _SENTENCE.split(question.strip()) if p.strip()]
    asked = [p for p in sentences if p.endswith("?")] or sentences
    parts = [part.strip(" ,") for sentence in asked for part in _SPLIT.split(sentence)]
    return [p for p in parts if p] or [question.strip()]


def _core(lower: str) -> str:
    """The question proper, without a lead-in clause ("Two quick ones: ...")."""
    core = _CONJUNCTION.sub("", lower)
    for match in _LEAD.finditer(lower):
        rest = lower[match.end() :]
        if (_WH.match(rest) or _AUX.match(rest)) and len(rest.split()) >= 2:
            core = rest
    return core


def _part_effort(text: str, whole: str) -> Effort:
    lower = text.lower().replace("\u2019", "'")
    core = _core(lower)
    if _requests(core):
        return Effort.HIGH
    confirm = _confirms(core)
    if _SCOPE.search(lower) and not confirm:
        return Effort.HIGH
    options = _offers_options(core)
    if not options and _OPEN_PREFERENCE.match(core):
        return Effort.MEDIUM
    options = options or (")" in whole and _ENUMERATED.search(whole) is not None)
    fact = any(gate in core for gate in _FACT_GATES) and _FACT.search(core) is not None
    decision = confirm or (_DECISION.search(core) is not None and not fact)
    words = len(lower.split())
    if not decision and (fact or _VERB.search(core)) and (_WH.match(core) or _AUX.match(core)):
        # A question about how things are (in production, on their machine, in a
        # system outside the repository): only the user can find out.
        return Effort.HIGH
    if confirm or options:
        return Effort.LOW if words <= SELECTION_WORDS else Effort.MEDIUM
    if _WH.match(core):
        # Open: the user has to come up with the answer.
        return Effort.MEDIUM
    if not _AUX.match(core) and not _VERB.search(core):
        # A verbless fragment asks for a value ("Default branch name?") or a yes/no
        # ("Draft PR?", "Dark mode on by default?").
        if _VALUE_NOUN.search(core) and not _SWITCH.search(core):
            return Effort.MEDIUM
        return Effort.LOW
    return Effort.LOW if words <= SELECTION_WORDS else Effort.MEDIUM


def _stem(word: str) -> str:
    word = word.strip("._-:")
    for suffix in ("ing", "ed", "es", "s"):
        if len(word) > len(suffix) + 3 and word.endswith(suffix):
            return word[: -len(suffix)]
    return word


def _content_words(text: str) -> set[str]:
    return {
        _stem(w) for w in _WORD.findall(text.lower()) if w not in _STOP and len(w.strip("._-:")) > 2
    }


# Slots whose value a task text states without naming the slot: "for PostgreSQL 16"
# answers "Which database version?". (question cue, value in the task text)
_SLOTS: tuple[tuple[re.Pattern[str], re.Pattern[str]], ...] = tuple(
    (re.compile(cue), re.compile(value))
    for cue, value in (
        (
            r"\b(?:version|msrv|minimum|sdk|target\w*)\b",
            r"\d+\.\d+|\b(?:v|version|msrv(?:\s+of)?|ios|android|python|node|postgres(?:ql)?|java"
            r"|go|rust|php|ruby|api\s+level)\s*\d+",
        ),
        (r"\b(?:what\s+time|schedul\w*|cron|when)\b", r"\b\d{1,2}:\d{2}\b|\b\d{1,2}\s*(?:am|pm)\b"),
        (
            r"\b(?:how\s+long|duration|ttl|timeout|expir\w*|valid|retention|delay|kept)\b",
            r"\b\d+\s*-?\s*(?:ms|milliseconds?|s|secs?|seconds?|mins?|minutes?|h|hours?|days?"
            r"|weeks?|months?|years?)\b",
        ),
        (r"\btime\s*zone|\btimezone", r"\b(?:utc|gmt|cet|est|pst)\b|\b[a-z]+/[a-z_]+\b"),
        (r"\b(?:name|call|called|named)\b", r"\b(?:named|called)\s+[`'\"]?\w"),
        (
            r"\b(?:where|which\s+(?:directory|folder|path)|live)\b",
            r"\b(?:in|under|into|to)\s+`?[\w.-]*/",
        ),
        (r"\b(?:severity|level)\b", r"\b(?:debug|info|warning|warn|error|critical)\s+level\b"),
        (
            r"\b(?:return|look|output|respond|format|body)\b",
            r"\{|\b(?:json|yaml|csv|xml|markdown|html)\b|\b[1-5]\d\d\b",
        ),
    )
)
# A stated value: a number or quantity ("100", "30s", "19%", "02:00") or a quoted
# literal. Backticked names are usually the subject of the task, not an answer.
_VALUE = re.compile(r"^\d|^['\"]")
_TOKEN = re.compile(r"`[^`]*`|'[^']*'|\"[^\"]*\"|[\w./%:+-]+")
# How close (in words) a value must stand to the thing asked about in the task text.
VALUE_WINDOW = 3
# What a question asks about: the first content words after its opening words.
HEAD_WORDS = 4


@dataclass(frozen=True)
class _Task:
    """A task text prepared once for all the questions asked about it."""

    tokens: tuple[str, ...]
    positions: dict[str, tuple[int, ...]]  # stem -> token indexes
    slots: tuple[re.Pattern[str], ...]  # slot cues whose kind of value the task states


@lru_cache(maxsize=4096)
def _task(context: str) -> _Task:
    lower = context.lower()
    tokens = tuple(_TOKEN.findall(lower))
    positions: dict[str, list[int]] = {}
    for index, token in enumerate(tokens):
        positions.setdefault(_stem(token), []).append(index)
    slots = tuple(cue for cue, value in _SLOTS if value.search(lower))
    return _Task(tokens, {k: tuple(v) for k, v in positions.items()}, slots)


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
    task = _task(context)
    asked = _head(split_parts(question)[0])
    tokens = task.tokens
    for stem in asked:
        for index in task.positions.get(stem, ()):
            # Quantities stand either side of what they measure ("a 10-minute TTL", "a
            # line length of 100"); a quoted literal follows it ("fill X with 'unknown'").
            before = tokens[max(0, index - VALUE_WINDOW) : index]
            after = tokens[index + 1 : index + VALUE_WINDOW + 1]
            if any(t[0].isdigit() for t in before) or any(
                _VALUE.search(t) and _stem(t) not in asked for t in after
            ):
                return True
    if task.slots:
        lower = question.lower()
        return any(cue.search(lower) for cue in task.slots)
    return False


def _head(part: str) -> set[str]:
    core = _core(part.lower().replace("\u2019", "'"))
    words = [_stem(w) for w in _WORD.findall(core) if w not in _STOP and len(w.strip("._-:")) > 2]
    return set(words[:HEAD_WORDS])


def _demands_work(lower: str) -> bool:
    return _WORK.search(lower) is not None or _requests(lower)


def _highest(efforts: Iterable[Effort]) -> Effort:
    return max(efforts, key=_ORDER.__getitem__)


@lru_cache(maxsize=65536)
def classify(question: str, context: str | None = None) -> Classification:
    """Classify a question's effort; `context` is the run's task text, if known."""
    parts = tuple(Part(text, _part_effort(text, question)) for text in split_parts(question))
    if _demands_work(question.lower()):
        # Investigation, fetching or depth anywhere in it (ADR: these override), and
        # no task text can do that work for the user.
        return Classification(question, Effort.HIGH, parts)
    if answered_by(question, context):
        return Classification(question, Effort.LOW, parts, answered_by_context=True)
    return Classification(question, _highest(p.effort for p in parts), parts)


@lru_cache(maxsize=65536)
def classify_effort(question: str, context: str | None = None) -> Effort:
    """Just the effort, as `classify` decides it, without building the parts (import's hot path)."""
    lower = question.lower()
    if _demands_work(lower):
        return Effort.HIGH
    if answered_by(question, context):
        return Effort.LOW
    return _highest(_part_effort(p, question) for p in split_parts(question))
