"""Searching a team store's runs as the user types: PostgreSQL's full-text search over the
index search_server_schema.py keeps, answering as a SQLite file's FTS5 index does
(search.py).

The same rules: a run matches when one of its rows (its id, spec id and task; an agent's
output; a question) holds every word of the query, the last one as a prefix unless the
text ends with a space. A word of the query is split and folded as the index's text was
(search_words.py): `demo-000042` is the phrase `demo` followed by `000042`, as FTS5 reads
the quoted word. The tsquery is built here from those words, never parsed from the
user's text, so no character of it is an operator. A word with nothing left to look for
(`&&`) matches nothing, as on SQLite.

The same order: when at most `search.RANK_LIMIT` rows match, runs come by their best
row's bm25, computed as FTS5 computes it (k1 1.2, b 0.75, each table its own statistics:
rows, average words, rows holding each word), then by id; past it, the runs whose id,
spec or task matches come first, then those matched by an output, then by a question,
by id within each. Where the two engines may still differ is in docs/team-store.md.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from . import search_words
from .search import PAGE, RANK_LIMIT
from .search_server_schema import TOTALS
from .tables import SEARCHED

Query = Callable[..., list[Any]]

# bm25's parameters as FTS5 has them, and its least inverse document frequency.
K1 = 1.2
B = 0.75
LEAST_IDF = 1e-6


@dataclass(frozen=True)
class Words:
    """What the user typed, as the index's words: one phrase per word typed (the
    words it splits into, in order), the last phrase's last word a prefix or not."""

    phrases: tuple[tuple[str, ...], ...]
    prefix: bool

    def tsquery(self, only: int | None = None) -> str:
        """Every phrase (or the phrase numbered `only`) as tsquery text."""
        chosen = range(len(self.phrases)) if only is None else [only]
        return " & ".join(f"({self._phrase(index)})" for index in chosen)

    def _phrase(self, index: int) -> str:
        words = self.phrases[index]
        last = index == len(self.phrases) - 1
        parts = []
        for at, word in enumerate(words):
            quoted = "'" + word.replace("\\", "\\\\").replace("'", "''") + "'"
            if last and self.prefix and at == len(words) - 1:
                quoted += ":*"
            parts.append(quoted)
        return " <-> ".join(parts)

    def lexemes(self) -> tuple[list[int], list[int], list[str], list[bool]]:
        """(phrase, place in it, word, prefix) for every word of every phrase."""
        rows = [
            (index, at, word, self.prefix and index == len(self.phrases) - 1 and at == len(p) - 1)
            for index, p in enumerate(self.phrases)
            for at, word in enumerate(p)
        ]
        return (
            [row[0] for row in rows],
            [row[1] for row in rows],
            [row[2] for row in rows],
            [row[3] for row in rows],
        )


def words_of(text: str) -> Words | None:
    """The query for `text`; None when there is nothing to look for, or a word that
    matches nothing (no letter or digit in it, or longer than PostgreSQL indexes)."""
    typed = text.replace("\x00", " ").split()
    if not typed:
        return None
    phrases = tuple(tuple(search_words.words(word)) for word in typed)
    if any(
        not phrase or any(len(w.encode()) > search_words.LONGEST for w in phrase)
        for phrase in phrases
    ):
        return None
    return Words(phrases, not text[-1].isspace())


def _matching(index: int) -> str:
    """The rows of group `index` that match the tsquery `?`: (its key, its run id, its
    tsvector, its number of words)."""
    searched = SEARCHED[index]
    return (
        f"SELECT row.ctid AS key, {searched.run} AS run_id, row.search, row.search_words"
        f" FROM {searched.table} AS row{searched.joins} WHERE row.search @@ ?::tsquery"
    )


def _count(query: Query, index: int, tsquery: str, bound: int) -> int:
    table = SEARCHED[index].table
    row = query(
        f"SELECT count(*) FROM (SELECT 1 FROM {table} WHERE search @@ ?::tsquery LIMIT ?) AS n",
        [tsquery, bound],
    )
    return int(row[0][0])


def _counts(query: Query, tsquery: str) -> list[int]:
    """As search._counts: each group's matching rows, counted until they are more than
    `RANK_LIMIT` in all."""
    counts: list[int] = []
    for index in range(len(SEARCHED)):
        counts.append(_count(query, index, tsquery, RANK_LIMIT + 1 - sum(counts)))
        if sum(counts) > RANK_LIMIT:
            break
    return counts


