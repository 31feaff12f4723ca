"""The `ppp-tui` command line: the group and `main`; each module holds a group of commands.

Heavy imports stay inside the commands, so `ppp-tui --help` starts fast.
"""

from __future__ import annotations

import click

from .ab import ab
from .browsing import browse, serve
from .classifying import classify
from .common import Group
from .configuring import config
from .demo_data import demo
from .import_export import export, import_, technical
from .judging import judge
from .leaderboard import leaderboard
from .next_mark import next_
from .scoring import rank, runs, score
from .showing import show
from .tuning import prefer, regret, tune


@click.group(cls=Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="ppp-tui")
def cli() -> None:
    """Score, compare and tune multi-agent coding runs with the PPP framework.

    \b
    Start with:
      ppp-tui demo               # a demo database to explore
      ppp-tui browse             # the terminal app
      ppp-tui import runs.jsonl  # your own runs (JSON or JSON Lines)
      ppp-tui import --agents    # your coding agents' own sessions
    """


for _command in (
    score,
    classify,
    browse,
    serve,
    import_,
    demo,
    runs,
    rank,
    show,
    technical,
    judge,
    prefer,
    regret,
    tune,
    next_,
    ab,
    leaderboard,
    export,
    config,
):
    cli.add_command(_command)


def main() -> None:
    cli(prog_name="ppp-tui")
