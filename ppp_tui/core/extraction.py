"""Question extraction from an agent's response text (SPEC 3).

The questions of a response are its sentences that end in "?", outside code blocks
(fenced ``` / ~~~ blocks and inline `code`) and quoted text (> block quotes and
text in quotation marks). A "?" inside code or a quotation neither ends a sentence
nor makes one a question, but the code stays part of the question's text.
"""

from __future__ import annotations

import re

_FENCE = re.compile(r"^[ \t]*(```|~~~)")
_QUOTE_LINE = re.compile(r"^[ \t]*>")
_LIST_MARKER = re.compile(r"^(?:[-*+•]|\d+[.)]|[a-zA-Z][.)](?=\s))\s+")
_EMPHASIS = re.compile(r"^(?:\*\*|__)?(?:questions?|q\d*)\s*[:.]\s*(?:\*\*|__)?\s*", re.IGNORECASE)
# Inline code and quotations whose "?" must not end a sentence.
_SHIELDED = re.compile(r"`[^`\n]*`|\"[^\"\n]*\"|“[^”\n]*”")
# A sentence ends at . ! ? followed by space and a likely sentence start.
_BOUNDARY = re.compile(r"(?<=[.!?])[\"')\]*_]*\s+(?=[\"'(\[*_]*[A-Z0-9`])")
_ABBREVIATION = re.compile(r"\b(?:e\.g|i\.e|etc|vs|cf|approx|incl|Mr|Mrs|Dr|No)\.$", re.IGNORECASE)
_TRAILING = "\"')]*_ "
# The most characters an _ABBREVIATION match spans ("approx."), and one more.
_LONGEST_ABBREVIATION = 8


def _blocks(text: str) -> list[str]:
    """Paragraph-like blocks of prose: fenced code and block quotes removed."""
    blocks: list[str] = []
    current: list[str] = []
    fence: str | None = None
    for line in text.splitlines():
        marker = _FENCE.match(line)
        if fence is not None:
            if marker and marker.group(1) == fence:
                fence = None
            continue
        if marker:
            fence = marker.group(1)
        elif line.strip() and not _QUOTE_LINE.match(line):
            stripped = line.strip()
            # A list item or heading starts a block of its own.
            if current and (_LIST_MARKER.match(stripped) or stripped.startswith("#")):
                blocks.append(" ".join(current))
                current = []
            current.append(stripped)
            continue
        if current:
            blocks.append(" ".join(current))
            current = []
    if current:
        blocks.append(" ".join(current))
    return blocks


def _sentences(block: str) -> list[str]:
    # Mask shielded spans so their punctuation cannot split or end a sentence.
    masked = _SHIELDED.sub(lambda m: "x" * len(m.group()), block)
    sentences = []
    start = 0
    for match in _BOUNDARY.finditer(masked):
        # Only the sentence's last few characters can end in an abbreviation: searching
        # all of it again after each one made long texts quadratic. (The character
        # before `start` is a space, so a word boundary there is one as well.)
        end = match.start()
        if _ABBREVIATION.search(masked, max(start, end - _LONGEST_ABBREVIATION), end):
            continue
        sentences.append((start, match.start()))
        start = match.end()
    sentences.append((start, len(block)))
    return [block[a:b] for a, b in sentences if masked[a:b].rstrip(_TRAILING).endswith("?")]


def _clean(sentence: str) -> str:
    sentence = sentence.strip().lstrip("#").strip()
    sentence = _LIST_MARKER.sub("", sentence)
    return _EMPHASIS.sub("", sentence).strip()


def extract_questions(text: str | None) -> list[str]:
    """The questions a response asks, in order."""
    if not text or "?" not in text:
        return []
    questions = []
    for block in _blocks(text):
        if "?" not in block:
            continue
        for sentence in _sentences(block):
            cleaned = _clean(sentence)
            if len(cleaned) > 1:
                questions.append(cleaned)
    return questions
