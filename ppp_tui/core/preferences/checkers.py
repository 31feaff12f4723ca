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

# Code is set aside for the prose rules (language, sentences, options): identifiers
# cannot be capitalised or translated without changing what they name.
_FENCED_CODE = re.compile(r"```.*?(?:```|\Z)", re.DOTALL)
_INLINE_CODE = re.compile(r"`[^`\n]+`")
_INDENTED_CODE = re.compile(r"^(?:\t| {4,})\S.*$", re.MULTILINE)
_JSON_FENCE = re.compile(r"\A```(?:json)?\s*(.*?)\s*```\Z", re.DOTALL | re.IGNORECASE)
_LETTERS = re.compile(r"[^\W\d_]+")
_ALNUM = re.compile(r"[^\W_]")
# A run of stops ends a sentence when a space or the end follows; the lookbehind starts
# the match at the run's first stop so that long runs stay linear.
_SENTENCE_END = re.compile(r"(?<![.!?\uff1f\u2026])[.!?\uff1f\u2026]+[\"')\]]*(?=\s|\Z)")
# A full stop after these does not end a sentence.
_ABBREVIATION_END = re.compile(
    r"\b(?:e\.g|i\.e|etc|vs|cf|approx|mr|mrs|ms|dr|no)\.\Z", re.IGNORECASE
)
_ABBREVIATION_MAX = len("approx.")
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


# --- Counting questions by their form (one_question) ----------------------------------------

# A sentence ends at a run of stops followed by a space or the end, at a question mark of any
# script (ASCII, full-width, Arabic, the Greek U+037E), at an ideographic stop and at a line
# break. A semicolon ends a Greek question (Greek writes its question mark as ";") and
# otherwise only joins two clauses of one sentence.
_SENTENCE_BREAK = re.compile(r"[?\uff1f\u037e\u061f]+|;|[.!\u2026]+(?=\s|\Z)|[\u3002\uff01]+|\n")
_ASKING_MARKS = frozenset("?\uff1f\u037e\u061f")
_GREEK = re.compile(r"[\u0370-\u03ff\u1f00-\u1fff]")
_URL = re.compile(r"https?://\S+|\bwww\.\S+")

