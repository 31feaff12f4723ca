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

from types import ModuleType
from typing import TYPE_CHECKING, Any

from ..core.masking import Secrets
from .database import DatabaseLocked, StoreError
from .location import ServerURL

if TYPE_CHECKING:
    import psycopg

CONNECT_TIMEOUT_S = 10  # unless the URL says (connect_timeout=...)


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
        raise StoreError(f"{server}: not a usable URL ({_first_line(error)})") from None
    extra: dict[str, Any] = {}
    if "connect_timeout" not in given:
        extra["connect_timeout"] = CONNECT_TIMEOUT_S
    try:
        conn: psycopg.Connection[Any] = pg.connect(server.url, autocommit=autocommit, **extra)
    except pg.Error as error:
        raise server_error(server, error) from None
    return conn


def server_error(server: ServerURL, error: BaseException) -> StoreError:
    """The one line for `error` from `server`: what went wrong, where, and never the
    password (libpq does not quote it; the URL's is masked in its text all the same)."""
    lowered = _first_line(error).lower()
    text = Secrets.of(_password(server)).mask(_first_line(error))  # what is shown of it
    state = getattr(error, "sqlstate", None)
    if "password authentication failed" in lowered or "no password supplied" in lowered:
        reason = "the server refused the user or password"
    elif "authentication failed" in lowered or state in ("28000", "28P01"):
        reason = "the server refused the login"
    elif ("does not exist" in lowered and "database" in lowered) or state == "3D000":
        reason = "no such database on the server; create it first (createdb, or CREATE DATABASE)"
    elif "role" in lowered and "does not exist" in lowered:
        reason = "no such user on the server"
    elif "resolve host" in lowered or "translate host name" in lowered:
        reason = "unknown host"
    elif "connection refused" in lowered or "no such file or directory" in lowered:
        reason = "cannot reach the server (connection refused)"
    elif "timeout" in lowered and "connect" in lowered:
        reason = "cannot reach the server (no answer in time)"
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
    return " ".join(text.removeprefix("connection failed: ").split())


def _password(server: ServerURL) -> str | None:
    from psycopg.conninfo import conninfo_to_dict

    try:
        value = conninfo_to_dict(server.url).get("password")
    except Exception:
        return None
    return None if value is None else str(value)
