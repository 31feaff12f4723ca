"""The dashboard's figures against brute force: every run read back and ranked one by one."""

from __future__ import annotations

import json
import random
from collections import Counter, defaultdict
from dataclasses import replace
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import pytest

from ppp_tui.analysis.dashboard import Dashboard, Period, unit_for
from ppp_tui.core.early_stop import analyse
from ppp_tui.core.model import Run
from ppp_tui.core.preferences import canonical
from ppp_tui.core.scores import Scores
from ppp_tui.core.scoring import rank_run
from ppp_tui.core.settings import STAGE_TUNED, Settings, Weights
from ppp_tui.storage.files import Record
from ppp_tui.storage.store import Store

STAGE_SETTINGS = Settings(stage_weights=STAGE_TUNED)
SETTINGS = (
    Settings(),
    STAGE_SETTINGS,
    Settings(weights=Weights.pair(0.4, 0.6), missing_trajectory="neutral"),
    Settings(enabled=False),
)


# -- brute force -------------------------------------------------------------------------


def all_runs(store: Store, stage: str | None = None) -> list[Run]:
    return [store.get_run(info.id) for info in store.run_infos(stage)]


def period_of(day: date, unit: str) -> date:
    if unit == "week":
        return day - timedelta(days=day.weekday())
    if unit == "month":
        return date(day.year, day.month, 1)
    return day


def parse_day(created_at: str | None) -> date | None:
    try:
        return date.fromisoformat((created_at or "")[:10])
    except ValueError:
        return None


def brute_timeline(runs: list[Run], settings: Settings) -> tuple[str, dict[date, Any], int]:
    """(unit, {period start: (runs, selected mean, selected n, agents mean, agents n)}, undated)."""
    dated = [(parse_day(run.created_at), run) for run in runs]
    days = [day for day, _ in dated if day is not None]
    undated = len(runs) - len(days)
    if not days:
        return "day", {}, undated
    unit = unit_for((max(days) - min(days)).days)
    groups: dict[date, list[Run]] = defaultdict(list)
    for day, run in dated:
        if day is not None:
            groups[period_of(day, unit)].append(run)
    result = {}
    for start, group in groups.items():
        selected, every = [], []
        for run in group:
            ranking = rank_run(run, settings)
            if ranking.best.interaction is not None:
                selected.append(ranking.best.interaction)
            every += [a.interaction for a in ranking.agents if a.interaction is not None]
        result[start] = (
            len(group),
            sum(selected) / len(selected) if selected else None,
            len(selected),
            sum(every) / len(every) if every else None,
            len(every),
        )
    return unit, result, undated


def check_timeline(dashboard: Dashboard, runs: list[Run], settings: Settings) -> None:
    unit, expected, undated = brute_timeline(runs, settings)
    timeline = dashboard.timeline
    assert timeline.unit == unit
    assert timeline.undated == undated
    shown: dict[date, Period] = {p.start: p for p in timeline.periods}
    # Every period from the first to the last is there, empty ones included.
    starts = [p.start for p in timeline.periods]
    assert starts == sorted(starts) and len(set(starts)) == len(starts)
    if expected:
        assert starts[0] == min(expected) and starts[-1] == max(expected)
    for start, period in shown.items():
        if start not in expected:
            assert (period.runs, period.selected, period.agents_mean) == (0, None, None)
            continue
        n, selected, selected_n, agents_mean, agents_n = expected[start]
        assert (period.runs, period.selected_runs, period.agents) == (n, selected_n, agents_n)
        assert period.selected == pytest.approx(selected)
        assert period.agents_mean == pytest.approx(agents_mean)
    assert sum(p.runs for p in timeline.periods) == len(runs) - undated


def check_violations(dashboard: Dashboard, runs: list[Run]) -> None:
    counts: Counter[str] = Counter()
    run_sets: dict[str, set[str]] = defaultdict(set)
    agent_sets: dict[str, set[tuple[str, str]]] = defaultdict(set)
    for run in runs:
        for agent in run.agents:
            for violation in agent.trajectory.violations if agent.trajectory else ():
                name = canonical(violation.preference)
                counts[name] += 1
                run_sets[name].add(run.id)
                agent_sets[name].add((run.id, agent.name))
    assert dashboard.violations == sum(counts.values())
    assert dashboard.violated_preferences == len(counts)
    ranked = sorted(counts, key=lambda n: (-counts[n], -len(run_sets[n]), n))
    assert [(p.preference, p.violations, p.runs, p.agents) for p in dashboard.preferences] == [
        (n, counts[n], len(run_sets[n]), len(agent_sets[n])) for n in ranked[:10]
    ]


