"""`classify`: the effort of questions, from the arguments or standard input."""

from __future__ import annotations

import sys
from collections.abc import Sequence

import click

from ..core.errors import PPPError
from ..safe_text import inline
from .common import db_options, emit_json


def _stdin_is_terminal() -> bool:
    return sys.stdin.isatty()


@click.command()
@click.argument("questions", nargs=-1)
@click.option("--context", help="The run's task text: a question it answers is low effort.")
@click.option("--json", "as_json", is_flag=True, help='[{"question", "effort", "parts"}]')
@db_options
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
    from ..core.effort import classify as classify_question

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
