"""Whether an ask offers options to pick from (the do_selection rule): "A or B", "A/B",
a list of items put as the choices, or (a) ... (b) ...; an "or" the answer does not pick
between offers nothing."""

from __future__ import annotations

import re
from collections.abc import Callable

from .counting import EN_AUX, EN_PRONOUN, LEADING_WORDS, URL, asks_by_form, sentences_of
from .text import INLINE_OPTION, LIST_ITEM, prose_of

# Options offered to pick from: "A or B" ("either A or B", "A, B, or C"), "A/B", a list of two
# or more items, or (a) ... (b) ... The "or" of several languages:
_OR = re.compile(
    r"\b(?:or|oppure|o|oder|ou|или|ή|أو|أم)\b|それとも|または|もしくは|还是|還是|或者",
    re.IGNORECASE,
)
# What follows an "or" that offers nothing to pick: "or not" (a yes/no question), "or
# something", "or so" ...; and fixed phrases: "with or without", "more or less" ...
_OR_NOT_A_CHOICE = re.compile(
    r"\bor\s+(?:(?:maybe|perhaps|even)\s+)?(?:not|no|nothing|something|anything|so|else|"
    r"otherwise|whatever|similar|somewhere|anywhere|more|less|later|other\b(?!\s+\w+\s+\w+)|"
    r"elsewhere|rather|whichever)\b"
    r"|\b(?:with\s+or\s+without|more\s+or\s+less|sooner\s+or\s+later|whether\s+or\s+not|"
    r"one\s+way\s+or\s+another)\b"
    r"|\b(?:o|oppure)\s+(?:no|meno|altro|qualcosa|simili|cose\s+del\s+genere)\b"
    r"|\boder\s+(?:nicht|so|ähnliches|sonst\w*)\b|\bou\s+(?:non|pas|autre\s+chose|quelque\s+chose)\b"
    r"|\bo\s+(?:algo|lo\s+que\s+sea)\b|\bили\s+(?:нет|что-то|что-нибудь)\b|\bή\s+(?:όχι|κάτι)\b"
    r"|还是不|かどうか",
    re.IGNORECASE,
)
# An "or" under "any", "no", "every" ... joins what may exist, not what to pick: "any errors or
# warnings", "no tests or docs".
_OR_QUANTIFIED = re.compile(
    r"\b(?:any|anything|anyone|anywhere|no|every|all|each|alcun[oaie]?|qualche|ogni|"
    r"irgendwelche|irgendein\w*|kein\w*|jede\w*|aucun\w*|algún|alguna|algunos|algunas|ningún|"
    r"ninguna|любые|какие-нибудь|какие-либо)\b(?:\s+[^\s,;:]+){0,3}?\s*\Z",
    re.IGNORECASE,
)
# An "or" inside a condition: "should I retry when it times out or fails?" ("if" after
# "know", "tell me" ... asks whether, and does offer).
_OR_IN_CONDITION = re.compile(
    r"\b(?:when|whenever|unless|once|because|since|while|(?<!know\s)(?<!\sme\s)(?<!wonder\s)"
    r"(?<!sure\s)(?<!ask\s)if)\b[^,;:]*\Z",
    re.IGNORECASE,
)
# An "or" between two modifiers of one noun: "error or warning messages", "read or write
# access".
_OR_COMPOUND = re.compile(
    r"\A\s+[a-z]+\s+(?:messages?|logs?|logging|output|codes?|events?|levels?|access|"
    r"permissions?|modes?|handling|info|information|details|cases|conditions|states?|signals?)\b"
)
_LOWER_WORD_BEFORE = re.compile(r"\b[a-z]+\s+\Z")
# A yes/no question about what the user sees or has: the "or" names what may have happened.
_OR_IN_EXISTENCE_QUESTION = re.compile(
    rf"\A(?:(?:do|does|did|have|has|had|are|were|is|was|can|could)\s+(?:{EN_PRONOUN}|"
    r"the\s+\w+)\s+(?:also\s+|ever\s+|still\s+|already\s+)?(?:see|get|got|gotten|notice|"
    r"noticed|encounter|encountered|observe|observed|receive|received|hit|experience|"
    r"experienced|run\s+into|seen|had)\b|(?:is|are|was|were)\s+there\b)",
    re.IGNORECASE,
)
# Options set off by a comma, colon, dash or parenthesis at the end: "..., JSON or YAML?"
_OR_SET_OFF_BEFORE = re.compile(r"[,:(\u2014\u2013]\s*[^\s,:;()]+(?:\s+[^\s,:;()]+){0,2}\s*\Z")
_OR_SET_OFF_AFTER = re.compile(r"\A\s*[^\s,:;()]+(?:\s+[^\s,:;()]+){0,3}\s*\)?\s*\Z")
# "or" then a question of its own: "..., or should I leave them?"
_OR_ALTERNATIVE_QUESTION = re.compile(rf"\A\s*{EN_AUX}\s+{EN_PRONOUN}\b", re.IGNORECASE)
# Words that ask the user to pick.
_SELECTION_CUE = re.compile(
    r"\b(?:which|whichever|prefer|preferred|preference|rather|choose|choice|pick|options?|"
    r"alternatives?|either|quale|quali|preferisci|preferite|welche[rsmn]?|bevorzugst|"
    r"bevorzugen|lieber|quel|quelle|quels|quelles|préférez|préfères|cuál|cuáles|prefieres|"
    r"prefiere|какой|какую|какие|предпочитаете|ποιο|ποια|προτιμάτε|προτιμάς)\b"
    r"|どれ|どちら|どっち|哪个|哪個|哪种|哪種",
    re.IGNORECASE,
)
_OR_WINDOW = 80  # characters before an "or" that can hold what makes it no choice
_SLASH_CHOICE = re.compile(r"(?<![\w./:-])([A-Za-z][\w+#-]*)/([A-Za-z][\w+#-]*)(?![\w./-])")
# Pairs written with a slash that name one thing or mean "and/or".
_NOT_SLASH_CHOICES = frozenset(
    {
        ("and", "or"),
        ("or", "and"),
        ("input", "output"),
        ("i", "o"),
        ("read", "write"),
        ("r", "w"),
        ("ci", "cd"),
        ("tcp", "ip"),
        ("ui", "ux"),
        ("n", "a"),
        ("w", "o"),
        ("he", "she"),
        ("his", "her"),
        ("s", "he"),
        ("e", "o"),
        ("und", "oder"),
        ("et", "ou"),
        ("y", "o"),
    }
)


