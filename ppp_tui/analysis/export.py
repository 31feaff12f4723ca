"""Export: one row per run and agent with all its scores, written as CSV or JSON.

The command line's `export` and the app's palette export write the same files through
`write_rows`: floats without binary noise, booleans as true/false in CSV (JSON's words),
a missing value as an empty CSV cell, and JSON with DEL, C1 and bidi characters escaped.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Callable, Iterable, Iterator
from typing import IO, Any

import numpy as np

from ..core.scores import Scores, finals, ranks
from ..safe_text import clean, json_escape
from ..storage.store import Store

FORMATS = ("csv", "json")


def write_rows(
    stream: IO[str],
    rows: Iterable[dict[str, Any]],
    fmt: str,
    cell: Callable[[Any], Any] = clean,
) -> None:
    """Write export rows to `stream` as `fmt` (csv or json). `cell` shows a CSV value
    (CSV has no escapes: the CLI passes one that makes control characters visible when
    the stream is a terminal)."""
    if fmt == "json":
        text = json.dumps(clean(list(rows)), ensure_ascii=False, indent=1)
        stream.write(json_escape(text) + "\n")
        return
    writer = csv.DictWriter(stream, fieldnames=EXPORT_COLUMNS, lineterminator="\n")
    writer.writeheader()
    writer.writerows(
        {
            key: ("true" if value else "false") if type(value) is bool else cell(value)
            for key, value in row.items()
        }
        for row in rows
    )


EXPORT_COLUMNS = (
    "run_id",
    "spec_id",
    "stage",
    "task_type",
    "created_at",
    "agent",
    "rank",
    "technical",
    "r_proact",
    "r_pers",
    "interaction",
    "final",
    "weight_technical",
    "weight_interaction",
    "weight_proactivity",
    "weight_personalization",
    "has_trajectory",
    "questions_low",
    "questions_medium",
    "questions_high",
    "violations",
    "penalty",
    "selected",
    "preferred",
    "failed",
)


def export_rows(store: Store, scores: Scores) -> Iterator[dict[str, Any]]:
    """One row per run and agent with all its scores under the configured weights."""
    columns, arrays, outcome = scores.columns, scores.arrays, scores.outcome
    settings = scores.settings
    info = {run.id: run for run in store.run_infos()}
    r_proact = columns.to_slots(columns.r_proact(settings), np.nan)
    r_pers = columns.to_slots(columns.r_pers(settings), np.nan)
    q_low = columns.to_slots(columns.q_low, 0)
    q_medium = columns.to_slots(columns.q_medium, 0)
    q_high = columns.to_slots(columns.q_high, 0)
    violations = columns.to_slots(columns.violations, 0)
    penalty = columns.to_slots(columns.penalty, 0.0)
    final = finals(scores)
    rank = ranks(outcome, arrays, final)
    unscored = columns.to_slots(columns.unscored, False) if columns.unscored is not None else None
    failed = columns.to_slots(
        columns.failed if columns.failed is not None else np.zeros(len(columns.technical), bool),
        False,
    )
    lines = scores.lines
    wt, wi, wp, ws = lines.tech_weights, lines.inter_weights, lines.pro_weights, lines.pers_weights

    def number(value: float) -> float | None:
        return None if np.isnan(value) else float(value)

    for i in range(len(arrays)):
        run = info[arrays.run_ids[i]]
        for slot in np.flatnonzero(arrays.valid[i]):
            name = arrays.names[i, slot]
            yield {
                "run_id": run.id,
                "spec_id": run.spec_id,
                "stage": run.stage,
                "task_type": run.task_type,
                "created_at": run.created_at,
                "agent": name,
                "rank": int(rank[i, slot]),
                # An unscored agent ranks with a placeholder but has no score.
                "technical": None
                if unscored is not None and unscored[i, slot]
                else float(arrays.technical[i, slot]),
                "r_proact": number(r_proact[i, slot]),
                "r_pers": number(r_pers[i, slot]),
                "interaction": number(arrays.interaction[i, slot]),
                "final": float(final[i, slot]),
                "weight_technical": float(wt[i]),
                "weight_interaction": float(wi[i]),
                "weight_proactivity": float(wp[i]),
                "weight_personalization": float(ws[i]),
                "has_trajectory": bool(not np.isnan(arrays.interaction[i, slot])),
                "questions_low": int(q_low[i, slot]),
                "questions_medium": int(q_medium[i, slot]),
                "questions_high": int(q_high[i, slot]),
                "violations": int(violations[i, slot]),
                "penalty": float(penalty[i, slot]),
                "selected": bool(outcome.selected[i] == slot),
                "preferred": name == run.preferred,
                "failed": bool(failed[i, slot]),
            }
