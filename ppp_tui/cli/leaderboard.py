"""`leaderboard`: the agents ranked by Bradley-Terry strength fitted to your marks,
beside the same fit to the weights' picks (`core.leaderboard`)."""

from __future__ import annotations

import math
import textwrap
from typing import TYPE_CHECKING, Any

import click

from ..core.wording import counted
from .common import STAGE_HELP, Env, emit_json, load_marked, marks_options

if TYPE_CHECKING:
    from ..core.leaderboard import Fit, Leaderboard
    from ..core.settings import Settings

AGENT_WIDTH = 14  # the agent column's narrowest: the table fits 80 columns
# The table's columns after the agent's, with the spaces between them.
_FIGURES_WIDTH = 65
NOTE_WIDTH = 79  # the notes under it


@click.command()
@click.option("--stage", help=STAGE_HELP)
@click.option(
    "--json", "as_json", is_flag=True, help="One JSON document: every agent's figures, exact."
)
@marks_options
def leaderboard(
    stage: str | None,
    as_json: bool,
    env: Env,
) -> None:
    """Rank the agents by Bradley-Terry strength fitted to your marks.

    A mark says the preferred agent beat each other agent of its run. Beside that fit,
    the same fit to the picks: the rank-1 agent of each marked run under the configured
    weights, as `regret` selects it. Ratings are Elo-like (400 / ln 10 points per unit
    of log-strength, centred on the agents' mean), with 95% intervals from 200 seeded
    bootstrap resamples of the marked runs.

    \b
    Example:
      ppp-tui leaderboard
      ppp-tui leaderboard --stage implement --json
    """
    from ..core.leaderboard import leaderboard_under

    settings = env.settings()
    loaded = load_marked(env, settings, stage)
    stage = loaded.stage
    board = leaderboard_under(loaded.scores.arrays, settings)
    if board is None:
        raise loaded.none_marked("to rank the agents by")
    if as_json:
        emit_json({**loaded.whose, **leaderboard_document(board, stage, settings)})
    else:
        _render(board, stage, settings)


def leaderboard_document(
    board: Leaderboard, stage: str | None, settings: Settings
) -> dict[str, Any]:
    """`leaderboard --json`: the settings of the fit, then every agent, strongest first."""
    from ..core.leaderboard import CONFIDENCE, PRIOR_GAMES, RATING_PER_UNIT

    return {
        "stage": stage,
        "weights": settings.weights_for(stage).document(),
        "marked_runs": board.marked_runs,
        "comparisons": board.comparisons,
        "resamples": board.resamples,
        "seed": board.seed,
        "confidence": CONFIDENCE,
        "prior_games": PRIOR_GAMES,
        "rating_per_unit": RATING_PER_UNIT,
        "agents": [
            {
                "agent": agent,
                "marked_runs": int(board.runs[i]),
                "marks": {"preferred": int(board.marks.chosen[i]), **_fit(board.marks, i)},
                "picks": {"picked": int(board.picks.chosen[i]), **_fit(board.picks, i)},
            }
            for i, agent in enumerate(board.agents)
        ],
    }


def _fit(fit: Fit, i: int) -> dict[str, Any]:
    rate = float(fit.win_rate[i])
    return {
        "wins": int(fit.wins[i]),
        "comparisons": int(fit.comparisons[i]),
        "win_rate": None if math.isnan(rate) else rate,
        "strength": float(fit.strength[i]),
        "interval": [float(fit.low[i]), float(fit.high[i])],
        "rating": float(fit.rating[i]),
        "rating_interval": [float(fit.rating_low[i]), float(fit.rating_high[i])],
    }


def _render(board: Leaderboard, stage: str | None, settings: Settings) -> None:
    from ..core.leaderboard import PRIOR_GAMES
    from ..safe_text import inline
    from .tables import cut, terminal_width

    # Names whole when they fit (always in a pipe), else cut to the terminal's width.
    longest = max((len(inline(agent)) for agent in board.agents), default=0)
    columns = terminal_width()
    room = longest if columns is None else columns - _FIGURES_WIDTH
    width = max(AGENT_WIDTH, min(longest, room))
    scope = "all stages" if stage is None else f"stage {inline(stage)}"
    click.echo(
        f"{counted(board.marked_runs, 'marked run')}"
        f" ({counted(board.comparisons, 'pairwise win')}), {scope}"
    )
    click.echo(f"{'':<{width}} {'your marks':-^37} {'the picks':-^26}")
    click.echo(
        f"{'agent':<{width}} {'rating':>6} {'95% interval':>12} {'won':>4}"
        f" {'marks':>6} {'pref':>5} {'rating':>6} {'95% interval':>12} {'picked':>6}"
    )
    marks, picks = board.marks, board.picks
    for i, agent in enumerate(board.agents):
        click.echo(
            f"{cut(agent, width):<{width}} {_rating(marks, i):>6}"
            f" {_interval(marks, i):>12} {_percent(marks, i):>4} {board.runs[i]:>6,}"
            f" {marks.chosen[i]:>5,} {_rating(picks, i):>6} {_interval(picks, i):>12}"
            f" {picks.chosen[i]:>6,}"
        )
    weights = settings.weights_for(stage).label()
    if stage is None and settings.stage_weights:
        weights += " (in a stage with its own table, that table)"
    notes = [
        "rating: Bradley-Terry log-strength x 400/ln 10 (Elo-like), centred on the mean:"
        " 174 points apart, the first wins 73% of the time; 400 apart, 91%.",
        f"95% interval: {board.resamples} bootstrap resamples of the marked runs. won: pairwise"
        " win rate; marks: marked runs taken part in; pref: times preferred.",
        f"picks: each marked run's rank-1 agent under the weights {weights}.",
    ]
    held = [
        inline(agent)
        for i, agent in enumerate(board.agents)
        if marks.one_sided[i] or picks.one_sided[i]
    ]
    if held:
        notes.append(
            f"never lost or never won (marks or picks): {', '.join(held)}; the prior holds"
            f" their rating finite (each agent plays {PRIOR_GAMES:g} virtual win and"
            f" {PRIOR_GAMES:g} virtual loss against a rating of 0)."
        )
    for note in notes:
        click.echo(textwrap.fill(note, NOTE_WIDTH, subsequent_indent="  "))


def _rating(fit: Fit, i: int) -> str:
    return f"{fit.rating[i]:+.0f}"


def _interval(fit: Fit, i: int) -> str:
    return f"[{fit.rating_low[i]:+.0f}, {fit.rating_high[i]:+.0f}]"


def _percent(fit: Fit, i: int) -> str:
    rate = fit.win_rate[i]
    return "—" if math.isnan(rate) else f"{rate:.0%}"
