"""The `ppp-tui` command line (SPEC 7). Heavy imports stay inside the commands."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from .core.errors import PPPError

if TYPE_CHECKING:
    from .core.regret import Tuning
    from .core.settings import Settings
    from .storage.files import FileFormat
    from .storage.store import ImportReport, Store


class _Group(click.Group):
    """Turns ppp-tui's typed errors into one-line messages with exit code 1."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except PPPError as error:
            raise click.ClickException(str(error)) from None
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
    """A document as JSON: pretty, or on one line (`lines`: one document per line)."""
    document = _clean(document)
    if lines:
        click.echo(json.dumps(document, ensure_ascii=False))
    else:
        click.echo(_pretty(document))


def _db_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """--db and --config on every command (SPEC 7), resolved by `_Env`."""
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


class _Env:
    """Where the database and config.toml are, and loading them on demand."""

    def __init__(self, db: str | None, config: str | None) -> None:
        from .storage.config import config_path, db_path

        self.db_path = db_path(db)
        self.config_path = config_path(config)

    def settings(self) -> Settings:
        from .storage.config import load_settings

        return load_settings(self.config_path)

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
      ppp-tui import runs.jsonl  # your own runs (SPEC 1 format)
    """


@cli.command()
@click.argument("files", nargs=-1, required=True, type=click.Path(allow_dash=True))
@click.option(
    "--technical",
    type=click.FloatRange(0.0, 1.0),
    help="Technical weight (interaction = 1 - technical); default: the configured weights.",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["auto", "json", "jsonl"]),
    default="auto",
    show_default=True,
    help="Input format; auto decides by the file name and content.",
)
@click.option("--json", "as_json", is_flag=True, help="One rank document per run (JSON Lines).")
@_db_options
def score(
    files: Sequence[str],
    technical: float | None,
    fmt: FileFormat,
    as_json: bool,
    db: str | None,
    config: str | None,
) -> None:
    """Rank the runs of JSON / JSON Lines FILES without touching the database.

    \b
    Example:
      ppp-tui score runs.jsonl
      cat runs.jsonl | ppp-tui score - --technical 0.6 --json
    """
    from .core.scoring import rank_run
    from .core.settings import Weights
    from .faces import rank_document, render_ranking
    from .storage.files import read_records

    del db  # score never touches the database
    settings = _Env(None, config).settings()
    weights = Weights.from_technical(technical) if technical is not None else None
    for name in files:
        for record in read_records(name, fmt):
            run = record.parse()
            ranking = rank_run(run, settings, weights)
            if as_json:
                emit_json(rank_document(ranking), lines=True)
            else:
                render_ranking(run, ranking)


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

    \b
    Example:
      ppp-tui classify "Which database: PostgreSQL or MySQL?"
      ppp-tui classify --json < questions.txt
    """
    from .core.effort import classify as classify_question

    del db, config  # the classifier has no settings
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
        click.echo(f"{result.effort.value:<6}  {result.question}{note}")


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
@click.option("--demo", "use_demo", is_flag=True, help="Open a freshly generated demo database.")
@_db_options
def browse(use_demo: bool, db: str | None, config: str | None) -> None:
    """The terminal app: runs, agents side by side, live weights, marks.

    \b
    Example:
      ppp-tui browse --demo
      ppp-tui browse --db runs.db --config config.toml
    """
    from .app.app import PPPApp

    env = _Env(db, config)
    PPPApp(_app_database(env, db, use_demo), env.config_path).run()


def _app_database(env: _Env, db: str | None, use_demo: bool) -> Path:
    """The database the app opens: the resolved one, or a fresh demo database."""
    if not use_demo:
        return env.db_path
    import tempfile

    from .storage.demo import DEMO_SIZE, write_demo

    path = env.db_path
    if db is None:
        path = Path(tempfile.mkdtemp(prefix="ppp-tui-demo-")) / "demo.db"
    click.echo(f"generating {DEMO_SIZE} demo runs into {path} …", err=True)
    write_demo(path, DEMO_SIZE, 0, replace=True)
    return path


