"""The store's SQL, written for SQLite, as PostgreSQL reads it; and a connection that
takes it as sqlite3's does.

The reads and writes of the store are one set of statements for both engines. Most of
their SQL is common to the two; what differs is rewritten here, outside string literals
and quoted names, by fixed rules:

- `?` parameters become psycopg's `%s` (and a literal `%` is doubled);
- `ifnull(` becomes `coalesce(`; `x IS ?` (SQLite's NULL-safe comparison) becomes
  `x IS NOT DISTINCT FROM %s`;
- `json_each(?)` over a JSON list of text becomes `json_array_elements_text`;
- `json_valid(x)` and `json_extract(x, '$[#-1][0]')` (the kind of a turn's last step)
  become functions of the schema's (postgres_schema.py);
- `INSERT OR IGNORE` becomes `ON CONFLICT DO NOTHING`, and `INSERT OR REPLACE` an
  upsert on the table's primary key (tables.py).

Values come back as sqlite3 gives them: a boolean as 0 or 1, a `numeric` (what sum()
of integers is) as an int when whole, else a float.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from .tables import TABLES

if TYPE_CHECKING:
    import psycopg

_KEY = {table.name: table.key for table in TABLES}

# Pieces of a statement: a string literal, a quoted name, or a run of anything else.
_PIECES = re.compile(r"'(?:[^']|'')*'|\"(?:[^\"]|\"\")*\"|[^'\"]+|['\"]")
_LAST_KIND = re.compile(r"\bjson_extract\(([\w.]+), '\$\[#-1\]\[0\]'\)", re.IGNORECASE)
_INSERT_OR = re.compile(
    r"^\s*INSERT\s+OR\s+(IGNORE|REPLACE)\s+INTO\s+(\w+)\s*\(([^)]*)\)", re.IGNORECASE
)


@lru_cache(maxsize=512)
def translate(sql: str) -> str:
    """`sql` (SQLite's) as PostgreSQL reads it, with psycopg's `%s` parameters."""
    insert = _INSERT_OR.match(sql)
    conflict = ""
    if insert is not None:
        how, table, columns = insert.group(1).upper(), insert.group(2), insert.group(3)
        sql = f"INSERT INTO {table} ({columns}){sql[insert.end() :]}"
        if how == "IGNORE":
            conflict = " ON CONFLICT DO NOTHING"
        else:
            key = _KEY[table]
            names = [name.strip() for name in columns.split(",")]
            rest = [name for name in names if name not in key]
            updates = ", ".join(f"{name} = excluded.{name}" for name in rest)
            action = f"DO UPDATE SET {updates}" if rest else "DO NOTHING"
            conflict = f" ON CONFLICT ({', '.join(key)}) {action}"
    sql = _LAST_KIND.sub(r"ppp_last_step_kind(\1)", sql)
    out = []
    for piece in _PIECES.findall(sql):
        if piece[0] in "'\"" and len(piece) > 1:
            out.append(piece.replace("%", "%%"))
            continue
        piece = piece.replace("%", "%%")
        piece = re.sub(r"\bifnull\(", "coalesce(", piece, flags=re.IGNORECASE)
        piece = re.sub(r"\bjson_valid\(", "ppp_json_valid(", piece, flags=re.IGNORECASE)
        piece = re.sub(
            r"\bjson_each\(\?\)",
            "json_array_elements_text(?::json) AS json_each(value)",
            piece,
            flags=re.IGNORECASE,
        )
        piece = re.sub(r"\bIS\s+NOT\s+\?", "IS DISTINCT FROM ?", piece, flags=re.IGNORECASE)
        piece = re.sub(r"\bIS\s+\?", "IS NOT DISTINCT FROM ?", piece, flags=re.IGNORECASE)
        out.append(piece.replace("?", "%s"))
    return "".join(out).rstrip().rstrip(";") + conflict


class Connection:
    """A psycopg connection that takes the store's SQL as sqlite3's connection does:
    `execute` and `executemany` with `?` parameters, returning a cursor to fetch from."""

    def __init__(self, conn: psycopg.Connection[Any]) -> None:
        self.raw = conn
        _load_as_sqlite(conn)

    def execute(self, sql: str, params: Iterable[Any] = ()) -> psycopg.Cursor[Any]:
        return self.raw.execute(translate(sql), tuple(params))

    def executemany(self, sql: str, rows: Iterable[Iterable[Any]]) -> None:
        with self.raw.cursor() as cursor:
            cursor.executemany(translate(sql), [tuple(row) for row in rows])

    def rows(self, sql: str, params: Iterable[Any] = ()) -> Iterator[Any]:
        yield from self.execute(sql, params)

    @property
    def in_transaction(self) -> bool:
        from psycopg.pq import TransactionStatus

        return self.raw.info.transaction_status != TransactionStatus.IDLE

    def close(self) -> None:
        self.raw.close()


def _load_as_sqlite(conn: psycopg.Connection[Any]) -> None:
    """Booleans as 0 and 1, and numeric values as int or float, as sqlite3 gives them."""
    from psycopg.adapt import Loader

    class _Bool(Loader):
        def load(self, data: Any) -> int:
            return 1 if bytes(data) == b"t" else 0

    class _Numeric(Loader):
        def load(self, data: Any) -> int | float:
            text = bytes(data).decode()
            whole = text.lstrip("-").isdigit()  # sum() of integers; avg() has a point
            return int(text) if whole else float(text)

    conn.adapters.register_loader("bool", _Bool)
    conn.adapters.register_loader("numeric", _Numeric)