# Words that open a sentence without being part of its question: "And", "Also,", "Inoltre" ...
_LEADING_WORDS = re.compile(
    r"\A[\s\"'“”\u2018\u2019«»()\[\]*>•-]*(?:(?:and|also|plus|but|so|then|or|additionally|finally|lastly|"
    r"second(?:ly)?|next|one more thing|e|ed|inoltre|poi|und|außerdem|ausserdem|auch|et|aussi|"
    r"puis|y|además|también|и|\u0430|также|και|επίσης)\b[\s,:;\u2014\u2013-]*)*",
    re.IGNORECASE,
)
_EN_AUX = (
    r"(?:(?:do|does|did|is|are|was|were|am|have|has|had|can|could|shall|should|will|would|may|"
    r"might|must)(?:n['\u2019]t)?|won['\u2019]t|can['\u2019]t|shan['\u2019]t)"
)
_EN_PRONOUN = (
    r"(?:i|you|we|they|he|she|it|there|this|that|these|those|anyone|anybody|someone|somebody|"
    r"everyone|everybody|everything|something|anything|y['\u2019]all)"
)
_EN_DETERMINER = r"(?:the|a|an|my|your|our|their|its|his|her|any|all|both|each|every|some)"
# An auxiliary followed by its subject: "should I", "do you", "is the fix". "Do" and "have"
# followed by a noun phrase are usually imperatives ("Do the migration", "Have a look"), so
# they need a pronoun.
_EN_INVERSION = (
    rf"(?:(?!(?:do|have)\b){_EN_AUX}\s+(?:{_EN_PRONOUN}|{_EN_DETERMINER})"
    rf"|(?:do|have)(?:n['\u2019]t)?\s+{_EN_PRONOUN})\b"
)
# Between "which"/"what"/"how many" and the inverted auxiliary: up to three words of the noun
# phrase, none a pronoun or determiner ("what you see is ..." is a statement), "of the" aside.
_EN_WH_NOUN = (
    rf"(?:\s+(?:of\s+(?:the|a|an|these|those|them|this|that|your|my|our)|"
    rf"(?!(?:{_EN_PRONOUN}|{_EN_DETERMINER})\b)[^\s,;:]+)){{0,3}}?"
)
_GER_VERB = (
    r"(?:soll|sollen|sollte|sollten|kann|kannst|können|könnte|könntest|könnten|darf|dürfen|"
    r"muss|musst|müssen|möchtest|möchten|willst|wollen|ist|sind|hast|habe|haben|hat|wird|wirst|"
    r"werden|gibt|brauchst|brauchen|bevorzugst|bevorzugen|nutzt|nutzen|verwendest|verwenden|"
    r"passt|reicht|stimmt|weißt|wissen)"
)
_GER_SUBJECT = r"(?:ich|du|wir|es|sie|man|er|ihr|das|dies|der|die|den|dem|ein|eine|einen)"
# The forms a question takes without its question mark, at the start of a sentence (after the
# words above). Declaratives that merely begin with an interrogative word ("When I run the
# tests, two fail", "What I found is ...") do not match: English needs the inverted auxiliary.
_QUESTION_FORM = re.compile(
    "|".join(
        (
            # English: inversion, wh-word with inversion, subject questions, requests to tell.
            rf"\A{_EN_INVERSION}",
            rf"\A(?:which|what|whose|how\s+(?:many|much|long|often|far|soon|big)){_EN_WH_NOUN}"
            rf"\s+{_EN_INVERSION}",
            rf"\A(?:who|whom|where|when|why|how)\s+{_EN_INVERSION}",
            r"\A(?:what|how)\s+about\b|\Awhat\s+if\b|\Awhy\s+not\b",
            r"\A(?:who|what|which\s+\w+)\s+(?:happens|happened|breaks|fails|causes|calls|owns|"
            r"uses|triggers|matters|works)\b",
            r"\A(?:please\s+)?(?:tell\s+me|let\s+me\s+know|confirm|clarify|specify|indicate|"
            r"advise)\s+(?:whether|if|which|what|where|when|why|how|who)\b",
            # Italian: interrogative words (not "quanto a", "as for"), the second person that
            # opens a question, and how/where/when/why before a modal.
            r"\A(?:quale|quali|qual|cosa|che\s+cosa|chi|quant[oaie](?!\s+(?:a|al|allo|alla|"
            r"ai|agli|alle|all['\u2019])\b)|vuoi|volete|preferisci|preferite|confermi|confermate)\b",
            r"\A(?:come|dove|quando|perch[eé])\s+(?:devo|dovrei|posso|potrei|vuoi|volete|"
            r"vorresti|preferisci|preferite|possiamo|dobbiamo|facciamo|faccio|procedo|si)\b",
            r"\A(?:dimmi|fammi\s+sapere|confermami|conferma|indicami)\s+(?:se|quale|quali|cosa|"
            r"come|dove|quando)\b",
            # German: verb first before its subject, a w-word before it, "sag mir, ob".
            rf"\A{_GER_VERB}\s+{_GER_SUBJECT}\b",
            rf"\A(?:welche[rsmn]?|was|wo|wann|warum|wieso|weshalb|wie(?:\s+viele?)?|wer|wen|wem|"
            rf"wessen|wohin|woher|womit|wofür|worauf)(?:\s+[^\s,;:]+){{0,2}}?\s+{_GER_VERB}\s+"
            rf"{_GER_SUBJECT}\b",
            r"\A(?:sag|sagen\s+sie|sagt)\s+mir,?\s+(?:ob|welche[rsmn]?|was|wie|wo|wann)\b",
            # French: quel (inversion and "est-ce que" are below).
            r"\A(?:quel|quelle|quels|quelles)\b",
            r"\A(?:dis|dites)-moi\s+(?:si|quel|quelle|comment|où|quand|pourquoi|ce\s+que)\b",
            # Spanish: the opening ¿ and the accented interrogatives.
            r"\A¿|\A(?:qué|cuál|cuáles|cómo|dónde|adónde|cuándo|quién|quiénes|cuánt[oa]s?|"
            r"por\s+qué)\b",
            r"\A(?:dime|dígame|díganme|avísame|indícame|confírmame)\s+(?:si|qué|cuál|cómo|"
            r"dónde|cuándo)\b",
            # Russian: the particle ли and the unambiguous interrogatives.
            r"\A\S+\s+ли\b|\A(?:какой|какая|какое|какие|какую|каким|какого|каком|почему|"
            r"зачем|сколько)\b",
            # Greek and Arabic.
            r"\A(?:ποιο|ποια|ποιος|ποιον|ποιες|ποιους|τι|πού|πότε|πώς|μήπως|\u03bd\u03b1)\b",
            r"\A\u0647\u0644\b",
        )
    ),
    re.IGNORECASE,
)
# French inversion anywhere in the clause ("Quel port dois-je", "y a-t-il", "peut-on") and
# "est-ce que": looked for only in a clause with a hyphen.
_FRENCH_QUESTION = re.compile(
    r"\b[^\W\d_]+-(?:t-)?(?:je|tu|il|elle|nous|vous|ils|elles)\b"
    r"|\b(?:peut|doit|faut|va|fait|sait|pourrait|devrait|faudrait|a-t)-on\b|\best-ce\s+qu",
    re.IGNORECASE,
)
# The Japanese and Chinese particles that end a question.
_QUESTION_PARTICLES = ("か", "かな", "かね", "吗", "嗎", "呢")
# "Should you need anything, let me know": an inverted condition, not a question.
_INVERTED_CONDITION = re.compile(
    r"\A(?:should\s+(?:you|it|there|anyone)|had\s+(?:i|we|you)|were\s+(?:it|i|we|you|there))"
    r"\b[^,]*,\s*(?:let|feel|please|just|then|i|i['\u2019]ll|we|we['\u2019]ll|it|you)\b",
    re.IGNORECASE,
)
# Two questions joined in one sentence: "Which port should I use, and should I add TLS?"
# ("or" joins alternatives of one question and does not split).
_SECOND_CLAUSE = re.compile(
    rf";\s*|,?\s+(?:and|also|plus|but)\s+(?=(?:also\s+)?{_EN_AUX}\s+{_EN_PRONOUN}\b)"
    rf"|,?\s+(?:und|aber)\s+(?={_GER_VERB}\s+(?:ich|du|wir|sie|man)\b)",
    re.IGNORECASE,
)
# A question the agent answers at once is rhetorical: "Why does it fail? Because ..."
_SELF_ANSWER = re.compile(
    r"\A(?:because|(?:that|it)['\u2019]?s\s+because|the\s+(?:answer|reason)\s+is|(?:it\s+)?turns\s+"
    r"out|weil|parce\s+que|porque|потому\s+что|επειδή)\b",
    re.IGNORECASE,
)


