"""Runs in and scores out: `import`, `technical` (your own technical scores), `export`."""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

import click

from ..safe_text import clean, inline, is_terminal, literal
from .common import Env, db_options, progress_bar, report_import


@click.command(name="import")
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
@db_options
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

    from ..storage.files import RecordFile
    from ..storage.formats import open_any

    env = Env(db, config)
    sources: list[RecordFile] = []
    for name in files:
        sources.append(open_any(name, fmt, lambda m: click.echo(f"warning: {inline(m)}", err=True)))
    total = sum(source.total for source in sources)
    chained = itertools.chain.from_iterable(source.records for source in sources)
    with progress_bar(total, "importing") as step:
        if os.path.lexists(env.db_path):
            with env.store(create=True) as store:
                report = store.import_records(chained, skip_invalid=skip_invalid, progress=step)
        else:
            # Built beside and put in place when complete: a failed first import leaves no
            # database behind, without deleting one another import may have just made.
            from ..storage.swap import import_new

            report = import_new(env.db_path, chained, skip_invalid=skip_invalid, progress=step)
    report_import(report, str(env.db_path))


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
@db_options
def export(fmt: str, out: str, db: str | None, config: str | None) -> None:
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

    env = Env(db, config)
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
