"""PPP on vs off as a paired test (`ab`): McNemar's exact test against hand-worked values
and scipy's binomial test, the 2x2 counts against every run ranked one by one, the
command line and the dashboard's line."""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import replace
from fractions import Fraction
from math import comb
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner, Result
from helpers import computed, opened
from scipy.stats import binomtest
from textual.widgets import DataTable

from ppp_tui.analysis.dashboard import Dashboard
from ppp_tui.app.screens.dashboard import DashboardScreen
from ppp_tui.cli import cli
from ppp_tui.core.ab_test import ABTest, ab_test, mcnemar_p, ppp_outcomes
from ppp_tui.core.arrays import AgentRow, ScoreArrays
from ppp_tui.core.scores import Scores
from ppp_tui.core.scoring import rank_run
from ppp_tui.core.settings import STAGE_TUNED, Settings, Weights
from ppp_tui.core.stages import label, ordered
from ppp_tui.storage.config import load_settings
from ppp_tui.storage.store import Store

SETTINGS = (
    Settings(),
    Settings(stage_weights=STAGE_TUNED),
    Settings(weights=Weights.pair(0.4, 0.6), missing_trajectory="neutral"),
    Settings(weights=Weights(0.5, 0.2, 0.8)),
    Settings(enabled=False),
)


def exact_p(ppp_only: int, technical_only: int) -> float:
    """McNemar's exact p in rational arithmetic: 2 * P(X <= min) for X ~ Bin(n, 1/2)."""
    n = ppp_only + technical_only
    if n == 0:
        return 1.0
    tail = Fraction(sum(comb(n, j) for j in range(min(ppp_only, technical_only) + 1)), 2**n)
    return float(min(Fraction(1), 2 * tail))


# -- McNemar's exact p ---------------------------------------------------------------------


def test_p_by_hand() -> None:
    # 1 run one way, 7 the other: P(X <= 1) = (1 + 8) / 256, doubled.
    assert mcnemar_p(1, 7) == pytest.approx(18 / 256, rel=1e-14)
    assert mcnemar_p(7, 1) == mcnemar_p(1, 7)
    # 0 against 5: 2 / 32.
    assert mcnemar_p(0, 5) == pytest.approx(0.0625, rel=1e-14)
    # No discordant run, or counts one apart: exactly 1.
    assert mcnemar_p(0, 0) == 1.0
    assert mcnemar_p(4, 5) == 1.0
    assert mcnemar_p(6, 6) == 1.0
    assert mcnemar_p(0, 1) == 1.0


def test_p_is_scipys_binomial_test() -> None:
    for b in range(0, 41):
        for c in range(0, 41):
            expected = binomtest(b, b + c, 0.5).pvalue if b + c else 1.0
            assert mcnemar_p(b, c) == pytest.approx(expected, rel=1e-9), (b, c)
    for b, c in ((340, 21), (1200, 1100), (5000, 4700), (3, 2000)):
        assert mcnemar_p(b, c) == pytest.approx(binomtest(b, b + c, 0.5).pvalue, rel=1e-9)


def test_p_is_the_exact_rational_value() -> None:
    rng = np.random.default_rng(4)
    for _ in range(200):
        b, c = (int(x) for x in rng.integers(0, 1500, size=2))
        expected = exact_p(b, c)
        assert mcnemar_p(b, c) == pytest.approx(expected, rel=1e-11, abs=1e-300), (b, c)


# -- the 2x2 table ---------------------------------------------------------------------------


def _row(run_id: str, stage: str, pair: str, preferred: str | None) -> Any:
    """Agents a (technical 0.9) and b (0.8). In a "split" run b's interaction wins it the
    PPP pick (at 0.7/0.3: a 0.63 - 0.15 = 0.48, b 0.56 + 0.015 = 0.575); in a "same" run
    both rankings pick a."""
    a_interaction = -0.5 if pair == "split" else 0.05
    agents = [AgentRow("a", 0.9, a_interaction), AgentRow("b", 0.8, 0.05)]
    return (run_id, stage, agents, preferred)


