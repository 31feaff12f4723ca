"""Gates: the cheap tests that let the effort classifier skip most regular expressions.

A gate is something any match of a pattern needs (a word among the question's words, a
literal substring, its first word); the pattern is searched only where its gate passes.
This module holds the machinery every cue table (`cues`) and the classifier share: the
words a text is gated on, and the cue lists keyed by their gate words.
"""

from __future__ import annotations

import re
from operator import itemgetter
from string import ascii_lowercase

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
