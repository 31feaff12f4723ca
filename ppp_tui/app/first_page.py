"""The runs list's data, and its first page worked out without numpy.

The app draws the first runs of a large database before it loads the whole of it.
That first page is scored here with the plain PPP formulas of core.scoring (as
`rank_run` scores a run), the same arithmetic in the same order as the arrays of
core.arrays, so it shows the same selected agents and regrets; numpy (about 80 ms to
import) and the array code load after the first paint. No textual here.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..core.scoring import final_score, rank_key, rewards
from ..core.settings import Settings
from ..storage.store import RunAgents, RunInfo, Store

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt


@dataclass
class RunRows:
    """The runs list's data: run facts plus the selected agent and regret under the weights."""

    infos: Sequence[RunInfo]
    selected: Sequence[str]  # per run; "" for a run without agents
    regret: Sequence[float] | npt.NDArray[np.float64]  # per run, nan when unmarked
    # Per run, created_at as seconds (nan when unknown), when worked out already.
    dates: npt.NDArray[np.float64] | None = None
    newest_first: bool = False  # `infos` are in the list's first order already
    _positions: dict[str, int] | None = field(default=None, init=False, repr=False)

    def positions(self) -> dict[str, int]:
        """Each run's place in `infos`, by id (made on first use: 10 ms at 100k runs)."""
        if self._positions is None:
            self._positions = {info.id: k for k, info in enumerate(self.infos)}
        return self._positions


def first_page(store: Store, settings: Settings, runs: int) -> tuple[RunRows, int] | None:
    """The newest `runs` runs with their selected agent and regret, and how many runs
    there are; None when the database holds no more than that (the whole load is as
    quick)."""
    total = store.count()
    if total <= runs:
        return None
    ids = store.newest_ids(runs)
    selected, regret = [], []
    for run in store.first_runs(settings, ids):
        agent, value = pick(run, settings)
        selected.append(agent)
        regret.append(value)
    return RunRows(store.run_infos(ids=ids), selected, regret, newest_first=True), total


def pick(run: RunAgents, settings: Settings) -> tuple[str, float]:
    """The agent ranked first under the run's configured weights, and its regret against
    the preferred agent (nan when the run has no mark, or a mark on no agent of it)."""
    weights = settings.weights_for(run.stage)
    finals = []
    for agent in run.agents:
        interaction = None
        if agent.counts is not None:
            low, medium, high, violations = agent.counts
            proact, pers = rewards(
                (low, medium, high), agent.penalty, violations > 0, run.stated, settings
            )
            interaction = proact + pers
        finals.append(final_score(agent.technical, interaction, weights, settings))
    if not finals:
        return "", math.nan
    agents = run.agents
    best = min(
        range(len(agents)),
        key=lambda k: rank_key(finals[k], agents[k].technical, agents[k].name, agents[k].failed),
    )
    for k, agent in enumerate(agents):
        if agent.name == run.preferred:
            return agents[best].name, finals[best] - finals[k]
    return agents[best].name, math.nan
