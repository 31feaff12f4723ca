"""The leaderboard: Bradley-Terry strengths fitted to the marks and to the picks, checked
against closed forms, scipy's optimiser, a loop over the runs and `regret`'s picks;
and `ppp-tui leaderboard` through click's CliRunner."""

from __future__ import annotations

import json
import math
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest
from click.testing import CliRunner, Result
from scipy.optimize import brentq, minimize

from ppp_tui.cli import cli
from ppp_tui.cli.documents import regret_document
from ppp_tui.core.arrays import AgentRow, ScoreArrays
from ppp_tui.core.leaderboard import (
    RATING_PER_UNIT,
    Leaderboard,
    fit,
    leaderboard,
    leaderboard_under,
    log_posterior,
)
from ppp_tui.core.scores import Scores
from ppp_tui.core.settings import Settings
from ppp_tui.storage.store import Store

FloatArray = npt.NDArray[np.float64]
Row = tuple[str, str | None, list[AgentRow], str | None]
EXAMPLES = Path(__file__).resolve().parent.parent / "examples" / "runs.jsonl"


def _centred(values: list[float]) -> FloatArray:
    array = np.array(values, dtype=np.float64)
    result: FloatArray = array - array.mean()
    return result


def _scipy_fit(wins: FloatArray, prior: float = 1.0) -> FloatArray:
    """The same maximum found by scipy's optimiser, centred."""
    size = len(wins)

    def negative(theta: FloatArray) -> float:
        return -float(log_posterior(theta[None, :], wins[None, :, :], prior)[0])

    found = minimize(negative, np.zeros(size), method="BFGS", options={"gtol": 1e-10})
    return _centred(list(found.x))


# -- the fit ------------------------------------------------------------------------


def test_two_agents_without_the_prior_are_the_log_odds_of_their_wins() -> None:
    # 7 wins to 3: the maximum likelihood has P(a beats b) = 7/10, so
    # theta_a - theta_b = log(7/3), split evenly around 0.
    strengths = fit(np.array([[0, 7], [3, 0]]), prior=0.0)
    assert strengths == pytest.approx([math.log(7 / 3) / 2, -math.log(7 / 3) / 2], abs=1e-12)


def test_three_agents_without_the_prior_recover_the_strengths_that_made_the_wins() -> None:
    # Strengths 4, 2, 1 and wins exactly as expected: a-b 2 of 3, a-c 4 of 5, b-c 2 of 3.
    # Each agent's wins equal its expected wins (the likelihood equations), so the
    # maximum is log(4, 2, 1), centred.
    wins = np.array([[0, 2, 4], [1, 0, 2], [1, 1, 0]])
    assert fit(wins, prior=0.0) == pytest.approx(
        _centred([math.log(4), math.log(2), 0.0]), abs=1e-12
    )


def test_the_prior_keeps_an_agent_that_never_lost_finite() -> None:
    # a beat b 1000 times. Without a prior the maximum is at infinity. With one virtual
    # win and loss each against a reference at 0, the problem is symmetric (theta_b =
    # -theta_a = -x) and x solves 1000 (1 - s(2x)) = 2 s(x) - 1, s the logistic.
    def s(x: float) -> float:
        return 1 / (1 + math.exp(-x))

    x = brentq(lambda x: 1000 * (1 - s(2 * x)) - (2 * s(x) - 1), 0.0, 20.0, xtol=1e-14)
    strengths = fit(np.array([[0, 1000], [0, 0]]))
    assert np.isfinite(strengths).all()
    assert strengths == pytest.approx([x, -x], abs=1e-9)
    # About ln(1000) apart: a 1000-0 record reads as odds of about 1000 to 1 (some 1,200
    # rating points), not as an infinity.
    assert 6.5 < 2 * x < 7.5


def test_disconnected_agents_get_strengths_on_one_scale_from_the_prior() -> None:
    # a and b only ever met each other, and c and d: the reference ties them together.
    wins = np.array([[0, 6, 0, 0], [2, 0, 0, 0], [0, 0, 0, 1], [0, 0, 4, 0]], dtype=np.float64)
    strengths = fit(wins)
    assert strengths == pytest.approx(_scipy_fit(wins), abs=1e-6)
    assert strengths.sum() == pytest.approx(0.0, abs=1e-12)
    assert strengths[0] > strengths[1] and strengths[3] > strengths[2]


