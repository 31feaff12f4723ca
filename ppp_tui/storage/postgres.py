"""A PostgreSQL server's connection: psycopg, connecting, and the one-line errors a
failure becomes.

psycopg 3 is the `postgres` extra (`pip install 'ppp-tui[postgres]'`): a SQLite user
downloads nothing more, and a platform without its binary wheel still installs ppp-tui.
It is imported when a server is first used, never by a command on a SQLite file. libpq
reads what the URL leaves out as it always does: $PGPASSWORD, ~/.pgpass, $PGSSLMODE and
the other PG variables, and the URL's own parameters (`?sslmode=require`).

Every failure is one line naming the host, the port and the database (location.py),
never the password: a server that cannot be reached, a wrong user or password, a
database that does not exist, a server that goes away while a command runs.
"""

from __future__ import annotations

import re
from types import ModuleType
from typing import TYPE_CHECKING, Any

from ..core.masking import Secrets
from .database import DatabaseLocked, StoreError
from .location import ServerURL

if TYPE_CHECKING:
    import psycopg

CONNECT_TIMEOUT_S = 10  # unless the URL says (connect_timeout=...)

# Where libpq says it tried, before its reason: the message names the server already.
_WHERE = re.compile(
    r'^connection to server (at|on socket) "[^"]*"(, port \d+)? failed: (FATAL: +)?'
)


def psycopg_module() -> ModuleType:
    """psycopg, or the StoreError saying how to install it."""
    try:
        import psycopg
    except ImportError:
        raise StoreError(
            "a PostgreSQL team store needs psycopg: pip install 'ppp-tui[postgres]'"
        ) from None
    return psycopg


def connect(server: ServerURL, autocommit: bool = False) -> psycopg.Connection[Any]:
    """A connection to `server`'s database; every failure is a StoreError."""
    pg = psycopg_module()
    from psycopg.conninfo import conninfo_to_dict

    try:
        given = conninfo_to_dict(server.url)
    except pg.ProgrammingError as error:  # a URL libpq cannot parse
        raise StoreError(
            f"{server}: not a usable URL ({_masked(server, _first_line(error))})"
        ) from None
    extra: dict[str, Any] = {}
    if "connect_timeout" not in given:
        extra["connect_timeout"] = CONNECT_TIMEOUT_S
    try:
        conn: psycopg.Connection[Any] = pg.connect(server.url, autocommit=autocommit, **extra)
    except pg.Error as error:
        raise server_error(server, error) from None
    except UnicodeError:  # a host name the resolver cannot encode (a label over 63 bytes)
        raise StoreError(f"{server}: unknown host (not a usable host name)") from None
    return conn


def server_error(server: ServerURL, error: BaseException) -> StoreError:
    """The one line for `error` from `server`: what went wrong, where, and never the
    password (libpq does not quote it; the URL's is masked in its text all the same)."""
    lowered = _first_line(error).lower()
    text = _masked(server, _first_line(error))  # what is shown of it
    state = getattr(error, "sqlstate", None)
    if "no password supplied" in lowered:
        reason = (
            f"the server asks user {server.shown_user} for a password and none was given"
            " (put it in ~/.pgpass, mode 600, or $PGPASSWORD)"
        )
    elif "password authentication failed" in lowered:
        reason = "the server refused the user or password"
    elif "authentication failed" in lowered or state in ("28000", "28P01"):
        reason = f"the server refused the login ({text})"
    elif ("does not exist" in lowered and "database" in lowered) or state == "3D000":
        reason = "no such database on the server; create it first (createdb, or CREATE DATABASE)"
    elif "role" in lowered and "does not exist" in lowered:
        reason = f"no such user on the server ({server.shown_user})"
    elif "resolve host" in lowered or "translate host name" in lowered:
        reason = "unknown host"
    elif "connection refused" in lowered or "no such file or directory" in lowered:
        reason = "cannot reach the server (connection refused)"
    elif "timeout" in lowered and "connect" in lowered:
        reason = "cannot reach the server (no answer in time)"
    elif state == "42501":  # insufficient_privilege
        reason = (
            f"user {server.shown_user} may not do this here ({text}); the database's owner"
            " can grant it (GRANT)"
        )
    elif state is None and "ssl" in lowered and "closed" not in lowered:
        reason = f"cannot connect ({text}); the URL's sslmode says whether to ask for SSL"
    elif state in ("55P03", "57014"):  # lock_not_available, query_canceled (a lock wait)
        return DatabaseLocked(f"{server}: the database is locked by another process; try again")
    elif (state is not None and state[:2] in ("08", "57")) or _is_lost(error):
        reason = f"the connection to the server was lost ({text}); nothing more was written"
    else:
        reason = f"database error: {text}"
    return StoreError(f"{server}: {reason}")


def _is_lost(error: BaseException) -> bool:
    text = str(error).lower()
    return any(
        phrase in text
        for phrase in ("server closed the connection", "connection is lost", "consuming input")
    )


def _first_line(error: BaseException) -> str:
    text = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
    text = _WHERE.sub("", text.removeprefix("connection failed: "))
    return " ".join(text.split())


def _masked(server: ServerURL, text: str) -> str:
    """`text` without the password, as libpq reads it from the URL or as it is written."""
    return Secrets.of(_password(server), *server.passwords).mask(text)


def _password(server: ServerURL) -> str | None:
    from psycopg.conninfo import conninfo_to_dict

    try:
        value = conninfo_to_dict(server.url).get("password")
    except Exception:
        return None
    return None if value is None else str(value)
