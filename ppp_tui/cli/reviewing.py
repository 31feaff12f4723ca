"""`reviewers`: who has marked, and giving one reviewer's marks to another."""

from __future__ import annotations

import click

from ..core.wording import counted
from ..safe_text import inline
from .common import Env, db_options, emit_json


@click.command()
@click.option(
    "--rename",
    nargs=2,
    metavar="OLD NEW",
    help='Give OLD\'s marks, history included, to NEW ("(unknown)": marks made before'
    " reviewers were recorded).",
)
@click.option("--json", "as_json", is_flag=True, help="JSON: every reviewer and their counts.")
@db_options
def reviewers(
    rename: tuple[str, str] | None, as_json: bool, db: str | None, config: str | None
) -> None:
    """List the reviewers who marked runs, or give one's marks to another.

    Where both had marked a run, the later mark stays the current one. Claim the
    marks a database from before reviewers holds with
    `ppp-tui reviewers --rename "(unknown)" NAME`.

    \b
    Example:
      ppp-tui reviewers
      ppp-tui reviewers --rename "(unknown)" ana
    """
    from ..storage.reviewers import checked, shown

    env = Env(db, config)
    with env.store() as store:
        if rename is not None:
            old, new = (checked(name, "--rename") for name in rename)
            moved, both = store.rename_reviewer(old, new)
            extra = (
                f"; {counted(both, 'run')} both had marked: the later mark stays" if both else ""
            )
            whose = f"of {inline(shown(old))} are {inline(shown(new))}'s now"
            click.echo(f"{counted(moved, 'mark')} {whose}{extra}")
            return
        listed = store.reviewers()
        me = env.scope().reviewer
    if as_json:
        emit_json(
            [
                {
                    "reviewer": shown(name),
                    "marked_runs": runs,
                    "marks": entries,
                    "last_marked_at": last,
                    "current": name == me,
                }
                for name, runs, entries, last in listed
            ]
        )
        return
    if not listed:
        click.echo("no marks yet: mark preferred agents with `ppp-tui prefer RUN AGENT`")
        return
    width = min(max(len(shown(name)) for name, *_ in listed), 40)
    click.echo(f"  {'reviewer':<{width}} {'runs':>7} {'marks':>7}  last marked")
    for name, runs, entries, last in listed:
        star = "*" if name == me else " "
        click.echo(
            f"{star} {inline(shown(name))[:width]:<{width}} {runs:>7,} {entries:>7,}  {last or ''}"
        )
    click.echo(f"(* the current reviewer: {inline(shown(me))})")
