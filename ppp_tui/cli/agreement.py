"""`agreement`: how far reviewers agree on the runs two or more of them marked."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import click

from ..core.wording import counted
from ..safe_text import inline
from .common import STAGE_HELP, Env, db_options, emit_json, stage_filter

if TYPE_CHECKING:
    from ..core.agreement import Agreement


@click.command()
@click.option("--stage", help=STAGE_HELP)
@click.option("--json", "as_json", is_flag=True, help="One JSON document: every figure.")
@db_options
def agreement(stage: str | None, as_json: bool, db: str | None, config: str | None) -> None:
    """How far reviewers agree: Krippendorff's alpha, Cohen's kappa for each pair of
    reviewers and the raw agreement, over the runs marked by two or more reviewers,
    overall and per stage.

    Each reviewer's current mark of a run counts. Alpha and kappa are 1 for perfect
    agreement and 0 for what chance alone would give; they are undefined when every
    mark names the same agent.

    \b
    Example:
      ppp-tui agreement
      ppp-tui agreement --stage implement --json
    """
    from ..core.agreement import agreement as measure
    from ..core.agreement import agreement_by_stage
    from ..core.stages import label

    env = Env(db, config)
    with env.store() as store:
        stage = stage_filter(store, stage)
        marks = store.all_marks(stage)
    overall = measure(marks)
    per_stage = agreement_by_stage(marks)
    if as_json:
        emit_json(
            {
                "stage": None if stage is None else label(stage),
                **agreement_document(overall),
                "per_stage": {label(name): agreement_document(a) for name, a in per_stage},
            }
        )
        return
    where = "" if stage is None else f" in {label(stage)}"
    if not marks:
        raise click.ClickException(
            f"no marked runs{where}: reviewers mark with `ppp-tui prefer RUN AGENT --reviewer NAME`"
        )
    if not overall.shared_runs:
        raise click.ClickException(
            f"no run{where} is marked by two or more reviewers"
            f" ({counted(len(overall.reviewers), 'reviewer')},"
            f" {counted(overall.marked_runs, 'marked run')});"
            " agreement needs runs marked by several"
        )
    _render(overall, per_stage if stage is None else [])


def agreement_document(result: Agreement) -> dict[str, Any]:
    """The `--json` figures of one scope, at full precision."""
    from ..storage.reviewers import shown

    return {
        "reviewers": [shown(name) for name in result.reviewers],
        "marked_runs": result.marked_runs,
        "shared_runs": result.shared_runs,
        "marks": result.marks,
        "alpha": result.alpha,
        "raw_agreement": result.raw,
        "pairs": result.pairs,
        "agreeing_pairs": result.agreeing_pairs,
        "kappa": [
            {
                "reviewers": [shown(pair.first), shown(pair.second)],
                "runs": pair.runs,
                "agreed": pair.agreed,
                "raw_agreement": pair.raw,
                "kappa": pair.kappa,
            }
            for pair in result.by_pair
        ],
    }


def figure(value: float | None, digits: int = 3) -> str:
    """A statistic as tables show it; "—" when it is undefined."""
    return "—" if value is None else f"{value:.{digits}f}"


def _render(overall: Agreement, per_stage: list[tuple[str | None, Agreement]]) -> None:
    from ..core.stages import label
    from ..storage.reviewers import shown
    from .tables import cut

    raw = "—" if overall.raw is None else f"{overall.raw:.1%}"
    click.echo(
        f"{counted(overall.shared_runs, 'run')} marked by two or more of"
        f" {counted(len(overall.reviewers), 'reviewer')} ({counted(overall.marks, 'mark')};"
        f" {counted(overall.marked_runs, 'marked run')} in all)"
    )
    click.echo(f"Krippendorff's alpha {figure(overall.alpha)}; raw agreement {raw}")
    if overall.alpha is None:
        click.echo("  (alpha is undefined: every mark names the same agent)")
    click.echo("")
    click.echo(f"  {'reviewers':<34} {'runs':>6} {'agreed':>7} {'kappa':>7}")
    for pair in overall.by_pair:
        names = inline(f"{shown(pair.first)} / {shown(pair.second)}")
        click.echo(
            f"  {cut(names, 34):<34} {pair.runs:>6} {pair.raw or 0:>7.1%} {figure(pair.kappa):>7}"
        )
    shared = [(name, a) for name, a in per_stage if a.shared_runs]
    if len(shared) > 1:
        click.echo("")
        click.echo(f"  {'stage':<14} {'runs':>6} {'alpha':>7} {'raw':>7}")
        for name, a in shared:
            click.echo(
                f"  {cut(label(name), 14):<14} {a.shared_runs:>6} {figure(a.alpha):>7}"
                f" {a.raw or 0:>7.1%}"
            )
