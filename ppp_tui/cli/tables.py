"""The command line's view of one run's ranking: its `rank --json` document and its
plain-text table, and fitting text to a column."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import click

from ..core.model import Run
from ..core.regions import Region
from ..core.scoring import Ranking
from ..core.sensitivity import Flip
from ..safe_text import inline, number


def rank_document(
    ranking: Ranking,
    flips: Sequence[Flip] | None = None,
    run: Run | None = None,
    regions: Sequence[Region] | None = None,
) -> dict[str, Any]:
    """The `rank --json` document; with `flips`, also the technical-weight
    intervals in which each agent ranks first (proactivity and personalization weighing
    the same), and with `regions`, the polygon of the whole weight triangle in which
    each agent ranks first."""
    document: dict[str, Any] = {
        "run_id": ranking.run_id,
        "stage": ranking.stage,
        "weights": ranking.weights.document(),
        "ppp_enabled": ranking.ppp_enabled,
        "best_agent": ranking.best_agent,
        "confidence": ranking.confidence,
        "margin": ranking.margin,
        "agents": [
            {
                "name": a.name,
                "rank": a.rank,
                # An unscored agent's score is none (it ranks with the configured
                # placeholder, docs/sessions.md).
                "technical": None if a.unscored else a.technical,
                "technical_source": a.technical_source,
                "r_proact": a.r_proact,
                "r_pers": a.r_pers,
                "interaction": a.interaction,
                "final": a.final,
                "has_trajectory": a.has_trajectory,
                "questions": dict(zip(("low", "medium", "high"), a.questions, strict=True)),
                "violations": a.violations,
                "failed": a.failure is not None,
                "failure": a.failure,
            }
            for a in ranking.agents
        ],
    }
    if run is not None:
        # The run's consensus result as its source recorded it (spec-kit: status,
        # agreements, conflicts, artifacts_count, synthesis, verdict), or null.
        document["consensus"] = None if run.consensus is None else json.loads(run.consensus)
    if flips is not None:
        document["flips"] = [flip.document() for flip in flips]
    if regions is not None:
        document["regions"] = [region.document() for region in regions]
    return document


def cut(text: str | None, width: int) -> str:
    """`text` fitted to `width` columns, control characters escaped: cut ones end in "…"
    so the cut shows."""
    text = inline(text)
    return text if len(text) <= width else text[: width - 1] + "…"


def render_ranking(run: Run, ranking: Ranking, flips: Sequence[Flip] | None = None) -> None:
    """A plain table a person reads in a terminal; with `flips`, a line listing who ranks
    first over which technical weights."""
    w = ranking.weights
    margin = "" if ranking.margin is None else f", margin {ranking.margin:.3f}"
    stage = inline(run.stage) or "no stage"
    click.secho(f"{inline(run.id)}  ({stage})", bold=True, nl=False)
    click.echo(
        f"  weights {w.label()}"
        f"{'' if ranking.ppp_enabled else '  PPP off'}"
        f"  best: {inline(ranking.best_agent)} ({ranking.confidence:.3f}{margin})"
    )
    header = f"  {'#':>2}  {'agent':<16} {'technical':>9} {'R_Proact':>9} {'R_Pers':>8}"
    click.echo(header + f" {'interact':>9} {'final':>7}  questions l/m/h  flags")
    for a in ranking.agents:
        low, medium, high = a.questions
        click.echo(
            f"  {a.rank:>2}  {cut(a.name, 16):<16}"
            f" {number(None if a.unscored else a.technical):>9} "
            f"{number(a.r_proact, signed=True):>9} {number(a.r_pers, signed=True):>8} "
            f"{number(a.interaction, signed=True):>9} {number(a.final):>7}  "
            f"{low:>5}/{medium}/{high:<6}  {', '.join(a.flags)}"
        )
    if flips:
        spans = ", ".join(f"{inline(f.agent)} {f.start:.2f}-{f.end:.2f}" for f in flips)
        click.echo(f"  flips: {spans}")
    click.echo()
