"""The `ppp-tui` command line: the group and `main`; each module holds a group of commands.

Heavy imports stay inside the commands, so `ppp-tui --help` starts fast; and a command's
module is imported only when that command runs (or help lists it), so `ppp-tui browse`
starts without the others'.
"""

from __future__ import annotations

import difflib
import importlib

import click

from .common import Group

# Each command's module and function, imported on use.
COMMANDS: dict[str, tuple[str, str]] = {
    "score": ("scoring", "score"),
    "classify": ("classifying", "classify"),
    "browse": ("browsing", "browse"),
    "serve": ("browsing", "serve"),
    "import": ("import_export", "import_"),
    "group": ("regrouping", "group"),
    "ungroup": ("regrouping", "ungroup"),
    "demo": ("demo_data", "demo"),
    "runs": ("scoring", "runs"),
    "rank": ("scoring", "rank"),
    "show": ("showing", "show"),
    "diff": ("diffing", "diff"),
    "report": ("reporting", "report"),
    "technical": ("import_export", "technical"),
    "judge": ("judging", "judge"),
    "prefer": ("tuning", "prefer"),
    "regret": ("tuning", "regret"),
    "tune": ("tuning", "tune"),
    "next": ("next_mark", "next_"),
    "ab": ("ab", "ab"),
    "agreement": ("agreement", "agreement"),
    "reviewers": ("reviewing", "reviewers"),
    "leaderboard": ("leaderboard", "leaderboard"),
    "export": ("import_export", "export"),
    "config": ("configuring", "config"),
}


class LazyGroup(Group):
    """The group whose commands are imported when asked for by name."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*COMMANDS, *self.commands})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands and cmd_name in COMMANDS:
            module, name = COMMANDS[cmd_name]
            command = getattr(importlib.import_module(f"{__name__}.{module}"), name)
            self.add_command(command, cmd_name)
        return self.commands.get(cmd_name)

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        name = click.utils.make_str(args[0])
        if self.get_command(ctx, name) is None and not name.startswith("-"):
            # A mistyped command: the nearest ones, as click does for options.
            close = difflib.get_close_matches(name, self.list_commands(ctx), n=3, cutoff=0.6)
            if close:
                named = " or ".join(repr(c) for c in close)
                ctx.fail(f"No such command {name!r}. Did you mean {named}?")
        return super().resolve_command(ctx, args)


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
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


def main() -> None:
    cli(prog_name="ppp-tui")