@cli.command()
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option(
    "--port", default=8000, show_default=True, type=click.IntRange(1, 65535), help="Port."
)
@click.option("--demo", "use_demo", is_flag=True, help="Serve a freshly generated demo database.")
@_db_options
def serve(host: str, port: int, use_demo: bool, db: str | None, config: str | None) -> None:
    """The terminal app in a web browser (textual-serve); each visitor gets their own app.

    \b
    Example:
      ppp-tui serve --demo
      ppp-tui serve --db runs.db --port 8080
    """
    import os
    import shlex
    import socket

    from textual_serve.server import Server

    env = _Env(db, config)
    path = _app_database(env, db, use_demo)
    if not path.exists():
        raise click.ClickException(
            f"{path}: no database here; create one with `ppp-tui import FILE` or `ppp-tui demo`"
        )
    try:  # a clear line now rather than a server that fails to start
        with socket.create_server((host, port)):
            pass
    except OSError as error:
        reason = os.strerror(error.errno) if error.errno else str(error)
        raise click.ClickException(f"cannot listen on {host}:{port}: {reason}") from None
    command = shlex.join(
        [
            sys.executable,
            "-m",
            "ppp_tui",
            "browse",
            "--db",
            str(path),
            "--config",
            str(env.config_path),
        ]
    )
    click.echo(f"serving {path} at http://{host}:{port} (ctrl+c stops)", err=True)
    Server(command, host=host, port=port, title="ppp-tui").serve()


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
        click.echo(f"skipped invalid run: {line}", err=True)
    if report.unknown_preferences:
        names = ", ".join(sorted(report.unknown_preferences))
        click.echo(
            f"warning: unknown preference(s) {names}: each violation costs the default 0.05",
            err=True,
        )
    parts = [f"imported {report.added} run{'s' * (report.added != 1)} into {where}"]
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
    type=click.Choice(["auto", "json", "jsonl", "spec-kit"]),
    default="auto",
    show_default=True,
    help="Input format; spec-kit reads that tool's consensus database.",
)
@click.option("--skip-invalid", is_flag=True, help="Import the good runs, report each bad one.")
@_db_options
def import_(
    files: Sequence[str], fmt: str, skip_invalid: bool, db: str | None, config: str | None
) -> None:
    """Import runs from JSON, JSON Lines, standard input (-) or a spec-kit database.

    One transaction: by default one bad run rejects the whole import and the
    database stays as it was. Runs already present (same id or content) are skipped.

    \b
    Example:
      ppp-tui import runs.jsonl
      cat runs.jsonl | ppp-tui import - --skip-invalid
      ppp-tui import --format spec-kit ~/.spec-kit/consensus.db
    """
    import itertools

    from .storage.files import RecordFile, open_records

    env = _Env(db, config)
    sources: list[RecordFile] = []
    for name in files:
        if fmt == "spec-kit":
            from .storage.speckit import open_speckit

            sources.append(open_speckit(name, warn=lambda m: click.echo(f"warning: {m}", err=True)))
        else:
            sources.append(open_records(name, fmt))  # type: ignore[arg-type]
    total = sum(source.total for source in sources)
    chained = itertools.chain.from_iterable(source.records for source in sources)
    existed = env.db_path.exists()
    try:
        with env.store(create=True) as store, _progress(total) as bar:
            step = None
            if bar is not None:
                task = bar.add_task("importing", total=total)
                step = lambda n: bar.advance(task, n)  # noqa: E731
            report = store.import_records(chained, skip_invalid=skip_invalid, progress=step)
    except BaseException:
        if not existed:  # a failed first import leaves no empty database behind
            from .storage.store import remove_database

            remove_database(env.db_path)
        raise
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


@cli.command()
@click.option("--stage", help="Only this stage's runs.")
@click.option("--json", "as_json", is_flag=True, help="A JSON list of runs.")
@_db_options
def runs(stage: str | None, as_json: bool, db: str | None, config: str | None) -> None:
    """List runs with the agent selected under the configured weights and the mark.

    \b
    Example:
      ppp-tui runs --stage plan
      ppp-tui runs --json | jq '.[] | select(.regret > 0)'
    """
    from .faces import number
    from .reports import Scores

    env = _Env(db, config)
    settings = env.settings()
    with env.store() as store:
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
    if as_json:
        emit_json(rows)
        return
    click.echo(
        f"{'id':<22} {'spec':<14} {'stage':<10} {'task type':<16} {'agents':>6}"
        f"  {'selected':<14} {'preferred':<14} {'regret':>7}"
    )
    for row in rows:
        click.echo(
            f"{row['id'][:22]:<22} {(row['spec_id'] or '')[:14]:<14}"
            f" {(row['stage'] or '')[:10]:<10}"
            f" {row['task_type']:<16} {row['agents']:>6}  {row['selected'][:14]:<14}"
            f" {(row['preferred'] or '')[:14]:<14} {number(row['regret']):>7}"
        )
    click.echo(f"{len(rows)} run{'s' * (len(rows) != 1)}", err=True)