def test_the_table_by_hand() -> None:
    rows = [
        _row("r1", "plan", "split", "b"),  # PPP right, technical wrong
        _row("r2", "plan", "split", "a"),  # technical right, PPP wrong
        _row("r3", "plan", "same", "a"),  # both right
        _row("r4", "tasks", "same", "b"),  # both wrong
        _row("r5", "tasks", "split", None),  # unmarked: not counted
        _row("r6", "tasks", "split", "b"),  # PPP right, technical wrong
    ]
    arrays = ScoreArrays.build(rows)
    settings = Settings()
    on, off = ppp_outcomes(arrays, settings, arrays.lines(settings).outcome())
    test = ab_test(on, off)
    assert test == ABTest(
        marked_runs=5, both_right=1, ppp_only=2, technical_only=1, both_wrong=1, p_value=1.0
    )
    assert (test.ppp_right, test.technical_right, test.discordant) == (3, 2, 3)
    assert (test.ppp_agreement, test.technical_agreement) == (3 / 5, 2 / 5)
    plan = ab_test(on, off, arrays.stage_mask("plan"))
    assert (plan.marked_runs, plan.both_right, plan.ppp_only, plan.technical_only) == (3, 1, 1, 1)
    tasks = ab_test(on, off, arrays.stage_mask("tasks"))
    assert (tasks.marked_runs, tasks.ppp_only, tasks.both_wrong, tasks.p_value) == (2, 1, 1, 1.0)
    # PPP off in the settings: the PPP pick is still the one with it on.
    off_settings = replace(settings, enabled=False)
    on2, off2 = ppp_outcomes(arrays, off_settings, arrays.lines(off_settings).outcome())
    assert ab_test(on2, off2) == test
    # Nothing marked: an empty table, p 1.
    assert ab_test(on, off, np.zeros(len(arrays), dtype=bool)).p_value == 1.0


def brute_tables(store: Store, settings: Settings) -> dict[str | None, Counter[str]]:
    """Per stage (and "__all__"), the 2x2 counts from every marked run ranked one by one."""
    on_settings = replace(settings, enabled=True)
    off_settings = replace(settings, enabled=False)
    tables: dict[str | None, Counter[str]] = {}
    for info in store.run_infos():
        run = store.get_run(info.id)
        if run.preferred_agent is None:
            continue
        on = rank_run(run, on_settings).best_agent == run.preferred_agent
        off = rank_run(run, off_settings).best_agent == run.preferred_agent
        cell = {(True, True): "both", (True, False): "on", (False, True): "off"}.get(
            (on, off), "neither"
        )
        for key in (run.stage, "__all__"):
            tables.setdefault(key, Counter())[cell] += 1
    return tables


def _same_table(test: ABTest, counts: Counter[str]) -> None:
    on, off = counts["on"], counts["off"]
    assert (test.both_right, test.ppp_only, test.technical_only, test.both_wrong) == (
        counts["both"],
        on,
        off,
        counts["neither"],
    )
    assert test.p_value == pytest.approx(exact_p(on, off), rel=1e-11, abs=1e-300)


@pytest.mark.parametrize("settings", SETTINGS)
def test_the_table_is_every_run_ranked_one_by_one(demo_db: Path, settings: Settings) -> None:
    with Store.open(demo_db) as store:
        tables = brute_tables(store, settings)
        scores = Scores.load(store, settings, marked_only=True)
        dashboard = Dashboard.load(store, settings)
    on, off = ppp_outcomes(scores.arrays, settings, scores.outcome)
    _same_table(ab_test(on, off), tables["__all__"])
    _same_table(dashboard.total.ab, tables["__all__"])
    for figures in dashboard.stages:
        _same_table(
            ab_test(on, off, scores.arrays.stage_mask(figures.stage)), tables[figures.stage]
        )
        _same_table(figures.ab, tables[figures.stage])


# -- the command line ----------------------------------------------------------------------


def run(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args))


@pytest.fixture
def where(db: Path, tmp_path: Path) -> list[str]:
    """--db and --config of a demo database with stage tables in its config."""
    config = tmp_path / "config.toml"
    options = ["--db", str(db), "--config", str(config)]
    assert run("config", "init", "--config", str(config)).exit_code == 0
    return options


