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

import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from types import MappingProxyType

from .catalogue import ANSWER_MORE_MIN_TURNS, CONCISE_MAX_WORDS, LENGTH_SENTENCES, canonical


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


# --- Reading a question's text --------------------------------------------------------------

# Code is set aside for the prose rules (capital letters, language, sentences): identifiers
# cannot be capitalised or translated without changing what they name.
_FENCED_CODE = re.compile(r"```.*?(?:```|\Z)", re.DOTALL)
_INLINE_CODE = re.compile(r"`[^`\n]+`")
_INDENTED_CODE = re.compile(r"^(?:\t| {4,})\S.*$", re.MULTILINE)
_JSON_FENCE = re.compile(r"\A```(?:json)?\s*(.*?)\s*```\Z", re.DOTALL | re.IGNORECASE)
_LETTERS = re.compile(r"[^\W\d_]+")
_ALNUM = re.compile(r"[^\W_]")
_QUESTION_MARKS = re.compile(r"[?\uff1f]+")  # ASCII and full-width question marks
# A run of stops ends a sentence when a space or the end follows; the lookbehind starts
# the match at the run's first stop so that long runs stay linear.
_SENTENCE_END = re.compile(r"(?<![.!?\uff1f\u2026])[.!?\uff1f\u2026]+[\"')\]]*(?=\s|\Z)")
# A full stop after these does not end a sentence.
_ABBREVIATION_END = re.compile(
    r"\b(?:e\.g|i\.e|etc|vs|cf|approx|mr|mrs|ms|dr|no)\.\Z", re.IGNORECASE
)
_ABBREVIATION_MAX = len("approx.")
# Options offered to pick from: "A or B" (or "either A or B"), "A/B", a list of two or more
# items, or (a) ... (b) ...
_OR = re.compile(r"\b(?:or|oppure|o)\b", re.IGNORECASE)
# "or" in senses that offer nothing to pick: "or not", "or something", "or so" ...
_OR_NOT_A_CHOICE = re.compile(
    r"\bor\s+(?:not|something|anything|so|else|otherwise|whatever|similar|more|less|later|"
    r"other\b(?!\s+\w+\s+\w+)|elsewhere|even|maybe|perhaps|rather)\b",
    re.IGNORECASE,
)
# An open question that merely names two things: "any errors or warnings", "is there ... or"
_OR_IN_OPEN_QUESTION = re.compile(
    r"\b(?:any|anything|anyone|anywhere|no|every|all)\b(?:\s+\w+){0,3}?\s+or\b", re.IGNORECASE
)
_SLASH_CHOICE = re.compile(r"(?<![\w./:-])([A-Za-z][\w+#-]*)/([A-Za-z][\w+#-]*)(?![\w./-])")
_NOT_SLASH_CHOICES = frozenset({("and", "or"), ("or", "and"), ("input", "output"), ("i", "o")})
_LIST_ITEM = re.compile(r"^[ \t]*(?:[-*•]|\(?[A-Za-z0-9]\)|[A-Za-z0-9][.:])\s+\S", re.MULTILINE)
_INLINE_OPTION = re.compile(r"\(\s*[A-Za-z0-9]\s*\)\s*\S")
# Commas of every script: ASCII, full-width, the ideographic 、 and the small forms.
_COMMAS = frozenset(",\uff0c\u3001\ufe50\ufe51\uff64\u060c")
# Quoted text: a question mark inside it is quoted, not asked.
_QUOTED = re.compile(r"\"[^\"\n]*\"|“[^”\n]*”|«[^»\n]*»|「[^」\n]*」|(?<![\w])'[^'\n]*'(?![\w])")
# A snippet comes with where it is from: a URL or a file name.
_REFERENCE = re.compile(
    r"https?://\S+|\bwww\.\S+|(?:[\w.-]+/)+[\w.-]+|\b[\w-]+\.(?:py|pyi|js|jsx|ts|tsx|java|kt|go|"
    r"rs|rb|php|c|h|cc|cpp|hpp|cs|swift|m|scala|sh|bash|sql|html|css|scss|json|ya?ml|toml|ini|"
    r"cfg|md|rst|txt|xml|lock|gradle|vue|svelte|dart|lua|pl|r|ipynb)\b",
    re.IGNORECASE,
)
SNIPPET_MIN_LINES = 3


