"""Reading the score inputs: each run's agents, their scores, counts and penalties.

The hot paths (regret, tuning, the runs list) read flat per-agent columns in a couple of
queries: one row per run from the packed columns (`run_scores`, packs.py), the penalties
summed in SQL under the current settings, so a change of the penalty settings needs no
re-import. The app's first page reads the same rows without numpy.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..core.model import MAX_PENALTY
from ..core.scoring import penalty_for
from ..core.settings import Settings
from . import packs
from .damage import check, is_unit
from .database import stage_condition
from .reviewers import Scope

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from ..core.columns import AgentColumns

# A store's query: rows of SQL with its parameters.
Query = Callable[..., list[Any]]


@dataclass
class AgentInputs:
    """What an agent's PPP score needs (`Store.first_runs`)."""

    name: str
    technical: float
    counts: tuple[int, ...] | None  # low, medium, high questions, violations; None: no trajectory
    penalty: float = 0.0  # the violations' penalty sum under the settings
    failed: bool = False  # its output is a failure: it never ranks above a working agent


@dataclass(frozen=True)
class RunAgents:
    """A run's agents with their score inputs, in position order (`Store.first_runs`)."""

    id: str
    stage: str | None
    preferred: str | None
    stated: bool  # states a preference other than no_preference
    agents: list[AgentInputs]


def agent_columns(
    query: Query,
    settings: Settings,
    scope: Scope,
    stage: str | None = None,
    marked_only: bool = False,
    limit: int | None = None,
) -> AgentColumns:
    """Flat per-agent columns of every run, for the array paths.

    A run's preferred agent is `scope`'s reviewer's mark. Only `stage`'s runs if given;
    only marked runs with `marked_only` (all that regret and tuning look at), and then
    with a scope of every reviewer a run comes once per reviewer who marked it (each
    mark one observation; `reviewers` says whose); only the first `limit` runs by id
    (the app's first page while the rest loads). One scan of one row per run: the run and its
    packed agent columns (`run_scores`, see packs.py); the large text columns are
    never read.
    """
    import numpy as np

    from ..core.columns import AgentColumns

    rows = _packed_rows(query, scope, stage, marked_only, limit)
    every = scope.all_reviewers and marked_only
    reviewers = [row[9] for row in rows] if every else None
    count = len(rows)
    run_ids = np.empty(count, dtype=object)
    stages = np.empty(count, dtype=object)
    preferred = np.empty(count, dtype=object)
    ids, stage_col, preferred_col, stated, names, lengths, technical, counts_col, failed_col = (
        list(zip(*rows, strict=True))[:9] if rows else ((),) * 9
    )
    run_ids[:], stages[:], preferred[:] = ids, stage_col, preferred_col
    per_run = np.fromiter(map(len, technical), np.int64, count) // 8
    vocabulary, name_codes = _name_codes(names, lengths)
    counts = np.frombuffer(b"".join(counts_col), "<i4").reshape(-1, 4).astype(np.int64)
    has_trajectory = counts[:, 3] != packs.NO_TRAJECTORY
    counts[~has_trajectory] = 0
    technical_col = np.frombuffer(b"".join(technical), "<f8").astype(np.float64)
    # Unscored agents are packed as NaN and ranked as the settings say.
    unscored = np.isnan(technical_col)
    technical_col[unscored] = settings.unscored_technical
    # An outside edit's values (a score of 7) would skew every figure silently.
    check(bool(((technical_col >= 0.0) & (technical_col <= 1.0)).all()))
    check(len(technical_col) == len(counts) and bool((counts >= 0).all()))
    columns = AgentColumns(
        run_ids=run_ids,
        stages=stages,
        preferred=preferred,
        stated=np.array(stated, dtype=bool),
        run_index=np.repeat(np.arange(count), per_run),
        vocabulary=vocabulary,
        name_codes=name_codes,
        technical=technical_col,
        has_trajectory=has_trajectory,
        q_low=counts[:, 0],
        q_medium=counts[:, 1],
        q_high=counts[:, 2],
        violations=counts[:, 3],
        failed=np.fromiter(
            (
                flag
                for packed, n in zip(failed_col, per_run.tolist(), strict=True)
                for flag in packs.split_failed(packed, n)
            ),
            bool,
            int(per_run.sum()),
        ),
        penalty=_penalties(
            query,
            settings,
            run_ids,
            np.cumsum(per_run) - per_run,
            counts[:, 3],
            only_loaded=limit is not None,
        ),
        unscored=unscored if unscored.any() else None,
        reviewers=None if reviewers is None else np.array(reviewers, dtype=object),
    )
    # Each violation costs at most MAX_PENALTY (a sum past that: an outside edit).
    check(bool((columns.penalty <= MAX_PENALTY * np.maximum(columns.violations, 1)).all()))
    return columns


