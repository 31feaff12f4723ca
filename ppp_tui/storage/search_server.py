"""Searching a team store's runs as the user types: a plain substring search.

A SQLite file searches its full-text index (search.py); a PostgreSQL team store has no
such index yet, and looks for the words in the same text instead: the run's id, spec
id and task, each agent's output, each question. A run matches when one of these holds
every word of the query (in any case, anywhere in a word, not only at its start), as
a row of the index must. The runs come in the order the SQLite file gives when too many
match to rank: those whose id, spec or task matches first, then those matched by an
output, then by a question; by id within each. Each search reads the text of every run,
so on a large store it takes longer than on a SQLite file.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

# The rows a run is matched by, with how early they put it (the SQLite index's groups).
_MATCHES = (
    "SELECT run_id FROM ("
    " SELECT id AS run_id, 0 AS place FROM runs"
    "  WHERE (id || ' ' || ifnull(spec_id, '') || ' ' || ifnull(task, ''))"
    '  COLLATE "default" ILIKE ALL (?)'
    ' UNION ALL SELECT run_id, 1 FROM agents WHERE output COLLATE "default" ILIKE ALL (?)'
    " UNION ALL SELECT agents.run_id, 2 FROM trajectory_questions AS q"
    "  JOIN agents ON agents.id = q.trajectory_id"
    '  WHERE q.text COLLATE "default" ILIKE ALL (?)'
    ") AS found GROUP BY run_id ORDER BY min(place), run_id"
)


def patterns(text: str) -> list[str]:
    """An ILIKE pattern for each word of `text`: the word anywhere, its `%`, `_` and
    backslash only text."""
    words = text.replace("\x00", " ").split()
    escaped = (w.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") for w in words)
    return [f"%{word}%" for word in escaped]


def matches(query: Callable[..., list[Any]], text: str) -> list[str]:
    """The ids of the runs matching every word of `text`, in the order above."""
    found = patterns(text)
    if not found:
        return []
    return [str(row[0]) for row in query(_MATCHES, [found, found, found])]
