"""Export from the app: the runs on screen, one row per run and agent with all their
scores under the weights being edited, in the same CSV and JSON as `ppp-tui export`.
No textual here: the app calls it in a worker thread."""

from __future__ import annotations

import csv
import json
import os
import time
from collections.abc import Collection, Iterable
from pathlib import Path
from typing import Any

from ..cli.documents import EXPORT_COLUMNS, export_rows
from ..core.errors import PPPError
from ..core.scores import Scores
from ..core.settings import Settings
from ..safe_text import json_escape
from ..storage.store import Store

FORMATS = ("csv", "json")


def export_path(directory: Path, fmt: str, now: float | None = None) -> Path:
    """A new file in `directory`, named after the time: ppp-tui-export-20261124-091500.csv."""
    stamp = time.strftime("%Y%m%d-%H%M%S", time.localtime(now))
    return directory / f"ppp-tui-export-{stamp}.{fmt}"


def export_runs(
    store: Store,
    settings: Settings,
    run_ids: Collection[str] | None,
    path: Path,
    fmt: str,
) -> int:
    """Write the rows of `run_ids` (None: every run) to `path`; the number of rows.

    The file appears whole or not at all (written beside it, then renamed)."""
    if fmt not in FORMATS:
        raise PPPError(f"unknown export format {fmt!r} (csv or json)")
    scores = Scores.load(store, settings)
    wanted = None if run_ids is None else set(run_ids)
    rows = [row for row in export_rows(store, scores) if wanted is None or row["run_id"] in wanted]
    partial = path.with_name(f".{path.name}.partial")
    try:
        with partial.open("w", encoding="utf-8", newline="") as stream:
            if fmt == "json":
                text = json.dumps([_clean(row) for row in rows], ensure_ascii=False, indent=1)
                stream.write(json_escape(text) + "\n")
            else:
                writer = csv.DictWriter(stream, fieldnames=EXPORT_COLUMNS, lineterminator="\n")
                writer.writeheader()
                writer.writerows(_csv_rows(rows))
        os.replace(partial, path)
    except OSError as error:
        partial.unlink(missing_ok=True)
        raise PPPError(f"{path}: cannot write ({error.strerror or error})") from None
    return len(rows)


def _clean(row: dict[str, Any]) -> dict[str, Any]:
    """Floats without binary noise (0.645, not 0.6450000000000001), as the CLI writes."""
    return {key: round(value, 10) if type(value) is float else value for key, value in row.items()}


def _csv_rows(rows: Iterable[dict[str, Any]]) -> Iterable[dict[str, Any]]:
    """Booleans as true/false (JSON's words), a missing value as an empty cell."""
    for row in rows:
        yield {
            key: ("true" if value else "false") if type(value) is bool else value
            for key, value in _clean(row).items()
        }
