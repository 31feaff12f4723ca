"""Runs in and scores out: `import`, `technical` (your own technical scores), `export`."""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import click

from ..core.wording import counted, left_out
from ..safe_text import clean, inline, is_terminal, literal
from .common import Env, byte_progress, db_options, progress_bar, report_import, reviewer_options

if TYPE_CHECKING:
    from ..core.sessions.grouping import Grouping
    from ..storage.importer import ImportReport
    from ..storage.sessions.importing import SessionFile, SessionReport
    from ..storage.store import Store

SESSION_FORMATS = ("claude-code", "codex", "gemini-cli")
# core.sessions.grouping's DEFAULT_WINDOW_HOURS (a test holds them equal): that module and
# the importer's load with the import itself, not with every command (`browse` starts
# sooner without them).
DEFAULT_WINDOW_HOURS = 24.0


@click.command(name="import")
@click.argument("files", nargs=-1, type=click.Path(allow_dash=True))
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["auto", "json", "jsonl", "spec-kit", "userville", *SESSION_FORMATS]),
    default="auto",
    show_default=True,
    help="Input format; auto decides by content: a SQLite file is read as spec-kit's"
    " consensus database, the PPP paper's rollouts as userville, a coding agent's"
    " session transcript as its agent's (claude-code, codex, gemini-cli), other text as"
    " JSON or JSON Lines.",
)
@click.option("--skip-invalid", is_flag=True, help="Import the good runs, report each bad one.")
@click.option(
    "--agents",
    "agents",
    is_flag=True,
    help="Also look for sessions where Claude Code, Codex CLI and Gemini CLI keep them.",
)
@click.option("--run", "run_name", metavar="NAME", help="Put every session named into one run.")
@click.option("--one-run-per-session", is_flag=True, help="Each session its own run (no grouping).")
@click.option(
    "--window",
    type=click.FloatRange(min=0.0),
    callback=lambda ctx, param, value: _hours(value),
    default=DEFAULT_WINDOW_HOURS,
    show_default=True,
    metavar="HOURS",
    help="Sessions of one task started this many hours apart at most form one run.",
)
@click.option("--stage", metavar="STAGE", help="The stage of the runs read from sessions.")
@click.option(
    "--watch",
    is_flag=True,
    help="Import the sessions, then follow them as the agents write them (ctrl+c stops).",
)
@db_options
def import_(
    files: Sequence[str],
    fmt: str,
    skip_invalid: bool,
    agents: bool,
    run_name: str | None,
    one_run_per_session: bool,
    window: float,
    stage: str | None,
    watch: bool,
    db: str | None,
    config: str | None,
) -> None:
    """Import runs from JSON, JSON Lines, standard input (-), a spec-kit database,
    the PPP paper's UserVille rollouts, or coding agents' own sessions.

    One transaction: by default one bad run rejects the whole import and the
    database stays as it was. Runs already present (same id or content) are skipped.
    spec-kit keeps its database at ~/.code/consensus_artifacts.db; each stage run
    (every agent's answer to one attempt at a spec's stage) becomes one run.

    Another ppp-tui database brings its marks (every reviewer's, with their history)
    for the runs both databases hold, by run id; merging again adds nothing.

    Sessions of Claude Code, Codex CLI and Gemini CLI (a file, or a folder of them)
    become runs: sessions that started from the same prompt in the same repository
    within --window hours are one run, each session one of its agents. Importing
    again adds nothing; a session that has grown updates its run. With --watch,
    they are followed: a session that grows updates its run as it is written, a new
    one becomes a run, a line for each.

    \b
    Example:
      ppp-tui import runs.jsonl
      cat runs.jsonl | ppp-tui import - --skip-invalid
      ppp-tui import ~/.code/consensus_artifacts.db
      ppp-tui import colleague.db
      ppp-tui import --format userville rollouts.jsonl
      ppp-tui import --agents
      ppp-tui import ~/.claude/projects/-home-me-app ~/.codex/sessions/2026/11
      ppp-tui import --agents --watch
    """
    from ..core.sessions.grouping import Grouping
    from ..storage.sessions.importing import SessionReport, find_files

    if not files and not agents:
        raise click.UsageError("name the files to import, or use --agents")
    if watch:
        if fmt != "auto" or "-" in files:
            raise click.UsageError(
                "--watch follows session files and folders, each recognised by its content"
                " (without --format)"
            )
        from .watching import watch_sessions

        names = list(files) + (_agent_places(SessionReport()) if agents else [])
        grouping = Grouping(window, one_run_per_session, run_name, stage)
        watch_sessions(names, grouping, Env(db, config))
        return
    from .team_import import team_import

    if team_import(files, Env(db, config), agents):
        return
    if fmt == "auto" and files and not agents and _merge_databases(files, Env(db, config)):
        return
    if fmt in SESSION_FORMATS or agents or run_name or one_run_per_session or stage:
        session_only = True
    else:
        session_only = False
    session_report = SessionReport()
    names = list(files)
    if agents:
        names += _agent_places(session_report)
    found, others = find_files(names, fmt, session_report)
    if found or session_only or not others:
        if others:
            listed = ", ".join(inline(name) for name in others[:3])
            raise click.ClickException(
                f"{listed}: not a session transcript (import run files in a command of their own)"
            )
        env = Env(db, config)
        _import_sessions(
            found, session_report, env, Grouping(window, one_run_per_session, run_name, stage)
        )
        _index_for_search(env)
        return
    env = Env(db, config)
    _import_runs(others, fmt, skip_invalid, env)
    _index_for_search(env)


