"""Technical scores from the user's own evaluation (`ppp-tui technical FILE`).

A file of (run_id, agent, technical) rows: CSV with a header naming those three columns
(others are ignored), or JSON (a list of objects with those keys, or JSON Lines); told
apart by content. Each row is checked (a known run, one of its agents, a number in
[0, 1], no pair twice); the first bad row is reported with its line and nothing is
written.
"""

from __future__ import annotations

import csv
import io
import json
import math
from dataclasses import dataclass
from typing import Any

from ..core.errors import PPPError
from .files import check_csv_header, json_lines, read_text

COLUMNS = ("run_id", "agent", "technical")


@dataclass(frozen=True)
class Score:
    run_id: str
    agent: str
    technical: float
    where: str  # "FILE: line 3" or "FILE: $[2]", for messages


def _score(raw: Any, where: str, source: str) -> Score:
    if not isinstance(raw, dict):
        raise PPPError(f"{source}: {where}: expected an object with {', '.join(COLUMNS)}")
    missing = [key for key in COLUMNS if raw.get(key) in (None, "")]
    if missing:
        raise PPPError(f"{source}: {where}: missing {', '.join(missing)}")
    run_id, agent, value = raw["run_id"], raw["agent"], raw["technical"]
    if isinstance(value, str):
        try:
            value = float(value)
        except ValueError:
            raise PPPError(
                f"{source}: {where}: technical must be a number, got {value!r}"
            ) from None
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise PPPError(f"{source}: {where}: technical must be a number, got {value!r}")
    if not 0.0 <= value <= 1.0:
        raise PPPError(f"{source}: {where}: technical must be in [0, 1], got {value!r}")
    return Score(str(run_id), str(agent), float(value), f"{source}: {where}")


def read_scores(name: str) -> list[Score]:
    """The rows of a technical-score file ("-": standard input), checked for shape."""
    source, text = read_text(name)
    stripped = text.lstrip()
    scores: list[Score] = []
    if stripped.startswith(("[", "{")):
        try:
            value = json.loads(text)
        except json.JSONDecodeError:
            value = None
            for number, line in enumerate(json_lines(text), start=1):
                if not line.strip():
                    continue
                try:
                    item = json.loads(line)
                except json.JSONDecodeError as error:
                    raise PPPError(f"{source}: line {number}: invalid JSON: {error.msg}") from None
                scores.append(_score(item, f"line {number}", source))
        if value is not None:
            items = value if isinstance(value, list) else [value]
            scores = [_score(item, f"$[{i}]", source) for i, item in enumerate(items)]
    else:
        reader = csv.DictReader(io.StringIO(text))
        check_csv_header(reader, f"{source}: line 1", COLUMNS)
        for row in reader:
            scores.append(_score(row, f"line {reader.line_num}", source))
    if not scores:
        raise PPPError(f"{source}: no technical scores in it")
    seen: dict[tuple[str, str], str] = {}
    for score in scores:
        key = (score.run_id, score.agent)
        if key in seen:
            raise PPPError(
                f"{score.where}: {score.agent} of run {score.run_id} is given twice"
                f" (also at {seen[key].removeprefix(source + ': ')})"
            )
        seen[key] = score.where
    return scores
