"""What the terminal app works on: the database's arrays, the weights being edited.

No textual here: the screens call this, and tests can drive it directly. The
slider's hot path is `set_weights`: it changes one scope's weights and recomputes
agreement and mean regret over every marked run with array arithmetic.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import numpy.typing as npt

from ..core.arrays import Lines, Outcome
from ..core.errors import PPPError
from ..core.preferences import paper_penalties
from ..core.scores import Scores
from ..core.settings import Settings, Weights, preset
from ..core.times import moments
from ..storage.store import RunInfo, Store
from .first_page import RunRows


def outcome_under(lines: Lines, settings: Settings) -> Outcome:
    """Every run of `lines` selected and scored under the weights `settings` gives its
    stage (its own table, else the global weights): with the pair's expression while
    every table is in the pair form, else with the three weights' expression."""
    tables = (settings.weights, *settings.stage_weights.values())
    if all(weights.is_pair for weights in tables):
        return lines.outcome(*lines.arrays.weights(settings))
    return lines.outcome3(*lines.arrays.weights3(settings))


@dataclass(frozen=True)
class Figures:
    """Agreement and mean regret over the marked runs under the weights being edited."""

    marked_runs: int
    mean_regret: float | None
    agreement: float | None


class Workspace:
    """The database, the saved settings, and the settings being edited."""

    def __init__(
        self,
        store: Store,
        config_path: Path,
        saved: Settings,
        config_error: str | None = None,
    ) -> None:
        self.store = store
        self.config_path = config_path
        self.saved = saved  # what config.toml holds (defaults if it is invalid)
        self.config_error = config_error  # why config.toml was refused at load, if it was
        self.settings = saved
        self.infos: list[RunInfo] = []
        self.index: dict[str, int] = {}
        self.scores: Scores | None = None
        # The runs and agents the arrays were read from (`Store.contents_key`).
        self.contents: tuple[int, ...] | None = None
        self._marked: Lines | None = None
        # Each run's created_at in seconds, with the runs list it is for.
        self._dates: tuple[list[RunInfo], npt.NDArray[np.float64]] | None = None
        # The figures of the last settings asked about (a slider step asks twice).
        self._figures: tuple[Settings, Lines, Figures] | None = None
        # scope (a stage, None: global) -> the technical weight "use optimal" set there
        # and its provenance note, written beside the pair if it is saved at that weight
        self.tuned: dict[str | None, tuple[float, str]] = {}

    # -- loading (slow: call from a worker thread) ---------------------------------

    def load(self) -> None:
        """Read the runs list and the score arrays (about a second at 100k runs)."""
        self.contents = self.store.contents_key()
        self.replace_data(*self.read())
        if self._marked is not None:
            self._marked.stepper  # noqa: B018  the first slider step's buffers, built here

    def read(self) -> tuple[list[RunInfo], Scores]:
        """The runs list and the score arrays as the database holds them now (slow)."""
        infos = self.store.run_infos()
        # The runs list's dates read here, in the worker, not as the list shows them.
        self._dates = (infos, moments([info.created_at for info in infos]))
        return infos, Scores.load(self.store, self.settings)

    def replace_data(self, infos: list[RunInfo], scores: Scores) -> None:
        """Show what `read` returned (after another process changed the database)."""
        self.infos = infos
        self.index = {info.id: i for i, info in enumerate(infos)}
        self._install(scores)

    def _install(self, scores: Scores) -> None:
        self.scores = scores
        marked = scores.lines.marked_only()
        # With every run marked that is the same `Lines`, whose step buffers hold the
        # marks before the one just patched in: a fresh copy computes them again.
        self._marked = replace(marked) if marked is scores.lines else marked
        self._figures = None

    def reload_scores(self) -> None:
        """After a change that alters interaction (penalties): rebuild the arrays."""
        self._install(Scores.load(self.store, self.settings))

    @property
    def loaded(self) -> bool:
        return self.scores is not None

    @property
    def dates(self) -> npt.NDArray[np.float64]:
        """Each run's created_at in seconds, nan when unknown (the runs list's order)."""
        dates = self._dates
        if dates is None or dates[0] is not self.infos:
            dates = self._dates = (self.infos, moments([i.created_at for i in self.infos]))
        return dates[1]

    # -- weights -------------------------------------------------------------------

    def weights_for(self, stage: str | None) -> Weights:
        return self.settings.weights_for(stage)

    def scope_of(self, stage: str | None) -> str | None:
        """The table the slider edits for a run of `stage`: its own, else global (None)."""
        if stage is not None and stage in self.settings.stage_weights:
            return stage
        return None

    def set_weights(self, weights: Weights, scope: str | None) -> Figures:
        """The slider's step: new weights for one scope, then agreement and regret."""
        self.settings = self.settings.with_weights(weights, scope)
        return self.figures()

    def apply_preset(self, key: str, scope: str | None) -> bool:
        """Apply a preset to one scope (the global pair or a stage's table), the scope the
        weights bar shows; True when penalties changed, so the arrays need a reload.

        "Stage defaults" sets a stage's table to the recommendation for that stage (at the
        global scope there is none to set: the global pair's default is Balanced). Paper
        also brings the paper's penalties, which apply to every scope; any other preset
        brings back the configured ones.
        """
        before = self.settings.penalties
        chosen = preset(key)
        if chosen.stage_weights:
            if scope is None:
                raise PPPError(
                    f"{chosen.label} sets a stage's own table and the scope is the global"
                    " weights (g switches to the run's stage)"
                )
            if scope not in chosen.stage_weights:
                raise PPPError(f"{chosen.label} has no recommendation for stage {scope}")
            weights = chosen.stage_weights[scope]
        else:
            weights = chosen.weights
        settings = self.settings.with_weights(weights, scope)
        penalties = paper_penalties() if chosen.paper_penalties else self.saved.penalties
        self.settings = replace(settings, penalties=penalties)
        return dict(penalties) != dict(before)

    def reset(self) -> bool:
        """Back to what config.toml holds; True when penalties changed."""
        changed = dict(self.settings.penalties) != dict(self.saved.penalties)
        self.settings = self.saved
        return changed

    @property
    def dirty(self) -> bool:
        """Weights differ from the saved ones."""
        return (
            self.settings.weights != self.saved.weights
            or dict(self.settings.stage_weights) != dict(self.saved.stage_weights)
            or dict(self.settings.penalties) != dict(self.saved.penalties)
        )

    def figures(self) -> Figures:
        """Agreement and mean regret over all marked runs under the current weights."""
        marked = self._marked
        if marked is None:
            return Figures(0, None, None)
        cached = self._figures
        if cached is not None and cached[0] is self.settings and cached[1] is marked:
            return cached[2]
        # The step's buffered figures (the same bits as the full outcome's), not the
        # full outcome: no (runs, agents) arrays built and dropped on every step.
        figures = Figures(*marked.figures_under(self.settings))
        self._figures = (self.settings, marked, figures)
        return figures

    def outcome(self) -> Outcome:
        """Every run (marked or not) under the current weights: the runs list's column."""
        assert self.scores is not None
        return outcome_under(self.scores.lines, self.settings)

    def state(self) -> object:
        """What every computed figure depends on (the settings being edited and the
        marks), to tell whether one is out of date; None before the load."""
        if self.scores is None:
            return None
        arrays = self.scores.arrays
        # Marks are patched into the loaded arrays in place: their bytes tell.
        return (self.settings, id(arrays), hash(arrays.preferred.tobytes()))

    def run_rows(self) -> RunRows:
        """The runs list under the current weights."""
        assert self.scores is not None
        outcome = self.outcome()
        arrays = self.scores.arrays
        selected = list(arrays.names[np.arange(len(arrays)), outcome.selected])
        return RunRows(self.infos, selected, outcome.regret, self.dates)

    # -- saving and marking ----------------------------------------------------------

    def save(self, note: str | None = None) -> None:
        """Write the edited weights to config.toml (refused while it is invalid).

        The file is read again as it is saved, so one that was invalid at start and has
        been fixed since takes the save.
        """
        from ..storage.config_write import save_penalties, save_weights

        stages = {
            stage: weights
            for stage, weights in self.settings.stage_weights.items()
            if self.saved.stage_weights.get(stage) != weights
        }
        weights = self.settings.weights if self.settings.weights != self.saved.weights else None
        # A pair still at the optimum "use optimal" put there gets where it came from.
        notes = {
            scope: text
            for scope, (technical, text) in self.tuned.items()
            if self.settings.weights_for(scope).technical == technical
        }
        save_weights(self.config_path, weights, stages, note=note, notes=notes)
        self.config_error = None
        self.saved = replace(
            self.saved, weights=self.settings.weights, stage_weights=self.settings.stage_weights
        )
        if dict(self.settings.penalties) != dict(self.saved.penalties):
            # The Paper preset's penalties.
            save_penalties(self.config_path, self.settings.penalties)
            self.saved = replace(self.saved, penalties=self.settings.penalties)

    def mark(self, run_id: str, agent: str | None) -> None:
        """Store the user's preferred agent and refresh the marked-run arrays."""
        self.store.mark(run_id, agent, source="app")
        self.marked(run_id, agent)

    def marked(self, run_id: str, agent: str | None) -> None:
        """A mark now in the database: the runs list and the marked-run arrays follow."""
        i = self.index.get(run_id)
        if i is None or self.scores is None:
            return
        self._patch_mark(i, agent)
        self._install(self.scores)

    def mark_changes(self, marks: Mapping[str, str | None]) -> list[tuple[int, str | None]]:
        """The rows whose mark differs from `marks` (every run's mark, as another process
        left them): (row, mark) pairs for `apply_marks`. Only reads: a worker calls it."""
        infos = self.infos
        return [
            (i, marks[info.id])
            for i, info in enumerate(infos)
            if info.id in marks and marks[info.id] != info.preferred
        ]

    def apply_marks(self, changes: list[tuple[int, str | None]]) -> None:
        if self.scores is None or not changes:
            return
        for i, agent in changes:
            self._patch_mark(i, agent)
        self._install(self.scores)

    def _patch_mark(self, i: int, agent: str | None) -> None:
        assert self.scores is not None
        self.infos[i] = replace(self.infos[i], preferred=agent)
        # The arrays' rows are the runs list's rows: patch the one mark in place.
        arrays = self.scores.arrays
        slots = np.flatnonzero(arrays.names[i] == agent) if agent is not None else np.zeros(0)
        arrays.preferred[i] = int(slots[0]) if len(slots) else -1