@cli.command()
@click.argument("run_id")
@click.option(
    "--technical", type=click.FloatRange(0.0, 1.0), help="Technical weight to rank under."
)
@click.option("--json", "as_json", is_flag=True, help="The SPEC 7 rank document.")
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
        emit_json(rank_document(ranking, intervals))
    else:
        render_ranking(run, ranking, intervals)


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
    was = f" (was {before})" if before and before != agent else ""
    if agent is None:
        click.echo(f"{run_id}: preferred mark cleared{was}")
    else:
        click.echo(f"{run_id}: preferred agent is {agent}{was}")


@cli.command()
@click.option("--stage", help="Only this stage's runs.")
@click.option("--json", "as_json", is_flag=True, help="The SPEC 7 regret document.")
@_db_options
def regret(stage: str | None, as_json: bool, db: str | None, config: str | None) -> None:
    """Mean regret and agreement over the marked runs, under the configured weights.

    \b
    Example:
      ppp-tui regret
      ppp-tui regret --stage implement --json
    """
    from .faces import number
    from .reports import Scores, regret_document

    env = _Env(db, config)
    settings = env.settings()
    with env.store() as store:
        scores = Scores.load(store, settings, stage, marked_only=True)
        # Only marked runs are loaded; every stage of the database still gets its entry.
        stages = [s for s in store.stages() if stage is None or s == stage]
    document = regret_document(scores, stage, runs=as_json, stages=stages)
    if as_json:
        emit_json(document)
        return
    if not document["marked_runs"]:
        click.echo("no marked runs yet: mark preferred agents with `ppp-tui prefer RUN AGENT`")
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
            f"  {name[:14]:<14} {sw['technical']:.2f}/{sw['interaction']:.2f}"
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
        f"{scope}: {tuning.marked_runs} marked runs; technical {tuning.before_technical:.4g}"
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
@click.option("--stage", help="Tune this stage's weights on its own marked runs.")
@click.option("--per-stage", is_flag=True, help="Tune every stage that has marked runs.")
@click.option("--write", is_flag=True, help="Save the tuned weights to config.toml.")
@click.option("--json", "as_json", is_flag=True, help="The SPEC 7 tune document(s).")
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
    from .reports import Scores, provenance, tune_document, tune_scope, tune_stages
    from .storage.config_write import save_weights

    if stage is not None and per_stage:
        raise click.UsageError("--stage and --per-stage exclude each other")
    env = _Env(db, config)
    settings = env.settings()
    with env.store() as store:
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
        click.echo(f"saved to {env.config_path}", err=True)


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
                stream.write(json.dumps(_clean(rows), ensure_ascii=False, indent=1) + "\n")
            else:
                writer = csv.DictWriter(stream, fieldnames=EXPORT_COLUMNS, lineterminator="\n")
                writer.writeheader()
                writer.writerows(_clean(row) for row in rows)
    except OSError as error:
        raise click.ClickException(f"{out}: cannot write ({error.strerror or error})") from None
    if out != "-":
        click.echo(f"exported {len(rows)} rows to {out}", err=True)


@cli.group()
def config() -> None:
    """Show, create or check config.toml (SPEC 5)."""


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
                "db": str(env.db_path),
                **settings_document(settings),
            }
        )
        return
    state = "" if env.config_path.exists() else " (no file: the defaults apply)"
    click.echo(f"# config: {env.config_path}{state}\n# database: {env.db_path}")
    click.echo(render_settings(settings))


@config.command()
@click.option("--force", is_flag=True, help="Overwrite an existing file.")
@_db_options
def init(force: bool, db: str | None, config: str | None) -> None:
    """Write the example config.toml, with the seeds' stage weights."""
    from .storage.config_write import init_config

    env = _Env(db, config)
    path = init_config(env.config_path, force=force)
    click.echo(f"wrote {path}")


@config.command()
@_db_options
def validate(db: str | None, config: str | None) -> None:
    """Check config.toml; exit 1 with the first problem."""
    env = _Env(db, config)
    settings = env.settings()
    if not env.config_path.exists():
        click.echo(f"{env.config_path}: no file; the defaults apply")
        return
    stages = len(settings.stage_weights)
    click.echo(
        f"{env.config_path}: valid (global {settings.weights.technical:g}/"
        f"{settings.weights.interaction:g}, {stages} stage table{'s' * (stages != 1)})"
    )


def main() -> None:
    cli(prog_name="ppp-tui")