def _word_set(words: str) -> frozenset[str]:
    return frozenset(words.split())


# Very common Italian function words. Words English also uses often (a, in, i, come, per,
# me, no, so, all) and coding abbreviations (ai, ci, vi) are left out so that English is never
# mistaken for Italian.
_ITALIAN_WORDS = _word_set(
    """
    il lo la gli le un una uno l dell della dello delle degli dei del di da dal dalla dai nel
    nella nei nelle nell sul sulla sull al alla alle allo che chi cosa quale quali quanto quanti
    dove quando perché perche non è e ed o oppure ma anche con questo questa questi quello
    quella sono sei hai ho ha posso puoi vuoi devo deve preferisci mi ti si ne più già ancora
    se tuo tua tuoi nostro essere fare usi usare
    """
)
# Words a short Italian question is often made of, beyond the function words above.
_ITALIAN_CONTENT = _word_set(
    """
    confermi confermo confermare procedo procedere continuo continuare va bene giusto corretto
    sì certo ok grazie prego scusa quale quali qual dimmi dammi serve servono vanno vuole
    preferisce aggiungo aggiungere modifico modificare cambio cambiare elimino eliminare
    rimuovo rimuovere creo creare scrivo scrivere lascio lasciare tengo tenere uso usa
    funzione file versione errore test tutti tutto tutte niente nessuno entrambi adesso ora
    dopo prima sempre mai solo anzi invece quindi allora ecco può possiamo dobbiamo
    facciamo vogliamo sarebbe meglio ancora questa questo
    """
)
# English function words: a question is Italian only if its Italian words outnumber these.
_ENGLISH_WORDS = _word_set(
    """
    the a an is are was be do does did you your i we it to of in on for with and or should
    would could can will which what where when why how this that there have has any want need
    my me
    """
)
# Words that give away Spanish, Portuguese or French, which share much with Italian.
_OTHER_ROMANCE = (
    _word_set(
        """
    el los las es está están estás qué cuál cómo dónde puedo quieres usted
    lo que sí tu y pero para por con una función archivo
    você não é são o os as um uma em do da dos das est vous le les des du est-ce quel quelle
    """
    )
    - _ITALIAN_WORDS
    - _ITALIAN_CONTENT
)
_ITALIAN_ENDINGS = re.compile(
    r"(?:iamo|ato|ito|uto|zione|zioni|mente|[aeiou]mi|[^aeiou]i|oi|ai|[àèéìòù])\Z"
)
# Italian when at least a quarter of the words are Italian function words and they outnumber
# the English ones: ordinary Italian has far more, while Spanish, which shares a few (la, del,
# con), stays below. A short question (a word or three) is Italian when its words are
# Italian ones, or end the way Italian words end, and none is English.
_ITALIAN_MIN_SHARE = 0.25
_SHORT_QUESTION_WORDS = 3


def _prose(text: str) -> str:
    text = _FENCED_CODE.sub(" ", text)
    text = _INLINE_CODE.sub(" ", text)
    return _INDENTED_CODE.sub(" ", text)


def _question_count(text: str) -> int:
    # Every asked question is at least one, even when it does not end in "?". A question
    # mark in code or in quoted text is not a question put to the user.
    return max(1, len(_QUESTION_MARKS.findall(_QUOTED.sub(" ", _prose(text)))))


def _sentence_count(prose: str) -> int:
    count = 0
    start = 0
    for match in _SENTENCE_END.finditer(prose):
        # Only the few characters before the stop can hold an abbreviation.
        if _ABBREVIATION_END.search(prose, max(0, match.start() - _ABBREVIATION_MAX), match.end()):
            continue
        if _ALNUM.search(prose[start : match.end()]):
            count += 1
        start = match.end()
    # Text after the last full stop is a sentence too, punctuated or not.
    if _ALNUM.search(prose[start:]):
        count += 1
    return count