def _sentences(prose: str) -> list[tuple[str, bool]]:
    """The sentences of `prose`, each with whether a question mark ends it."""
    sentences: list[tuple[str, bool]] = []
    start = 0
    greek = False  # whether the sentence so far holds Greek letters (checked up to `seen`)
    seen = 0
    for match in _SENTENCE_BREAK.finditer(prose):
        mark = match.group()
        if mark == ";":
            if not greek:
                greek = bool(_GREEK.search(prose, seen, match.start()))
                seen = match.start()
            if not greek:
                continue  # a semicolon between two clauses of one sentence
            asked = True
        else:
            asked = mark[0] in _ASKING_MARKS
        sentences.append((prose[start : match.start()], asked))
        start = seen = match.end()
        greek = False
    sentences.append((prose[start:], False))
    return sentences


def _asks_by_form(clause: str) -> bool:
    clause = _LEADING_WORDS.sub("", clause, count=1)
    if not clause or _INVERTED_CONDITION.match(clause):
        return False
    return (
        _QUESTION_FORM.match(clause) is not None
        or ("-" in clause and _FRENCH_QUESTION.search(clause) is not None)
        or clause.rstrip().endswith(_QUESTION_PARTICLES)
    )


def _question_count(text: str) -> int:
    """How many questions an ask puts: every sentence ended by a question mark, and every
    sentence or clause that has the form of a question without one (an inverted auxiliary,
    an interrogative word, a question particle, "¿"). Question marks in code, quoted text or
    URLs are not questions to the user, and neither is a question the ask answers itself."""
    prose = _QUOTED.sub(" ", _URL.sub(" ", _prose(text)))
    counts: list[int] = []
    for sentence, asked in _sentences(prose):
        if counts and _SELF_ANSWER.match(_LEADING_WORDS.sub("", sentence, count=1)):
            counts[-1] = 0
        forms = sum(_asks_by_form(clause) for clause in _SECOND_CLAUSE.split(sentence))
        counts.append(max(int(asked), forms))
    # Every ask is at least one question, even when none has the form of one.
    return max(1, sum(counts))


