"""Where a database is: a SQLite file's path, or a PostgreSQL server's URL.

`--db` and `$PPP_TUI_DB` take either. A value that looks like a URL (a scheme and
`://`) is never a file path: `postgresql://...` and `postgres://...` name a team store on
a PostgreSQL server (libpq's URL form: user, password, hosts and ports, database, and
parameters such as `sslmode` after `?`); any other scheme is refused. What a message
says of a server URL comes from `ServerURL`, which names the host, the port and the
database and never the password. No I/O here.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from urllib.parse import parse_qsl, unquote

from .database import StoreError

POSTGRES_SCHEMES = ("postgresql", "postgres")
DEFAULT_PORT = "5432"

# scheme:// at the start: a URL, whatever follows.
_URL = re.compile(r"^(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*)://")


def looks_like_url(value: str) -> bool:
    """Whether `value` is a URL (`scheme://...`) rather than a file path."""
    return _URL.match(value) is not None


def is_server_url(value: str) -> bool:
    """Whether `value` is a postgresql:// (or postgres://) URL."""
    found = _URL.match(value)
    return found is not None and found.group("scheme").lower() in POSTGRES_SCHEMES


@dataclass(frozen=True)
class ServerURL:
    """A PostgreSQL server's database, as a URL names it.

    `url` is the URL as given (password included: it is what connecting takes; never
    show it); `host`, `port` and `database` are what messages name, with libpq's
    defaults where the URL leaves one out ($PGHOST, $PGPORT, $PGDATABASE, else the
    local socket, 5432 and the user's name).
    """

    url: str
    user: str
    host: str
    port: str
    database: str

    def __str__(self) -> str:
        """The server and database, for a message; never the password."""
        return f"PostgreSQL host {self.host}, port {self.port}, database {self.database}"


def parse_server_url(value: str) -> ServerURL:
    """`value`, a postgresql:// or postgres:// URL, as a ServerURL; anything else that
    looks like a URL is a StoreError."""
    found = _URL.match(value)
    if found is None or not is_server_url(value):
        scheme = found.group("scheme") if found else value
        raise StoreError(
            f"{scheme}://: not a kind of database ppp-tui can use (a SQLite file's path,"
            " or a postgresql:// URL)"
        )
    rest = value[found.end() :]
    rest, _, query = rest.partition("?")
    netloc, _, path = rest.partition("/")
    userinfo, at, hosts = netloc.rpartition("@")
    if not at:
        userinfo, hosts = "", netloc
    params = {key: item for key, item in parse_qsl(query, keep_blank_values=True)}
    user = params.get("user") or unquote(userinfo.partition(":")[0])
    user = user or os.environ.get("PGUSER", "") or _login()
    first = hosts.split(",")[0]
    host, port = _host_port(unquote(first))
    host = params.get("host", "").split(",")[0] or host or os.environ.get("PGHOST", "")
    port = params.get("port", "").split(",")[0] or port or os.environ.get("PGPORT", "")
    database = params.get("dbname") or unquote(path) or os.environ.get("PGDATABASE", "")
    server = ServerURL(
        url=value,
        user=user,
        host=host or "localhost",
        port=port or DEFAULT_PORT,
        database=database or user,
    )
    if not _usable_port(server.port):
        raise StoreError(f"{server}: the port must be a number from 1 to 65535")
    return server


def _usable_port(port: str) -> bool:
    """Whether libpq can use `port`: a TCP port's number (libpq also tries it as the
    number of a local socket's file)."""
    return port.isascii() and port.isdigit() and 1 <= int(port) <= 65535


def _host_port(text: str) -> tuple[str, str]:
    """A URL's `host`, `host:port`, `[v6]` or `[v6]:port`, as (host, port)."""
    if text.startswith("["):
        host, _, after = text[1:].partition("]")
        return host, after.removeprefix(":")
    host, _, port = text.partition(":")
    return host, port


def _login() -> str:
    import getpass

    try:
        return getpass.getuser()
    except (KeyError, OSError):  # no login name (a container's unnamed user)
        return ""


def refuse_server(value: str, what: str) -> StoreError:
    """The error for a PostgreSQL URL given to a command that works on SQLite files
    only so far: `what` names where it was given (--db, an import's source)."""
    server = parse_server_url(value)
    return StoreError(
        f"{server} ({what}): this command does not work on a PostgreSQL team store"
        " yet; use a SQLite database file"
    )
