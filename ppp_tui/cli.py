"""The `ppp-tui` command line. Heavy imports stay inside the commands."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from .core.errors import PPPError
from .safe_text import inline, is_terminal, json_escape, literal

if TYPE_CHECKING:
    from .core.regret import Tuning
    from .core.settings import Settings
    from .storage.store import ImportReport, Store


def _neutralise(error: click.ClickException) -> None:
    """Show the message's control characters (click quotes arguments as given)."""
    # click types `message` as Final, but its exceptions are built to be shown later.
    setattr(error, "message", inline(error.message))  # noqa: B010


class _Group(click.Group):
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


def _clean(value: Any) -> Any:
    """Floats without binary noise: 0.645, not 0.6450000000000001."""
    kind = type(value)
    if kind is float:
        return round(value, 10)
    if kind is dict:
        return {key: _clean(item) for key, item in value.items()}
    if kind is list or kind is tuple:
        return [_clean(item) for item in value]
    if isinstance(value, float):  # numpy floats
        return round(float(value), 10)
    return value


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
    document = _clean(document)
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


def _db_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """--db and --config on every command, resolved by `_Env`."""
    command = click.option(
        "--config",
        "config",
        type=click.Path(dir_okay=False),
        help="config.toml (else $PPP_TUI_CONFIG, ./config.toml, the user config folder).",
    )(command)
    command = click.option(
        "--db",
        "db",
        type=click.Path(dir_okay=False),
        help="The run database (else $PPP_TUI_DB, the user data folder's ppp-tui/runs.db).",
    )(command)
    return command


_STAGE_HELP = 'Only this stage\'s runs; "(no stage)" (or "") selects the runs without a stage.'


def _stage_filter(store: Store, stage: str | None) -> str | None:
    """The store's filter for --stage STAGE: None for every run, "(no stage)" for the
    runs without one. A stage no run has is an error that lists the known ones."""
    if stage is None:
        return None
    from .core.stages import NO_STAGE, listing

    known = store.stages()
    wanted = None if stage in ("", NO_STAGE) else stage
    if wanted not in known:
        missing = "no runs without a stage" if wanted is None else f"no stage {stage!r}"
        raise click.ClickException(f"{missing}; known stages: {inline(listing(known))}")
    return NO_STAGE if wanted is None else wanted


class _Env:
    """Where the database and config.toml are, and loading them on demand."""

    def __init__(self, db: str | None, config: str | None) -> None:
        import os

        from .storage.config import CONFIG_ENV, config_path, db_path, ignored_local_config

        self.db_path = db_path(db)
        self.config_path = config_path(config)
        # Why ./config.toml was passed over, for the commands that say which file they use.
        self.config_note = ignored_local_config(config)
        # A path the user named (--config or $PPP_TUI_CONFIG) must exist to be read.
        self.config_given = bool(config or os.environ.get(CONFIG_ENV))

    def settings(self, creating: bool = False) -> Settings:
        """The configured settings; an explicitly named config.toml that does not exist is
        an error unless the command is about to create it (`creating`)."""
        from .storage.config import load_settings

        if self.config_given and not creating:
            self.require_config()
        return load_settings(self.config_path)

    def require_config(self) -> None:
        """Refuse an explicitly named config.toml that does not exist."""
        path = self.config_path
        if self.config_given and not path.exists():
            raise click.ClickException(
                f"{path}: no such config file; create it with"
                f" `ppp-tui config init --config {path}` or leave out --config"
            )

    def store(self, create: bool = False) -> Store:
        from .storage.store import Store

        return Store.open(self.db_path, create=create)


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="ppp-tui")
def cli() -> None:
    """Score, compare and tune multi-agent coding runs with the PPP framework.

    \b
    Start with:
      ppp-tui demo               # a demo database to explore
      ppp-tui browse             # the terminal app
      ppp-tui import runs.jsonl  # your own runs (JSON or JSON Lines)
    """