# One group's rows scored by bm25, as FTS5's bm25() scores them: `?`s are the words
# (phrase, place, word, prefix), every phrase's tsquery, the table's name and the whole
# query's tsquery. A phrase's frequency in a row is its rarest word's.
_BM25 = """WITH words (phrase, place, word, prefix) AS (
    SELECT * FROM unnest(?::int[], ?::int[], ?::text[], ?::bool[])),
phrases AS (SELECT (n - 1)::int AS phrase, tsquery
    FROM unnest(?::text[]) WITH ORDINALITY AS p (tsquery, n)),
totals AS MATERIALIZED (SELECT rows::float8 AS n, words::float8 / greatest(rows, 1) AS average
    FROM {totals} WHERE name = ?),
idf AS MATERIALIZED (SELECT phrase, ln((totals.n - hits.n + 0.5) / (hits.n + 0.5)) AS idf
    FROM phrases CROSS JOIN totals CROSS JOIN LATERAL (SELECT count(*)::float8 AS n
        FROM {table} WHERE search @@ phrases.tsquery::tsquery) AS hits),
matched AS ({matching}),
frequencies AS (SELECT matched.key, matched.run_id, matched.search_words, words.phrase,
        words.place, sum(cardinality(found.positions))::float8 AS f
    FROM matched CROSS JOIN LATERAL unnest(matched.search) AS found
    JOIN words ON found.lexeme = words.word
        OR (words.prefix AND starts_with(found.lexeme, words.word))
    GROUP BY 1, 2, 3, 4, 5),
phrase_frequencies AS (SELECT key, run_id, search_words, phrase, min(f) AS f
    FROM frequencies GROUP BY 1, 2, 3, 4)
SELECT run_id, -sum(CASE WHEN idf.idf <= 0 THEN ? ELSE idf.idf END
        * ((pf.f * ?) / (pf.f + ? * (? + ? * pf.search_words / totals.average)))
        ORDER BY pf.phrase) AS score
FROM phrase_frequencies AS pf JOIN idf USING (phrase) CROSS JOIN totals
GROUP BY key, run_id"""


def _scored(index: int) -> str:
    searched = SEARCHED[index]
    return _BM25.format(totals=TOTALS, table=searched.table, matching=_matching(index))


def _bm25_parameters(words: Words, index: int) -> list[Any]:
    phrases = [words.tsquery(only) for only in range(len(words.phrases))]
    return [
        *words.lexemes(),
        phrases,
        SEARCHED[index].table,
        words.tsquery(),
        LEAST_IDF,
        K1 + 1.0,
        K1,
        1 - B,
        B,
    ]


def _all_matches(query: Query, words: Words, rank: bool) -> list[str]:
    """Every matching run: ranked by bm25 then id, or by group then id."""
    parts: list[str] = []
    parameters: list[Any] = []
    for index in range(len(SEARCHED)):
        if rank:
            parts.append(f"SELECT run_id, score FROM ({_scored(index)}) AS scored_{index}")
            parameters += _bm25_parameters(words, index)
        else:
            parts.append(f"SELECT run_id, {index} AS score FROM ({_matching(index)}) AS m_{index}")
            parameters.append(words.tsquery())
    rows = query(
        f"SELECT run_id FROM ({' UNION ALL '.join(parts)}) AS found GROUP BY run_id"
        " ORDER BY min(score), run_id",
        parameters,
    )
    return [str(row[0]) for row in rows]


def ranked(query: Query, text: str) -> list[str]:
    """The ids of the runs matching `text`, the most relevant first (search.ranked's
    answer on a SQLite file holding the same runs)."""
    words = words_of(text)
    if words is None:
        return []
    counts = _counts(query, words.tsquery())
    if not sum(counts):
        return []
    return _all_matches(query, words, sum(counts) <= RANK_LIMIT)


# The first runs by id of one group's matches.
_PAGE = "SELECT id FROM runs WHERE EXISTS ({matches}) ORDER BY id LIMIT ?"
_MATCHES_OF_RUN = (
    "SELECT 1 FROM runs AS row WHERE row.id = runs.id AND row.search @@ ?::tsquery",
    "SELECT 1 FROM agents AS row WHERE row.run_id = runs.id AND row.search @@ ?::tsquery",
    "SELECT 1 FROM agents JOIN trajectory_questions AS row ON row.trajectory_id = agents.id"
    " WHERE agents.run_id = runs.id AND row.search @@ ?::tsquery",
)


def first_matches(query: Query, text: str, limit: int = PAGE) -> tuple[list[str], bool]:
    """The first `limit` runs of `ranked`'s answer, or all of it, and whether it is all
    of it (search.first_matches): few matching rows are ranked whole; more have their
    first runs taken by id, group by group, without listing the others."""
    words = words_of(text)
    if words is None:
        return [], True
    tsquery = words.tsquery()
    counts = _counts(query, tsquery)
    if not sum(counts):
        return [], True
    if sum(counts) <= RANK_LIMIT:
        return _all_matches(query, words, True), True
    found: list[str] = []
    for index in range(len(SEARCHED)):
        if index < len(counts) - 1 and not counts[index]:
            continue  # counted whole: none there
        seen = set(found)
        sql = _PAGE.format(matches=_MATCHES_OF_RUN[index])
        for (run_id,) in query(sql, [tsquery, limit]):
            if run_id not in seen:
                found.append(str(run_id))
                if len(found) == limit:
                    return found, False
    return found, True