class _Lazy:
    """A truth worked out on first use and remembered."""

    __slots__ = ("_compute", "_value")

    def __init__(self, compute: Callable[[], bool]) -> None:
        self._compute = compute
        self._value: bool | None = None

    def __call__(self) -> bool:
        if self._value is None:
            self._value = self._compute()
        return self._value


def _or_offers_a_choice(sentence: str, at: re.Match[str], cue: _Lazy, existence: bool) -> bool:
    """Whether the "or" at `at` puts alternatives to the user to pick from. `cue`: the ask
    asks to pick; `existence`: the sentence asks whether something was seen or is there."""
    before = sentence[max(0, at.start() - _OR_WINDOW) : at.start()]
    after = sentence[at.end() :]
    if _OR_ALTERNATIVE_QUESTION.match(after):
        return True  # "..., or should I leave them?"
    if _OR_SET_OFF_BEFORE.search(before) and _OR_SET_OFF_AFTER.match(after):
        return True  # "Which format, JSON or YAML?"
    if _OR_QUANTIFIED.search(before) or _OR_IN_CONDITION.search(before):
        return False
    if _LOWER_WORD_BEFORE.search(before) and _OR_COMPOUND.match(after) and not cue():
        return False
    return not existence or cue()


def _list_offers(text: str, cue: _Lazy) -> bool:
    """Whether a list of two or more items is put to pick from: it is the ask itself, the
    line before it asks or names the choice, or a question of the ask does. A list of
    findings before an open question offers nothing."""
    lines = text.splitlines()
    intro: str | None = None
    run = 0
    for line in lines:
        if LIST_ITEM.match(line):
            run += 1
            if run == 2 and (intro is None or _asks(intro) or cue()):
                return True
        elif line.strip():
            intro, run = line, 0
    return False


def _asks(line: str) -> bool:
    return any(
        asked or asks_by_form(sentence) or _SELECTION_CUE.search(sentence) is not None
        for sentence, asked in sentences_of(line.rstrip(" :"))
    )


def offers_options(text: str) -> bool:
    # An ask offers options when it names two or more alternatives for the user to pick
    # one of (see the module's criteria); an "or" that the answer does not pick between
    # offers nothing.
    if len(INLINE_OPTION.findall(text)) >= 2:
        return True
    prose = prose_of(text)
    sentences = sentences_of(URL.sub(" ", prose))
    # Whether a question of the ask asks to pick ("Which do you prefer?"); read only when
    # needed.
    cue = _Lazy(
        lambda: any(
            _SELECTION_CUE.search(sentence) is not None and (asked or asks_by_form(sentence))
            for sentence, asked in sentences
        )
    )
    if len(LIST_ITEM.findall(text)) >= 2 and _list_offers(text, cue):
        return True
    for left, right in _SLASH_CHOICE.findall(prose):
        if (left.lower(), right.lower()) not in _NOT_SLASH_CHOICES:
            return True
    for sentence, _ in sentences:
        if not _OR.search(sentence):
            continue
        cleaned = _OR_NOT_A_CHOICE.sub(" ", sentence)
        existence = bool(_OR_IN_EXISTENCE_QUESTION.match(LEADING_WORDS.sub("", cleaned, count=1)))
        if any(_or_offers_a_choice(cleaned, at, cue, existence) for at in _OR.finditer(cleaned)):
            return True
    return False