@cli.command()
@click.argument("files", nargs=-1, required=True, type=click.Path(allow_dash=True))
@click.option(
    "--technical",
    type=WEIGHT,
    help="Technical weight (interaction = 1 - technical); default: the configured weights.",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["auto", "json", "jsonl", "spec-kit"]),
    default="auto",
    show_default=True,
    help="Input format; auto decides by content (a SQLite file is spec-kit's database).",
)
@click.option("--json", "as_json", is_flag=True, help="One rank document per run (JSON Lines).")
@_db_options
def score(
    files: Sequence[str],
    technical: float | None,
    fmt: str,
    as_json: bool,
    db: str | None,
    config: str | None,
) -> None:
    """Rank the runs of JSON / JSON Lines FILES (or spec-kit databases) without touching
    the database.

    \b
    Example:
      ppp-tui score runs.jsonl
      cat runs.jsonl | ppp-tui score - --technical 0.6 --json
    """
    from .core.scoring import rank_run
    from .core.settings import Weights
    from .faces import rank_document, render_ranking
    from .storage.formats import open_any

    del db  # score never touches the database
    settings = _Env(None, config).settings()
    weights = Weights.from_technical(technical) if technical is not None else None
    for name in files:
        warn = lambda m: click.echo(f"warning: {inline(m)}", err=True)  # noqa: E731
        for record in open_any(name, fmt, warn).records:
            run = record.parse()
            ranking = rank_run(run, settings, weights)
            if as_json:
                emit_json(rank_document(ranking, None, run), lines=True)
            else:
                render_ranking(run, ranking)


def _stdin_is_terminal() -> bool:
    return sys.stdin.isatty()


@cli.command()
@click.argument("questions", nargs=-1)
@click.option("--context", help="The run's task text: a question it answers is low effort.")
@click.option("--json", "as_json", is_flag=True, help='[{"question", "effort", "parts"}]')
@_db_options
def classify(
    questions: Sequence[str],
    context: str | None,
    as_json: bool,
    db: str | None,
    config: str | None,
) -> None:
    """Classify the effort of each QUESTION (standard input, one per line, if none).

    An empty QUESTION is a usage error; empty lines of standard input are skipped.

    \b
    Example:
      ppp-tui classify "Which database: PostgreSQL or MySQL?"
      ppp-tui classify --json < questions.txt
    """
    from .core.effort import classify as classify_question

    del db, config  # the classifier has no settings
    if any(not q.strip() for q in questions):
        raise click.UsageError("QUESTION is empty: give the question's text")
    if not questions and _stdin_is_terminal():
        click.echo("reading questions from standard input, one per line; ctrl+d ends", err=True)
    asked = list(questions) or [line.strip() for line in _stdin_lines() if line.strip()]
    results = [classify_question(q, context) for q in asked]
    if as_json:
        emit_json(
            [
                {
                    "question": r.question,
                    "effort": r.effort.value,
                    "parts": [{"text": p.text, "effort": p.effort.value} for p in r.parts],
                }
                for r in results
            ]
        )
        return
    for result in results:
        note = "  (answered by the task text)" if result.answered_by_context else ""
        click.echo(f"{result.effort.value:<6}  {inline(result.question)}{note}")


_DEMO_HELP = (
    "Open the demo database (kept in the user cache folder, or written to --db) with its"
    " own config.toml beside it, so tuning the demo leaves your config alone."
)
_REPLACE_HELP = "With --demo --db: replace a database that already holds runs."


def _stdin_lines() -> list[str]:
    """Standard input's lines, as UTF-8 (bytes that are not: one error line)."""
    stream = getattr(sys.stdin, "buffer", None)
    if stream is None:
        return sys.stdin.read().splitlines()
    data: bytes = stream.read()
    try:
        return data.decode("utf-8").splitlines()
    except UnicodeDecodeError as error:
        raise PPPError(f"<stdin>: not UTF-8 text ({error.reason} at byte {error.start})") from None


