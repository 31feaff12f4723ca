"""The language of a question's prose (code set aside): Italian (the lang_ita rule),
and English written all in capitals (the capital rule)."""

from __future__ import annotations

import re

from .text import CODE_MARK, LETTERS, prose_of


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
# Common German words (of a question), which no English question uses.
_GERMAN_WORDS = _word_set(
    """
    der die das den dem des ein eine einen einem und ist sind soll sollen sollte ich du wir
    ihr nicht mit für auf oder wie was wo welche welcher welches kann können möchtest
    bitte datei ändern
    """
)
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


def _is_italian(prose: str) -> bool:
    if "¿" in prose or "¡" in prose:
        return False
    words = [w.lower() for w in LETTERS.findall(prose)]
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


def is_italian_ask(text: str) -> bool:
    # The prose is judged, not the code: blocks, inline code and code-like tokens are set
    # aside first. A question with no words left (only code) has nothing to translate.
    prose = " ".join(token for token in prose_of(text).split() if not CODE_MARK.search(token))
    return not LETTERS.search(prose) or _is_italian(prose)


def is_capitals(text: str) -> bool:
    # The paper's criterion: the question is in English and all capitalized. All of it,
    # code included: no letter has its small form, and at least one is a capital. A
    # question in Italian, German, Greek ... written in capitals is not in English, so it
    # does not comply.
    return text.upper() == text and text.lower() != text and _is_english(text)


def _is_english(text: str) -> bool:
    """Whether a question's prose (code set aside) is English: its English function words
    outnumber the other languages' (Italian, Spanish, Portuguese, French, German words,
    and words with letters English does not write); with none of either, whether every
    letter is one English writes."""
    prose = " ".join(token for token in prose_of(text).split() if not CODE_MARK.search(token))
    words = [w.lower() for w in LETTERS.findall(prose)]
    if not words or _is_italian(prose):
        return False
    english = sum(w in _ENGLISH_WORDS or w in _SHARED_WORDS for w in words)
    foreign = sum(
        w in _ITALIAN_WORDS or w in _OTHER_ROMANCE or w in _GERMAN_WORDS or not w.isascii()
        for w in words
    )
    return english > foreign or english == foreign == 0