def first_runs(
    query: Query, settings: Settings, reviewer: str, ids: Sequence[str]
) -> list[RunAgents]:
    """The runs `ids` names, in its order, with their agents' score inputs, without
    numpy (the app's first page draws before numpy is imported)."""
    import struct

    runs = []
    for (
        run_id,
        stage,
        preferred,
        stated,
        names,
        lengths,
        technical,
        counts,
        failed,
    ) in _packed_rows(query, Scope(reviewer), None, False, None, ids):
        n = len(technical) // 8
        split = packs.split_names(names, lengths)
        flat = struct.unpack(f"<{4 * n}i", counts)
        flags = packs.split_failed(failed, n)
        unscored = settings.unscored_technical
        agents = [
            AgentInputs(
                split[k],
                unscored if value != value else value,  # NaN: unscored
                None if flat[4 * k + 3] == packs.NO_TRAJECTORY else flat[4 * k : 4 * k + 4],
                failed=flags[k],
            )
            for k, value in enumerate(struct.unpack(f"<{n}d", technical))
        ]
        check(all(is_unit(agent.technical) for agent in agents))
        runs.append(RunAgents(run_id, stage, preferred, bool(stated), agents))
    by_id = {run.id: run for run in runs}
    for run_id, slot, total in _penalty_sums(query, settings, list(by_id)):
        check(type(total) in (float, int) and 0 <= total <= MAX_PENALTY * 1e9)
        by_id[run_id].agents[slot].penalty = total
    return [by_id[run_id] for run_id in ids if run_id in by_id]


def _packed_rows(
    query: Query,
    scope: Scope,
    stage: str | None,
    marked_only: bool,
    limit: int | None,
    ids: Sequence[str] | None = None,
) -> list[Any]:
    """(id, stage, preferred agent, states_preferences, the run_scores columns, and with
    every reviewer's marks the reviewer) of every run (or those `agent_columns` asks
    for, or those `ids` names) by id."""
    where: list[str] = []
    params: list[Any] = []
    every = scope.all_reviewers and marked_only
    if every:
        marks = "JOIN marks AS m ON m.run_id = runs.id"
    else:
        marks = f"{'' if marked_only else 'LEFT '}JOIN marks AS m"
        marks += " ON m.run_id = runs.id AND m.reviewer = ?"
        params.append(scope.reviewer)
    if stage is not None:
        condition, stage_params = stage_condition(stage)
        where.append(condition)
        params += stage_params
    if ids is not None:
        where.append(f"runs.id IN ({', '.join('?' * len(ids))})")
        params += ids
    rows = query(
        "SELECT runs.id, runs.stage, m.agent, runs.states_preferences,"
        " s.names, s.name_lengths, s.technical, s.counts, s.failed"
        f"{', m.reviewer' if every else ''}"
        f" FROM runs {marks} LEFT JOIN run_scores AS s ON s.run_id = runs.id"
        f"{' WHERE ' + ' AND '.join(where) if where else ''} ORDER BY runs.id"
        f"{', m.reviewer' if every else ''}"
        f"{' LIMIT ?' if limit is not None else ''}",
        [*params, limit] if limit is not None else params,
    )
    if rows and any(row[4] is None for row in rows):
        rows = _unpacked(query, rows)
    # Ids are text: a NULL or a number sorts first, a blob last (an outside edit).
    check(not rows or (type(rows[0][0]) is str and type(rows[-1][0]) is str))
    return rows


def _unpacked(query: Query, rows: list[Any]) -> list[Any]:
    """`rows` with the packs of runs that have none (an outside edit) built from agents."""
    found = {
        pack[0]: pack
        for pack in packs.from_agent_rows(
            query(
                f"{packs.AGENT_ROWS} WHERE run_id NOT IN (SELECT run_id FROM run_scores)"
                " ORDER BY run_id, position"
            )
        )
    }
    result = []
    for row in rows:
        if row[4] is None:
            # A run whose agents were all deleted has none.
            pack = found.get(row[0]) or packs.pack(row[0], [])
            row = (*row[:4], *pack[1:], *row[9:])
        result.append(row)
    return result


