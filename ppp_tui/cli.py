"""The `ppp-tui` command line (SPEC 7). Heavy imports stay inside the commands."""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import click

from .core.errors import PPPError

if TYPE_CHECKING:
    from .storage.files import FileFormat


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
    if isinstance(value, float):
        return round(value, 10)
    if isinstance(value, dict):
        return {key: _clean(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_clean(item) for item in value]
    return value


def emit_json(document: Any, lines: bool = False) -> None:
    click.echo(json.dumps(_clean(document), ensure_ascii=False, indent=None if lines else 2))


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="ppp-tui")
def cli() -> None:
    """Score, compare and tune multi-agent coding runs with the PPP framework."""


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
def score(files: Sequence[str], technical: float | None, fmt: FileFormat, as_json: bool) -> None:
    """Rank the runs of JSON / JSON Lines FILES without touching the database.

    \b
    Example:
      ppp-tui score runs.jsonl
      cat runs.jsonl | ppp-tui score - --technical 0.6 --json
    """
    from .core.scoring import rank_run
    from .core.settings import Settings, Weights
    from .faces import rank_document, render_ranking
    from .storage.files import read_records

    settings = Settings()
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
def classify(questions: Sequence[str], context: str | None, as_json: bool) -> None:
    """Classify the effort of each QUESTION (standard input, one per line, if none).

    \b
    Example:
      ppp-tui classify "Which database: PostgreSQL or MySQL?"
      ppp-tui classify --json < questions.txt
    """
    from .core.effort import classify as classify_question

    asked = list(questions) or [line.strip() for line in sys.stdin if line.strip()]
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


def main() -> None:
    cli(prog_name="ppp-tui")