def check_effort(dashboard: Dashboard, runs: list[Run]) -> None:
    counts: Counter[tuple[str, str]] = Counter()
    for run in runs:
        for agent in run.agents:
            for question in agent.trajectory.questions if agent.trajectory else ():
                counts[question.source.value, question.effort.value] += 1
    shown = {
        (row.source, effort): getattr(row, effort)
        for row in dashboard.effort
        for effort in ("low", "medium", "high")
    }
    assert [row.source for row in dashboard.effort][:3] == ["label", "classifier", "extracted"]
    assert {key: value for key, value in shown.items() if value} == dict(counts)


def check_stages(dashboard: Dashboard, runs: list[Run], settings: Settings) -> None:
    on_settings = replace(settings, enabled=True)
    off_settings = replace(settings, enabled=False)
    per_stage: dict[str | None, dict[str, Any]] = defaultdict(
        lambda: {"runs": 0, "marked": 0, "agree": 0, "regret": 0.0, "changed": 0, "on": 0, "off": 0}
    )
    changes = []
    for run in runs:
        current = rank_run(run, settings)
        on = rank_run(run, on_settings).best_agent
        off = rank_run(run, off_settings).best_agent
        for key in (run.stage, "__all__"):
            row = per_stage[key]
            row["runs"] += 1
            row["changed"] += on != off
            if run.preferred_agent is not None:
                preferred = current.agent(run.preferred_agent)
                assert preferred is not None
                row["marked"] += 1
                row["agree"] += current.best_agent == run.preferred_agent
                row["regret"] += current.best.final - preferred.final
                row["on"] += on == run.preferred_agent
                row["off"] += off == run.preferred_agent
        if on != off:
            changes.append((run.id, run.stage, on, off, run.preferred_agent))

    def check(figures: Any, row: dict[str, Any]) -> None:
        marked = row["marked"]
        assert (figures.runs, figures.marked_runs, figures.changed_picks) == (
            row["runs"],
            marked,
            row["changed"],
        )
        if not marked:
            assert figures.agreement is figures.mean_regret is None
            return
        assert figures.agreement == pytest.approx(row["agree"] / marked)
        assert figures.mean_regret == pytest.approx(row["regret"] / marked, abs=1e-12)
        assert figures.ppp_on_agreement == pytest.approx(row["on"] / marked)
        assert figures.ppp_off_agreement == pytest.approx(row["off"] / marked)

    assert {f.stage for f in dashboard.stages} == {run.stage for run in runs}
    for figures in dashboard.stages:
        check(figures, per_stage[figures.stage])
        assert figures.weights == settings.weights_for(figures.stage)
    check(dashboard.total, per_stage["__all__"])
    assert len(dashboard.pick_changes) == len(changes)
    assert [
        (f.run_id, f.stage, f.ppp_on, f.ppp_off, f.preferred) for f in dashboard.pick_changes.rows()
    ] == changes


def check_early_stop(dashboard: Dashboard, runs: list[Run]) -> None:
    stops = [(analyse(run.iterations), run.iterations) for run in runs if run.iterations]
    stopped = [(stop, series) for stop, series in stops if stop.saved > 0]
    figures = dashboard.early_stop
    assert figures.runs == len(stops)
    assert figures.iterations == sum(len(series) for _, series in stops)
    assert figures.stopped == len(stopped)
    assert figures.saved == sum(stop.saved for stop, _ in stopped)
    for reason in figures.reasons:
        mine = [stop for stop, _ in stopped if stop.reason == reason.reason]
        assert (reason.runs, reason.saved) == (len(mine), sum(s.saved for s in mine))
    assert sum(r.runs for r in figures.reasons) == figures.stopped
    losses = [
        max(series) - stop.best_score for stop, series in stopped if stop.best_score < max(series)
    ]  # type: ignore[operator]
    assert figures.worse == len(losses)
    assert figures.mean_loss == (pytest.approx(sum(losses) / len(losses)) if losses else None)
    if stops:
        assert figures.mean_saved == pytest.approx(figures.saved / len(stops))


