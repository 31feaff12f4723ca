"""The dashboard's figures (the telemetry dashboard and the PPP on/off view).

One call, `Dashboard.load`, gives every figure of one stage (or of all runs) as a
frozen object: interaction over time, the most violated preferences, question
effort by source, agreement by stage, PPP on vs off (with McNemar's exact test,
`core.ab_test`), and early stop over the runs' iteration series. Scores come from
`reports.Scores`, so an agent's interaction and the selected agent are the ones every
other face shows; what the score arrays do not hold (dates, iteration series,
questions by source, violations by preference) is read with a few whole-table
queries. The terminal app calls this in a worker thread.
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import date, timedelta
from typing import Literal

import numpy as np
import numpy.typing as npt

from ..core.ab_test import ABTest, ab_test, ppp_outcomes
from ..core.agreement import Agreement, agreement
from ..core.arrays import Outcome, ScoreArrays
from ..core.early_stop import analyse
from ..core.preferences import canonical
from ..core.scores import Scores, stage_order
from ..core.settings import Settings, Weights
from ..core.stages import NO_STAGE
from ..storage.store import Store

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]
ObjectArray = npt.NDArray[np.object_]

TOP_PREFERENCES = 10
# The period of the interaction timeline follows the span of the runs' dates, so the
# chart has a readable number of points: days up to two months, weeks up to a year.
DAY_SPAN_MAX = 62
WEEK_SPAN_MAX = 366
EPOCH = date(1970, 1, 1)  # a Thursday: day numbers below count from it

Unit = Literal["day", "week", "month"]
# trajectory_questions.source, in the order the dashboard shows them.
EFFORT_SOURCES: tuple[str, ...] = ("label", "classifier", "extracted")
SOURCE_LABELS = {
    "label": "labelled",
    "classifier": "classified",
    "extracted": "extracted",
    "judged": "judged",  # by an LLM judge (`ppp-tui judge`); shown once there are some
}
EFFORTS: tuple[str, ...] = ("low", "medium", "high")
ALL_STAGES = "all stages"


@dataclass(frozen=True)
class Period:
    """One period of the timeline: its runs' interaction scores."""

    start: date
    label: str  # 2025-11-03 (a day, or a week's Monday) or 2025-11 (a month)
    runs: int
    # Mean interaction of the selected agent, over the runs whose selected agent has a
    # trajectory (`selected_runs` of them); None when there are none.
    selected: float | None
    selected_runs: int
    # Mean interaction of every agent with a trajectory in the period's runs.
    agents_mean: float | None
    agents: int


@dataclass(frozen=True)
class Timeline:
    unit: Unit
    periods: tuple[Period, ...]  # every period from the first run's to the last's
    undated: int  # runs left out: no created_at, or one without a YYYY-MM-DD date


@dataclass(frozen=True)
class PreferenceViolations:
    preference: str  # canonical name (no_commas is commas)
    violations: int
    runs: int  # runs with at least one such violation
    agents: int  # agents (trajectories) with at least one


@dataclass(frozen=True)
class EffortCounts:
    """Questions by effort, for one source of the effort label."""

    source: str  # label, classifier or extracted (trajectory_questions.source)
    low: int
    medium: int
    high: int

    @property
    def label(self) -> str:
        return SOURCE_LABELS.get(self.source, self.source)

    @property
    def total(self) -> int:
        return self.low + self.medium + self.high


@dataclass(frozen=True)
class StageFigures:
    """One stage's runs under the current settings, and with PPP on and off."""

    label: str  # the stage, "(no stage)", or "all stages" for the total
    stage: str | None
    weights: Weights | None  # the stage's configured weights (None for the total)
    runs: int
    marked_runs: int
    agreement: float | None  # selected == preferred, over the marked runs
    mean_regret: float | None
    changed_picks: int  # runs whose selected agent differs between PPP on and PPP off
    ab: ABTest  # PPP on vs off over the marked runs: both agreements, McNemar's test

    @property
    def ppp_on_agreement(self) -> float | None:
        return self.ab.ppp_agreement

    @property
    def ppp_off_agreement(self) -> float | None:
        return self.ab.technical_agreement


@dataclass(frozen=True)
class PickChange:
    """A run whose pick changes when PPP is turned off."""

    run_id: str
    stage: str | None
    ppp_on: str  # selected with PPP on
    ppp_off: str  # selected by the technical-only ranking
    preferred: str | None