# --- Offering options (do_selection) ---------------------------------------------------------

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
    rf"\A(?:(?:do|does|did|have|has|had|are|were|is|was|can|could)\s+(?:{_EN_PRONOUN}|"
    r"the\s+\w+)\s+(?:also\s+|ever\s+|still\s+|already\s+)?(?:see|get|got|gotten|notice|"
    r"noticed|encounter|encountered|observe|observed|receive|received|hit|experience|"
    r"experienced|run\s+into|seen|had)\b|(?:is|are|was|were)\s+there\b)",
    re.IGNORECASE,
)
# Options set off by a comma, colon, dash or parenthesis at the end: "..., JSON or YAML?"
_OR_SET_OFF_BEFORE = re.compile(r"[,:(\u2014\u2013]\s*[^\s,:;()]+(?:\s+[^\s,:;()]+){0,2}\s*\Z")
_OR_SET_OFF_AFTER = re.compile(r"\A\s*[^\s,:;()]+(?:\s+[^\s,:;()]+){0,3}\s*\)?\s*\Z")
# "or" then a question of its own: "..., or should I leave them?"
_OR_ALTERNATIVE_QUESTION = re.compile(rf"\A\s*{_EN_AUX}\s+{_EN_PRONOUN}\b", re.IGNORECASE)
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
    the an is are was be do does did you your we it to of on for with and or should
    would could can will which what where when why how this that there have has any want need
    my
    """
)
# Words of both languages (Italian "a", "in", "i", "me", "come", "per"): they count for
# neither, unless the question has Italian words and no English one.
_SHARED_WORDS = _word_set("a in i me come per no so")
# Words that give away Spanish, Portuguese or French, which share much with Italian.
_OTHER_ROMANCE = (
    _word_set(
        """
    el los las es está están estás qué cuál cómo dónde puedo quieres usted
    lo que sí tu y pero para por con una función archivo
    você não é são o os as um uma em do da dos das est vous le les des du est-ce quel quelle
    ou arquivo je dois fichier veux voulez faut debo archivo quieres puedes cambiar
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


# Code written without backticks, set aside before judging the language of the prose: URLs,
# command-line flags, $VARIABLES, @decorators, #123, paths and file names, dotted names,
# snake_case, camelCase and CamelCase identifiers, calls, operators and brackets: a
# whitespace-separated token with any of these marks is code.
_CODE_MARK = re.compile(
    r"\A(?:https?://|www\.|--?[A-Za-z]|[$@#~]\w|\.{0,2}/)"
    r"|\w[/\\]\w|\w\.\w|_\w|\w_|\w\(|::|->|=>|[=!<>]=|\w=|[a-z][A-Z]|[{}\[\]<>]"
)