def check_all(store: Store, settings: Settings, stage: str | None = None) -> Dashboard:
    dashboard = Dashboard.load(store, settings, stage)
    runs = all_runs(store, stage)
    assert dashboard.runs == len(runs)
    check_timeline(dashboard, runs, settings)
    check_violations(dashboard, runs)
    check_effort(dashboard, runs)
    check_stages(dashboard, runs, settings)
    check_early_stop(dashboard, runs)
    return dashboard


# -- the demo database -----------------------------------------------------------------


@pytest.mark.parametrize("settings", SETTINGS, ids=["default", "stages", "neutral", "ppp-off"])
def test_every_figure_matches_brute_force_on_the_demo(demo_db: Path, settings: Settings) -> None:
    with Store.open(demo_db) as store:
        dashboard = check_all(store, settings)
    # The demo has something in every figure, so the comparisons above compared something.
    assert dashboard.timeline.periods and dashboard.preferences and dashboard.pick_changes
    assert dashboard.total.marked_runs and dashboard.early_stop.stopped
    assert all(row.total for row in dashboard.effort)


@pytest.mark.parametrize("stage", ["plan", "implement", "audit"])
def test_the_stage_filter_restricts_every_figure(demo_db: Path, stage: str) -> None:
    with Store.open(demo_db) as store:
        dashboard = check_all(store, STAGE_SETTINGS, stage)
        everything = Dashboard.load(store, STAGE_SETTINGS)
    assert dashboard.stage == stage
    assert [f.stage for f in dashboard.stages] == [stage]
    assert dashboard.total.runs == dashboard.runs < everything.runs
    assert set(dashboard.pick_changes.stages.tolist()) <= {stage}
    mine = next(f for f in everything.stages if f.stage == stage)
    assert (dashboard.total.changed_picks, dashboard.total.marked_runs) == (
        mine.changed_picks,
        mine.marked_runs,
    )


def test_the_app_s_loaded_scores_give_the_same_figures(demo_db: Path) -> None:
    with Store.open(demo_db) as store:
        scores = Scores.load(store, STAGE_SETTINGS)
        for stage in (None, "validate"):
            reused = Dashboard.load(store, STAGE_SETTINGS, stage, scores=scores)
            assert figures(reused) == figures(Dashboard.load(store, STAGE_SETTINGS, stage))


def figures(dashboard: Dashboard) -> tuple[Any, ...]:
    """Comparable figures (PickChanges holds arrays, which == compares element-wise)."""
    return replace(dashboard, pick_changes=None), dashboard.pick_changes.rows()


# -- random runs: dates, iterations, names and sources the demo lacks --------------------------


def random_run(rng: random.Random, index: int, start: date, span: int) -> dict[str, Any]:
    agents = []
    for j in range(rng.randint(1, 4)):
        agent: dict[str, Any] = {
            "name": f"agent-{j}",
            "technical_score": rng.choice([0.5, 0.8, 0.9, round(rng.random(), 3)]),
        }
        if rng.random() < 0.8:
            questions = []
            for _ in range(rng.randint(0, 3)):
                question: dict[str, Any] = {"text": rng.choice(QUESTIONS)}
                if rng.random() < 0.6:
                    question["effort"] = rng.choice(["low", "medium", "high"])
                questions.append(question)
            trajectory: dict[str, Any] = {
                "violations": [
                    {
                        "preference": rng.choice(["commas", "no_commas", " JSON", "joke", "x"]),
                        "severity": rng.choice(["error", "warning", "major"]),
                    }
                    for _ in range(rng.choice([0, 0, 1, 2]))
                ]
            }
            if rng.random() < 0.3:
                trajectory["turns"] = [{"response": "Done. " + rng.choice(QUESTIONS)}]
            else:
                trajectory["questions"] = questions
            agent["trajectory"] = trajectory
        agents.append(agent)
    run: dict[str, Any] = {"id": f"r{index:04d}", "agents": agents, "preferences": ["json"]}
    if rng.random() < 0.85:
        run["stage"] = rng.choice(["plan", "implement", "custom"])
    roll = rng.random()
    if roll < 0.7:
        day = start + timedelta(days=rng.randint(0, span))
        run["created_at"] = f"{day.isoformat()}T{rng.randint(0, 23):02d}:00:00Z"
    elif roll < 0.8:
        run["created_at"] = "yesterday"  # not a date: counted as undated
    if rng.random() < 0.5:
        run["iterations"] = [round(rng.uniform(6, 9), 1) for _ in range(rng.randint(1, 7))]
    if rng.random() < 0.6:
        run["preferred_agent"] = rng.choice(agents)["name"]
    return run


