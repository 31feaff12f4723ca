"""Where the demo lives: the database `--demo` opens, made once into the user cache
folder and reused (marks included), and its own config.toml beside it."""

from __future__ import annotations

from pathlib import Path

import click

from ..safe_text import inline


def demo_config(path: Path) -> Path:
    """The config.toml of a demo database: beside it, named after it."""
    return path.with_name(f"{path.stem}.config.toml")


def cached_demo(quiet: bool = False) -> Path:
    """The demo database in the user cache folder: generated when missing or made by an
    older generator, else reused with its marks. Says which on standard error (only when
    it is generated, if `quiet`)."""
    import platformdirs

    from ..storage.config import APP_NAME
    from ..storage.demo import DEMO_SIZE, GENERATOR_VERSION, write_demo

    path = platformdirs.user_cache_path(APP_NAME) / "demo.db"
    stamp = path.with_name(f"{path.name}.generator")
    wanted = f"generator {GENERATOR_VERSION}, {DEMO_SIZE} runs, seed 0\n"
    try:
        current = path.exists() and stamp.read_text(encoding="utf-8") == wanted
    except OSError:
        current = False
    if current:
        if not quiet:
            click.echo(f"demo database: {inline(path)} (reused; kept between sessions)", err=True)
        return path
    click.echo(f"generating {DEMO_SIZE} demo runs into {inline(path)} …", err=True)
    stamp.unlink(missing_ok=True)
    write_demo(path, DEMO_SIZE, 0, replace=True, sessions=True)
    try:
        stamp.write_text(wanted, encoding="utf-8")
    except OSError as error:  # the demo works; it is just generated again next time
        click.echo(f"warning: {inline(stamp)}: cannot write ({error.strerror})", err=True)
    return path


def demo_config_file(path: Path) -> Path:
    """The demo's config.toml, made (with the defaults) when missing: a command given
    --demo reads it, and never the user's own."""
    config = demo_config(path)
    if not config.exists():
        config.write_text(
            "# ppp-tui: the demo database's own settings (the defaults until you save weights)\n",
            encoding="utf-8",
        )
    return config
