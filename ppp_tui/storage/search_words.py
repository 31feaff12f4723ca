"""How a search splits text into words: SQLite's FTS5 tokenizer (unicode61, removing
diacritics, the index's default), as rules a PostgreSQL team store applies too.

A word is a run of token characters; every other character separates words (`SEPARATORS`:
spaces, punctuation, most symbols; so `demo-000042` is the words `demo` and `000042`, and
`snake_case` is `snake` and `case`). Each character of a word is folded (`FOLDS`, and ASCII
letters to lower case): upper case to lower, a Latin letter with a diacritic to its base
letter (`é` to `e`), a combining diacritic to nothing. The tables are read from SQLite's
own tokenizer (`derive`, which tests/test_search_server.py checks them against), so the
two engines split and fold text alike whatever PostgreSQL's locale. No I/O here.
"""

from __future__ import annotations

import re
from functools import cache

# The longest word PostgreSQL's parser indexes, in bytes: a longer one is left out.
LONGEST = 2047


@cache
def _separator() -> re.Pattern[str]:
    return re.compile(f"[{separator_class()}]+")


def separator_class() -> str:
    """`SEPARATORS` as the inside of a regular expression's bracket, in escapes both
    Python's and PostgreSQL's regular expressions read."""
    return "".join(
        _escape(first) if first == last else f"{_escape(first)}-{_escape(last)}"
        for first, last in SEPARATORS
    )


def _escape(code: int) -> str:
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


@cache
def _fold_table() -> dict[int, str]:
    table = {code: chr(code + 32) for code in range(ord("A"), ord("Z") + 1)}
    table.update(FOLDS)
    return table


def words(text: str) -> list[str]:
    """The words of `text`, folded, as the index holds them."""
    folded = text.translate(_fold_table())
    return [word for word in _separator().split(folded) if word]


def fold_from_to() -> tuple[str, str]:
    """`FOLDS` (beyond ASCII) as PostgreSQL's translate() takes it: the characters, and
    what each becomes; those past the second string's end are removed."""
    kept = sorted((code, to) for code, to in FOLDS.items() if to)
    gone = sorted(code for code, to in FOLDS.items() if not to)
    return "".join(chr(c) for c, _ in kept) + "".join(map(chr, gone)), "".join(t for _, t in kept)


def derive(first: int = 1, last: int = 0x10FFFF) -> tuple[list[int], dict[int, str]]:
    """(the separators, the folds) of the SQLite this runs on, for the characters from
    `first` to `last`: each character tokenized between two letters by FTS5."""
    import sqlite3

    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE VIRTUAL TABLE probe USING fts5(t)")
    conn.execute("CREATE VIRTUAL TABLE probe_words USING fts5vocab(probe, instance)")
    codes = [code for code in range(first, last + 1) if not 0xD800 <= code <= 0xDFFF]
    conn.executemany(
        "INSERT INTO probe (rowid, t) VALUES (?, ?)", ((code, f"a{chr(code)}b") for code in codes)
    )
    found: dict[int, list[str]] = {}
    for term, row in conn.execute("SELECT term, doc FROM probe_words"):
        found.setdefault(row, []).append(term)
    conn.close()
    separators: list[int] = []
    folds: dict[int, str] = {}
    for code in codes:
        terms = found.get(code, [])
        if len(terms) != 1:
            separators.append(code)
        elif terms[0][1:-1] != chr(code):
            folds[code] = terms[0][1:-1]
    return separators, folds


# -- the tables, as derive() gives them on SQLite 3.40 (Unicode 6.1's categories) -------
# Kept as data beside this module (search_words.json): the separators as ranges of code
# points, the folds by code point in hex.


def _tables() -> tuple[tuple[tuple[int, int], ...], dict[int, str]]:
    import json
    from pathlib import Path

    data = json.loads((Path(__file__).parent / "search_words.json").read_text("utf-8"))
    separators = tuple((int(first), int(last)) for first, last in data["separators"])
    folds = {int(code, 16): str(to) for code, to in data["folds"].items()}
    return separators, folds


SEPARATORS, FOLDS = _tables()
