"""Ranking agents: `score` (files, no database), `rank` (one stored run), `runs` (the list)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import click

from ..safe_text import inline
from .common import STAGE_HELP, WEIGHT, Env, db_options, emit_json, reviewer_options, stage_filter


@click.command()
@click.argument("files", nargs=-1, required=True, type=click.Path(allow_dash=True))
@click.option(
    "--technical",
    type=WEIGHT,
    help="Technical weight (interaction = 1 - technical); default: the configured weights.",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["auto", "json", "jsonl", "spec-kit"]),
    default="auto",
    show_default=True,
    help="Input format; auto decides by content (a SQLite file is spec-kit's database).",
)
@click.option("--json", "as_json", is_flag=True, help="One rank document per run (JSON Lines).")
@db_options
def score(
    files: Sequence[str],
    technical: float | None,
    fmt: str,
    as_json: bool,
    db: str | None,
    config: str | None,
) -> None:
    """Rank the runs of JSON / JSON Lines FILES (or spec-kit databases) without touching
    the database.

    \b
    Example:
      ppp-tui score runs.jsonl
      cat runs.jsonl | ppp-tui score - --technical 0.6 --json
    """
    from ..core.scoring import rank_run
    from ..core.settings import Weights
    from ..storage.formats import open_any
    from .tables import rank_document, render_ranking

    del db  # score never touches the database
    settings = Env(None, config).settings()
    weights = Weights.from_technical(technical) if technical is not None else None
    for name in files:
        warn = lambda m: click.echo(f"warning: {inline(m)}", err=True)  # noqa: E731
        for record in open_any(name, fmt, warn).records:
            run = record.parse()
            ranking = rank_run(run, settings, weights)
            if as_json:
                emit_json(rank_document(ranking, None, run), lines=True)
            else:
                render_ranking(run, ranking)


@click.command()
@click.argument("run_id")
@click.option("--technical", type=WEIGHT, help="Technical weight to rank under.")
@click.option("--json", "as_json", is_flag=True, help="The run's agents and scores as JSON.")
@reviewer_options(every=False)
@db_options
def rank(
    run_id: str,
    technical: float | None,
    as_json: bool,
    reviewer: str | None,
    db: str | None,
    config: str | None,
) -> None:
    """Rank one run's agents (the configured weights of its stage unless --technical).

    Also lists which agent ranks first over which technical weights (its flip points).

    \b
    Example:
      ppp-tui rank run-0042
      ppp-tui rank run-0042 --technical 0.6 --json
    """
    from ..core.regions import regions
    from ..core.scoring import rank_run
    from ..core.sensitivity import flips
    from ..core.settings import Weights
    from .tables import rank_document, render_ranking

    env = Env(db, config, reviewer)
    settings = env.settings()
    with env.store() as store:
        run = store.get_run(store.resolve_run_id(run_id))
    weights = Weights.from_technical(technical) if technical is not None else None
    ranking = rank_run(run, settings, weights)
    # Who ranks first over every technical weight (the slider's whole range).
    intervals = flips(ranking.agents, settings)
    if as_json:
        # And over the whole triangle of the three weights: each agent's polygon.
        emit_json(rank_document(ranking, intervals, run, regions(ranking.agents, settings)))
    else:
        render_ranking(run, ranking, intervals)


def _time_order(row: dict[str, Any]) -> tuple[int, float, str, str]:
    """Runs in time order (created_at as a moment, whatever its offset or precision);
    runs without a readable time last, by id."""
    from ..core.times import moment

    created = row["created_at"]
    at = moment(created)
    if at is not None:
        return (0, at, "", row["id"])
    return (1, 0.0, str(created or ""), row["id"])


def _waiting(row: dict[str, Any]) -> str:
    """The mark before the task of a run an agent of which waits for the user."""
    from ..core.sessions.waiting import MARK

    return f"{MARK} " if row["waiting_for_user"] else ""


@click.command()
@click.option("--stage", help=STAGE_HELP)
@click.option(
    "--search",
    metavar="TEXT",
    help="Only the runs whose task, id, spec id, an agent's output or a question holds every"
    " word of TEXT (the last one as a prefix), the most relevant first.",
)
@click.option("--json", "as_json", is_flag=True, help="A JSON list of runs.")
@reviewer_options(every=False)
@db_options
def runs(
    stage: str | None,
    search: str | None,
    as_json: bool,
    reviewer: str | None,
    db: str | None,
    config: str | None,
) -> None:
    """List runs, oldest first, with the agent selected under the configured weights and
    the mark.

    \b
    Example:
      ppp-tui runs --stage plan
      ppp-tui runs --search "webhook retries"
      ppp-tui runs --json | jq '.[] | select(.regret > 0)'
    """
    from ..core.scores import Scores
    from ..core.times import compact_time
    from ..safe_text import inline, line_start, number
    from .tables import Column, cut, table_lines, terminal_width

    env = Env(db, config, reviewer)
    settings = env.settings()
    with env.store() as store:
        stage = stage_filter(store, stage)
        scores = Scores.load(store, settings, stage)
        infos = {info.id: info for info in store.run_infos(stage)}
        # The first search of a database builds its index, waiting for a lock as long as
        # any other command would.
        found = None if search is None else store.search(search, lock_wait=5.0)
    arrays, outcome = scores.arrays, scores.outcome
    rows = []
    for i, run_id in enumerate(arrays.run_ids):
        info = infos[run_id]
        regret = outcome.regret[i]
        rows.append(
            {
                "id": run_id,
                "spec_id": info.spec_id,
                "stage": info.stage,
                "task_type": info.task_type,
                "created_at": info.created_at,
                "agents": info.agents,
                "task": info.task,
                "selected": arrays.names[i, outcome.selected[i]],
                "preferred": info.preferred,
                "regret": None if regret != regret else float(regret),
                "waiting_for_user": info.waiting,
            }
        )
    if found is None:
        rows.sort(key=_time_order)
    else:
        place = {run_id: k for k, run_id in enumerate(found)}
        rows = sorted((row for row in rows if row["id"] in place), key=lambda row: place[row["id"]])
    if as_json:
        emit_json(rows)
        return
    # On a terminal the table takes its width: the ids (what `rank` and `prefer` take),
    # the picks and the regret stay, and the dates and tasks (what tells runs apart)
    # while they fit cut; task type, agents, spec and stage go first, then the dates
    # their time of day.
    times = [row["created_at"] for row in rows]
    columns = [
        Column("id", [inline(row["id"]) for row in rows], least=12, cut_last=True),
        Column(
            "date",
            [compact_time(t) or cut(t, 16) or "—" for t in times],
            short=[compact_time(t, with_time=False) or cut(t, 10) or "—" for t in times],
            drop=5,
            drop_late=True,
        ),
        Column("spec", [inline(row["spec_id"]) for row in rows], drop=3, least=8),
        Column("stage", [inline(row["stage"]) for row in rows], drop=4, least=6),
        Column("task type", [row["task_type"] for row in rows], drop=1),
        Column("agents", [str(row["agents"]) for row in rows], right=True, drop=2),
        # What a run of sessions is known by (its id says nothing): on one line, cut.
        Column(
            "task",
            [_waiting(row) + cut(line_start(row["task"], 60), 60) for row in rows],
            drop=6,
            drop_late=True,
            least=12,
        ),
        Column("selected", [inline(row["selected"]) for row in rows], least=8),
        Column("preferred", [inline(row["preferred"]) for row in rows], least=8),
        Column("regret", [number(row["regret"]) for row in rows], right=True),
    ]
    for line in table_lines(columns, terminal_width()):
        click.echo(line)
    click.echo(f"{len(rows)} run{'s' * (len(rows) != 1)}", err=True)
