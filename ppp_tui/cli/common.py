"""What every command shares: the group's error handling, JSON output, the weight
parameter type, --db/--config and their resolution, --stage, progress and import reports."""

from __future__ import annotations

import functools
import json
import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, overload

import click

from ..core.errors import PPPError
from ..safe_text import clean, inline, json_escape

if TYPE_CHECKING:
    from ..core.scores import Scores
    from ..core.settings import Settings
    from ..storage.location import ServerURL
    from ..storage.reviewers import Scope
    from ..storage.store import ImportReport, Store


# What click (8.2 on) raises for a group given no command: its message is the group's
# own help, lines and all (older versions print the help themselves).
_HELP_ERROR: Any = getattr(click.exceptions, "NoArgsIsHelpError", ())


def _neutralise(error: click.ClickException) -> None:
    """Show the message's control characters (click quotes arguments as given)."""
    if isinstance(error, _HELP_ERROR):
        return
    # click types `message` as Final, but its exceptions are built to be shown later.
    setattr(error, "message", inline(error.message))  # noqa: B010


class Group(click.Group):
    """Turns ppp-tui's typed errors into one-line messages with exit code 1.

    Every message quotes data (a file name, a run id, a config key) with its control
    characters made visible, click's own usage errors included.
    """

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        try:
            return super().parse_args(ctx, args)
        except click.ClickException as error:
            _neutralise(error)
            raise

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except PPPError as error:
            raise click.ClickException(inline(error)) from None
        except click.ClickException as error:
            _neutralise(error)
            raise
        except BrokenPipeError:  # `ppp-tui ... | head`
            sys.stderr.close()
            sys.exit(0)


# Lists longer than this print one compact item per line (e.g. regret's marked runs).
_LONG_LIST = 50


def _pretty(value: Any, indent: str = "") -> str:
    """json.dumps(indent=2), except that long lists hold one compact item per line.

    The compact items go through json's C encoder, which an indented dump never uses:
    100k-row documents print in a fraction of the time.
    """
    if value and type(value) is dict:
        inner = indent + "  "
        items = [
            f"{inner}{json.dumps(key, ensure_ascii=False)}: {_pretty(item, inner)}"
            for key, item in value.items()
        ]
        return "{\n" + ",\n".join(items) + "\n" + indent + "}"
    if value and type(value) is list:
        inner = indent + "  "
        if len(value) > _LONG_LIST:
            items = [inner + json.dumps(item, ensure_ascii=False) for item in value]
        else:
            items = [inner + _pretty(item, inner) for item in value]
        return "[\n" + ",\n".join(items) + "\n" + indent + "]"
    return json.dumps(value, ensure_ascii=False)


def emit_json(document: Any, lines: bool = False) -> None:
    """A document as JSON: pretty, or on one line (`lines`: one document per line).

    The values are exact; the characters a terminal would act on are written as
    \\uXXXX escapes (json.dumps already escapes C0 controls).
    """
    document = clean(document)
    if lines:
        click.echo(json_escape(json.dumps(document, ensure_ascii=False)))
    else:
        click.echo(json_escape(_pretty(document)))


class _Weight(click.ParamType):  # type: ignore[type-arg]
    """A weight between 0 and 1 inclusive: nan, inf and values outside are usage errors."""

    name = "weight"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        import math

        try:
            weight = float(value)
        except (TypeError, ValueError):
            self.fail(f"{value!r} is not a number", param, ctx)
        if not math.isfinite(weight) or not 0.0 <= weight <= 1.0:
            self.fail(f"{value!r} is not a weight between 0 and 1", param, ctx)
        return weight


WEIGHT = _Weight()


_DEMO_HELP = "Use the demo database (the one `browse --demo` opens) and its own config.toml."


Decorator = Callable[[Callable[..., Any]], Callable[..., Any]]


@overload
def db_options(command: Callable[..., Any]) -> Callable[..., Any]: ...


@overload
def db_options(command: None = None, *, demo: bool = True) -> Decorator: ...


