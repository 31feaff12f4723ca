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

import math
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
    """The rows of group `index` that match the tsquery `?`: (its run id, its tsvector,
    its number of words)."""
    searched = SEARCHED[index]
    return (
        f"SELECT {searched.run} AS run_id, row.search, row.search_words"
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


# How many rows of a table hold a phrase (bm25's inverse document frequency): keyed by
# (table, its rows and words then, the phrase's tsquery), so that a word counted for one
# key is not counted again at the next while the table is unchanged.
Hits = dict[tuple[str, int, int, str], int]
_HITS_KEPT = 1_000


def _statistics(
    query: Query, words: Words, counts: list[int], hits: Hits
) -> list[tuple[list[float], float]]:
    """For each group: (each phrase's idf, the average number of words of a row), as
    FTS5 computes them from the rows of its index."""
    totals = {str(r[0]): (int(r[1]), int(r[2])) for r in query(f"SELECT * FROM {TOTALS}")}
    if len(hits) > _HITS_KEPT:
        hits.clear()
    found = []
    for index, searched in enumerate(SEARCHED):
        rows, total = totals.get(searched.table, (0, 0))
        idfs = []
        for phrase in range(len(words.phrases)):
            tsquery = words.tsquery(phrase)
            key = (searched.table, rows, total, tsquery)
            if len(words.phrases) == 1:
                hits[key] = counts[index]  # every count was exact: there are few
            elif key not in hits:
                hits[key] = _count(query, index, tsquery, rows + 1)
            idf = math.log((rows - hits[key] + 0.5) / (hits[key] + 0.5))
            idfs.append(LEAST_IDF if idf <= 0.0 else idf)
        found.append((idfs, total / rows if rows else 1.0))
    return found


def _scored(index: int, words: Words, idfs: list[float], average: float) -> tuple[str, list[Any]]:
    """One group's matching rows, each with its run id and bm25 score as FTS5's bm25()
    gives it: one pass over each row's tsvector counts every word's occurrences (OFFSET
    0 keeps it one: pulled up, it would be made again for each use), and a phrase's
    frequency is its rarest word's."""
    counted: list[str] = []
    parameters: list[Any] = []
    places: list[list[int]] = []
    for phrase, phrase_words in enumerate(words.phrases):
        places.append([])
        for at, word in enumerate(phrase_words):
            last = phrase == len(words.phrases) - 1 and at == len(phrase_words) - 1
            test = "starts_with(lexeme, ?)" if words.prefix and last else "lexeme = ?"
            counted.append(f"coalesce(sum(cardinality(positions)) FILTER (WHERE {test}), 0)")
            parameters.append(word)
            places[-1].append(len(counted))
    terms = []
    for phrase, idf in enumerate(idfs):
        f = "least(" + ", ".join(f"tf[{n}]" for n in places[phrase]) + ")::float8"
        terms.append(f"? * (({f} * ?) / ({f} + ? * (? + ? * words / ?)))")
        parameters += [idf, K1 + 1.0, K1, 1 - B, B, average]
    sql = (
        f"SELECT run_id, -({' + '.join(terms)}) AS score FROM (SELECT m.run_id,"
        f" m.search_words AS words, (SELECT ARRAY[{', '.join(counted)}]"
        f" FROM unnest(m.search)) AS tf FROM ({_matching(index)}) AS m OFFSET 0) AS each_row"
    )
    # In the order of their `?`s: the terms', the words', the tsquery.
    return sql, [*parameters[len(counted) :], *parameters[: len(counted)], words.tsquery()]


def _all_matches(
    query: Query, words: Words, counts: list[int], hits: Hits | None = None
) -> list[str]:
    """Every matching run: ranked by bm25 then id when `counts` (each group's matching
    rows) are few enough to rank, else by group then id."""
    parts: list[str] = []
    parameters: list[Any] = []
    rank = sum(counts) <= RANK_LIMIT
    statistics = _statistics(query, words, counts, {} if hits is None else hits) if rank else []
    for index in range(len(SEARCHED)):
        if rank:
            sql, given = _scored(index, words, *statistics[index])
            parts.append(f"SELECT run_id, score FROM ({sql}) AS scored_{index}")
            parameters += given
        else:
            parts.append(f"SELECT run_id, {index} AS score FROM ({_matching(index)}) AS m_{index}")
            parameters.append(words.tsquery())
    rows = query(
        f"SELECT run_id FROM ({' UNION ALL '.join(parts)}) AS found GROUP BY run_id"
        " ORDER BY min(score), run_id",
        parameters,
    )
    return [str(row[0]) for row in rows]


def ranked(query: Query, text: str, hits: Hits | None = None) -> list[str]:
    """The ids of the runs matching `text`, the most relevant first (search.ranked's
    answer on a SQLite file holding the same runs)."""
    words = words_of(text)
    if words is None:
        return []
    counts = _counts(query, words.tsquery())
    if not sum(counts):
        return []
    return _all_matches(query, words, counts, hits)


def _page(index: int) -> str:
    """The first `?` runs by id among those a row of group `index` matching the tsquery
    `?` leads to (the planner walks the runs by id or the matching rows, as they are
    many or few)."""
    searched = SEARCHED[index]
    return (
        f"SELECT id FROM runs WHERE EXISTS (SELECT 1 FROM {searched.table} AS row"
        f"{searched.joins} WHERE {searched.run} = runs.id AND row.search @@ ?::tsquery)"
        " ORDER BY id LIMIT ?"
    )


def first_matches(
    query: Query, text: str, limit: int = PAGE, hits: Hits | None = None
) -> tuple[list[str], bool]:
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
        return _all_matches(query, words, counts, hits), True
    found: list[str] = []
    for index in range(len(SEARCHED)):
        if index < len(counts) - 1 and not counts[index]:
            continue  # counted whole: none there
        seen = set(found)
        for (run_id,) in query(_page(index), [tsquery, limit]):
            if run_id not in seen:
                found.append(str(run_id))
                if len(found) == limit:
                    return found, False
    return found, True