@cli.command()
@click.option("--demo", "use_demo", is_flag=True, help=_DEMO_HELP)
@click.option("--replace", is_flag=True, help=_REPLACE_HELP)
@_db_options
def browse(use_demo: bool, replace: bool, db: str | None, config: str | None) -> None:
    """The terminal app: runs, agents side by side, live weights, marks.

    \b
    Example:
      ppp-tui browse --demo
      ppp-tui browse --db runs.db --config config.toml
    """
    from .app.app import PPPApp

    env = _Env(db, config)
    path, config_path = _app_paths(env, db, use_demo, replace)
    PPPApp(path, config_path).run()


def _demo_config(path: Path) -> Path:
    """The config.toml of a demo database: beside it, named after it."""
    return path.with_name(f"{path.stem}.config.toml")


def _app_paths(env: _Env, db: str | None, use_demo: bool, replace: bool) -> tuple[Path, Path]:
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
    from .storage.demo import DEMO_SIZE, GENERATOR_VERSION, write_demo

    if db is None:
        import platformdirs

        from .storage.config import APP_NAME

        path = platformdirs.user_cache_path(APP_NAME) / "demo.db"
        stamp = path.with_name(f"{path.name}.generator")
        wanted = f"generator {GENERATOR_VERSION}, {DEMO_SIZE} runs, seed 0\n"
        try:
            current = path.exists() and stamp.read_text(encoding="utf-8") == wanted
        except OSError:
            current = False
        if current:
            click.echo(f"demo database: {inline(path)} (reused; kept between sessions)", err=True)
        else:
            click.echo(f"generating {DEMO_SIZE} demo runs into {inline(path)} …", err=True)
            stamp.unlink(missing_ok=True)
            write_demo(path, DEMO_SIZE, 0, replace=True)
            try:
                stamp.write_text(wanted, encoding="utf-8")
            except OSError as error:  # the demo works; it is just generated again next time
                click.echo(f"warning: {inline(stamp)}: cannot write ({error.strerror})", err=True)
    else:
        path = env.db_path
        write_demo(path, DEMO_SIZE, 0, replace=replace)
        click.echo(f"demo database: {inline(path)} ({DEMO_SIZE} runs generated)", err=True)
    config_path = env.config_path if env.config_given else _demo_config(path)
    click.echo(f"demo config: {inline(config_path)} (the demo's saved weights go here)", err=True)
    return path, config_path