def _is_italian(prose: str) -> bool:
    if "¿" in prose or "¡" in prose:
        return False
    words = [w.lower() for w in _LETTERS.findall(prose)]
    italian = sum(w in _ITALIAN_WORDS for w in words)
    english = sum(w in _ENGLISH_WORDS for w in words)
    if any(w in _OTHER_ROMANCE for w in words) and italian <= english + 1:
        return False
    if italian > english and italian >= _ITALIAN_MIN_SHARE * len(words):
        return True
    if english or not words or len(words) > _SHORT_QUESTION_WORDS:
        return False
    return all(
        w in _ITALIAN_WORDS or w in _ITALIAN_CONTENT or _ITALIAN_ENDINGS.search(w) for w in words
    )


def _is_json(text: str) -> bool:
    body = text.strip()
    fenced = _JSON_FENCE.match(body)
    if fenced:
        body = fenced.group(1)
    try:
        return isinstance(json.loads(body), dict | list)
    except ValueError:
        return False


def _is_capitals(text: str) -> bool:
    # The whole question, code included, in capitals of the Latin script.
    # (a script without capitals, such as Chinese, cannot comply).
    return all(c.isupper() for c in text if c.isalpha())


def _code_lines(text: str) -> int:
    """Lines of the longest code block: fenced, or consecutive indented lines."""
    best = 0
    for block in _FENCED_CODE.findall(text):
        body = block.split("\n")[1:]
        best = max(best, sum(1 for line in body if line.strip() and not line.startswith("```")))
    run = 0
    for line in text.splitlines():
        run = run + 1 if _INDENTED_CODE.match(line) else 0
        best = max(best, run)
    return best


def _strings(value: object) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        value = list(value.values())
    if isinstance(value, list):
        return [text for item in value for text in _strings(item)]
    return []


def _has_snippet(text: str) -> bool:
    if _is_json(text):
        # A question written as JSON carries its snippet in its strings.
        body = _JSON_FENCE.match(text.strip())
        text = "\n".join(_strings(json.loads(body.group(1) if body else text)))
    return _code_lines(text) >= SNIPPET_MIN_LINES and bool(_REFERENCE.search(text))


def _offers_options(text: str) -> bool:
    if len(_LIST_ITEM.findall(text)) >= 2 or len(_INLINE_OPTION.findall(text)) >= 2:
        return True
    prose = _prose(text)
    for left, right in _SLASH_CHOICE.findall(prose):
        if (left.lower(), right.lower()) not in _NOT_SLASH_CHOICES:
            return True
    for sentence in re.split(r"(?<=[.!?\uff1f])\s+", prose):
        if not _OR.search(sentence):
            continue
        cleaned = _OR_NOT_A_CHOICE.sub(" ", sentence)
        if _OR.search(cleaned) and not _OR_IN_OPEN_QUESTION.search(cleaned):
            return True
    return False


def _is_concise(text: str) -> bool:
    prose = _prose(text)
    return _sentence_count(prose) <= 1 and len(prose.split()) <= CONCISE_MAX_WORDS


# --- Per-question rules: True when the question complies -------------------------------------

_QUESTION_RULES: Mapping[str, Callable[[str], bool]] = MappingProxyType(
    {
        # A comma anywhere (ASCII or full-width) breaks it, code included: the agent can
        # always leave code out of a question.
        # A comma anywhere breaks it, code included: the agent can always leave code out
        # of a question.
        "commas": lambda text: not any(c in _COMMAS for c in text),
        "capital": _is_capitals,
        "json": _is_json,
        "length": lambda text: _sentence_count(_prose(text)) == LENGTH_SENTENCES,
        "snippet": _has_snippet,
        # A question with no words at all (only code) has nothing to translate.
        "lang_ita": lambda text: not _LETTERS.search(_prose(text)) or _is_italian(_prose(text)),
        "do_selection": _offers_options,
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
            asked += _question_count(q.text)
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
