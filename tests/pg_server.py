"""A throwaway PostgreSQL server for the tests of the team store, and for CI.

`start()` makes a cluster in a new temporary folder (initdb), starts it on a free port
of 127.0.0.1 and a socket in that folder, and gives its superuser's URL; `stop()` stops
it and removes the folder. A cluster whose owning process is gone (a test session
killed before its end) is stopped by the next `start()`. Nothing of the machine's own
PostgreSQL (its clusters, its service) is used or touched: only the server binaries,
found on PATH or in Debian's /usr/lib/postgresql/VERSION/bin. initdb refuses to run as
root, so as root (CI) the cluster belongs to the `postgres` user and its programs run as
that user (runuser).

Host connections need the superuser's password (scram-sha-256), so a wrong password is
refused as on a real server; the folder's socket trusts its local users.

    python tests/pg_server.py start   # prints the folder and the URL, server running
    python tests/pg_server.py stop FOLDER
"""

from __future__ import annotations

import glob
import os
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

SUPERUSER = "postgres"
# Set by .ci/run (the server it started) or by hand: the tests use that server instead
# of starting their own. A superuser's URL: the tests make and drop databases on it.
URL_ENV = "PPP_TUI_TEST_PG_URL"


def bindir() -> Path | None:
    """The folder of initdb and pg_ctl, the newest Debian version first; None if none."""
    candidates = sorted(
        glob.glob("/usr/lib/postgresql/*/bin"),
        key=lambda path: int(Path(path).parent.name) if Path(path).parent.name.isdigit() else 0,
        reverse=True,
    )
    for folder in candidates:
        if (Path(folder) / "initdb").exists() and (Path(folder) / "pg_ctl").exists():
            return Path(folder)
    found = shutil.which("initdb")
    if found and shutil.which("pg_ctl"):
        return Path(found).resolve().parent
    return None


@dataclass(frozen=True)
class Cluster:
    folder: Path
    port: int
    password: str

    @property
    def url(self) -> str:
        """The superuser's URL over TCP, password included."""
        return f"postgresql://{SUPERUSER}:{self.password}@127.0.0.1:{self.port}/postgres"


def _as_owner(args: list[str]) -> list[str]:
    """`args` run as the cluster's owner: the `postgres` user when we are root."""
    if os.geteuid() == 0:
        return ["runuser", "-u", "postgres", "--", *args]
    return args


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def stop_orphans(base: str) -> None:
    """Stop the clusters under `base` whose owner is gone: a test session killed before
    its end (a timeout, SIGKILL) leaves its server running, and the next start ends it."""
    for folder in Path(base).glob("ppp-tui-pg-*"):
        try:
            owner = int((folder / "owner").read_text())
        except (OSError, ValueError):
            continue
        if not _alive(owner):
            stop(folder)


def start(owner: int | None = None) -> Cluster:
    """A new cluster, running; `stop` it when done. `owner` is the process whose end
    makes it an orphan (by default this one)."""
    binaries = bindir()
    if binaries is None:
        raise RuntimeError("no PostgreSQL server binaries (initdb, pg_ctl) found")
    # As root the server runs as `postgres`, which must reach the folder: /tmp, not a
    # private temporary folder of root's (TMPDIR may name one).
    place = "/tmp" if os.geteuid() == 0 else None
    stop_orphans(place or tempfile.gettempdir())
    folder = Path(tempfile.mkdtemp(prefix="ppp-tui-pg-", dir=place))
    (folder / "owner").write_text(str(os.getpid() if owner is None else owner))
    password = secrets.token_hex(12)
    (folder / "pw").write_text(password + "\n")
    if os.geteuid() == 0:
        shutil.chown(folder, "postgres", "postgres")
        shutil.chown(folder / "pw", "postgres", "postgres")
    data = folder / "data"
    quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.PIPE, "check": True}
    subprocess.run(
        _as_owner(
            [
                str(binaries / "initdb"),
                "-D",
                str(data),
                "-U",
                SUPERUSER,
                f"--pwfile={folder / 'pw'}",
                "--auth-local=trust",
                "--auth-host=scram-sha-256",
                "--encoding=UTF8",
                "--locale=C.UTF-8",
                "--no-sync",
            ]
        ),
        **quiet,  # type: ignore[call-overload]
    )
    port = _free_port()
    options = (
        f"-p {port} -k {folder} -c listen_addresses=127.0.0.1"
        " -c fsync=off -c synchronous_commit=off -c full_page_writes=off"
    )
    subprocess.run(
        _as_owner(
            [
                str(binaries / "pg_ctl"),
                "-D",
                str(data),
                "-o",
                options,
                "-l",
                str(folder / "log"),
                "-w",
                "start",
            ]
        ),
        **quiet,  # type: ignore[call-overload]
    )
    return Cluster(folder, port, password)


@contextmanager
def new_database(url: str, prefix: str) -> Iterator[str]:
    """The URL of a new, empty database on the server of `url` (a superuser's),
    dropped at the end, connections and all."""
    import psycopg

    name = f"{prefix}_{secrets.token_hex(6)}"
    with psycopg.connect(url, autocommit=True) as admin:
        admin.execute(f"CREATE DATABASE {name}")
    try:
        yield f"{url.rsplit('/', 1)[0]}/{name}"
    finally:
        with psycopg.connect(url, autocommit=True) as admin:
            admin.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


def stop(folder: Path) -> None:
    """Stop the cluster in `folder` (if running) and remove the folder."""
    binaries = bindir()
    if binaries is not None and (folder / "data" / "postmaster.pid").exists():
        subprocess.run(
            _as_owner([str(binaries / "pg_ctl"), "-D", str(folder / "data"), "-m", "fast", "stop"]),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            check=False,
        )
    shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    if sys.argv[1:] == ["start"]:
        cluster = start(owner=os.getppid())  # the shell that stops it (.ci/run)
        print(cluster.folder)
        print(cluster.url)
    elif len(sys.argv) == 3 and sys.argv[1] == "stop":
        stop(Path(sys.argv[2]))
    else:
        sys.exit("usage: pg_server.py start | stop FOLDER")
