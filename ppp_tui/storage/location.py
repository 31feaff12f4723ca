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
from dataclasses import dataclass, field
from urllib.parse import parse_qsl, unquote

from .database import StoreError

POSTGRES_SCHEMES = ("postgresql", "postgres")
DEFAULT_PORT = "5432"
LONGEST_SHOWN = 60  # characters of a host, port or database a message shows

# scheme:// at the start: a URL, whatever follows.
_URL = re.compile(r"^(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*)://")
_USER_END = re.compile(r"[@/]")


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
    # The password as written in the URL (raw and decoded, and a `password=`
    # parameter's): hidden from what libpq's messages quote of a URL it cannot read.
    passwords: tuple[str, ...] = field(default=(), repr=False)

    @property
    def shown_user(self) -> str:
        """The user, as a message names it."""
        return _shown(self.user)

    def __str__(self) -> str:
        """The server and database, for a message; never the password."""
        host, port, database = (_shown(part) for part in (self.host, self.port, self.database))
        return f"PostgreSQL host {host}, port {port}, database {database}"


def _shown(part: str) -> str:
    """A host, port or database as a message names it: a long one cut short, so that the
    message stays a line."""
    if len(part) <= LONGEST_SHOWN:
        return part
    return f"{part[: LONGEST_SHOWN - 20]}… ({len(part):,} characters)"


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
    # The user's part ends at the first `@`, unless a `/` comes first, as libpq reads
    # it: so no part of a password is ever taken for a host, a port or a database.
    stop = _USER_END.search(rest)
    userinfo = ""
    if stop is not None and stop.group() == "@":
        userinfo, rest = rest[: stop.start()], rest[stop.end() :]
    if "@" in rest.partition("?")[0]:
        raise StoreError(
            "a postgresql:// URL with `/` or `@` in its user or password, or `@` in its"
            " database: write them as %2F and %40 (or keep the password in ~/.pgpass)"
        )
    rest, _, query = rest.partition("?")
    hosts, _, path = rest.partition("/")
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
        passwords=_passwords(userinfo.partition(":")[2], params.get("password", "")),
    )
    if not _usable_port(server.port):
        raise StoreError(f"{server}: the port must be a number from 1 to 65535")
    return server


def _passwords(written: str, given: str) -> tuple[str, ...]:
    try:
        decoded = unquote(written, errors="strict")
    except UnicodeDecodeError:
        decoded = written
    return tuple(sorted({value for value in (written, decoded, given) if value}))


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