@cli.command()
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
@_db_options
def serve(
    host: str,
    port: int,
    use_demo: bool,
    replace: bool,
    max_sessions: int,
    token: str | None,
    db: str | None,
    config: str | None,
) -> None:
    """The terminal app in a web browser (textual-serve); each visitor gets their own app.

    Only pages this server serves may open sessions (a page on another site is
    refused), at most --max-sessions at once. On an address other than loopback anyone
    on the network can reach it: a token is then required, and printed in the address.

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

    from .serving import GuardedServer, is_loopback, new_token

    env = _Env(db, config)
    path, config_path = _app_paths(env, db, use_demo, replace)
    if not path.exists():
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
    command = shlex.join(
        [
            sys.executable,
            "-m",
            "ppp_tui",
            "browse",
            "--db",
            str(path),
            "--config",
            str(config_path),
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


def _progress(total: int) -> Any:
    """A rich progress bar on standard error for long imports, else nothing."""
    from contextlib import nullcontext

    if total < 500 or not sys.stderr.isatty():
        return nullcontext(None)
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeRemainingColumn

    return Progress(
        "[progress.description]{task.description}",
        BarColumn(),
        MofNCompleteColumn(),
        TimeRemainingColumn(),
        console=Console(stderr=True),
        transient=True,
    )


def _report_import(report: ImportReport, where: str) -> None:
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


@cli.command(name="import")
@click.argument("files", nargs=-1, required=True, type=click.Path(allow_dash=True))
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["auto", "json", "jsonl", "spec-kit", "userville"]),
    default="auto",
    show_default=True,
    help="Input format; auto decides by content: a SQLite file is read as spec-kit's"
    " consensus database, the PPP paper's rollouts as userville, other text as JSON or"
    " JSON Lines.",
)
@click.option("--skip-invalid", is_flag=True, help="Import the good runs, report each bad one.")
@_db_options
def import_(
    files: Sequence[str], fmt: str, skip_invalid: bool, db: str | None, config: str | None
) -> None:
    """Import runs from JSON, JSON Lines, standard input (-), a spec-kit database or
    the PPP paper's UserVille rollouts.

    One transaction: by default one bad run rejects the whole import and the
    database stays as it was. Runs already present (same id or content) are skipped.
    spec-kit keeps its database at ~/.code/consensus_artifacts.db; each stage run
    (every agent's answer to one attempt at a spec's stage) becomes one run.

    \b
    Example:
      ppp-tui import runs.jsonl
      cat runs.jsonl | ppp-tui import - --skip-invalid
      ppp-tui import ~/.code/consensus_artifacts.db
      ppp-tui import --format userville rollouts.jsonl
    """
    import itertools

    from .storage.files import RecordFile
    from .storage.formats import open_any

    env = _Env(db, config)
    sources: list[RecordFile] = []
    for name in files:
        sources.append(open_any(name, fmt, lambda m: click.echo(f"warning: {inline(m)}", err=True)))
    total = sum(source.total for source in sources)
    chained = itertools.chain.from_iterable(source.records for source in sources)
    with _progress(total) as bar:
        step = None
        if bar is not None:
            task = bar.add_task("importing", total=total)
            step = lambda n: bar.advance(task, n)  # noqa: E731
        if os.path.lexists(env.db_path):
            with env.store(create=True) as store:
                report = store.import_records(chained, skip_invalid=skip_invalid, progress=step)
        else:
            # Built beside and put in place when complete: a failed first import leaves no
            # database behind, without deleting one another import may have just made.
            from .storage.swap import import_new

            report = import_new(env.db_path, chained, skip_invalid=skip_invalid, progress=step)
    _report_import(report, str(env.db_path))


@cli.command()
@click.option(
    "--runs", "count", type=click.IntRange(1, 10_000_000), default=2000, show_default=True
)
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--replace", is_flag=True, help="Replace a database that already holds runs.")
@_db_options
def demo(count: int, seed: int, replace: bool, db: str | None, config: str | None) -> None:
    """Write a realistic, deterministic demo database (the same runs for the same seed).

    \b
    Example:
      ppp-tui demo --db demo.db --runs 5000 --seed 7
      ppp-tui browse --db demo.db
    """
    from .storage.demo import write_demo

    env = _Env(db, config)
    with _progress(count) as bar:
        step = None
        if bar is not None:
            task = bar.add_task("generating", total=count)
            step = lambda n: bar.advance(task, n)  # noqa: E731
        report = write_demo(env.db_path, count, seed, replace=replace, progress=step)
    _report_import(report, str(env.db_path))


def _time_order(row: dict[str, Any]) -> tuple[int, float, str, str]:
    """Runs in time order (created_at as a moment, whatever its offset or precision);
    runs without a readable time last, by id."""
    from datetime import UTC, datetime

    created = row["created_at"]
    if isinstance(created, str):
        try:
            moment = datetime.fromisoformat(created.replace("Z", "+00:00"))
        except ValueError:
            pass
        else:
            if moment.tzinfo is None:
                moment = moment.replace(tzinfo=UTC)
            return (0, moment.timestamp(), "", row["id"])
    return (1, 0.0, str(created or ""), row["id"])


@cli.command()
@click.option("--stage", help=_STAGE_HELP)
@click.option("--json", "as_json", is_flag=True, help="A JSON list of runs.")
@_db_options
def runs(stage: str | None, as_json: bool, db: str | None, config: str | None) -> None:
    """List runs, oldest first, with the agent selected under the configured weights and
    the mark.

    \b
    Example:
      ppp-tui runs --stage plan
      ppp-tui runs --json | jq '.[] | select(.regret > 0)'
    """
    from .faces import cut, number
    from .reports import Scores

    env = _Env(db, config)
    settings = env.settings()
    with env.store() as store:
        stage = _stage_filter(store, stage)
        scores = Scores.load(store, settings, stage)
        infos = {info.id: info for info in store.run_infos(stage)}
    arrays, outcome = scores.arrays, scores.outcome
    rows = []
    for i, run_id in enumerate(arrays.run_ids):
        info = infos[run_id]
        regret = outcome.regret[i]
        rows.append(
            {
                "id": run_id,
                "spec_id": info.spec_id,
                "stage": info.stage,
                "task_type": info.task_type,
                "created_at": info.created_at,
                "agents": info.agents,
                "selected": arrays.names[i, outcome.selected[i]],
                "preferred": info.preferred,
                "regret": None if regret != regret else float(regret),
            }
        )
    rows.sort(key=_time_order)
    if as_json:
        emit_json(rows)
        return
    # Ids are what `rank` and `prefer` take, so the column fits them (up to 40 columns).
    width = min(max([22, *(len(cut(row["id"], 41)) for row in rows)]), 40)
    click.echo(
        f"{'id':<{width}} {'spec':<14} {'stage':<10} {'task type':<16} {'agents':>6}"
        f"  {'selected':<14} {'preferred':<14} {'regret':>7}"
    )
    for row in rows:
        click.echo(
            f"{cut(row['id'], width):<{width}} {cut(row['spec_id'], 14):<14}"
            f" {cut(row['stage'], 10):<10}"
            f" {row['task_type']:<16} {row['agents']:>6}  {cut(row['selected'], 14):<14}"
            f" {cut(row['preferred'], 14):<14} {number(row['regret']):>7}"
        )
    click.echo(f"{len(rows)} run{'s' * (len(rows) != 1)}", err=True)


@cli.command()
@click.argument("run_id")
@click.option("--technical", type=WEIGHT, help="Technical weight to rank under.")
@click.option("--json", "as_json", is_flag=True, help="The run's agents and scores as JSON.")
@_db_options
def rank(
    run_id: str, technical: float | None, as_json: bool, db: str | None, config: str | None
) -> None:
    """Rank one run's agents (the configured weights of its stage unless --technical).

    Also lists which agent ranks first over which technical weights (its flip points).

    \b
    Example:
      ppp-tui rank run-0042
      ppp-tui rank run-0042 --technical 0.6 --json
    """
    from .core.scoring import rank_run
    from .core.sensitivity import flips
    from .core.settings import Weights
    from .faces import rank_document, render_ranking

    env = _Env(db, config)
    settings = env.settings()
    with env.store() as store:
        run = store.get_run(run_id)
    weights = Weights.from_technical(technical) if technical is not None else None
    ranking = rank_run(run, settings, weights)
    # Who ranks first over every technical weight (the slider's whole range).
    intervals = flips(ranking.agents, settings)
    if as_json:
        emit_json(rank_document(ranking, intervals, run))
    else:
        render_ranking(run, ranking, intervals)


@cli.command()
@click.argument("file", type=click.Path(allow_dash=True))
@_db_options
def technical(file: str, db: str | None, config: str | None) -> None:
    """Set technical scores from your own evaluation (tests passed, review scores).

    FILE (or - for standard input) holds one row per run and agent: CSV with a header
    run_id,agent,technical (other columns are ignored), or JSON: a list of
    {"run_id", "agent", "technical"} objects, or JSON Lines. Scores are numbers in
    [0, 1]. Every row is checked first; one bad row changes nothing. An agent whose
    output is a failure keeps technical 0.

    \b
    Example:
      ppp-tui technical scores.csv
      printf 'run_id,agent,technical\\nrun-0042,claude,0.9\\n' | ppp-tui technical -
    """
    from .storage.technical import read_scores

    scores = read_scores(file)
    env = _Env(db, config)
    with env.store() as store:
        runs = store.set_technical(scores)
    click.echo(
        f"set {len(scores)} technical score{'s' * (len(scores) != 1)}"
        f" in {runs} run{'s' * (runs != 1)}"
    )


@cli.command()
@click.argument("run_id")
@click.argument("agent", required=False)
@click.option("--clear", is_flag=True, help="Remove the run's preferred mark.")
@_db_options
def prefer(run_id: str, agent: str | None, clear: bool, db: str | None, config: str | None) -> None:
    """Mark AGENT as the one you preferred for RUN_ID (every change is kept).

    \b
    Example:
      ppp-tui prefer run-0042 claude-code
      ppp-tui prefer run-0042 --clear
    """
    if clear == (agent is not None):
        raise click.UsageError("give an AGENT, or --clear (not both)")
    env = _Env(db, config)
    with env.store() as store:
        before = store.get_run(run_id).preferred_agent
        store.mark(run_id, agent, source="cli")
    was = f" (was {inline(before)})" if before and before != agent else ""
    if agent is None:
        click.echo(f"{inline(run_id)}: preferred mark cleared{was}")
    else:
        click.echo(f"{inline(run_id)}: preferred agent is {inline(agent)}{was}")


@cli.command()
@click.option("--stage", help=_STAGE_HELP)
@click.option("--json", "as_json", is_flag=True, help="One JSON document: regret and agreement.")
@_db_options
def regret(stage: str | None, as_json: bool, db: str | None, config: str | None) -> None:
    """Mean regret and agreement over the marked runs, under the configured weights.

    \b
    Example:
      ppp-tui regret
      ppp-tui regret --stage implement --json
    """
    from .core.stages import NO_STAGE
    from .faces import cut, number
    from .reports import Scores, regret_document

    env = _Env(db, config)
    settings = env.settings()
    with env.store() as store:
        stage = _stage_filter(store, stage)
        scores = Scores.load(store, settings, stage, marked_only=True)
        # Only marked runs are loaded; every stage of the database still gets its entry.
        stages = [s for s in store.stages() if stage is None or s == stage]
        if stage == NO_STAGE:
            stages = [None]
    document = regret_document(scores, stage, runs=as_json, stages=stages)
    if as_json:
        emit_json(document)
        return
    if not document["marked_runs"]:
        where = "" if stage is None else f" in {stage}"
        click.echo(
            f"no marked runs{where} yet: mark preferred agents with `ppp-tui prefer RUN AGENT`"
        )
        return
    w = document["weights"]
    click.echo(
        f"weights {w['technical']:.2f}/{w['interaction']:.2f}: "
        f"{document['marked_runs']} marked runs, mean regret {number(document['mean_regret'], 4)},"
        f" agreement {document['agreement']:.1%}"
    )
    click.echo(
        f"  {'stage':<14} {'weights':>9} {'marked':>7} {'mean regret':>12} {'agreement':>10}"
    )
    for name, figures in document["per_stage"].items():
        if not figures["marked_runs"]:
            continue
        sw = figures["weights"]
        click.echo(
            f"  {cut(name, 14):<14} {sw['technical']:.2f}/{sw['interaction']:.2f}"
            f" {figures['marked_runs']:>7} {number(figures['mean_regret'], 4):>12}"
            f" {figures['agreement']:>10.1%}"
        )


def _render_tuning(scope: str, tuning: Tuning) -> None:
    cv = ""
    if tuning.cv_folds:
        cv = (
            f"; {tuning.cv_folds}-fold CV: regret {tuning.cv_mean_regret:.4f},"
            f" agreement {tuning.cv_agreement:.1%}"
        )
    click.echo(
        f"{inline(scope)}: {tuning.marked_runs} marked runs;"
        f" technical {tuning.before_technical:.4g}"
        f" -> {tuning.technical:.4f} (interaction {tuning.interaction:.4f}); mean regret"
        f" {tuning.before_mean_regret:.4f} -> {tuning.mean_regret:.4f}; agreement"
        f" {tuning.before_agreement:.1%} -> {tuning.agreement:.1%}{cv}"
    )
    if tuning.ci is not None:
        low, high = tuning.ci
        click.echo(
            f"  95% interval of the tuned weight: {low:.4f}-{high:.4f}"
            f" ({tuning.ci_resamples} bootstrap resamples)"
        )


@cli.command()
@click.option("--stage", help="Tune this stage's weights on its own marked runs (a known stage).")
@click.option("--per-stage", is_flag=True, help="Tune every stage that has marked runs.")
@click.option("--write", is_flag=True, help="Save the tuned weights to config.toml.")
@click.option("--json", "as_json", is_flag=True, help="JSON: the tuned weights and their figures.")
@_db_options
def tune(
    stage: str | None,
    per_stage: bool,
    write: bool,
    as_json: bool,
    db: str | None,
    config: str | None,
) -> None:
    """Fit the technical weight to your preferred marks (exact minimum of mean regret).

    Also reports k-fold cross-validated figures and a 95% bootstrap interval of the
    tuned weight (200 seeded resamples of the marked runs).

    \b
    Example:
      ppp-tui tune
      ppp-tui tune --per-stage --write
    """
    from .core.settings import Weights
    from .core.stages import NO_STAGE
    from .reports import Scores, provenance, tune_document, tune_scope, tune_stages
    from .storage.config_write import save_weights

    if stage is not None and per_stage:
        raise click.UsageError("--stage and --per-stage exclude each other")
    env = _Env(db, config)
    settings = env.settings(creating=write)
    with env.store() as store:
        if _stage_filter(store, stage) == NO_STAGE:
            raise click.UsageError(
                "runs without a stage use the global weights: tune them without --stage"
            )
        scores = Scores.load(store, settings, marked_only=True)
    if per_stage:
        results = tune_stages(scores)
    else:
        scope, tuning = tune_scope(scores, stage)
        results = [] if tuning is None else [(scope, tuning)]
    if not results:
        if stage is None and not per_stage and scores.arrays.marked.any():
            raise click.ClickException(
                "no marked runs use the global weights (each marked run's stage has its"
                " own table); tune those with --stage STAGE or --per-stage"
            )
        where = f" in stage {stage!r}" if stage else ""
        raise click.ClickException(
            f"no marked runs{where} to tune on; mark preferred agents with"
            " `ppp-tui prefer RUN AGENT` or in the app (p)"
        )
    if as_json:
        documents = [tune_document(scope, tuning) for scope, tuning in results]
        emit_json(documents if per_stage else documents[0])
    else:
        for scope, tuning in results:
            _render_tuning(scope, tuning)
    if write:
        global_weights = None
        stages: dict[str, Weights] = {}
        # Each pair's note tells its own tuning: its stage's marked runs and regret.
        notes: dict[str | None, str] = {}
        for scope, tuning in results:
            tuned = Weights.from_technical(tuning.technical)
            if scope == "global":
                global_weights = tuned
                notes[None] = provenance(tuning)
            else:
                stages[scope] = tuned
                notes[scope] = provenance(tuning)
        save_weights(env.config_path, global_weights, stages, notes=notes)
        click.echo(f"saved to {inline(env.config_path)}", err=True)
        if env.config_note:
            click.echo(f"note: {inline(env.config_note)}", err=True)


@cli.command()
@click.option(
    "--format", "fmt", type=click.Choice(["csv", "json"]), default="csv", show_default=True
)
@click.option(
    "--out",
    type=click.Path(dir_okay=False, allow_dash=True),
    default="-",
    help="Output file (default: standard output).",
)
@_db_options
def export(fmt: str, out: str, db: str | None, config: str | None) -> None:
    """Export one row per run and agent with all scores (configured weights).

    In CSV, yes/no columns (has_trajectory, selected, preferred) read true or false,
    as in JSON, and a missing value (no stage, no trajectory's scores) is an empty cell.

    \b
    Example:
      ppp-tui export --format csv --out scores.csv
      ppp-tui export --format json | jq length
    """
    import csv

    from .reports import EXPORT_COLUMNS, Scores, export_rows

    env = _Env(db, config)
    settings = env.settings()
    with env.store() as store:
        scores = Scores.load(store, settings)
        rows = list(export_rows(store, scores))
    try:
        with click.open_file(out, "w", encoding="utf-8", atomic=out != "-") as stream:
            if fmt == "json":
                text = json.dumps(_clean(rows), ensure_ascii=False, indent=1)
                stream.write(json_escape(text) + "\n")
            else:
                # CSV has no escapes: exact in a file or a pipe, made safe on a terminal.
                writer = csv.DictWriter(stream, fieldnames=EXPORT_COLUMNS, lineterminator="\n")
                writer.writeheader()
                shown = _safe_csv_cell if out == "-" and is_terminal(stream) else _clean
                writer.writerows(_csv_row(row, shown) for row in rows)
    except BrokenPipeError:
        raise  # `ppp-tui export | head`: the reader has all it wanted
    except OSError as error:
        raise click.ClickException(f"{out}: cannot write ({error.strerror or error})") from None
    if out != "-":
        click.echo(f"exported {len(rows)} rows to {inline(out)}", err=True)


def _safe_csv_cell(value: Any) -> Any:
    """A CSV value as a terminal may show it: control characters visible (newlines kept)."""
    return literal(value) if isinstance(value, str) else _clean(value)


def _csv_row(row: dict[str, Any], shown: Callable[[Any], Any]) -> dict[str, Any]:
    """An export row for CSV: booleans as true/false (JSON's words), not True/False."""
    return {
        key: ("true" if value else "false") if type(value) is bool else shown(value)
        for key, value in row.items()
    }


@cli.group()
def config() -> None:
    """Show, create or check config.toml."""


@config.command()
@click.option("--json", "as_json", is_flag=True, help="The effective settings as JSON.")
@_db_options
def show(as_json: bool, db: str | None, config: str | None) -> None:
    """The effective configuration, and which file it comes from."""
    from .storage.config_write import render_settings, settings_document

    env = _Env(db, config)
    settings = env.settings()
    if as_json:
        emit_json(
            {
                "path": str(env.config_path),
                "exists": env.config_path.exists(),
                "ignored": env.config_note,
                "db": str(env.db_path),
                **settings_document(settings),
            }
        )
        return
    state = "" if env.config_path.exists() else " (no file: the defaults apply)"
    click.echo(f"# config: {inline(env.config_path)}{state}")
    if env.config_note:
        click.echo(f"# {inline(env.config_note)}")
    click.echo(f"# database: {inline(env.db_path)}")
    # TOML reads \uXXXX in quoted keys and strings as the character itself.
    click.echo(literal(json_escape(render_settings(settings))))


@config.command()
@click.option("--force", is_flag=True, help="Overwrite an existing file.")
@_db_options
def init(force: bool, db: str | None, config: str | None) -> None:
    """Write the example config.toml, with the recommended stage weights."""
    from .storage.config_write import init_config

    env = _Env(db, config)
    path = init_config(env.config_path, force=force)
    click.echo(f"wrote {inline(path)}")
    if env.config_note:
        click.echo(f"note: {inline(env.config_note)}", err=True)


@config.command()
@_db_options
def validate(db: str | None, config: str | None) -> None:
    """Check config.toml; exit 1 with the first problem.

    Keys ppp-tui does not read and penalty names outside the preference catalogue are
    kept, with one warning line each on standard error.
    """
    from .storage.config import config_warnings, read_text

    env = _Env(db, config)
    if env.config_note:
        click.echo(f"note: {inline(env.config_note)}", err=True)
    settings = env.settings()
    text = read_text(env.config_path)
    if text is None:
        click.echo(f"{inline(env.config_path)}: no file; the defaults apply")
        return
    for warning in config_warnings(text):
        click.echo(f"warning: {inline(env.config_path)}: {inline(warning)}", err=True)
    stages = len(settings.stage_weights)
    click.echo(
        f"{inline(env.config_path)}: valid (global {settings.weights.technical:g}/"
        f"{settings.weights.interaction:g}, {stages} stage table{'s' * (stages != 1)})"
    )


def main() -> None:
    cli(prog_name="ppp-tui")