def db_options(
    command: Callable[..., Any] | None = None, *, demo: bool = True
) -> Callable[..., Any] | Decorator:
    """--db and --config on every command, resolved by `Env`; with `demo`, --demo too,
    which stands for the demo database and its own config.toml (made when missing).
    `@db_options(demo=False)` for a command that treats --demo its own way."""

    def decorate(command: Callable[..., Any]) -> Callable[..., Any]:
        if demo:
            command = _with_demo(command)
        command = click.option(
            "--config",
            "config",
            type=click.Path(dir_okay=False),
            help="config.toml (else $PPP_TUI_CONFIG, ./config.toml, the user config folder).",
        )(command)
        return click.option(
            "--db",
            "db",
            type=click.Path(dir_okay=False),
            metavar="FILE|URL",
            help="The run database: a SQLite file, or a team store's postgresql:// URL"
            " (else $PPP_TUI_DB, the user data folder's ppp-tui/runs.db).",
        )(command)

    return decorate(command) if command is not None else decorate


def _with_demo(command: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(command)
    def run(*args: Any, use_demo: bool = False, **kwargs: Any) -> Any:
        if use_demo:
            if kwargs.get("db") is not None:
                raise click.UsageError("give --demo or --db, not both")
            from ..storage.config import CONFIG_ENV
            from .demo_paths import cached_demo, demo_config_file

            kwargs["db"] = str(cached_demo(quiet=True))
            if kwargs.get("config") is None and not os.environ.get(CONFIG_ENV):
                kwargs["config"] = str(demo_config_file(Path(kwargs["db"])))
        return command(*args, **kwargs)

    return click.option("--demo", "use_demo", is_flag=True, help=_DEMO_HELP)(run)


STAGE_HELP = 'Only this stage\'s runs; "(no stage)" (or "") selects the runs without a stage.'


def stage_filter(store: Store, stage: str | None) -> str | None:
    """The store's filter for --stage STAGE: None for every run, "(no stage)" for the
    runs without one. A stage no run has is an error that lists the known ones."""
    if stage is None:
        return None
    from ..core.stages import NO_STAGE, listing

    known = store.stages()
    wanted = None if stage in ("", NO_STAGE) else stage
    if wanted not in known:
        missing = "no runs without a stage" if wanted is None else f"no stage {stage!r}"
        raise click.ClickException(f"{missing}; known stages: {inline(listing(known))}")
    return NO_STAGE if wanted is None else wanted


def reviewer_options(every: bool = True) -> Callable[[Callable[..., Any]], Any]:
    """--reviewer (and with `every`, --all-reviewers) on a command that reads or writes
    marks; `Env` resolves them."""

    def decorate(command: Callable[..., Any]) -> Any:
        if every:
            command = click.option(
                "--all-reviewers",
                is_flag=True,
                help="Count every reviewer's marks, each one observation.",
            )(command)
        return click.option(
            "--reviewer",
            metavar="NAME",
            help="Whose marks (else $PPP_TUI_REVIEWER, [ppp] reviewer, git user.name,"
            ' the login name); "(unknown)" for marks made before reviewers were recorded.',
        )(command)

    return decorate


def marks_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """--reviewer, --all-reviewers, --db, --config and --demo on a command that reads
    marks, which it is given as one `env` (an `Env`)."""

    @functools.wraps(command)
    def run(
        *args: Any,
        db: str | None,
        config: str | None,
        reviewer: str | None,
        all_reviewers: bool,
        **kwargs: Any,
    ) -> Any:
        return command(*args, env=Env(db, config, reviewer, all_reviewers), **kwargs)

    command_with_options: Callable[..., Any] = reviewer_options()(db_options(run))
    return command_with_options


# The commands that work on a PostgreSQL team store (--db postgresql://...); the others
# refuse its URL in one line.
SERVER_COMMANDS = frozenset(
    {"runs", "show", "rank", "regret", "tune", "leaderboard", "agreement", "ab", "next"}
    | {"prefer", "technical", "reviewers", "export", "report", "diff", "demo", "config show"}
    | {"browse", "serve", "judge", "group", "ungroup"}
)


class Env:
    """Where the database and config.toml are, and loading them on demand."""

    def __init__(
        self,
        db: str | None,
        config: str | None,
        reviewer: str | None = None,
        all_reviewers: bool = False,
    ) -> None:
        import os

        from ..storage.config import CONFIG_ENV, config_path, ignored_local_config

        self._db = db
        self.config_path = config_path(config)
        # Why ./config.toml was passed over, for the commands that say which file they use.
        self.config_note = ignored_local_config(config)
        # A path the user named (--config or $PPP_TUI_CONFIG) must exist to be read.
        self.config_given = bool(config or os.environ.get(CONFIG_ENV))
        if reviewer is not None and all_reviewers:
            raise click.UsageError("give --reviewer or --all-reviewers, not both")
        self.reviewer_given = reviewer
        self.all_reviewers = all_reviewers
        self._settings: Settings | None = None

    def server(self) -> ServerURL | None:
        """The PostgreSQL server --db or $PPP_TUI_DB names, for a command that works on
        one (SERVER_COMMANDS, and import); None for a SQLite file. Any other command
        refuses a server's URL (`db_path`)."""
        from ..storage.config import DB_ENV
        from ..storage.location import is_server_url, parse_server_url

        value = self._db or os.environ.get(DB_ENV, "")
        context = click.get_current_context(silent=True)
        command = " ".join(context.command_path.split()[1:]) if context else ""
        if is_server_url(value) and command in (*SERVER_COMMANDS, "import"):
            return parse_server_url(value)
        return None

    def db_name(self) -> str:
        """The database as messages name it: a file's path, or a server's host, port
        and database."""
        server = self.server()
        return str(self.db_path) if server is None else str(server)

    @functools.cached_property
    def db_path(self) -> Path:
        """The database's path, resolved when first needed: a command that reads no
        database (classify, score) never refuses what --db says."""
        from ..storage.config import db_path

        return db_path(self._db)

    def settings(self, creating: bool = False) -> Settings:
        """The configured settings; an explicitly named config.toml that does not exist is
        an error unless the command is about to create it (`creating`)."""
        from ..storage.config import load_settings

        if self.config_given and not creating:
            self.require_config()
        self._settings = load_settings(self.config_path)
        return self._settings

    def scope(self) -> Scope:
        """Whose marks count (and whom new marks are for): --all-reviewers, or the
        reviewer from --reviewer, $PPP_TUI_REVIEWER, config.toml, git or the login."""
        import os

        from ..storage import reviewers

        configured = None
        if (
            self.reviewer_given is None
            and not os.environ.get(reviewers.REVIEWER_ENV, "").strip()
            and (self._settings is not None or self.config_path.exists())
        ):
            settings = self._settings if self._settings is not None else self.settings()
            configured = settings.reviewer
        name = reviewers.resolve(self.reviewer_given, configured)[0]
        reviewers.use(name)
        return reviewers.Scope(name, self.all_reviewers)

    def require_config(self) -> None:
        """Refuse an explicitly named config.toml that does not exist."""
        path = self.config_path
        if self.config_given and not path.exists():
            raise click.ClickException(
                f"{path}: no such config file; create it with"
                f" `ppp-tui config init --config {path}` or leave out --config"
            )

    def store(self, create: bool = False) -> Store:
        server = self.server()
        if server is not None:
            from ..storage.store_server import ServerStore

            store: Store = ServerStore.connect(server, create=create)
        else:
            from ..storage.store import Store

            store = Store.open(self.db_path, create=create)
        # Worked out when a mark is first read or written: a command that never touches
        # marks never needs a reviewer (nor fails on a wrong one).
        store.scope_source = self.scope
        return store


def reviewer_fields(store: Store) -> dict[str, Any]:
    """Whose marks a document's figures count: `reviewer` (None with every reviewer's)
    and `all_reviewers`."""
    from ..storage.reviewers import shown

    every = store.scope.all_reviewers
    return {"reviewer": None if every else shown(store.reviewer), "all_reviewers": every}


def others_marked(store: Store, where: str = "") -> str:
    """When the current reviewer marked no run but others did: a line saying whose
    marks there are and how to count them; else ""."""
    from ..storage.reviewers import shown

    if store.scope.all_reviewers:
        return ""
    counts = [(name, n) for name, n in store.mark_counts() if n and name != store.reviewer]
    if not counts:
        return ""
    others = ", ".join(f"{shown(name)} {n}" for name, n in counts)
    return (
        f"no marked runs{where} by {shown(store.reviewer)} (marks by {others});"
        " use --reviewer NAME or --all-reviewers"
    )


@dataclass(frozen=True)
class MarkedScores:
    """What the commands on marks (regret, tune, ab, leaderboard) read: the scores of
    the marked runs of the scope, and whose marks they are."""

    stage: str | None  # as `stage_filter` gives it
    scores: Scores
    stages: list[str | None]  # the stages of the database the figures have entries for
    whose: dict[str, Any]  # `reviewer_fields`
    others: str  # with no mark in scope: who else marked (`others_marked`), else ""

    def nothing(self, line: str) -> click.ClickException:
        """The error for no marks to work on: who else marked, if anyone did, else `line`."""
        return click.ClickException(self.others or line)

    def none_marked(self, purpose: str) -> click.ClickException:
        """The error for no marked runs to `purpose` (who else marked, if anyone did)."""
        from ..core.stages import NO_STAGE

        where = ""
        if self.stage is not None:
            where = " without a stage" if self.stage == NO_STAGE else f" in stage {self.stage!r}"
        return self.nothing(
            f"no marked runs{where} {purpose}: mark preferred agents with"
            " `ppp-tui prefer RUN AGENT` or in the app (p)"
        )


def load_marked(
    env: Env, settings: Settings, stage: str | None, marked_only: bool = True
) -> MarkedScores:
    """The scores of the marked runs of `stage` (every run's with `marked_only` off),
    counting the marks of `env`'s reviewers."""
    from ..core.scores import Scores
    from ..core.stages import NO_STAGE, label

    with env.store() as store:
        stage = stage_filter(store, stage)
        scores = Scores.load(store, settings, stage, marked_only=marked_only)
        # Only marked runs are loaded; every stage of the database still gets its entry.
        stages: list[str | None] = [None]
        if stage != NO_STAGE:
            stages = [s for s in store.stages() if stage in (None, s)]
        where = "" if stage is None else f" in {label(stage)}"
        others = "" if scores.arrays.marked.any() else others_marked(store, where)
        return MarkedScores(stage, scores, stages, reviewer_fields(store), others)


@contextmanager
def progress_bar(
    total: int, label: str, minimum: int = 500
) -> Iterator[Callable[[int], None] | None]:
    """A rich progress bar on standard error for long imports (at least `minimum` runs;
    the judge's requests are slow enough for one from the first), else None: yields the
    function to call with each number of runs done.

    The bar is redrawn from those calls, at most ten times a second, not by a refresh
    thread: the demo and the importer fork worker processes, which they do only while
    the process has no other thread (a fork copies none, and a lock one held would
    stay held in the worker forever).
    """
    if total < minimum or not sys.stderr.isatty():
        yield None
        return
    from rich.progress import MofNCompleteColumn

    with _bar(total, label, MofNCompleteColumn()) as step:
        yield step


@contextmanager
def byte_progress(total: int, label: str) -> Iterator[Callable[[int], None] | None]:
    """A progress bar over bytes read (`progress_bar`'s), on a terminal and for more
    than a few megabytes."""
    if total < (8 << 20) or not sys.stderr.isatty():
        yield None
        return
    from rich.progress import DownloadColumn, TransferSpeedColumn

    with _bar(total, label, DownloadColumn(), TransferSpeedColumn()) as step:
        yield step


@contextmanager
def _bar(total: int, label: str, *columns: Any) -> Iterator[Callable[[int], None]]:
    import time

    from rich.console import Console
    from rich.progress import BarColumn, Progress, TimeRemainingColumn

    bar = Progress(
        "[progress.description]{task.description}",
        BarColumn(),
        *columns,
        TimeRemainingColumn(),
        console=Console(stderr=True),
        transient=True,
        auto_refresh=False,
    )
    task = bar.add_task(label, total=total)
    shown = 0.0

    def step(count: int) -> None:
        nonlocal shown
        bar.advance(task, count)
        moment = time.monotonic()
        if moment - shown >= 0.1:
            shown = moment
            bar.refresh()

    with bar:
        yield step


def report_import(report: ImportReport, where: str) -> None:
    for line in report.invalid:
        click.echo(f"skipped invalid run: {inline(line)}", err=True)
    if report.unknown_preferences:
        names = ", ".join(inline(name) for name in sorted(report.unknown_preferences))
        click.echo(
            f"warning: unknown preference(s) {names}: each violation costs the default 0.05",
            err=True,
        )
    parts = [f"imported {report.added} run{'s' * (report.added != 1)} into {inline(where)}"]
    if report.skipped:
        parts.append(f"{report.skipped} already present")
    if report.invalid:
        parts.append(f"{len(report.invalid)} invalid skipped")
    if report.marks:
        parts.append(f"{report.marks} preferred mark{'s' * (report.marks != 1)}")
    click.echo("; ".join(parts))