def _index_for_search(env: Env) -> None:
    """Bring the full-text index up to date with what was imported, so that the first
    search has nothing to build (storage/search.py). A database another process keeps
    locked is left as it is: its first search builds the index. A team store keeps
    no index of a file's kind."""
    from ..storage.search import update_index

    if env.server() is None and os.path.exists(env.db_path):
        update_index(env.db_path, 5.0)


def _merge_databases(files: Sequence[str], env: Env) -> bool:
    """With other ppp-tui databases named: bring in their marks, by run id (True);
    False if none of `files` is one."""
    from pathlib import Path

    from ..storage.merge import is_ppp_database

    ours = [name for name in files if name != "-" and is_ppp_database(Path(name))]
    if not ours:
        return False
    if len(ours) != len(files):
        raise click.UsageError(
            "other ppp-tui databases bring only their marks: import them in a command of their own"
        )
    with env.store() as store:
        if any(Path(name).samefile(store.path) for name in ours if store.path.exists()):
            raise click.UsageError(f"{inline(str(store.path))} is the database itself")
        merged = store.merge_marks([Path(name) for name in ours])
        for name, (added, repeats, absent) in zip(ours, merged, strict=True):
            notes = [f"{repeats} already here"] if repeats else []
            if absent:
                notes.append(left_out(absent, "this database"))
            extra = f" ({'; '.join(notes)})" if notes else ""
            click.echo(f"{inline(name)}: {counted(added, 'mark')} merged{extra}")
    return True


def _hours(value: float) -> float:
    """--window's hours: any number from 0 up, inf for no limit; nan is none."""
    if math.isnan(value):
        raise click.BadParameter("nan is not a number of hours", param_hint="'--window'")
    return value


def _agent_places(report: SessionReport) -> list[str]:
    """The default places that exist, each said on standard error with what it holds."""
    from ..storage.sessions.discover import default_places, walk

    found = []
    for tool, place in default_places().items():
        try:
            there = place.is_dir()
        except OSError as error:  # a folder on the way it may not enter
            click.echo(f"{tool.value}: {inline(place)} cannot be read ({error.strerror})", err=True)
            continue
        if there:
            count = sum(1 for _ in walk(place))
            files = f"{count} file{'s' * (count != 1)}"
            click.echo(f"{tool.value}: {files} in {inline(place)}", err=True)
            found.append(str(place))
        else:
            click.echo(f"{tool.value}: nothing at {inline(place)}", err=True)
    return found


def _import_sessions(
    found: Sequence[SessionFile], report: SessionReport, env: Env, options: Grouping
) -> None:
    from ..storage.sessions.importing import file_sizes, read_files, write_sessions

    with byte_progress(file_sizes(found), "reading sessions") as step:
        sessions = read_files(found, report, step)
    for line in report.warnings:
        click.echo(f"warning: {inline(line)}", err=True)
    for line in report.errors:
        click.echo(f"error: {inline(line)}", err=True)
    if sessions:
        if env.server() is not None or os.path.lexists(env.db_path):
            with env.store(create=True) as store:
                write_sessions(store, sessions, options, report)
        else:
            from ..storage.importer import ImportReport
            from ..storage.swap import build_beside, link_new

            def fill(store: Store) -> ImportReport:
                write_sessions(store, sessions, options, report)
                return ImportReport()

            with build_beside(env.db_path, fill) as (scratch, _):
                if not link_new(scratch, env.db_path):
                    with env.store(create=True) as store:
                        report.added = report.updated = report.unchanged = report.removed = 0
                        report.staged = report.older = 0
                        report.runs.clear()
                        write_sessions(store, sessions, options, report)
    if not report.files and not report.errors:
        click.echo("error: no session transcripts found", err=True)
        raise SystemExit(1)
    parts = [
        f"imported {report.sessions} session{'s' * (report.sessions != 1)}"
        f" into {inline(env.db_name())}: {report.added} new run{'s' * (report.added != 1)}"
    ]
    if report.updated:
        parts.append(f"{report.updated} updated")
    if report.unchanged:
        staged = f", {report.staged} given the stage" if report.staged else ""
        parts.append(f"{report.unchanged} unchanged{staged}")
    if report.removed:
        parts.append(f"{report.removed} left with no session and removed")
    if report.older:
        parts.append(
            f"{report.older} session{'s' * (report.older != 1)} already stored from a later"
            " read (left as stored)"
        )
    parts.append(f"{report.asks} question{'s' * (report.asks != 1)} asked through a tool")
    if report.warnings:
        parts.append(f"{len(report.warnings)} warning{'s' * (len(report.warnings) != 1)}")
    click.echo("; ".join(parts))
    _list_runs(report)
    if report.errors:
        raise SystemExit(1)


