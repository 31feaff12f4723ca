"""`import` between a SQLite database and a PostgreSQL team store, either way.

`ppp-tui import old.db --db postgresql://...` moves a team in: the runs the store lacks
come over whole (storage/transfer.py), then every reviewer's marks with their history
for the runs both hold, as `import other.db` merges them between two files, and the
ratings given on one side (storage/transfer_ratings.py); the judge's cached answers
come too. `ppp-tui import postgresql://... --db copy.db` takes a copy
back the same way. Each is one transaction of the target's: all or nothing. Again, it
adds nothing. Every other import (JSON, sessions, spec-kit) goes into a store as into
a file (import_export.py; storage/import_server.py writes it).
`ppp-tui demo --db postgresql://...` writes the demo into a temporary SQLite file and
brings that in the same way.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import click

from ..core.wording import counted, left_out
from ..safe_text import inline

if TYPE_CHECKING:
    from ..storage.location import ServerURL
    from ..storage.transfer import Copied
    from .common import Env


def team_import(files: Sequence[str], env: Env, agents: bool) -> bool:
    """Import between a SQLite database and a PostgreSQL store when either end is a
    server's database (True); False for every other import, the usual one (into the
    store as into a file: `Store.import_records` and the sessions' writing take either)."""
    from ..storage.location import is_server_url, parse_server_url

    target = env.server()
    sources = [name for name in files if is_server_url(name)]
    if target is None and not sources:
        return False
    if target is not None and sources:
        raise click.UsageError("import between two PostgreSQL stores: use pg_dump and pg_restore")
    if target is not None:
        return not agents and _into_server(files, target, env)
    if len(files) != 1:
        raise click.UsageError("a PostgreSQL store is imported in a command of its own")
    _from_server(parse_server_url(files[0]), env)
    return True


def _into_server(files: Sequence[str], server: ServerURL, env: Env) -> bool:
    """Other ppp-tui databases brought into the store whole (True); False when none
    of `files` is one."""
    from ..storage.merge import is_ppp_database, read_marks
    from ..storage.store import Store
    from ..storage.transfer import bring_in

    ours = [name for name in files if name != "-" and is_ppp_database(Path(name))]
    if not ours:
        return False
    if len(ours) != len(files):
        raise click.UsageError("other ppp-tui databases are imported in a command of their own")
    with env.store(create=True) as store:
        for name in files:
            history = read_marks(Path(name))  # checked as `import other.db` checks it
            with Store.open(Path(name)) as source:
                copied, merged = bring_in(source, store, history)
            _say(name, str(server), copied, merged)
    return True


def _from_server(server: ServerURL, env: Env) -> None:
    from ..storage.importer import ImportReport
    from ..storage.store import Store
    from ..storage.store_server import ServerStore
    from ..storage.swap import build_beside, link_new
    from ..storage.transfer import bring_in, mark_history

    with ServerStore.connect(server) as source:
        history = mark_history(source)
        done: list[tuple[Copied, tuple[int, int, int]]] = []

        def fill(store: Store) -> ImportReport:
            done[:] = [bring_in(source, store, history)]
            return ImportReport()

        if os.path.lexists(env.db_path):
            with env.store(create=True) as store:
                fill(store)
        else:
            # Built beside and put in place when complete, as a first import is.
            with build_beside(env.db_path, fill) as (scratch, _):
                if not link_new(scratch, env.db_path):
                    with env.store(create=True) as store:
                        fill(store)
    from ..storage.search import update_index

    update_index(env.db_path, 5.0)  # as after any import: the first search builds nothing
    _say(str(server), str(env.db_path), *done[0])


def _say(source: str, target: str, copied: Copied, merged: tuple[int, int, int]) -> None:
    added, _, absent = merged
    runs = counted(copied.added, "run")
    parts = [f"{inline(source)}: {runs} copied with their marks into {inline(target)}"]
    if copied.present or added:
        parts.append(f"{copied.present} already there, {counted(added, 'mark')} merged into them")
    if copied.ratings or copied.efforts:
        ratings = counted(copied.ratings, "rating")
        efforts = counted(copied.efforts, "judged effort")
        parts.append(f"{ratings} and {efforts} brought into them")
    if copied.differ:
        parts.append(f"{copied.differ} given differently on each side, left as they were")
    if absent:
        parts.append(left_out(absent, "the target"))
    if copied.judgments:
        parts.append(counted(copied.judgments, "cached judge answer"))
    click.echo("; ".join(parts))


def demo_into_server(env: Env, count: int, seed: int, replace: bool) -> None:
    """`demo` into a store: the demo written to a temporary SQLite file (as `demo`
    writes one), then brought in whole; a store holding runs is kept unless `replace`."""
    import tempfile

    from ..storage.database import StoreError
    from ..storage.demo import write_demo
    from ..storage.store import Store
    from ..storage.transfer import bring_in
    from .common import progress_bar, report_import

    with env.store(create=True) as store:
        held = store.count()
        if held and not replace:
            raise StoreError(
                f"{store.path}: already holds {held} runs; use --replace to write a fresh"
                " demo database"
            )
        with tempfile.TemporaryDirectory(prefix="ppp-tui-demo-") as folder:
            path = Path(folder) / "demo.db"
            with progress_bar(count, "generating") as step:
                report = write_demo(path, count, seed, progress=step, sessions=True)
            with Store.open(path) as source:
                bring_in(source, store, [], replace=replace)
        report_import(report, str(store.path))
