"""What the run's task text already answers, so that asking it costs the user nothing.

Two rules: a concrete value in the task text beside a word the question asks about, or
of the kind the question asks for (`_answered`, with the slots' tables); and a request
for details of the problem that a full problem statement already gives
(`restates_problem`). A task text is prepared once for all the questions asked about it
(`_task`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from itertools import filterfalse

from .gates import _any_word, _Cues, _cues, _word

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