@pytest.mark.parametrize("seed", range(8))
def test_the_fit_is_scipys_maximum_of_the_same_objective(seed: int) -> None:
    rng = np.random.default_rng(seed)
    size = int(rng.integers(2, 7))
    wins = rng.integers(0, 30, size=(size, size)).astype(np.float64)
    wins[rng.random((size, size)) < 0.3] = 0  # missing pairs, sometimes an unbeaten agent
    np.fill_diagonal(wins, 0)
    assert fit(wins) == pytest.approx(_scipy_fit(wins), abs=1e-6)


def test_a_batch_of_fits_is_each_fit_alone() -> None:
    rng = np.random.default_rng(5)
    batch = rng.integers(0, 20, size=(6, 4, 4)).astype(np.float64)
    for wins in batch:
        np.fill_diagonal(wins, 0)
    fitted = fit(batch)
    for wins, strengths in zip(batch, fitted, strict=True):
        assert strengths == pytest.approx(fit(wins), abs=1e-12)


# -- from runs to pair counts -------------------------------------------------------


def _random_rows(rng: np.random.Generator, count: int) -> list[Row]:
    names = ["aider", "claude", "codex", "cursor", "gemini"]
    rows: list[Row] = []
    for r in range(count):
        k = int(rng.integers(1, 5))
        chosen = rng.choice(names, size=k, replace=False)
        agents = [AgentRow(str(name), float(rng.random()), float(rng.random())) for name in chosen]
        preferred = str(rng.choice(chosen)) if rng.random() < 0.8 else None
        rows.append((f"run-{r}", "implement" if r % 2 else None, agents, preferred))
    return rows


def _each_run(
    arrays: ScoreArrays, winners: npt.NDArray[np.int64], agents: tuple[str, ...]
) -> FloatArray:
    """Each run's pairwise wins (runs, agents, agents), one run at a time: its winner
    over every other agent of the run, none in an unmarked run."""
    index = {name: i for i, name in enumerate(agents)}
    wins = np.zeros((len(arrays), len(agents), len(agents)))
    for row in range(len(arrays)):
        if arrays.preferred[row] < 0:
            continue
        winner = str(arrays.names[row, winners[row]])
        for slot in np.flatnonzero(arrays.valid[row]):
            loser = str(arrays.names[row, slot])
            if loser != winner:
                wins[row, index[winner], index[loser]] += 1
    return wins


def _loop_counts(
    arrays: ScoreArrays, winners: npt.NDArray[np.int64], agents: tuple[str, ...]
) -> tuple[FloatArray, Counter[str], Counter[str]]:
    """Pairwise wins, runs taken part in and runs won, one marked run at a time."""
    took_part: Counter[str] = Counter()
    won: Counter[str] = Counter()
    for row in np.flatnonzero(arrays.preferred >= 0):
        took_part.update(str(arrays.names[row, s]) for s in np.flatnonzero(arrays.valid[row]))
        won[str(arrays.names[row, winners[row]])] += 1
    wins: FloatArray = _each_run(arrays, winners, agents).sum(axis=0)
    return wins, took_part, won


def _check_figures(board: Leaderboard, arrays: ScoreArrays, selected: Any) -> None:
    agents = board.agents
    for figures, winners in ((board.marks, arrays.preferred), (board.picks, selected)):
        wins, took_part, won = _loop_counts(arrays, winners, agents)
        assert list(board.runs) == [took_part[a] for a in agents]
        assert list(figures.chosen) == [won[a] for a in agents]
        assert list(figures.wins) == list(wins.sum(axis=1))
        assert list(figures.comparisons) == list(wins.sum(axis=1) + wins.sum(axis=0))
        assert figures.strength == pytest.approx(fit(wins), abs=1e-12)


