"""The terminal app's commands: `browse`, and `serve` for a web browser."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from ..safe_text import inline
from .common import Env, db_options, reviewer_options
from .demo_paths import cached_demo, demo_config

if TYPE_CHECKING:
    from ..storage.location import ServerURL

_DEMO_HELP = (
    "Open the demo database (kept in the user cache folder, or written to --db) with its"
    " own config.toml beside it, so tuning the demo leaves your config alone."
)
_REPLACE_HELP = "With --demo --db: replace a database that already holds runs."


@click.command()
@click.option("--demo", "use_demo", is_flag=True, help=_DEMO_HELP)
@click.option("--replace", is_flag=True, help=_REPLACE_HELP)
@click.option(
    "--watch",
    is_flag=True,
    help="Follow the sessions of Claude Code, Codex CLI and Gemini CLI while the app is open:"
    " new and grown sessions show as they are written.",
)
@reviewer_options(every=False)
@db_options(demo=False)
def browse(
    use_demo: bool,
    replace: bool,
    watch: bool,
    reviewer: str | None,
    db: str | None,
    config: str | None,
) -> None:
    """The terminal app: runs, agents side by side, live weights, marks.

    \b
    Example:
      ppp-tui browse --demo
      ppp-tui browse --db runs.db --config config.toml
      ppp-tui browse --db postgresql://ana@db.example.com/ppp
      ppp-tui browse --watch
    """
    import gc

    # The app's imports (textual's among them) make many objects and no garbage: no
    # collection runs while they load, and what they made, which lives as long as the
    # app, is kept out of the collections that run while the first screen is built
    # (together about 30 ms sooner to the first frame).
    gc.disable()
    from ..app.app import PPPApp

    gc.freeze()
    gc.enable()
    env = Env(db, config, reviewer)
    env.scope()  # whose marks the app shows (it can switch: w)
    server = _team_store(env, use_demo)
    if server is not None:
        PPPApp(server, env.config_path, _followed() if watch else []).run()
        return
    path, config_path = _app_paths(env, db, use_demo, replace)
    followed = _followed() if watch else []
    if watch:  # the database made if missing: the sessions go into it
        from ..storage.store import Store

        Store.open(path, create=True).close()
    PPPApp(path, config_path, followed).run()


def _team_store(env: Env, use_demo: bool) -> ServerURL | None:
    """The team store --db names (connected to once, so that a wrong URL or a server
    out of reach is one line before the app starts), or None for a SQLite file."""
    server = env.server()
    if server is None:
        return None
    if use_demo:
        raise click.UsageError(
            "--demo opens a SQLite file; put the demo into a team store with"
            " `ppp-tui demo --db URL`, then open it without --demo"
        )
    from ..storage.store_server import ServerStore

    ServerStore.connect(server).close()
    if env.config_given and not env.config_path.exists():
        click.echo(
            f"note: {env.config_path} does not exist yet: the defaults apply,"
            " and saving weights creates it",
            err=True,
        )
    return server


def _followed() -> list[str]:
    """The agents' session folders that exist (each said on standard error), for
    `--watch`."""
    from ..storage.sessions.discover import default_places

    found = []
    for tool, place in default_places().items():
        if place.is_dir():
            found.append(str(place))
            click.echo(f"{tool.value}: following {inline(place)}", err=True)
        else:
            click.echo(f"{tool.value}: nothing at {inline(place)}", err=True)
    return found


def _app_paths(env: Env, db: str | None, use_demo: bool, replace: bool) -> tuple[Path, Path]:
    """The database and config.toml the app opens.

    Without --demo, the resolved ones. With --demo, the demo database: the one in the
    user cache folder (generated when missing or made by an older generator, else
    reused with its marks), or a fresh one at --db (refused over a database holding
    runs unless `replace`); its config.toml sits beside it unless --config is given.
    """
    if replace and not use_demo:
        raise click.UsageError("--replace goes with --demo")
    if not use_demo:
        if env.config_given and not env.config_path.exists():
            click.echo(
                f"note: {env.config_path} does not exist yet: the defaults apply,"
                " and saving weights creates it",
                err=True,
            )
        return env.db_path, env.config_path
    from ..storage.demo import DEMO_SIZE, SESSION_RUNS, write_demo

    if db is None:
        path = cached_demo()
    else:
        path = env.db_path
        write_demo(path, DEMO_SIZE, 0, replace=replace, sessions=True)
        click.echo(
            f"demo database: {inline(path)} ({DEMO_SIZE} runs generated,"
            f" {SESSION_RUNS} read from agents' sessions)",
            err=True,
        )
    config_path = env.config_path if env.config_given else demo_config(path)
    click.echo(f"demo config: {inline(config_path)} (the demo's saved weights go here)", err=True)
    return path, config_path


@click.command()
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option(
    "--port", default=8000, show_default=True, type=click.IntRange(1, 65535), help="Port."
)
@click.option("--demo", "use_demo", is_flag=True, help=_DEMO_HELP)
@click.option("--replace", is_flag=True, help=_REPLACE_HELP)
@click.option(
    "--max-sessions",
    default=4,
    show_default=True,
    type=click.IntRange(1, 1000),
    help="Browser sessions (one app process each) open at once; more are refused.",
)
@click.option(
    "--token",
    envvar="PPP_TUI_SERVE_TOKEN",
    help="Secret the address must carry (?token=…); made up for you when --host is not"
    " a loopback address. Also read from $PPP_TUI_SERVE_TOKEN.",
)
@reviewer_options(every=False)
@db_options(demo=False)
def serve(
    host: str,
    port: int,
    use_demo: bool,
    replace: bool,
    max_sessions: int,
    token: str | None,
    reviewer: str | None,
    db: str | None,
    config: str | None,
) -> None:
    """The terminal app in a web browser (textual-serve); each visitor gets their own app.

    Only pages this server serves may open sessions (a page on another site is
    refused), at most --max-sessions at once. On an address other than loopback anyone
    on the network can reach it: a token is then required, and printed in the address.
    Every visitor's marks are the reviewer's this command runs as (--reviewer, or as
    `prefer` works it out); each can switch to their own name with `w`.

    \b
    Example:
      ppp-tui serve --demo
      ppp-tui serve --db runs.db --port 8080
      ppp-tui serve --host 0.0.0.0 --token "$(openssl rand -hex 16)"
    """
    import os
    import shlex
    import socket
    from urllib.parse import quote

    from ..serving import GuardedServer, is_loopback, new_token
    from ..storage.config import DB_ENV
    from ..storage.reviewers import shown

    env = Env(db, config, reviewer)
    who = env.scope().reviewer
    team = _team_store(env, use_demo)
    if team is not None:
        # The URL (and its password) reaches each session's process in its environment,
        # not on its command line, where any user of the machine could read it.
        os.environ[DB_ENV] = team.url
        path, config_path = Path(str(team)), env.config_path
    else:
        path, config_path = _app_paths(env, db, use_demo, replace)
    if team is None and not path.exists():
        raise click.ClickException(
            f"{path}: no database here; create one with `ppp-tui import FILE` or `ppp-tui demo`"
        )
    where = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    try:  # a clear line now rather than a server that fails to start
        found = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except (OSError, UnicodeError):  # a resolver code, not an errno ("Unknown error -2")
        raise click.ClickException(f"cannot listen on {where}: unknown host") from None
    try:
        for family, _, _, _, sockaddr in found:  # the server listens on each of them
            with socket.create_server((str(sockaddr[0]), port), family=family):
                pass
    except (OSError, ValueError) as error:
        errno = getattr(error, "errno", None)
        reason = os.strerror(errno) if errno else str(error)
        raise click.ClickException(f"cannot listen on {where}: {reason}") from None
    where_db = [] if team is not None else ["--db", str(path)]
    command = shlex.join(
        [
            sys.executable,
            "-m",
            "ppp_tui",
            "browse",
            *where_db,
            "--config",
            str(config_path),
            "--reviewer",
            shown(who),
        ]
    )
    loopback = is_loopback(host)
    if token == "":
        raise click.BadParameter("must not be empty", param_hint="--token")
    if not loopback:
        token = token or new_token()
        click.echo(
            f"WARNING: {inline(host)} is not a loopback address: anyone who can reach this"
            " machine on the network can open the app (read the runs, write marks) with the"
            " token below. Traffic is not encrypted.",
            err=True,
        )
    address = f"http://{where}/"
    if token:
        address += f"?token={quote(token, safe='')}"
    click.echo(f"serving {inline(path)} at {inline(address)} (ctrl+c stops)", err=True)
    server = GuardedServer(
        command, host, port, title="ppp-tui", token=token, max_sessions=max_sessions
    )
    server.serve()