def _penalties(
    query: Query,
    settings: Settings,
    run_ids: npt.NDArray[np.object_],
    first_agent: npt.NDArray[np.int64],
    violations: npt.NDArray[np.int64],
    only_loaded: bool = False,
) -> npt.NDArray[np.float64]:
    """Each agent's violation penalty sum under `settings`, computed in SQL.

    `first_agent` is where each run's agents start in the flat columns. With
    `only_loaded` SQL sums only the loaded runs' violations (worth it for a few).
    """
    import numpy as np

    penalty = np.zeros(len(violations))
    if not violations.any():
        return penalty
    sums = _penalty_sums(query, settings, run_ids.tolist() if only_loaded else None)
    if not sums:
        return penalty
    # Runs not loaded (another stage, unmarked) are skipped; a run loaded once per
    # reviewer has its agents that many times.
    first_of: dict[str, list[int]] = {}
    for run_id, first in zip(run_ids.tolist(), first_agent.tolist(), strict=True):
        first_of.setdefault(run_id, []).append(first)
    where, values = [], []
    for run_id, slot, total in sums:
        for first in first_of.get(run_id, ()):
            where.append(first + slot)
            values.append(total)
    penalty[where] = values
    return penalty


def _penalty_sums(
    query: Query, settings: Settings, run_ids: list[str] | None
) -> list[tuple[str, int, float]]:
    """(run id, agent slot by position, violation penalty sum under `settings`) of
    every agent with violations, or of the runs `run_ids` only (worth it for a few)."""
    pers = settings.personalization
    # With `run_ids`, those runs' trajectories (trajectory ids are agent ids).
    loaded = (
        "trajectory_id IN (SELECT id FROM agents WHERE run_id IN (SELECT value FROM json_each(?)))"
    )
    only_loaded = run_ids is not None
    loaded_ids = [json.dumps(run_ids)] if only_loaded else []
    names = [
        row[0]
        for row in query(
            "SELECT DISTINCT preference FROM trajectory_violations"
            " WHERE severity = 'error'" + (f" AND {loaded}" if only_loaded else ""),
            loaded_ids,
        )
    ]
    cases = " ".join("WHEN ? THEN ?" for _ in names)
    params: list[Any] = []
    for name in names:
        params += [name, penalty_for(name, settings)]
    error_cost = f"CASE preference {cases} ELSE 0 END" if names else "0"
    params += [
        pers.warning_penalty,
        pers.minor_penalty,
        pers.major_penalty,
        pers.critical_penalty,
    ]
    # Trajectory ids are agent ids.
    return query(
        # An agent's slot is its rank by position in its run (positions may have
        # gaps after an outside edit).
        "SELECT agents.run_id, (SELECT count(*) FROM agents AS other"
        " WHERE other.run_id = agents.run_id AND other.position < agents.position),"
        " v.total FROM (SELECT trajectory_id,"
        " SUM(COALESCE(penalty, CASE severity"
        f" WHEN 'error' THEN {error_cost} WHEN 'warning' THEN ? WHEN 'minor' THEN ?"
        " WHEN 'major' THEN ? WHEN 'critical' THEN ? END)) AS total"
        " FROM trajectory_violations"
        + (f" WHERE {loaded}" if only_loaded else "")
        + " GROUP BY trajectory_id) AS v JOIN agents ON agents.id = v.trajectory_id",
        [*params, *loaded_ids],
    )


def _name_codes(names: Iterable[str], lengths: Iterable[bytes]) -> tuple[Any, Any]:
    """(sorted distinct names, each agent's index into them) from packed names.

    Runs mostly share a few line-ups of agents, so each distinct one is split once.
    """
    from itertools import chain

    import numpy as np

    lineups: dict[tuple[str, bytes], tuple[str, ...]] = {}
    keys = list(zip(names, lengths, strict=True))
    for key in set(keys):
        lineups[key] = tuple(packs.split_names(*key))
    vocabulary = sorted(set(chain.from_iterable(lineups.values())))
    code = {name: i for i, name in enumerate(vocabulary)}
    coded = {key: tuple(code[name] for name in lineup) for key, lineup in lineups.items()}
    per_run = [coded[key] for key in keys]
    total = sum(map(len, per_run))
    vocabulary_array = np.empty(len(vocabulary), dtype=object)
    vocabulary_array[:] = vocabulary
    return vocabulary_array, np.fromiter(chain.from_iterable(per_run), np.int64, total)