def test_ab_json_is_the_table(where: list[str], db: Path) -> None:
    result = run("ab", "--json", *where)
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    settings = load_settings(Path(where[3]))
    with Store.open(db) as store:
        tables = brute_tables(store, settings)
        stages = store.stages()
    counts = tables["__all__"]
    assert document["marked_runs"] == sum(counts.values())
    assert document["both_right"] == counts["both"]
    assert document["ppp_right_technical_wrong"] == counts["on"]
    assert document["technical_right_ppp_wrong"] == counts["off"]
    assert document["both_wrong"] == counts["neither"]
    assert document["ppp_agreement"] == pytest.approx(
        (counts["both"] + counts["on"]) / sum(counts.values()), abs=1e-10
    )
    # The p-value whole, however small: not rounded to 10 decimals as other figures are.
    p = mcnemar_p(counts["on"], counts["off"])
    assert p < 1e-10
    assert document["p_value"] == p
    assert document["weights"] == {"technical": 0.7, "interaction": 0.3}
    assert list(document["per_stage"]) == [label(s) for s in ordered(stages)]
    for name, figures in document["per_stage"].items():
        stage = None if name == "(no stage)" else name
        stage_counts = tables.get(stage, Counter())
        assert figures["ppp_right_technical_wrong"] == stage_counts["on"]
        assert figures["technical_right_ppp_wrong"] == stage_counts["off"]
        assert figures["p_value"] == mcnemar_p(stage_counts["on"], stage_counts["off"])
        assert figures["weights"] == settings.weights_for(stage).document()


def test_ab_stage_and_text(where: list[str]) -> None:
    result = run("ab", "--stage", "plan", "--json", *where)
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    assert list(document["per_stage"]) == ["plan"]
    assert document["weights"] == {"technical": 0.6, "interaction": 0.4}
    plan = {k: v for k, v in document["per_stage"]["plan"].items() if k != "weights"}
    overall_figures = ("weights", "per_stage", "reviewer", "all_reviewers")
    assert plan == {k: v for k, v in document.items() if k not in overall_figures}
    text = run("ab", *where)
    assert text.exit_code == 0, text.output
    overall = json.loads(run("ab", "--json", *where).stdout)
    b, c = overall["ppp_right_technical_wrong"], overall["technical_right_ppp_wrong"]
    assert f"only one of them does in {b + c:,} runs: PPP on in {b:,}, PPP off in {c:,}" in (
        text.stdout
    )
    assert f"McNemar's exact test: p = {overall['p_value']:.3g}" in text.stdout
    assert "PPP on is right significantly more often" in text.stdout
    assert max(len(line) for line in text.stdout.splitlines()) <= 80
    # One stage: its figures once, no table repeating them.
    one = run("ab", "--stage", "plan", *where)
    assert "stage" not in one.stdout.splitlines()[-1]


def test_ab_refuses_no_marks_and_unknown_stages(where: list[str], tmp_path: Path) -> None:
    unknown = run("ab", "--stage", "nope", *where)
    assert unknown.exit_code == 1
    assert unknown.stderr.count("\n") == 1 and "no stage 'nope'" in unknown.stderr
    bare = tmp_path / "bare.jsonl"
    bare.write_text(
        json.dumps(
            {"id": "r1", "agents": [{"name": "a", "technical_score": 0.5, "trajectory": {}}]}
        )
        + "\n"
    )
    empty = ["--db", str(tmp_path / "bare.db"), "--config", where[3]]
    assert run("import", str(bare), *empty).exit_code == 0
    for args in (["ab"], ["ab", "--json"]):
        result = run(*args, *empty)
        assert result.exit_code == 1
        assert result.stdout == ""
        assert result.stderr.count("\n") == 1 and "no marked runs to compare" in result.stderr


# -- the dashboard -----------------------------------------------------------------------------


async def test_the_dashboard_shows_mcnemar_under_the_stage_table(db: Path, tmp_path: Path) -> None:
    async with opened(db, tmp_path, (80, 24)) as (app, pilot):
        await pilot.press("d")
        screen = await computed(app, pilot, DashboardScreen)
        assert screen.dashboard is not None
        test = screen.dashboard.total.ab
        assert test.discordant > 0
        subtitle = str(screen.query_one("#stages", DataTable).border_subtitle)
        assert subtitle == (
            f"McNemar: only on right {test.ppp_only:,}, only off right"
            f" {test.technical_only:,}, p = {test.p_value:.2g}"
        )
        # The line fits the panel's bottom border at 80 columns (corners, dashes, spaces).
        assert len(subtitle) <= 80 - 2 - 8
