"""`demo`: a generated database to explore."""

from __future__ import annotations

import click

from .common import Env, db_options, progress_bar, report_import


@click.command()
@click.option(
    "--runs", "count", type=click.IntRange(1, 10_000_000), default=2000, show_default=True
)
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--replace", is_flag=True, help="Replace a database that already holds runs.")
@db_options(demo=False)
def demo(count: int, seed: int, replace: bool, db: str | None, config: str | None) -> None:
    """Write a realistic, deterministic demo database (the same runs for the same seed).

    On top of the generated runs come three runs read from coding agents' sessions
    (conversations with questions asked through each agent's tool, and test runs).

    \b
    Example:
      ppp-tui demo --db demo.db --runs 5000 --seed 7
      ppp-tui browse --db demo.db
    """
    from ..storage.demo import write_demo

    env = Env(db, config)
    server = env.server()
    if server is not None:
        from .team_import import demo_into_server

        demo_into_server(env, count, seed, replace)
        return
    with progress_bar(count, "generating") as step:
        report = write_demo(env.db_path, count, seed, replace=replace, progress=step, sessions=True)
    report_import(report, str(env.db_path))
