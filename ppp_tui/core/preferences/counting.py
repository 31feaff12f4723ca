"""How many questions one ask puts (the one_question rule): every sentence ended by a
question mark, and every sentence or clause shaped as a question, or asking for
something, without one, in the languages the checkers read."""

from __future__ import annotations

import re

from .text import QUOTED, prose_of

# A sentence ends at a run of stops followed by a space or the end, at a question mark of any
# script (ASCII, full-width, Arabic, the Greek U+037E), at an ideographic stop and at a line
# break. A semicolon ends a Greek question (Greek writes its question mark as ";") and
# otherwise only joins two clauses of one sentence.
_SENTENCE_BREAK = re.compile(r"[?\uff1f\u037e\u061f]+|;|[.!\u2026]+(?=\s|\Z)|[\u3002\uff01]+|\n")
_ASKING_MARKS = frozenset("?\uff1f\u037e\u061f")
_GREEK = re.compile(r"[\u0370-\u03ff\u1f00-\u1fff]")
URL = re.compile(r"https?://\S+|\bwww\.\S+")

# Words that open a sentence without being part of its question: "And", "Also,", "Inoltre" ...
LEADING_WORDS = re.compile(
    r"\A[\s\"'“”\u2018\u2019«»()\[\]*>•-]*(?:(?:and|also|plus|but|so|then|or|additionally|finally|lastly|"
    r"second(?:ly)?|next|one more thing|e|ed|inoltre|poi|und|außerdem|ausserdem|auch|et|aussi|"
    r"puis|y|además|también|и|\u0430|также|και|επίσης)\b[\s,:;\u2014\u2013-]*)*",
    re.IGNORECASE,
)
EN_AUX = (
    r"(?:(?:do|does|did|is|are|was|were|am|have|has|had|can|could|shall|should|will|would|may|"
    r"might|must)(?:n['\u2019]t)?|won['\u2019]t|can['\u2019]t|shan['\u2019]t)"
)
EN_PRONOUN = (
    r"(?:i|you|we|they|he|she|it|there|this|that|these|those|anyone|anybody|someone|somebody|"
    r"everyone|everybody|everything|something|anything|y['\u2019]all)"
)
_EN_DETERMINER = r"(?:the|a|an|my|your|our|their|its|his|her|any|all|both|each|every|some)"
# An auxiliary followed by its subject: "should I", "do you", "is the fix". "Do" and "have"
# followed by a noun phrase are usually imperatives ("Do the migration", "Have a look"), so
# they need a pronoun.
_EN_INVERSION = (
    rf"(?:(?!(?:do|have)\b){EN_AUX}\s+(?:{EN_PRONOUN}|{_EN_DETERMINER})"
    rf"|(?:do|have)(?:n['\u2019]t)?\s+{EN_PRONOUN})\b"
)
# Between "which"/"what"/"how many" and the inverted auxiliary: up to three words of the noun
# phrase, none a pronoun or determiner ("what you see is ..." is a statement), "of the" aside.
_EN_WH_NOUN = (
    rf"(?:\s+(?:of\s+(?:the|a|an|these|those|them|this|that|your|my|our)|"
    rf"(?!(?:{EN_PRONOUN}|{_EN_DETERMINER})\b)[^\s,;:]+)){{0,3}}?"
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
    rf";\s*|,?\s+(?:and|also|plus|but)\s+(?=(?:also\s+)?{EN_AUX}\s+{EN_PRONOUN}\b)"
    rf"|,?\s+(?:und|aber)\s+(?={_GER_VERB}\s+(?:ich|du|wir|sie|man)\b)",
    re.IGNORECASE,
)
# A question the agent answers at once is rhetorical: "Why does it fail? Because ..."
# A request for something from the user, a question without its form: "tell me the
# port", "please share the log", "dimmi la porta".
_REQUEST = re.compile(
    r"\A(?:please\s+)?(?:(?:tell|send|give|show)\s+(?:me|us)\b|(?:share|provide|paste|"
    r"specify|confirm|describe|list|upload|attach)\s+\S|(?:dimmi|indicami|mandami|mostrami|"
    r"fornisci|condividi)\b|(?:sag|schick|gib|zeig)\s+mir\b)",
    re.IGNORECASE,
)
_SELF_ANSWER = re.compile(
    r"\A(?:because|(?:that|it)['\u2019]?s\s+because|the\s+(?:answer|reason)\s+is|(?:it\s+)?turns\s+"
    r"out|weil|parce\s+que|porque|потому\s+что|επειδή)\b",
    re.IGNORECASE,
)


def sentences_of(prose: str) -> list[tuple[str, bool]]:
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


def asks_by_form(clause: str) -> bool:
    clause = LEADING_WORDS.sub("", clause, count=1)
    if not clause or _INVERTED_CONDITION.match(clause):
        return False
    return (
        _QUESTION_FORM.match(clause) is not None
        or ("-" in clause and _FRENCH_QUESTION.search(clause) is not None)
        or clause.rstrip().endswith(_QUESTION_PARTICLES)
    )


def question_count(text: str) -> int:
    """How many questions an ask puts: every sentence ended by a question mark, and every
    sentence or clause that has the form of a question without one (an inverted auxiliary,
    an interrogative word, a question particle, "¿") or asks the user for something ("Also
    tell me the port"). Question marks in code, quoted text or URLs are not questions to
    the user, and neither is a question the ask answers itself."""
    prose = QUOTED.sub(" ", URL.sub(" ", prose_of(text)))
    counts: list[int] = []
    for sentence, asked in sentences_of(prose):
        if counts and _SELF_ANSWER.match(LEADING_WORDS.sub("", sentence, count=1)):
            counts[-1] = 0
        forms = sum(
            asks_by_form(clause)
            or _REQUEST.match(LEADING_WORDS.sub("", clause, count=1)) is not None
            for clause in _SECOND_CLAUSE.split(sentence)
        )
        counts.append(max(int(asked), forms))
    # Every ask is at least one question, even when none has the form of one.
    return max(1, sum(counts))
