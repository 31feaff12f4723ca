"""What a question's text is made of: its code (fenced, inline, indented, and code
written without backticks), its prose, sentences, lists and references, and JSON.

Code is set aside for the prose rules (language, sentences, options): identifiers
cannot be capitalised or translated without changing what they name.
"""

from __future__ import annotations

import json
import re

_FENCED_CODE = re.compile(r"```.*?(?:```|\Z)", re.DOTALL)
_INLINE_CODE = re.compile(r"`[^`\n]+`")
_INDENTED_CODE = re.compile(r"^(?:\t| {4,})\S.*$", re.MULTILINE)
_JSON_FENCE = re.compile(r"\A```(?:json)?\s*(.*?)\s*```\Z", re.DOTALL | re.IGNORECASE)
LETTERS = re.compile(r"[^\W\d_]+")
_ALNUM = re.compile(r"[^\W_]")
# A run of stops ends a sentence when a space or the end follows; the lookbehind starts
# the match at the run's first stop so that long runs stay linear.
_SENTENCE_END = re.compile(r"(?<![.!?\uff1f\u2026])[.!?\uff1f\u2026]+[\"')\]]*(?=\s|\Z)")
# A full stop after these does not end a sentence.
_ABBREVIATION_END = re.compile(
    r"\b(?:e\.g|i\.e|etc|vs|cf|approx|mr|mrs|ms|dr|no)\.\Z", re.IGNORECASE
)
_ABBREVIATION_MAX = len("approx.")
LIST_ITEM = re.compile(r"^[ \t]*(?:[-*•]|\(?[A-Za-z0-9]\)|[A-Za-z0-9][.:])\s+\S", re.MULTILINE)
INLINE_OPTION = re.compile(r"\(\s*[A-Za-z0-9]\s*\)\s*\S")
# Commas of every script: ASCII, full-width, the ideographic 、 and the small forms.
COMMAS = frozenset(",\uff0c\u3001\ufe50\ufe51\uff64\u060c")
# Quoted text: a question mark inside it is quoted, not asked.
QUOTED = re.compile(r"\"[^\"\n]*\"|“[^”\n]*”|«[^»\n]*»|「[^」\n]*」|(?<![\w])'[^'\n]*'(?![\w])")
# A snippet comes with where it is from: a URL or a file name.
_REFERENCE = re.compile(
    r"https?://\S+|\bwww\.\S+|(?:[\w.-]+/)+[\w.-]+|\b[\w-]+\.(?:py|pyi|js|jsx|ts|tsx|java|kt|go|"
    r"rs|rb|php|c|h|cc|cpp|hpp|cs|swift|m|scala|sh|bash|sql|html|css|scss|json|ya?ml|toml|ini|"
    r"cfg|md|rst|txt|xml|lock|gradle|vue|svelte|dart|lua|pl|r|ipynb)\b",
    re.IGNORECASE,
)
SNIPPET_MIN_LINES = 3


# Code written without backticks, set aside before judging the language of the prose: URLs,
# command-line flags, $VARIABLES, @decorators, #123, paths and file names, dotted names,
# snake_case, camelCase and CamelCase identifiers, calls, operators and brackets: a
# whitespace-separated token with any of these marks is code.
CODE_MARK = re.compile(
    r"\A(?:https?://|www\.|--?[A-Za-z]|[$@#~]\w|\.{0,2}/)"
    r"|\w[/\\]\w|\w\.\w|_\w|\w_|\w\(|::|->|=>|[=!<>]=|\w=|[a-z][A-Z]|[{}\[\]<>]"
)


def prose_of(text: str) -> str:
    text = _FENCED_CODE.sub(" ", text)
    text = _INLINE_CODE.sub(" ", text)
    return _INDENTED_CODE.sub(" ", text)


def sentence_count(prose: str) -> int:
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


def is_json(text: str) -> bool:
    body = text.strip()
    fenced = _JSON_FENCE.match(body)
    if fenced:
        body = fenced.group(1)
    try:
        return isinstance(json.loads(body), dict | list)
    except ValueError:
        return False


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


def has_snippet(text: str) -> bool:
    if is_json(text):
        # A question written as JSON carries its snippet in its strings.
        body = _JSON_FENCE.match(text.strip())
        text = "\n".join(_strings(json.loads(body.group(1) if body else text)))
    return _code_lines(text) >= SNIPPET_MIN_LINES and bool(_REFERENCE.search(text))
