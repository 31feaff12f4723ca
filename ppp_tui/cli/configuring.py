"""`config show`, `config init` and `config validate`."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from ..safe_text import inline, json_escape, literal
from .common import Env, db_options, emit_json

if TYPE_CHECKING:
    from ..core.settings import Weights


@click.group()
def config() -> None:
    """Show, create or check config.toml."""


@config.command()
@click.option("--json", "as_json", is_flag=True, help="The effective settings as JSON.")
@db_options
def show(as_json: bool, db: str | None, config: str | None) -> None:
    """The effective configuration, and which file it comes from."""
    from ..storage.config_write import render_settings, settings_document

    env = Env(db, config)
    settings = env.settings()
    if as_json:
        document = settings_document(settings)
        emit_json(
            {
                "path": str(env.config_path),
                "exists": env.config_path.exists(),
                "ignored": env.config_note,
                "db": env.db_name(),
                **document,
                # Always there: null without a [ppp.judge] table.
                "judge": document.get("judge"),
            }
        )
        return
    state = "" if env.config_path.exists() else " (no file: the defaults apply)"
    click.echo(f"# config: {inline(env.config_path)}{state}")
    if env.config_note:
        click.echo(f"# {inline(env.config_note)}")
    click.echo(f"# database: {inline(env.db_name())}")
    # TOML reads \uXXXX in quoted keys and strings as the character itself.
    click.echo(literal(json_escape(render_settings(settings))))


@config.command()
@click.option("--force", is_flag=True, help="Overwrite an existing file.")
@db_options
def init(force: bool, db: str | None, config: str | None) -> None:
    """Write the example config.toml, with the recommended stage weights."""
    from ..storage.config_write import init_config

    env = Env(db, config)
    path = init_config(env.config_path, force=force)
    click.echo(f"wrote {inline(path)}")
    if env.config_note:
        click.echo(f"note: {inline(env.config_note)}", err=True)


@config.command()
@db_options
def validate(db: str | None, config: str | None) -> None:
    """Check config.toml; exit 1 with the first problem.

    Keys ppp-tui does not read and penalty names outside the preference catalogue are
    kept, with one warning line each on standard error.
    """
    from ..storage.config import config_warnings, read_text

    env = Env(db, config)
    if env.config_note:
        click.echo(f"note: {inline(env.config_note)}", err=True)
    settings = env.settings()
    text = read_text(env.config_path)
    if text is None:
        click.echo(f"{inline(env.config_path)}: no file; the defaults apply")
        return
    for warning in config_warnings(text):
        click.echo(f"warning: {inline(env.config_path)}: {inline(warning)}", err=True)
    stages = len(settings.stage_weights)
    click.echo(
        f"{inline(env.config_path)}: valid (global {_label(settings.weights)},"
        f" {stages} stage table{'s' * (stages != 1)})"
    )


def _label(weights: Weights) -> str:
    """The weights as `config validate` names them: 0.7/0.3, or 0.5/0.2/0.8 off the pair form."""
    if weights.is_pair:
        return f"{weights.technical:g}/{weights.interaction:g}"
    return f"{weights.technical:g}/{weights.proactivity:g}/{weights.personalization:g}"
