"""`next`: the unmarked runs whose marks would tell the most about the technical weight."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import click

from ..core.wording import counted
from ..safe_text import inline
from .common import STAGE_HELP, Env, db_options, emit_json, reviewer_options, stage_filter

if TYPE_CHECKING:
    from ..core.next_mark import NextMarks


@click.command("next")
# 10 is core.next_mark.NEXT_RUNS, written out so that --help does not load numpy.
@click.option(
    "-n", "count", type=click.IntRange(min=1), default=10, show_default=True, help="How many runs."
)
@click.option("--stage", help=STAGE_HELP)
@click.option("--json", "as_json", is_flag=True, help="JSON: each scope's estimate, and the runs.")
@reviewer_options(every=False)
@db_options
def next_(
    count: int,
    stage: str | None,
    as_json: bool,
    reviewer: str | None,
    db: str | None,
    config: str | None,
) -> None:
    """List the unmarked runs whose marks would tell the most about the technical weight.

    Your marks leave a stretch of technical weights that fit them equally well (the
    least mean regret; all of 0-1 before the first mark). The runs whose pick changes
    nearest its middle come first: a mark of one rules out about half of the stretch,
    so `tune` pins the weight down with far fewer marks than runs marked at random.
    Mark them with `ppp-tui prefer RUN AGENT`, or `n` and `p` in the app.

    \b
    Example:
      ppp-tui next
      ppp-tui next -n 3 --stage implement --json
    """
    from ..core.next_mark import scopes, suggest
    from ..core.scores import Scores
    from ..core.stages import NO_STAGE

    env = Env(db, config, reviewer)
    settings = env.settings()
    with env.store() as store:
        stage = stage_filter(store, stage)
        # A stage's runs alone are its scope; runs without a stage share the global one.
        scores = Scores.load(store, settings, None if stage == NO_STAGE else stage)
    result = suggest(scores.lines, scopes(scores.arrays, settings, stage), count)
    where = "" if stage is None else f" in stage {stage!r}"
    if stage == NO_STAGE:
        where = " without a stage"
    if not result.unmarked_runs:
        raise click.ClickException(f"no unmarked runs{where}: every run is marked")
    if not result.suggestions:
        raise click.ClickException(
            f"none of the {result.unmarked_runs:,} unmarked runs{where} changes its pick"
            " between technical 0 and 1: no mark would tell anything about the weight"
        )
    if as_json:
        emit_json(next_document(result))
        return
    _render(result)


def next_document(result: NextMarks) -> dict[str, Any]:
    """`next --json`: every scope's estimate, then the runs to mark, the best first."""
    from ..core.stages import scope_label

    return {
        "scopes": [
            {
                "scope": scope_label(e.scope),
                "marked_runs": e.marked_runs,
                "technical": e.technical,
                "undecided": list(e.undecided),
                "centre": e.centre,
                "unmarked_runs": e.unmarked_runs,
                "changing_runs": e.changing_runs,
            }
            for e in result.estimates
        ],
        "runs": [
            {
                "run_id": s.run_id,
                "stage": s.stage,
                "scope": scope_label(s.scope),
                "flip": s.flip,
                "distance": s.distance,
                "inside": s.inside,
                "below": s.below,
                "above": s.above,
            }
            for s in result.suggestions
        ],
    }


def _render(result: NextMarks) -> None:
    """Each scope's estimate, then the runs: two tables that fit the terminal."""
    from ..core.stages import scope_label
    from .tables import Column, table_lines, terminal_width

    width = terminal_width()
    estimates = result.estimates
    columns = [
        Column("scope", [inline(scope_label(e.scope)) for e in estimates], least=8),
        Column("marked", [f"{e.marked_runs:,}" for e in estimates], right=True),
        Column("tuned", [f"{e.technical:.4f}" if e.marked_runs else "—" for e in estimates]),
        Column("undecided", [_stretch(*e.undecided) for e in estimates]),
        Column("target", [f"{e.centre:.4f}" for e in estimates], right=True),
        Column("unmarked", [f"{e.unmarked_runs:,}" for e in estimates], right=True),
        Column("changing", [f"{e.changing_runs:,}" for e in estimates], right=True),
    ]
    for line in table_lines(columns, width, gap=2):
        click.echo(line)
    click.echo()
    runs = result.suggestions
    columns = [
        Column("run", [inline(s.run_id) for s in runs], least=12, cut_last=True),
        Column("stage", [inline(s.stage) for s in runs], drop=1, least=6),
        Column("flip", [f"{s.flip:.4f}" for s in runs], right=True),
        Column("distance", [f"{s.distance:.4f}" for s in runs], right=True),
        Column(
            "pick below -> above",
            [f"{inline(s.below)} -> {inline(s.above)}" for s in runs],
            least=12,
        ),
    ]
    for line in table_lines(columns, width, gap=2):
        click.echo(line)
    click.echo(
        f"{len(runs)} of the {counted(result.changing_runs, 'run')} whose pick changes"
        f" ({result.unmarked_runs:,} unmarked)",
        err=True,
    )


def _stretch(low: float, high: float) -> str:
    """The undecided weights: one, or from-to."""
    return f"{low:.4f}" if high - low < 5e-5 else f"{low:.4f}-{high:.4f}"