QUESTIONS = (
    "Which database should I use?",
    "Could you investigate why the build fails on CI before proceeding?",
    "Do you want tabs or spaces for the new module and its tests and the docs?",
)


def random_db(path: Path, seed: int, runs: int, span: int) -> Path:
    rng = random.Random(seed)
    start = date(2024, 12, 20)
    records = [Record("t", None, "$", random_run(rng, i, start, span)) for i in range(runs)]
    with Store.open(path, create=True) as store:
        store.import_records(records)
    return path


@pytest.mark.parametrize(
    ("seed", "span", "unit"), [(1, 20, "day"), (2, 150, "week"), (3, 800, "month")]
)
def test_random_runs_against_brute_force(tmp_path: Path, seed: int, span: int, unit: str) -> None:
    db = random_db(tmp_path / "random.db", seed, 120, span)
    with Store.open(db) as store:
        for settings in SETTINGS:
            dashboard = check_all(store, settings)
            check_all(store, settings, "custom")
    assert dashboard.timeline.unit == unit
    assert dashboard.timeline.undated > 0
    assert 0 < dashboard.early_stop.runs < dashboard.runs
    # no_commas counts as commas, " JSON" as json.
    names = {p.preference for p in dashboard.preferences}
    assert "no_commas" not in names and " JSON" not in names and "json" in names


def test_periods_split_at_mondays_and_months(tmp_path: Path) -> None:
    def run(run_id: str, created_at: str) -> dict[str, Any]:
        return {
            "id": run_id,
            "created_at": created_at,
            "agents": [{"name": "a", "technical_score": 1}],
        }

    db = tmp_path / "weeks.db"
    with Store.open(db, create=True) as store:
        days = ["2025-03-02", "2025-03-03", "2025-03-09", "2025-03-10", "2025-06-01"]
        store.import_records(
            [Record("t", None, "$", run(f"r{i}", f"{d}T12:00:00Z")) for i, d in enumerate(days)]
        )
        timeline = Dashboard.load(store, Settings()).timeline
    assert timeline.unit == "week"
    # Sunday 2 March is in the week of Monday 24 February; 3 and 9 March share a week.
    counts = {p.label: p.runs for p in timeline.periods if p.runs}
    assert counts == {"2025-02-24": 1, "2025-03-03": 2, "2025-03-10": 1, "2025-05-26": 1}
    assert len(timeline.periods) == 14  # 24 February to 26 May, every week


def test_an_empty_database(tmp_path: Path) -> None:
    with Store.open(tmp_path / "empty.db", create=True) as store:
        dashboard = Dashboard.load(store, Settings())
        assert Dashboard.load(store, Settings(), "plan").runs == 0
    assert dashboard.runs == 0
    assert dashboard.timeline.periods == () and dashboard.timeline.undated == 0
    assert dashboard.preferences == () and dashboard.violations == 0
    assert [row.total for row in dashboard.effort] == [0, 0, 0]
    assert dashboard.stages == () and dashboard.total.runs == 0
    assert dashboard.total.agreement is None and len(dashboard.pick_changes) == 0
    assert dashboard.early_stop.runs == 0 and dashboard.early_stop.mean_saved is None


def test_runs_without_dates_or_iterations(tmp_path: Path) -> None:
    db = tmp_path / "bare.db"
    raw = [
        {"id": "a", "agents": [{"name": "x", "technical_score": 0.5}]},
        {"id": "b", "created_at": "", "agents": [{"name": "x", "technical_score": 0.5}]},
        {
            "id": "c",
            "created_at": "soon",
            "iterations": [],
            "agents": [{"name": "x", "technical_score": 0.5}],
        },
    ]
    with Store.open(db, create=True) as store:
        store.import_records([Record("t", None, "$", json.loads(json.dumps(r))) for r in raw])
        dashboard = Dashboard.load(store, Settings())
    assert dashboard.timeline.periods == () and dashboard.timeline.undated == 3
    assert dashboard.early_stop.runs == 0 and dashboard.early_stop.iterations == 0
    assert dashboard.total.runs == 3 and dashboard.total.changed_picks == 0


def test_unit_follows_the_span() -> None:
    assert [unit_for(d) for d in (0, 62, 63, 366, 367)] == ["day", "day", "week", "week", "month"]
