"""`ab`: PPP on vs off as a paired test over your marked runs (McNemar's exact test)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import click

from ..core.wording import counted
from .common import STAGE_HELP, Env, load_marked, marks_options

if TYPE_CHECKING:
    from ..core.ab_test import ABTest
    from ..core.settings import Weights


@click.command()
@click.option("--stage", help=STAGE_HELP)
@click.option("--json", "as_json", is_flag=True, help="One JSON document: the counts and p.")
@marks_options
def ab(
    stage: str | None,
    as_json: bool,
    env: Env,
) -> None:
    """PPP on vs off: how often each picks your preferred agent, and McNemar's test.

    Over the marked runs, the PPP pick (rank 1 under the configured weights) and the
    technical-only pick (PPP off: rank 1 by technical alone) are each compared with
    the preferred agent. McNemar's exact test looks at the runs where exactly one of
    them is right: p is the chance of a split at least this uneven if PPP on and off
    were right equally often.

    \b
    Example:
      ppp-tui ab
      ppp-tui ab --stage implement --json
    """
    from ..core.ab_test import ab_test, ppp_outcomes
    from ..core.stages import label, ordered

    settings = env.settings()
    loaded = load_marked(env, settings, stage)
    stage, scores, stages = loaded.stage, loaded.scores, loaded.stages
    if not scores.arrays.marked.any():
        raise loaded.none_marked("to compare")
    on, off = ppp_outcomes(scores.arrays, settings, scores.outcome)
    overall = ab_test(on, off)
    per_stage = [
        (name, settings.weights_for(name), ab_test(on, off, scores.arrays.stage_mask(name)))
        for name in ordered(stages)
    ]
    if as_json:
        document = {
            **loaded.whose,
            "weights": settings.weights_for(stage).document(),
            **_figures(overall),
            "per_stage": {
                label(name): {"weights": weights.document(), **_figures(t)}
                for name, weights, t in per_stage
            },
        }
        _emit(document)
        return
    if not settings.enabled:
        click.echo(
            "note: PPP is off in config.toml; the PPP pick is the one the configured"
            " weights give with it on",
            err=True,
        )
    _render(overall, per_stage)


def _figures(test: ABTest) -> dict[str, Any]:
    return {
        "marked_runs": test.marked_runs,
        "ppp_agreement": test.ppp_agreement,
        "technical_agreement": test.technical_agreement,
        "both_right": test.both_right,
        "ppp_right_technical_wrong": test.ppp_only,
        "technical_right_ppp_wrong": test.technical_only,
        "both_wrong": test.both_wrong,
        "p_value": test.p_value,
    }


def _emit(document: dict[str, Any]) -> None:
    """`emit_json`'s document, but with the p-values whole: its rounding to 10 decimals
    would print a small p-value as 0."""
    import json

    from ..safe_text import clean, json_escape

    shown = clean(document)
    shown["p_value"] = document["p_value"]
    for name, figures in document["per_stage"].items():
        shown["per_stage"][name]["p_value"] = figures["p_value"]
    # `emit_json`'s layout: the document holds no long list.
    click.echo(json_escape(json.dumps(shown, indent=2, ensure_ascii=False)))


def _p(value: float) -> str:
    return f"{value:.3g}"


def _render(overall: ABTest, per_stage: list[tuple[str | None, Weights, ABTest]]) -> None:
    from ..core.stages import label
    from .tables import cut

    click.echo(
        f"PPP on vs off over {counted(overall.marked_runs, 'marked run')}"
        " (PPP off: the technical-only ranking)"
    )
    click.echo(
        f"  picks your preferred agent: PPP on {overall.ppp_right:,}"
        f" ({overall.ppp_agreement:.1%}), PPP off {overall.technical_right:,}"
        f" ({overall.technical_agreement:.1%})"
    )
    click.echo(
        f"  only one of them does in {counted(overall.discordant, 'run')}:"
        f" PPP on in {overall.ppp_only:,}, PPP off in {overall.technical_only:,}"
    )
    click.echo(f"  McNemar's exact test: p = {_p(overall.p_value)}; {_verdict(overall)}")
    rows = [(name, test) for name, _, test in per_stage if test.marked_runs]
    if len(rows) < 2:
        return  # one stage's row would repeat the figures above
    click.echo(
        f"  {'stage':<14} {'marked':>7} {'PPP on':>8} {'PPP off':>8}"
        f" {'only on':>8} {'only off':>9} {'p':>9}"
    )
    for name, test in rows:
        click.echo(
            f"  {cut(label(name), 14):<14} {test.marked_runs:>7,}"
            f" {test.ppp_agreement:>8.1%} {test.technical_agreement:>8.1%}"
            f" {test.ppp_only:>8,} {test.technical_only:>9,} {_p(test.p_value):>9}"
        )


def _verdict(test: ABTest) -> str:
    """What the p-value says at the 5% level."""
    if test.p_value >= 0.05:
        return "no significant difference (5% level)"
    better = "on" if test.ppp_only > test.technical_only else "off"
    return f"PPP {better} is right significantly more often"