def test_each_mark_is_a_win_over_every_other_agent_of_its_run() -> None:
    rows: list[Row] = [
        (
            "r1",
            None,
            [AgentRow("a", 0.9, 0.0), AgentRow("b", 0.8, 0.0), AgentRow("c", 0.7, 0.0)],
            "b",
        ),
        ("r2", None, [AgentRow("a", 0.9, 0.0), AgentRow("c", 0.8, 0.0)], "a"),
        ("r3", None, [AgentRow("c", 0.9, 0.0)], "c"),  # one agent: no comparison
        ("r4", None, [AgentRow("a", 0.9, 0.0), AgentRow("b", 0.8, 0.0)], None),  # unmarked
    ]
    arrays = ScoreArrays.build(rows)
    board = leaderboard(arrays, np.zeros(len(arrays), dtype=np.int64))
    assert board is not None
    by_agent = dict(zip(board.agents, range(3), strict=True))
    a, b, c = by_agent["a"], by_agent["b"], by_agent["c"]
    assert board.marked_runs == 3
    assert board.comparisons == 3  # 2 from r1, 1 from r2
    assert (board.runs[a], board.runs[b], board.runs[c]) == (2, 1, 3)
    assert (board.marks.chosen[a], board.marks.chosen[b], board.marks.chosen[c]) == (1, 1, 1)
    assert (board.marks.wins[a], board.marks.comparisons[a]) == (1, 2)  # beat c, lost to b
    assert (board.marks.wins[b], board.marks.comparisons[b]) == (2, 2)
    assert (board.marks.wins[c], board.marks.comparisons[c]) == (0, 2)
    assert board.marks.win_rate[b] == 1.0 and board.marks.one_sided[b]
    # The picks here: slot 0 of each run, the highest technical (a, a, c).
    assert (board.picks.chosen[a], board.picks.chosen[c]) == (2, 1)
    assert board.marks.strength.sum() == pytest.approx(0.0, abs=1e-12)
    assert board.agents == ("b", "a", "c")  # strongest first


@pytest.mark.parametrize("seed", range(5))
def test_the_pair_counts_are_a_loop_over_the_marked_runs(seed: int) -> None:
    rng = np.random.default_rng(seed)
    arrays = ScoreArrays.build(_random_rows(rng, 300))
    selected = np.array([rng.choice(np.flatnonzero(v)) for v in arrays.valid])
    board = leaderboard(arrays, selected, resamples=20)
    assert board is not None
    _check_figures(board, arrays, selected)
    # The strongest under the marks first.
    assert list(board.marks.strength) == sorted(board.marks.strength, reverse=True)


def test_runs_of_many_agents_count_the_same() -> None:
    # 30 agents in a run: too many to number a run's pattern in one integer.
    rng = np.random.default_rng(4)
    names = [f"agent{j:02}" for j in range(40)]
    rows: list[Row] = []
    for r in range(60):
        chosen = rng.choice(names, size=int(rng.integers(2, 31)), replace=False)
        agents = [AgentRow(str(name), float(rng.random()), 0.0) for name in chosen]
        rows.append((f"run-{r}", None, agents, str(rng.choice(chosen))))
    arrays = ScoreArrays.build(rows)
    selected = np.array([rng.choice(np.flatnonzero(v)) for v in arrays.valid])
    board = leaderboard(arrays, selected, resamples=20)
    assert board is not None and len(board.agents) == 40
    _check_figures(board, arrays, selected)


def test_no_marked_run_is_no_leaderboard() -> None:
    rows: list[Row] = [("r1", None, [AgentRow("a", 0.9, 0.0), AgentRow("b", 0.8, 0.0)], None)]
    arrays = ScoreArrays.build(rows)
    assert leaderboard(arrays, np.zeros(1, dtype=np.int64)) is None
    assert leaderboard_under(arrays, Settings()) is None


# -- the bootstrap --------------------------------------------------------------------


def test_the_bootstrap_repeats_with_its_seed() -> None:
    arrays = ScoreArrays.build(_random_rows(np.random.default_rng(1), 400))
    first = leaderboard_under(arrays, Settings())
    again = leaderboard_under(arrays, Settings())
    other = leaderboard_under(arrays, Settings(), seed=1)
    assert first is not None and again is not None and other is not None
    for a, b in ((first.marks, again.marks), (first.picks, again.picks)):
        assert np.array_equal(a.low, b.low) and np.array_equal(a.high, b.high)
    assert not np.array_equal(first.marks.low, other.marks.low)
    assert np.array_equal(first.marks.strength, other.marks.strength)  # only the intervals move
    assert (first.marks.low <= first.marks.strength).all()
    assert (first.marks.strength <= first.marks.high).all()


