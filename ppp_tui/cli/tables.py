"""The command line's view of one run's ranking: its `rank --json` document and its
plain-text table, and fitting text to a column."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import click

from ..core.model import Run
from ..core.regions import Region
from ..core.scoring import Ranking
from ..core.sensitivity import Flip
from ..safe_text import inline, is_terminal, number


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


@dataclass
class Column:
    """One column of a plain-text table: its header, its cells (already text), how it
    aligns, and what may happen to it on a narrow terminal: `drop` gives the order in
    which columns go (1 first; 0 never), `drop_late` keeps it until the others cut to
    their least still do not fit, `short` shorter cells it takes before any column is
    cut (a date without its time), `least` the narrowest it is cut to ("…"), and
    `cut_last` keeps it whole while other columns can give way (a run's id)."""

    header: str
    cells: list[str]
    right: bool = False
    drop: int = 0
    least: int | None = None  # None: never cut
    cut_last: bool = False
    drop_late: bool = False
    short: list[str] | None = None
    width: int = field(init=False)

    def __post_init__(self) -> None:
        self.width = max([len(self.header), *map(len, self.cells)])

    def shorten(self) -> None:
        """Take the short cells."""
        if self.short is not None:
            self.cells, self.short = self.short, None
            self.width = max([len(self.header), *map(len, self.cells)])


def terminal_width() -> int | None:
    """The width of the terminal standard output writes to, or None for a pipe or a
    file (which then get every column whole)."""
    import shutil
    import sys

    if not is_terminal(sys.stdout):
        return None
    return shutil.get_terminal_size().columns


def fit(columns: list[Column], width: int | None, gap: int = 1) -> list[Column]:
    """The columns that fit `width` (None: all, whole): the droppable ones go in their
    order until the rest fits (the late ones only while the rest would not fit cut),
    then those with short cells take them, then the cuttable ones narrow, the widest
    first (those to be cut last only when no other can)."""
    shown = list(columns)
    if width is None:
        return shown

    def total() -> int:
        return sum(c.width for c in shown) + gap * (len(shown) - 1)

    def cut_total() -> int:
        return sum(
            c.width if c.least is None or c.cut_last else min(c.width, c.least) for c in shown
        ) + gap * (len(shown) - 1)

    droppable = sorted((c for c in columns if c.drop), key=lambda c: c.drop)
    for column in droppable:
        if total() <= width:
            break
        if not column.drop_late:
            shown.remove(column)
    for column in droppable:
        if column.drop_late and cut_total() > width:
            shown.remove(column)
    for column in shown:
        if total() > width:
            column.shorten()
    for last in (False, True):
        while total() > width:
            cuttable = [
                c for c in shown if c.least is not None and c.width > c.least and c.cut_last == last
            ]
            if not cuttable:
                break
            max(cuttable, key=lambda c: c.width).width -= 1
    return shown


def table_lines(columns: list[Column], width: int | None, gap: int = 1) -> list[str]:
    """The header and rows of `columns` fitted to `width` (see `fit`)."""
    shown = fit(columns, width, gap)
    space = " " * gap

    def cell(column: Column, text: str) -> str:
        text = text if len(text) <= column.width else text[: column.width - 1] + "…"
        return text.rjust(column.width) if column.right else text.ljust(column.width)

    rows = len(columns[0].cells) if columns else 0
    lines = [space.join(cell(c, c.header) for c in shown).rstrip()]
    for i in range(rows):
        lines.append(space.join(cell(c, c.cells[i]) for c in shown).rstrip())
    return lines


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
    agents = ranking.agents
    columns = [
        Column("#", [str(a.rank) for a in agents], right=True),
        Column("agent", [inline(a.name) for a in agents], least=10),
        Column("technical", [number(None if a.unscored else a.technical) for a in agents], True),
        Column("R_Proact", [number(a.r_proact, signed=True) for a in agents], True, drop=3),
        Column("R_Pers", [number(a.r_pers, signed=True) for a in agents], True, drop=4),
        Column("interact", [number(a.interaction, signed=True) for a in agents], True, drop=2),
        Column("final", [number(a.final) for a in agents], right=True),
        Column("questions l/m/h", ["{}/{}/{}".format(*a.questions) for a in agents], drop=1),
        Column("flags", [inline(", ".join(a.flags)) for a in agents], least=6),
    ]
    # Two spaces before the table, as the heading's line has none.
    width = terminal_width()
    for line in table_lines(columns, None if width is None else width - 2, gap=2):
        click.echo(f"  {line}".rstrip())
    if flips:
        spans = ", ".join(f"{inline(f.agent)} {f.start:.2f}-{f.end:.2f}" for f in flips)
        click.echo(f"  flips: {spans}")
    click.echo()
