"""The per-agent PPP formulas over whole-database columns (numpy).

The store hands over one flat row per agent (question counts, violation count and
penalty sum under the current settings); this module turns them into R_Proact,
R_Pers and interaction with the same formulas as `scoring`, and packs them into
the (runs, agent slots) `ScoreArrays` that regret and tuning work on.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np
import numpy.typing as npt

from .arrays import ScoreArrays
from .settings import Settings

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]
ObjectArray = npt.NDArray[np.object_]


@dataclass(frozen=True)
class AgentColumns:
    """One entry per agent, grouped by run (`run_index` is non-decreasing)."""

    run_ids: ObjectArray  # (runs,)
    stages: ObjectArray  # (runs,)
    preferred: ObjectArray  # (runs,) preferred agent name or None
    stated: BoolArray  # (runs,) the run states a preference
    run_index: IntArray  # (agents,) index into the run arrays
    vocabulary: ObjectArray  # every agent name once, sorted
    name_codes: IntArray  # (agents,) index into `vocabulary`, so codes sort as names do
    technical: FloatArray
    has_trajectory: BoolArray
    q_low: IntArray
    q_medium: IntArray
    q_high: IntArray
    violations: IntArray
    penalty: FloatArray  # sum of violation penalties under the settings
    failed: BoolArray | None = None  # (agents,) the output is a failure; None: none is
    # (agents,) no test run and no rating: `technical` holds the settings' placeholder.
    unscored: BoolArray | None = None
    # (runs,) whose mark each row is, when every reviewer's marks are loaded (a run
    # then comes once per reviewer who marked it); None: one reviewer's.
    reviewers: ObjectArray | None = None

    @property
    def names(self) -> ObjectArray:
        """(agents,) each agent's name."""
        names: ObjectArray = self.vocabulary[self.name_codes]
        return names

    def r_proact(self, settings: Settings) -> FloatArray:
        """+bonus with only low-effort questions (or none), else the penalties; nan: none."""
        pro = settings.proactivity
        asked = (self.q_medium + self.q_high) > 0
        value = np.where(
            asked,
            -(pro.medium_penalty * self.q_medium + pro.high_penalty * self.q_high),
            pro.low_effort_bonus,
        )
        return np.where(self.has_trajectory, value, np.nan)

    def r_pers(self, settings: Settings) -> FloatArray:
        bonus = settings.personalization.compliance_bonus
        compliant = np.where(self.stated[self.run_index], bonus, 0.0)
        value = np.where(self.violations > 0, -self.penalty, compliant)
        return np.where(self.has_trajectory, value, np.nan)

    def interaction(self, settings: Settings) -> FloatArray:
        result: FloatArray = self.r_proact(settings) + self.r_pers(settings)
        return result

    @cached_property
    def _layout(self) -> tuple[IntArray, IntArray, IntArray, int]:
        """(order, run index, slot) placing each agent in its run's row; and the width.

        Within a row agents go by technical descending, then name: the ranking's tie
        rule, so the first maximum of a row is the agent the ranking puts first.
        """
        order = np.lexsort((self.name_codes, -self.technical, self.run_index))
        run_index = self.run_index[order]
        starts = np.searchsorted(run_index, np.arange(len(self.run_ids)))
        slot = np.arange(len(order)) - starts[run_index]
        width = int(slot.max()) + 1 if len(slot) else 1
        return order, run_index, slot, width

    def to_slots(self, values: npt.NDArray[Any], fill: Any) -> npt.NDArray[Any]:
        """A per-agent column laid out as (runs, slots), `fill` in the padding."""
        order, run_index, slot, width = self._layout
        result = np.full((len(self.run_ids), width), fill, dtype=values.dtype)
        result[run_index, slot] = values[order]
        return result

    def score_arrays(self, settings: Settings) -> ScoreArrays:
        """The (runs, slots) arrays regret and tuning work on."""
        order, run_index, slot, _ = self._layout
        preferred = np.full(len(self.run_ids), -1, dtype=np.int64)
        code = {name: i for i, name in enumerate(self.vocabulary.tolist())}
        preferred_code = np.fromiter(
            (code.get(name, -1) for name in self.preferred.tolist()), np.int64, len(self.preferred)
        )
        is_preferred = self.name_codes[order] == preferred_code[run_index]
        preferred[run_index[is_preferred]] = slot[is_preferred]
        proactivity, personalization = self.r_proact(settings), self.r_pers(settings)
        padded = np.append(self.vocabulary, np.array([""], dtype=object))
        return ScoreArrays(
            run_ids=self.run_ids,
            stages=self.stages,
            names=padded[self.to_slots(self.name_codes, len(self.vocabulary))],
            technical=self.to_slots(self.technical, 0.0),
            interaction=self.to_slots(proactivity + personalization, np.nan),
            proactivity=self.to_slots(proactivity, np.nan),
            personalization=self.to_slots(personalization, np.nan),
            valid=self.to_slots(np.ones(len(self.name_codes), dtype=bool), False),
            preferred=preferred,
            failed=None
            if self.failed is None or not self.failed.any()
            else self.to_slots(self.failed, False),
        )
