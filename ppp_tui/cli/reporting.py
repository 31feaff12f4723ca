"""`ppp-tui report RUN_ID`: one run as a report to share, in Markdown or as one HTML page.

Written to standard output, or with -o to a file: a file that exists is replaced
whole (the report is written beside it, then renamed over it), and a folder, a device
or a named pipe is refused with one line.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

import click

from ..safe_text import inline
from .common import Env, db_options, reviewer_options


def write_file(path: Path, text: str) -> None:
    """Write `text` to `path` whole or not at all: beside it, then renamed over it."""
    from ..storage.config import file_kind
    from ..storage.durable import sync_directory

    try:
        status = path.stat()
    except FileNotFoundError:
        status = None
    except OSError as error:
        raise click.ClickException(f"{inline(path)}: cannot write ({error.strerror})") from None
    if status is not None and not stat.S_ISREG(status.st_mode):
        kind = file_kind(status.st_mode)
        raise click.ClickException(f"{inline(path)}: {kind}, not a file; nothing written")
    partial = path.with_name(f".{path.name}.{os.getpid()}.partial")
    try:
        with partial.open("x", encoding="utf-8", newline="\n") as stream:
            stream.write(text)
            stream.flush()
            os.fsync(stream.fileno())
        if status is not None:
            os.chmod(partial, stat.S_IMODE(status.st_mode))
        os.replace(partial, path)
    except OSError as error:
        partial.unlink(missing_ok=True)
        raise click.ClickException(
            f"{inline(path)}: cannot write ({error.strerror or error})"
        ) from None
    sync_directory(path.parent)


@click.command()
@click.argument("run_id")
@click.option(
    "--markdown", "fmt", flag_value="markdown", default=True, help="Markdown (the default)."
)
@click.option("--html", "fmt", flag_value="html", help="One self-contained HTML page.")
@click.option(
    "--out",
    "-o",
    type=click.Path(allow_dash=True),
    default="-",
    help="The file to write (replaced if it exists); default: standard output.",
)
@reviewer_options(every=False)
@db_options
def report(
    run_id: str, fmt: str, out: str, reviewer: str | None, db: str | None, config: str | None
) -> None:
    """Write one run as a report to share: the task, each agent's scores and rank under
    the current weights, every question with its options and answer, each agent's
    changes of files (diffs folded), and each reviewer's mark.

    \b
    Example:
      ppp-tui report session-1a2b3c4d5e6f --markdown -o report.md
      ppp-tui report session-1a2b --html -o report.html
    """
    from ..analysis.report import load_report, render

    env = Env(db, config, reviewer)
    settings = env.settings()
    with env.store() as store:
        rid = store.resolve_run_id(run_id)
        text = render(load_report(store, rid, settings), fmt)
    if out == "-":
        click.echo(text, nl=False)
        return
    write_file(Path(out), text)
    click.echo(f"wrote the report of {inline(rid)} to {inline(out)}", err=True)