@dataclass(frozen=True)
class PickChanges:
    """The runs whose pick changes when PPP is turned off, by run id, as columns (there
    can be tens of thousands)."""

    run_ids: ObjectArray
    stages: ObjectArray
    ppp_on: ObjectArray  # the agent selected with PPP on
    ppp_off: ObjectArray  # the agent the technical-only ranking selects
    preferred: ObjectArray  # the marked agent, None when unmarked

    def __len__(self) -> int:
        return len(self.run_ids)

    def rows(self, limit: int | None = None) -> list[PickChange]:
        """The first `limit` changed picks (all by default) as objects."""
        end = len(self) if limit is None else min(limit, len(self))
        columns = (self.run_ids, self.stages, self.ppp_on, self.ppp_off, self.preferred)
        return [
            PickChange(*values) for values in zip(*(c[:end].tolist() for c in columns), strict=True)
        ]


@dataclass(frozen=True)
class StopReason:
    reason: str  # plateau or regression
    runs: int
    saved: int


@dataclass(frozen=True)
class EarlyStopFigures:
    """The early stop replayed over every run's iteration series."""

    runs: int  # runs with an iteration series
    iterations: int  # iterations those runs ran
    stopped: int  # runs the early stop would end before their last iteration
    saved: int  # iterations it would save
    reasons: tuple[StopReason, ...]  # plateau, regression
    # Stopped runs whose best score so far is below the whole series' best, and the
    # mean of that shortfall over them.
    worse: int
    mean_loss: float | None

    @property
    def mean_saved(self) -> float | None:
        """Iterations saved per run with a series."""
        return self.saved / self.runs if self.runs else None

    @property
    def mean_saved_stopped(self) -> float | None:
        """Iterations saved per run that would stop early."""
        return self.saved / self.stopped if self.stopped else None

    @property
    def saved_share(self) -> float | None:
        return self.saved / self.iterations if self.iterations else None


@dataclass(frozen=True)
class Dashboard:
    stage: str | None  # the filter: None for every run
    runs: int
    timeline: Timeline
    preferences: tuple[PreferenceViolations, ...]  # the most violated, most first
    violations: int  # every violation (all preferences)
    violated_preferences: int  # distinct preferences violated
    effort: tuple[EffortCounts, ...]
    stages: tuple[StageFigures, ...]  # the six spec-kit stages first, no stage last
    total: StageFigures  # every run of the filter together
    pick_changes: PickChanges
    early_stop: EarlyStopFigures
    agreement: Agreement  # between reviewers, over the runs two or more marked

    @classmethod
    def load(
        cls,
        store: Store,
        settings: Settings,
        stage: str | None = None,
        scores: Scores | None = None,
        top: int = TOP_PREFERENCES,
    ) -> Dashboard:
        """Every figure over `stage`'s runs (all runs if None) under `settings`.

        `scores` are the whole database's scores if the caller holds them already (the
        app does), loaded under `settings`' penalties; otherwise they are loaded.
        """
        with ThreadPoolExecutor(max_workers=1) as pool:
            # The two scans of the question and violation tables run in SQLite, which
            # lets go of the GIL: on their own connection they overlap the rest.
            tables = pool.submit(_read_tables, store, stage, top)
            if scores is None:
                arrays = Scores.load(store, settings, stage).arrays
            elif stage is None:
                arrays = scores.arrays
            else:
                arrays = scores.arrays.subset(scores.arrays.stage_mask(stage))
            created, iterations = _run_facts(store, stage, arrays.run_ids)
            outcome = arrays.lines(settings).outcome()
            on, off = ppp_outcomes(arrays, settings, outcome)
            stages, total = _stage_figures(arrays, settings, outcome, on, off)
            timeline = _timeline(arrays, outcome, created)
            pick_changes = _pick_changes(arrays, on, off)
            early_stop = _early_stop(iterations)
            between = agreement(store.all_marks(stage))
            (preferences, violations, violated), effort = tables.result()
        return cls(
            stage=stage,
            runs=len(arrays),
            timeline=timeline,
            preferences=preferences,
            violations=violations,
            violated_preferences=violated,
            effort=effort,
            stages=stages,
            total=total,
            pick_changes=pick_changes,
            early_stop=early_stop,
            agreement=between,
        )


def _read_tables(
    store: Store, stage: str | None, top: int
) -> tuple[tuple[tuple[PreferenceViolations, ...], int, int], tuple[EffortCounts, ...]]:
    with store.reopen() as reader:
        return _violations(reader, stage, top), _effort(reader, stage)


# -- run facts -----------------------------------------------------------------------


