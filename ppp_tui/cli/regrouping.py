"""`group` and `ungroup`: runs read from sessions put together, or apart, after the import."""

from __future__ import annotations

import click

from ..core.wording import counted
from ..safe_text import inline
from .common import Env, db_options


def _index_for_search(env: Env) -> None:
    """The new rows into a SQLite file's full-text index at once, as an import does (a
    database another process keeps locked has them indexed by its next search); a team
    store has no such index to keep."""
    from ..storage.search import update_index

    if env.server() is None:
        update_index(env.db_path, 5.0)


@click.command()
@click.argument("run_ids", nargs=-1, required=True, metavar="RUN_ID RUN_ID...")
@click.option(
    "--name", metavar="NAME", help="The grouped run's id (else derived from its sessions)."
)
@db_options
def group(run_ids: tuple[str, ...], name: str | None, db: str | None, config: str | None) -> None:
    """Put runs read from sessions together: one run of all their agents.

    For sessions of one task that import kept apart (their first prompts differ, or
    they ran far apart in time). Without --name the run's id is the one import gives
    these sessions as one run: `session-` and a hash of their keys. Marks, their
    history and ratings by hand follow the agents; a reviewer who had marked several
    of the runs keeps the latest mark. A later import keeps the grouping.

    \b
    Example:
      ppp-tui group session-1a2b3c4d5e6f session-0f9e8d7c6b5a
      ppp-tui group session-1a2b3c4d5e6f session-0f9e8d7c6b5a --name rate-limit
    """
    from ..storage.sessions.regroup import group_runs

    if len(set(run_ids)) < 2:
        raise click.UsageError("give two runs or more to group")
    env = Env(db, config)
    with env.store() as store:
        done = group_runs(store, tuple(store.resolve_run_id(r) for r in run_ids), name)
    _index_for_search(env)
    count = len(done.agents)
    click.echo(
        f"grouped {counted(len(done.runs), 'run')} into {inline(done.run_id)}"
        f" ({count} agent{'s' * (count != 1)}: {inline(', '.join(done.agents))})"
    )
    for reviewer in done.marked_twice:
        from ..storage.reviewers import shown

        click.echo(
            f"note: {inline(shown(reviewer))} had marked more than one of these runs:"
            " the latest mark is current, the others are in its history"
        )


@click.command()
@click.argument("run_id")
@db_options
def ungroup(run_id: str, db: str | None, config: str | None) -> None:
    """Give each session of a run its own run again.

    Each run gets the id and its agent the name import gives a session alone; marks,
    their history and ratings by hand follow the agents.

    \b
    Example:
      ppp-tui ungroup session-1a2b3c4d5e6f
    """
    from ..storage.sessions.regroup import ungroup_run

    env = Env(db, config)
    with env.store() as store:
        done = ungroup_run(store, store.resolve_run_id(run_id))
    _index_for_search(env)
    click.echo(f"ungrouped {inline(done.run_id)} into {counted(len(done.runs), 'run')}:")
    for new, agent in done.runs:
        click.echo(f"  {inline(new)}  {inline(agent)}")