# Runs written that an import lists by id (the rest: `ppp-tui runs`).
_LISTED = 20


def _list_runs(report: SessionReport) -> None:
    """The runs an import wrote, a line each: their ids are what `show` and `prefer` take."""
    from .tables import cut

    for rid, kind, agents, task in report.runs[:_LISTED]:
        click.echo(f"  {kind:<7} {inline(rid)}  {cut(', '.join(agents), 40)}  {cut(task, 50)}")
    if len(report.runs) > _LISTED:
        more = len(report.runs) - _LISTED
        click.echo(f"  … and {more} more (ppp-tui runs lists every run)")


def _import_runs(files: Sequence[str], fmt: str, skip_invalid: bool, env: Env) -> None:
    from ..storage.files import ChainedRecords, RecordFile
    from ..storage.formats import open_any

    sources: list[RecordFile] = []
    for name in files:
        sources.append(open_any(name, fmt, lambda m: click.echo(f"warning: {inline(m)}", err=True)))
    total = sum(source.total for source in sources)
    chained = ChainedRecords(source.records for source in sources)
    with progress_bar(total, "importing") as step:
        if env.server() is not None or os.path.lexists(env.db_path):
            with env.store(create=True) as store:
                report = store.import_records(chained, skip_invalid=skip_invalid, progress=step)
        else:
            # Built beside and put in place when complete: a failed first import leaves no
            # database behind, without deleting one another import may have just made.
            from ..storage.swap import import_new

            report = import_new(env.db_path, chained, skip_invalid=skip_invalid, progress=step)
    report_import(report, env.db_name())


@click.command()
@click.argument("file", type=click.Path(allow_dash=True))
@db_options
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
    from ..storage.technical import read_scores

    scores = read_scores(file)
    env = Env(db, config)
    with env.store() as store:
        runs = store.set_technical(scores)
    click.echo(
        f"set {len(scores)} technical score{'s' * (len(scores) != 1)}"
        f" in {runs} run{'s' * (runs != 1)}"
    )


@click.command()
@click.option(
    "--format", "fmt", type=click.Choice(["csv", "json"]), default="csv", show_default=True
)
@click.option(
    "--out",
    "-o",
    type=click.Path(dir_okay=False, allow_dash=True),
    default="-",
    help="Output file (default: standard output).",
)
@reviewer_options(every=False)
@db_options
def export(fmt: str, out: str, reviewer: str | None, db: str | None, config: str | None) -> None:
    """Export one row per run and agent with all scores (configured weights).

    In CSV, yes/no columns (has_trajectory, selected, preferred) read true or false,
    as in JSON, and a missing value (no stage, no trajectory's scores) is an empty cell.

    \b
    Example:
      ppp-tui export --format csv --out scores.csv
      ppp-tui export --format json | jq length
    """
    from ..analysis.export import export_rows, write_rows
    from ..core.scores import Scores

    env = Env(db, config, reviewer)
    settings = env.settings()
    with env.store() as store:
        scores = Scores.load(store, settings)
        rows = list(export_rows(store, scores))
    try:
        with click.open_file(out, "w", encoding="utf-8", atomic=out != "-") as stream:
            # CSV has no escapes: exact in a file or a pipe, made safe on a terminal.
            terminal = fmt == "csv" and out == "-" and is_terminal(stream)
            write_rows(stream, rows, fmt, _safe_csv_cell if terminal else clean)
    except BrokenPipeError:
        raise  # `ppp-tui export | head`: the reader has all it wanted
    except OSError as error:
        raise click.ClickException(f"{out}: cannot write ({error.strerror or error})") from None
    if out != "-":
        click.echo(f"exported {len(rows)} rows to {inline(out)}", err=True)


def _safe_csv_cell(value: Any) -> Any:
    """A CSV value as a terminal may show it: control characters visible (newlines kept)."""
    return literal(value) if isinstance(value, str) else clean(value)