def _run_facts(
    store: Store, stage: str | None, run_ids: npt.NDArray[np.object_]
) -> tuple[list[str | None], list[str]]:
    """Each run's created_at and iterations JSON, in the order of `run_ids`."""
    rows = store.run_series(stage)
    ids = [row[0] for row in rows]
    if ids == run_ids.tolist():  # the same scan order: the usual case
        return [row[1] for row in rows], [row[2] for row in rows]
    # The database changed since the arrays were loaded: match by id.
    by_id = {row[0]: row for row in rows}
    found = [by_id.get(run_id) for run_id in run_ids.tolist()]
    return (
        [row[1] if row else None for row in found],
        [row[2] if row else "[]" for row in found],
    )


# -- interaction over time -------------------------------------------------------------


def _day_number(created_at: str | None, cache: dict[str, int | None]) -> int | None:
    """Days since 1970-01-01 of the date a created_at starts with (as written)."""
    if not created_at:
        return None
    prefix = created_at[:10]
    if prefix not in cache:
        try:
            cache[prefix] = (date.fromisoformat(prefix) - EPOCH).days
        except ValueError:
            cache[prefix] = None
    return cache[prefix]


def unit_for(span_days: int) -> Unit:
    """The timeline's period for dates `span_days` apart."""
    if span_days <= DAY_SPAN_MAX:
        return "day"
    if span_days <= WEEK_SPAN_MAX:
        return "week"
    return "month"


def _period_keys(days: IntArray, unit: Unit) -> IntArray:
    """Each day's period as a number: the day, its week's Monday, or months since 1970-01."""
    if unit == "day":
        return days
    if unit == "week":
        return days - (days + 3) % 7  # day 0 was a Thursday
    months: IntArray = days.astype("datetime64[D]").astype("datetime64[M]").astype(np.int64)
    return months