def test_your_marks_figures_do_not_move_with_the_weights() -> None:
    arrays = ScoreArrays.build(_random_rows(np.random.default_rng(3), 300))
    first = leaderboard(arrays, np.zeros(len(arrays), dtype=np.int64))
    last = leaderboard(arrays, arrays.valid.sum(axis=1) - 1)
    assert first is not None and last is not None
    assert first.agents == last.agents
    for key in ("strength", "low", "high", "chosen", "wins", "comparisons"):
        assert np.array_equal(getattr(first.marks, key), getattr(last.marks, key))
    assert not np.array_equal(first.picks.strength, last.picks.strength)


def test_the_interval_is_a_bootstrap_over_runs() -> None:
    # Drawing pattern counts from a multinomial is resampling the runs: its interval is
    # a plain bootstrap's (run indices drawn with replacement), up to resampling noise.
    rng = np.random.default_rng(2)
    arrays = ScoreArrays.build(_random_rows(rng, 300))
    marked = arrays.subset(arrays.marked)
    board = leaderboard(marked, marked.preferred, resamples=2000)
    assert board is not None
    each = _each_run(marked, marked.preferred, board.agents)
    runs = len(marked)
    # Run indices drawn with replacement; a resample's wins add up its runs' own.
    fits = [
        np.tensordot(np.bincount(rng.integers(0, runs, runs), minlength=runs), each, 1)
        for _ in range(2000)
    ]
    strengths = fit(np.array(fits))
    low, high = np.percentile(strengths, [2.5, 97.5], axis=0)
    assert board.marks.low == pytest.approx(low, abs=0.05)
    assert board.marks.high == pytest.approx(high, abs=0.05)


# -- the picks are regret's ---------------------------------------------------------------


def test_the_picks_are_the_agents_regret_selects(demo_db: Path) -> None:
    settings = Settings()
    with Store.open(demo_db) as store:
        scores = Scores.load(store, settings, marked_only=True)
    board = leaderboard_under(scores.arrays, settings)
    assert board is not None
    runs = regret_document(scores)["runs"]
    picked = Counter(run["selected"] for run in runs)
    preferred = Counter(run["preferred"] for run in runs)
    assert board.marked_runs == len(runs)
    assert dict(zip(board.agents, board.picks.chosen.tolist(), strict=True)) == {
        agent: picked[agent] for agent in board.agents
    }
    assert dict(zip(board.agents, board.marks.chosen.tolist(), strict=True)) == {
        agent: preferred[agent] for agent in board.agents
    }
    _check_figures(board, scores.arrays, scores.outcome.selected)


# -- the command --------------------------------------------------------------------


def _invoke(*args: str) -> Result:
    result = CliRunner().invoke(cli, list(args))
    assert "Traceback" not in result.output
    return result


@pytest.fixture
def config(tmp_path: Path) -> Path:
    path = tmp_path / "config.toml"
    path.write_text("")  # the defaults
    return path


def _expected(db: Path, stage: str | None = None) -> Leaderboard:
    settings = Settings()
    with Store.open(db) as store:
        scores = Scores.load(store, settings, stage, marked_only=True)
    board = leaderboard_under(scores.arrays, settings)
    assert board is not None
    return board


def test_json_is_every_agents_figures_at_full_precision(demo_db: Path, config: Path) -> None:
    result = _invoke("leaderboard", "--json", "--db", str(demo_db), "--config", str(config))
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    board = _expected(demo_db)
    assert document["marked_runs"] == board.marked_runs
    assert document["comparisons"] == board.comparisons
    assert (document["resamples"], document["seed"], document["stage"]) == (200, 0, None)
    assert document["rating_per_unit"] == pytest.approx(400 / math.log(10))
    assert [agent["agent"] for agent in document["agents"]] == list(board.agents)
    for i, agent in enumerate(document["agents"]):
        for key, figures in (("marks", board.marks), ("picks", board.picks)):
            shown = agent[key]
            assert shown["strength"] == pytest.approx(figures.strength[i], abs=1e-9)
            assert shown["interval"] == pytest.approx([figures.low[i], figures.high[i]], abs=1e-9)
            assert shown["rating"] == pytest.approx(figures.strength[i] * RATING_PER_UNIT, abs=1e-7)
            assert shown["wins"] == figures.wins[i]
            assert shown["comparisons"] == figures.comparisons[i]
        assert agent["marks"]["preferred"] == board.marks.chosen[i]
        assert agent["picks"]["picked"] == board.picks.chosen[i]
        assert agent["marked_runs"] == board.runs[i]


