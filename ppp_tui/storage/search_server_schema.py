"""A team store's full-text index: what postgres_schema.py adds to each table a search
reads (tables.SEARCHED) so that PostgreSQL finds what a SQLite file's FTS5 index finds.

Each such row carries `search`, a tsvector of its text, and `search_words`, how many words
that text has; a GIN index over `search` finds the rows holding a word. A row trigger
fills both as the row is written (an import's COPY included), from one pass over the text:
the characters SQLite's tokenizer treats as separators become spaces and each word is
folded as it folds them (search_words.py), then PostgreSQL's 'simple' configuration (no
stemming, no stop words) makes the tsvector. Only a text's first `INDEXED_CHARACTERS`
are indexed: a tsvector holds at most 1 MB, and this many characters never make more.

`search_totals` holds each table's number of rows and of words, kept by statement
triggers (one statement per COPY batch), for bm25's average length (search_server.py).
A store made before the index gets its columns filled as it is brought forward, in the
same transaction, with the triggers that drop a run's pack held off (the agents do not
change).
"""

from __future__ import annotations

from . import search_words
from .tables import PACKS, SEARCHED

TOTALS = "search_totals"
INDEXED_CHARACTERS = 250_000

# The text of a row as one string: its columns' values, a space between.
_TEXT = {
    searched.table: "concat_ws(' ', " + ", ".join(f"NEW.{c}" for c in searched.columns) + ")"
    for searched in SEARCHED
}


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _spaced_function() -> str:
    """ppp_search_spaced(text): the text's words, one space between each (its
    separators made spaces). One SQL expression, so the trigger's call is inlined."""
    separators = _literal(f"[{search_words.separator_class()}]+")
    return f"""CREATE OR REPLACE FUNCTION ppp_search_spaced(value text) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT btrim(regexp_replace(left(coalesce(value, ''), {INDEXED_CHARACTERS}),
        {separators}, ' ', 'g'))
$$"""


# A lexeme as tsvector's text reads it: quoted, its quotes doubled, backslashes escaped.
_QUOTED = r"'''' || replace(replace(folded, '\', '\\'), '''', '''''') || ''''"


def _fold_function() -> str:
    """ppp_search_fold(tsvector): its words with their letters beyond ASCII folded (to_tsvector
    folded ASCII). Applied to the tsvector's words (few) rather than to the whole text:
    translate() with this many characters is slow on long strings."""
    folds_from, folds_to = search_words.fold_from_to()
    return f"""CREATE OR REPLACE FUNCTION ppp_search_fold(vector tsvector) RETURNS tsvector
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT coalesce(string_agg(
        {_QUOTED} || ':' || array_to_string(positions, ','), ' '), '')::tsvector
    FROM (SELECT translate(lexeme, {_literal(folds_from)}, {_literal(folds_to)}) AS folded,
        positions FROM unnest(vector)) AS each_word
    WHERE folded <> ''
$$"""


def _row_function() -> str:
    """ppp_search_row(): the trigger filling a row's `search` and `search_words`, in
    plain assignments (PL/pgSQL's quick path for simple expressions)."""
    texts = "\n    ELSIF ".join(
        f"TG_TABLE_NAME = '{table}' THEN value := {text};" for table, text in _TEXT.items()
    )
    return f"""CREATE OR REPLACE FUNCTION ppp_search_row() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE value text; spaced text;
BEGIN
    IF {texts}
    END IF;
    spaced := ppp_search_spaced(value);
    NEW.search_words := CASE WHEN spaced = '' THEN 0
        ELSE octet_length(spaced) - octet_length(replace(spaced, ' ', '')) + 1 END;
    NEW.search := to_tsvector('simple', spaced);
    IF octet_length(spaced) <> length(spaced) THEN  -- a letter beyond ASCII
        NEW.search := ppp_search_fold(NEW.search);
    END IF;
    RETURN NEW;
END $$"""


_TOTALS_FUNCTION = f"""CREATE OR REPLACE FUNCTION ppp_search_totals() RETURNS trigger
LANGUAGE plpgsql AS $$ BEGIN
    IF TG_OP <> 'DELETE' THEN
        UPDATE {TOTALS} SET rows = rows + added.n, words = words + added.w
        FROM (SELECT count(*) AS n, coalesce(sum(search_words), 0) AS w FROM new_rows) AS added
        WHERE name = TG_TABLE_NAME;
    END IF;
    IF TG_OP <> 'INSERT' THEN
        UPDATE {TOTALS} SET rows = rows - gone.n, words = words - gone.w
        FROM (SELECT count(*) AS n, coalesce(sum(search_words), 0) AS w FROM old_rows) AS gone
        WHERE name = TG_TABLE_NAME;
    END IF;
    RETURN NULL;
END $$"""


def statements() -> list[str]:
    """What makes the index, in order; each does nothing where it is already made (the
    rows' columns are filled where they are empty)."""
    from .postgres_schema import TRANSITIONS  # which imports this module

    made = [
        f"CREATE TABLE IF NOT EXISTS {TOTALS} (name text PRIMARY KEY,"
        " rows bigint NOT NULL, words bigint NOT NULL)",
        _spaced_function(),
        _fold_function(),
        _row_function(),
        _TOTALS_FUNCTION,
    ]
    for searched in SEARCHED:
        table = searched.table
        made += [
            f"ALTER TABLE {table} ADD COLUMN IF NOT EXISTS search tsvector",
            f"ALTER TABLE {table} ADD COLUMN IF NOT EXISTS search_words integer",
            f"CREATE OR REPLACE TRIGGER {table}_search_row"
            f" BEFORE INSERT OR UPDATE OF {', '.join(searched.columns)} ON {table}"
            " FOR EACH ROW EXECUTE FUNCTION ppp_search_row()",
            *_fill(table, searched.columns[-1]),
            f"INSERT INTO {TOTALS} (name, rows, words) SELECT '{table}', count(*),"
            f" coalesce(sum(search_words), 0) FROM {table} ON CONFLICT (name) DO NOTHING",
            *(
                f"CREATE OR REPLACE TRIGGER {table}_search_{event.lower()}"
                f" AFTER {event} ON {table} {transition}"
                " FOR EACH STATEMENT EXECUTE FUNCTION ppp_search_totals()"
                for event, transition in TRANSITIONS.items()
            ),
            f"CREATE INDEX IF NOT EXISTS {table}_search ON {table} USING gin (search)",
        ]
    return made


def _fill(table: str, column: str) -> list[str]:
    """Fill the columns of the rows written before the index (none in a new store) by
    the row trigger: `column` of each such row set to itself. The agents' update
    triggers would drop every run's pack, so they are held off meanwhile."""
    fill = f"UPDATE {table} SET {column} = {column} WHERE search IS NULL"
    if table != "agents":
        return [fill]
    return [
        f"ALTER TABLE agents DISABLE TRIGGER {PACKS}_agent_update",
        fill,
        f"ALTER TABLE agents ENABLE TRIGGER {PACKS}_agent_update",
    ]