def _key_start(key: int, unit: Unit) -> date:
    if unit == "month":
        return date(1970 + key // 12, key % 12 + 1, 1)
    return EPOCH + timedelta(days=key)


def _timeline(arrays: ScoreArrays, outcome: Outcome, created: Sequence[str | None]) -> Timeline:
    cache: dict[str, int | None] = {}
    numbers = [_day_number(value, cache) for value in created]
    dated = np.fromiter((n is not None for n in numbers), bool, len(numbers))
    undated = int(len(numbers) - dated.sum())
    if not dated.any():
        return Timeline("day", (), undated)
    days = np.fromiter((n for n in numbers if n is not None), np.int64)
    unit = unit_for(int(days.max() - days.min()))
    keys = _period_keys(days, unit)
    first = int(keys.min())
    index = (keys - first) // 7 if unit == "week" else keys - first
    count = int(index.max()) + 1
    rows = np.flatnonzero(dated)
    interaction = arrays.interaction[rows]
    selected = interaction[np.arange(len(rows)), outcome.selected[rows]]
    has_selected = ~np.isnan(selected)
    has_agents = ~np.isnan(interaction)

    def per_period(weights: FloatArray | BoolArray | None) -> FloatArray:
        return np.bincount(index, weights, minlength=count).astype(np.float64)

    runs = per_period(None)
    selected_runs = per_period(has_selected)
    selected_sum = per_period(np.where(has_selected, selected, 0.0))
    agents = per_period(has_agents.sum(axis=1).astype(np.float64))
    agents_sum = per_period(np.where(has_agents, interaction, 0.0).sum(axis=1))
    step = 7 if unit == "week" else 1
    periods = []
    for i in range(count):
        start = _key_start(first + i * step, unit)
        periods.append(
            Period(
                start=start,
                label=start.isoformat()[:7] if unit == "month" else start.isoformat(),
                runs=int(runs[i]),
                selected=float(selected_sum[i] / selected_runs[i]) if selected_runs[i] else None,
                selected_runs=int(selected_runs[i]),
                agents_mean=float(agents_sum[i] / agents[i]) if agents[i] else None,
                agents=int(agents[i]),
            )
        )
    return Timeline(unit, tuple(periods), undated)


# -- violations and questions ------------------------------------------------------------


def _violations(
    store: Store, stage: str | None, top: int
) -> tuple[tuple[PreferenceViolations, ...], int, int]:
    """The `top` most violated preferences (canonical names), the total, how many."""
    rows = store.violation_counts(stage)
    names: dict[str, str] = {}
    counts: dict[str, int] = defaultdict(int)
    runs: dict[str, set[str]] = defaultdict(set)
    agents: dict[str, set[int]] = defaultdict(set)
    for preference, run_id, trajectory_id, count in rows:
        name = names.get(preference)
        if name is None:  # several stored names can be one preference (no_commas, Commas)
            name = names[preference] = canonical(preference)
        counts[name] += count
        runs[name].add(run_id)
        agents[name].add(trajectory_id)
    ranked = sorted(counts, key=lambda n: (-counts[n], -len(runs[n]), n))
    figures = tuple(
        PreferenceViolations(name, counts[name], len(runs[name]), len(agents[name]))
        for name in ranked[:top]
    )
    return figures, sum(counts.values()), len(counts)


def _effort(store: Store, stage: str | None) -> tuple[EffortCounts, ...]:
    """Questions by source of their effort label and by effort; the known sources always."""
    rows = store.question_counts(stage)
    table: dict[str, dict[str, int]] = {source: {} for source in EFFORT_SOURCES}
    for source, effort, count in rows:
        table.setdefault(source, {})[effort] = count
    return tuple(
        EffortCounts(source, *(efforts.get(effort, 0) for effort in EFFORTS))
        for source, efforts in table.items()
    )


# -- agreement and PPP on vs off ------------------------------------------------------------


def _rate(count: int, total: int) -> float | None:
    return count / total if total else None


def _figures(
    label: str,
    stage: str | None,
    weights: Weights | None,
    mask: BoolArray,
    outcome: Outcome,
    on: Outcome,
    off: Outcome,
) -> StageFigures:
    marked = int(outcome.marked[mask].sum())
    return StageFigures(
        label=label,
        stage=stage,
        weights=weights,
        runs=int(mask.sum()),
        marked_runs=marked,
        agreement=_rate(int(outcome.agree[mask].sum()), marked),
        mean_regret=float(np.nansum(outcome.regret[mask]) / marked) if marked else None,
        changed_picks=int((on.selected[mask] != off.selected[mask]).sum()),
        ab=ab_test(on, off, mask),
    )


def _stage_figures(
    arrays: ScoreArrays, settings: Settings, outcome: Outcome, on: Outcome, off: Outcome
) -> tuple[tuple[StageFigures, ...], StageFigures]:
    stages = tuple(
        _figures(
            NO_STAGE if stage is None else stage,
            stage,
            settings.weights_for(stage),
            arrays.stage_mask(stage),
            outcome,
            on,
            off,
        )
        for stage in stage_order(arrays.stages.tolist())
    )
    everything = np.ones(len(arrays), dtype=bool)
    return stages, _figures(ALL_STAGES, None, None, everything, outcome, on, off)


def _pick_changes(arrays: ScoreArrays, on: Outcome, off: Outcome) -> PickChanges:
    rows = np.flatnonzero(on.selected != off.selected)
    names = arrays.names.take(rows, axis=0)
    at = np.arange(len(rows))
    preferred = arrays.preferred[rows]
    marked: ObjectArray = np.full(len(rows), None, dtype=object)
    has_mark = preferred >= 0
    marked[has_mark] = names[at[has_mark], preferred[has_mark]]
    return PickChanges(
        run_ids=arrays.run_ids[rows],
        stages=arrays.stages[rows],
        ppp_on=names[at, on.selected[rows]],
        ppp_off=names[at, off.selected[rows]],
        preferred=marked,
    )


# -- early stop ------------------------------------------------------------------------


def _early_stop(series: Sequence[str]) -> EarlyStopFigures:
    """Replay the early stop over every run's iterations (the JSON text as stored)."""
    # Series repeat (short lists of one-decimal scores): each distinct one is parsed (all
    # in one json call) and analysed once, then counted as often as it occurs.
    repeats = Counter(text for text in series if text and text != "[]")
    parsed: list[list[float]] = json.loads("[" + ",".join(repeats) + "]")
    runs = iterations = stopped = saved = worse = 0
    loss = 0.0
    by_reason = {"plateau": [0, 0], "regression": [0, 0]}
    for scores, times in zip(parsed, repeats.values(), strict=True):
        if not scores:
            continue
        stop = analyse(scores)
        runs += times
        iterations += times * stop.iterations
        if stop.saved <= 0:
            continue
        stopped += times
        saved += times * stop.saved
        tally = by_reason[stop.reason]
        tally[0] += times
        tally[1] += times * stop.saved
        assert stop.best_score is not None  # a stopped series is not empty
        shortfall = max(scores) - stop.best_score
        if shortfall > 0:
            worse += times
            loss += times * shortfall
    return EarlyStopFigures(
        runs=runs,
        iterations=iterations,
        stopped=stopped,
        saved=saved,
        reasons=tuple(StopReason(reason, n, s) for reason, (n, s) in by_reason.items()),
        worse=worse,
        mean_loss=loss / worse if worse else None,
    )