def _prose(text: str) -> str:
    text = _FENCED_CODE.sub(" ", text)
    text = _INLINE_CODE.sub(" ", text)
    return _INDENTED_CODE.sub(" ", text)


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
    other = sum(w in _OTHER_ROMANCE for w in words)
    if italian and not english:
        # Without an English word, the words both languages share are Italian ones.
        italian += sum(w in _SHARED_WORDS for w in words)
    if other and (italian <= english + 1 or other >= italian):
        return False
    if italian > english and italian >= _ITALIAN_MIN_SHARE * len(words):
        return True
    if english or not words or len(words) > _SHORT_QUESTION_WORDS:
        return False
    return all(
        w in _ITALIAN_WORDS or w in _ITALIAN_CONTENT or _ITALIAN_ENDINGS.search(w) for w in words
    )


def _is_italian_ask(text: str) -> bool:
    # The prose is judged, not the code: blocks, inline code and code-like tokens are set
    # aside first. A question with no words left (only code) has nothing to translate.
    prose = " ".join(token for token in _prose(text).split() if not _CODE_MARK.search(token))
    return not _LETTERS.search(prose) or _is_italian(prose)


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
    # The whole question, code included: no letter that has a capital form is written in
    # its small form, in any script with case (Latin with its accents, Greek, Cyrillic ...),
    # and at least one letter is a capital. Letters of scripts without case (Chinese,
    # Japanese, Arabic), digits and signs neither break nor make it: a question with no
    # capital letter at all is not written in capitals. German "ß" has no capital of its
    # own in Unicode's case mapping (its upper case is "SS") and German capitals keep it, so
    # it does not break it; "ẞ" and "SS" are capitals.
    letters = text.replace("ß", "")
    return letters.upper() == letters and letters.lower() != letters


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
        if _LIST_ITEM.match(line):
            run += 1
            if run == 2 and (intro is None or _asks(intro) or cue()):
                return True
        elif line.strip():
            intro, run = line, 0
    return False


def _asks(line: str) -> bool:
    return any(
        asked or _asks_by_form(sentence) or _SELECTION_CUE.search(sentence) is not None
        for sentence, asked in _sentences(line.rstrip(" :"))
    )


def _offers_options(text: str) -> bool:
    # An ask offers options when it names two or more alternatives for the user to pick
    # one of (see the module's criteria); an "or" that the answer does not pick between
    # offers nothing.
    if len(_INLINE_OPTION.findall(text)) >= 2:
        return True
    prose = _prose(text)
    sentences = _sentences(_URL.sub(" ", prose))
    # Whether a question of the ask asks to pick ("Which do you prefer?"); read only when
    # needed.
    cue = _Lazy(
        lambda: any(
            _SELECTION_CUE.search(sentence) is not None and (asked or _asks_by_form(sentence))
            for sentence, asked in sentences
        )
    )
    if len(_LIST_ITEM.findall(text)) >= 2 and _list_offers(text, cue):
        return True
    for left, right in _SLASH_CHOICE.findall(prose):
        if (left.lower(), right.lower()) not in _NOT_SLASH_CHOICES:
            return True
    for sentence, _ in sentences:
        if not _OR.search(sentence):
            continue
        cleaned = _OR_NOT_A_CHOICE.sub(" ", sentence)
        existence = bool(_OR_IN_EXISTENCE_QUESTION.match(_LEADING_WORDS.sub("", cleaned, count=1)))
        if any(_or_offers_a_choice(cleaned, at, cue, existence) for at in _OR.finditer(cleaned)):
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
        "lang_ita": _is_italian_ask,
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