def test_text_fits_80_columns_and_rounds_the_ratings(demo_db: Path, config: Path) -> None:
    result = _invoke("leaderboard", "--db", str(demo_db), "--config", str(config))
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert max(len(line) for line in lines) <= 80
    board = _expected(demo_db)
    assert lines[0].startswith(f"{board.marked_runs:,} marked runs")
    rows = lines[3 : 3 + len(board.agents)]
    for i, row in enumerate(rows):
        cells = row.split()
        assert cells[0] == board.agents[i]
        assert cells[1] == f"{board.marks.rating[i]:+.0f}"
        assert cells[-1] == f"{board.picks.chosen[i]:,}"


def test_one_stage_is_the_fit_over_that_stages_marked_runs(demo_db: Path, config: Path) -> None:
    result = _invoke(
        "leaderboard",
        "--json",
        "--stage",
        "implement",
        "--db",
        str(demo_db),
        "--config",
        str(config),
    )
    document = json.loads(result.stdout)
    board = _expected(demo_db, "implement")
    assert document["stage"] == "implement"
    assert document["marked_runs"] == board.marked_runs < _expected(demo_db).marked_runs
    assert [a["marks"]["strength"] for a in document["agents"]] == pytest.approx(
        list(board.marks.strength), abs=1e-9
    )


def _error_line(result: Result) -> str:
    assert result.exit_code == 1, result.output
    assert result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    return lines[0]


def test_no_marks_and_an_unknown_stage_are_one_line_and_exit_1(
    demo_db: Path, tmp_path: Path, config: Path
) -> None:
    unknown = _invoke(
        "leaderboard", "--stage", "nope", "--db", str(demo_db), "--config", str(config)
    )
    assert "no stage 'nope'; known stages:" in _error_line(unknown)
    db = tmp_path / "unmarked.db"
    assert _invoke("import", str(EXAMPLES), "--db", str(db), "--config", str(config)).exit_code == 0
    for args in ([], ["--json"]):
        result = _invoke("leaderboard", *args, "--db", str(db), "--config", str(config))
        assert "no marked runs to rank the agents by" in _error_line(result)


def _long_names_db(tmp_path: Path) -> Path:
    names = ["gemini-cli/gemini-2.5-pro", "gemini-cli/gemini-2.5-flash", "codex"]
    runs = [
        {
            "id": f"run-{i}",
            "task": "Add rate limiting",
            "preferred_agent": names[i % 3],
            "agents": [{"name": n, "technical_score": 0.5 + 0.1 * k} for k, n in enumerate(names)],
        }
        for i in range(6)
    ]
    source = tmp_path / "runs.jsonl"
    source.write_text("".join(json.dumps(run) + "\n" for run in runs))
    db = tmp_path / "long.db"
    assert CliRunner().invoke(cli, ["import", str(source), "--db", str(db)]).exit_code == 0
    return db


@pytest.mark.parametrize(
    ("columns", "shown"),
    [
        (None, ["gemini-cli/gemini-2.5-pro", "gemini-cli/gemini-2.5-flash"]),  # a pipe
        (150, ["gemini-cli/gemini-2.5-pro", "gemini-cli/gemini-2.5-flash"]),
        (80, ["gemini-cli/gem…", "gemini-cli/gem…"]),  # 15 characters: the table fits 80
    ],
)
def test_leaderboard_names_take_the_width_the_terminal_has(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, columns: int | None, shown: list[str]
) -> None:
    from ppp_tui.cli import tables

    monkeypatch.setattr(tables, "terminal_width", lambda: columns)
    result = CliRunner().invoke(cli, ["leaderboard", "--db", str(_long_names_db(tmp_path))])
    assert result.exit_code == 0, result.output
    rows = [line.split()[0] for line in result.output.splitlines() if line.startswith("gemini")]
    assert sorted(rows) == sorted(shown)
    table = [line for line in result.output.splitlines() if line.startswith(("agent", "gemini"))]
    if columns is not None:
        assert all(len(line) <= columns for line in table)
