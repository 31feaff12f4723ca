"""Which runs to mark next (`next`, `n` in the runs list): the rule on hand-built runs whose
flips lie at known weights, the flips against the per-run selection, the scopes, a simulated
user who needs fewer marks than one marking at random, the command line and the app."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner, Result
from helpers import opened
from textual.widgets import Select

from ppp_tui.app.screens.runs import RunsScreen
from ppp_tui.cli import cli
from ppp_tui.cli.next_mark import next_
from ppp_tui.core.arrays import AgentRow, Lines, ScoreArrays
from ppp_tui.core.next_mark import NEXT_RUNS, Scope, estimate, flips, scopes, suggest
from ppp_tui.core.scores import Scores
from ppp_tui.core.settings import STAGE_TUNED, Settings, Weights
from ppp_tui.core.stages import NO_STAGE
from ppp_tui.core.tuning import optimum
from ppp_tui.storage.store import Store

Row = tuple[str, str | None, list[AgentRow], str | None]


def flipping(
    run_id: str, at: float, preferred: str | None = None, stage: str | None = "plan"
) -> Row:
    """A run whose pick changes at technical weight `at`: `steady` (technical 1, no
    interaction: final w) ranks first above it, `chatty` (technical 0, interaction
    c = at / (1 - at): final c (1 - w)) below it."""
    c = at / (1.0 - at)
    agents = [AgentRow("steady", 1.0, 0.0), AgentRow("chatty", 0.0, c)]
    return run_id, stage, agents, preferred


def steady_run(run_id: str) -> Row:
    """A run whose pick never changes: `steady` leads at every weight."""
    return run_id, "plan", [AgentRow("steady", 1.0, 0.5), AgentRow("weak", 0.2, 0.1)], None


def whole(lines: Lines) -> list[Scope]:
    return [Scope(None, np.ones(len(lines.arrays), dtype=bool), 0.7)]


def known() -> Lines:
    """Two marks leave 0.4-0.8 undecided: the user preferred `steady` in a run flipping at
    0.4 (so w > 0.4) and `chatty` in one flipping at 0.8 (w < 0.8). Centre: 0.6."""
    rows = [
        flipping("m-low", 0.4, "steady"),
        flipping("m-high", 0.8, "chatty"),
        flipping("u-far-low", 0.1),
        flipping("u-near", 0.62),
        flipping("u-inside-low", 0.5),
        steady_run("u-never"),
        flipping("u-inside-high", 0.65),
        flipping("u-far-high", 0.9),
    ]
    return ScoreArrays.build(rows).lines(Settings())


# -- the rule on hand-built runs -----------------------------------------------------------


def test_flips_are_where_the_picks_change() -> None:
    lines = known()
    x, run = flips(lines)
    at = dict(zip(lines.arrays.run_ids[run].tolist(), x.tolist(), strict=True))
    expected = {"m-low": 0.4, "m-high": 0.8, "u-far-low": 0.1, "u-near": 0.62}
    expected |= {"u-inside-low": 0.5, "u-inside-high": 0.65, "u-far-high": 0.9}
    assert at == pytest.approx(expected, abs=1e-12)  # and "u-never" has none


def test_the_undecided_stretch_is_the_least_regret_and_the_tuned_weight_in_it() -> None:
    lines = known()
    marked = lines.marked_only()
    technical, (low, high) = estimate(marked, 0.7)
    assert (low, high) == pytest.approx((0.4, 0.8), abs=1e-12)
    assert technical == optimum(lines, 0.7) == 0.7  # 0.7 fits: `tune` keeps it
    assert estimate(lines.subset(np.zeros(len(lines.arrays), dtype=bool)), 0.7) == (
        0.7,
        (0.0, 1.0),
    )


def test_a_mark_no_weight_agrees_with_is_left_out_of_the_stretch() -> None:
    """`weak` ranks first at no weight: its mark's regret is least at w = 0, which would
    pin the stretch to 0.4; it tells nothing about where between 0.4 and 0.8 w lies."""
    rows = [
        flipping("m-low", 0.4, "steady"),
        flipping("m-high", 0.8, "chatty"),
        (*steady_run("m-noise")[:3], "weak"),
    ]
    lines = ScoreArrays.build(rows).lines(Settings())
    technical, stretch = estimate(lines.marked_only(), 0.7)
    assert stretch == pytest.approx((0.4, 0.8), abs=1e-12)
    assert technical == optimum(lines, 0.7) == pytest.approx(0.4)  # tune counts it
    only_noise = ScoreArrays.build(rows[2:]).lines(Settings())
    assert estimate(only_noise, 0.7)[1] == (0.0, 1.0)


def test_the_run_flipping_nearest_the_centre_comes_first() -> None:
    lines = known()
    result = suggest(lines, whole(lines), count=10)
    assert [s.run_id for s in result.suggestions] == [
        "u-near",  # 0.62: 0.02 from 0.6
        "u-inside-high",  # 0.65: 0.05
        "u-inside-low",  # 0.5: 0.1
        "u-far-high",  # 0.9: 0.3, outside 0.4-0.8
        "u-far-low",  # 0.1: 0.5
    ]
    first = result.suggestions[0]
    assert first.flip == pytest.approx(0.62, abs=1e-12)
    assert first.distance == pytest.approx(0.02, abs=1e-12)
    assert (first.inside, first.below, first.above) == (True, "chatty", "steady")
    assert [s.inside for s in result.suggestions] == [True, True, True, False, False]
    (fitted,) = result.estimates
    assert fitted.scope is None and fitted.marked_runs == 2 and fitted.technical == 0.7
    assert fitted.undecided == pytest.approx((0.4, 0.8)) and fitted.centre == pytest.approx(0.6)
    # Six unmarked runs, five of which change their pick.
    assert (fitted.unmarked_runs, fitted.changing_runs) == (6, 5)
    assert (result.unmarked_runs, result.changing_runs) == (6, 5)


def test_count_is_respected_and_only_unmarked_runs_are_listed() -> None:
    lines = known()
    assert [s.run_id for s in suggest(lines, whole(lines), count=2).suggestions] == [
        "u-near",
        "u-inside-high",
    ]
    rows = random_rows(np.random.default_rng(3), 300)
    lines = ScoreArrays.build(rows).lines(Settings())
    result = suggest(lines, whole(lines), count=NEXT_RUNS)
    assert len(result.suggestions) == NEXT_RUNS
    listed = [s.row for s in result.suggestions]
    assert len(set(listed)) == NEXT_RUNS
    assert all(lines.arrays.preferred[row] == -1 for row in listed)
    assert [lines.arrays.run_ids[row] for row in listed] == [s.run_id for s in result.suggestions]
    distances = [s.distance for s in result.suggestions]
    assert distances == sorted(distances)


def test_without_marks_the_whole_range_is_undecided_and_its_middle_the_target() -> None:
    rows = [flipping("a", 0.3), flipping("b", 0.45), flipping("c", 0.7)]
    lines = ScoreArrays.build(rows).lines(Settings())
    result = suggest(lines, whole(lines))
    assert result.estimates[0].undecided == (0.0, 1.0)
    assert result.estimates[0].technical == 0.7  # the configured weight, untuned
    assert [s.run_id for s in result.suggestions] == ["b", "c", "a"]
    assert all(s.inside for s in result.suggestions)


def test_with_no_flip_in_range_the_nearest_outside_come_and_say_so() -> None:
    """Marks that pin the weight to one point (they disagree: 0.6 from both sides) leave no
    flip strictly inside: the runs flipping nearest that point come, marked outside."""
    rows = [
        flipping("m1", 0.6, "steady"),  # w >= 0.6
        flipping("m2", 0.6, "chatty"),  # w <= 0.6
        flipping("u1", 0.7),
        flipping("u2", 0.55),
    ]
    lines = ScoreArrays.build(rows).lines(Settings())
    result = suggest(lines, whole(lines))
    assert result.estimates[0].undecided == pytest.approx((0.6, 0.6))
    assert [s.run_id for s in result.suggestions] == ["u2", "u1"]
    assert not any(s.inside for s in result.suggestions)


def test_ties_go_by_run_id_and_the_result_is_deterministic() -> None:
    rows = [flipping(f"r{k}", 0.5) for k in (3, 1, 2)] + [flipping("r0", 0.5, "steady")]
    lines = ScoreArrays.build(rows).lines(Settings())
    first = suggest(lines, whole(lines))
    assert [s.run_id for s in first.suggestions] == ["r1", "r2", "r3"]
    again = suggest(ScoreArrays.build(rows).lines(Settings()), whole(lines))
    assert again == first
    big = ScoreArrays.build(random_rows(np.random.default_rng(8), 400)).lines(Settings())
    assert suggest(big, whole(big), 50) == suggest(big, whole(big), 50)


def test_a_run_with_several_flips_counts_its_nearest_and_names_both_sides() -> None:
    """Three agents, finals 2w - 1 (`steady`), 0.3 + 0.3w (`middle`) and 1 - w (`chatty`):
    chatty ranks first below 7/13, middle up to 13/17, steady above."""
    agents = [
        AgentRow("steady", 1.0, -1.0),
        AgentRow("middle", 0.6, 0.3),
        AgentRow("chatty", 0.0, 1.0),
    ]
    lines = ScoreArrays.build([("r", "plan", agents, None)]).lines(Settings())
    x, _ = flips(lines)
    assert sorted(x.tolist()) == pytest.approx([7 / 13, 13 / 17])
    (only,) = suggest(lines, whole(lines)).suggestions
    assert only.flip == pytest.approx(7 / 13)  # nearer 0.5 than 13/17
    assert (only.below, only.above) == ("chatty", "middle")


@pytest.mark.parametrize("seed", range(6))
def test_flips_and_sides_agree_with_the_selection_around_them(seed: int) -> None:
    """Just below and above each suggested flip, the selection (the ranking's own
    arithmetic) picks the agents the suggestion names; and between the flips of a run it
    never changes (checked on a grid)."""
    rows = random_rows(np.random.default_rng(40 + seed), 120)
    lines = ScoreArrays.build(rows).lines(Settings())
    result = suggest(lines, whole(lines), count=120)
    names = lines.arrays.names
    for s in result.suggestions:
        below = lines.subset(np.array([s.row])).outcome(s.flip - 1e-7).selected[0]
        above = lines.subset(np.array([s.row])).outcome(s.flip + 1e-7).selected[0]
        assert (names[s.row, below], names[s.row, above]) == (s.below, s.above)
    x, run = flips(lines)
    grid = np.linspace(0.0, 1.0, 1001)
    picks = np.array([lines.outcome(float(w)).selected for w in grid])  # (grid, runs)
    changes = picks[1:] != picks[:-1]
    for step, row in zip(*np.nonzero(changes), strict=True):
        mine = x[run == row]
        assert np.any((mine >= grid[step] - 1e-9) & (mine <= grid[step + 1] + 1e-9))


# -- scopes ----------------------------------------------------------------------------------


def test_scopes_follow_tune() -> None:
    rows = [
        flipping("g1", 0.3, "steady", stage="implement"),
        flipping("g2", 0.5, stage="implement"),
        flipping("p1", 0.8, "chatty", stage="plan"),
        flipping("p2", 0.45, stage="plan"),
        flipping("n1", 0.52, stage=None),
    ]
    arrays = ScoreArrays.build(rows)
    lines = arrays.lines(Settings())
    tables = Settings(stage_weights={"plan": Weights.pair(0.6, 0.4)})
    found = scopes(arrays, tables)
    assert [s.name for s in found] == [None, "plan"]
    assert found[0].runs.tolist() == [True, True, False, False, True]
    assert found[1].current == 0.6
    result = suggest(lines, found)
    by_scope = {e.scope: e for e in result.estimates}
    assert by_scope[None].undecided == pytest.approx((0.3, 1.0))  # g1: w >= 0.3
    assert by_scope["plan"].undecided == pytest.approx((0.0, 0.8))  # p1: w <= 0.8
    # n1 flips 0.13 from 0.65, g2 0.15 from it; p2 0.05 from plan's 0.4.
    assert [(s.run_id, s.scope) for s in result.suggestions] == [
        ("p2", "plan"),
        ("n1", None),
        ("g2", None),
    ]
    # A stage alone is its own scope, as `tune --stage` fits it.
    (implement,) = scopes(arrays, Settings(), "implement")
    assert implement.name == "implement" and implement.runs.tolist() == [True, True] + [False] * 3
    # Runs without a stage: the global scope, only they suggested.
    (unstaged,) = scopes(arrays, tables, NO_STAGE)
    assert unstaged.name is None and unstaged.candidates is not None
    assert [s.run_id for s in suggest(lines, [unstaged]).suggestions] == ["n1"]
    assert scopes(arrays, Settings(stage_weights=STAGE_TUNED))[0].name is None


# -- a simulated user ------------------------------------------------------------------------


def random_rows(rng: np.random.Generator, count: int) -> list[Row]:
    """`count` unmarked runs of 2-5 agents with realistic scores."""
    rows: list[Row] = []
    for r in range(count):
        agents = [
            AgentRow(
                f"agent{j}",
                round(float(rng.uniform(0.4, 1.0)), 3),
                float(rng.choice([0.1, 0.05, 0.0, -0.1, -0.5, -0.6, -1.0])),
            )
            for j in range(int(rng.integers(2, 6)))
        ]
        rows.append((f"run-{r:04d}", "implement", agents, None))
    return rows


def marks_needed(strategy: str, hidden: float, seed: int, budget: int = 60) -> int:
    """How many marks a user with the hidden technical weight `hidden` (and a little noise)
    makes before `tune`'s weight stays within 0.02 of it (budget + 1: never)."""
    rng = np.random.default_rng(seed)
    arrays = ScoreArrays.build(random_rows(rng, 400))
    lines = arrays.lines(Settings())
    truth = lines.outcome(hidden).final + rng.normal(0.0, 0.005, arrays.technical.shape)
    answers = np.where(arrays.valid, truth, -np.inf).argmax(axis=1)
    order = iter(rng.permutation(len(arrays)))
    errors = []
    for _ in range(budget):
        lines = arrays.lines(Settings())
        if strategy == "next":
            row = suggest(lines, whole(lines), 1).suggestions[0].row
        else:
            row = int(next(order))
        arrays.preferred[row] = answers[row]
        tuned = optimum(arrays.lines(Settings()), 0.7)
        assert tuned is not None
        errors.append(abs(tuned - hidden))
    off = np.flatnonzero(np.array(errors) > 0.02)
    return 0 if off.size == 0 else int(off[-1]) + 2


def test_a_user_marking_the_suggested_runs_needs_fewer_marks_than_at_random() -> None:
    for hidden, seed in ((0.62, 1), (0.45, 2)):
        suggested = marks_needed("next", hidden, seed)
        at_random = marks_needed("random", hidden, seed)
        assert suggested <= 15, (hidden, suggested)
        assert suggested < at_random, (hidden, suggested, at_random)


# -- the command line ------------------------------------------------------------------------


def run(*args: str) -> Result:
    result = CliRunner().invoke(cli, list(args))
    assert "Traceback" not in result.output
    return result


@pytest.fixture
def where(db: Path, tmp_path: Path) -> list[str]:
    config = tmp_path / "config.toml"
    config.write_text("")  # the defaults
    return ["--db", str(db), "--config", str(config)]


def test_next_json_is_the_core_result(where: list[str], db: Path) -> None:
    result = run("next", "--json", "-n", "4", *where)
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    with Store.open(db) as store:
        scores = Scores.load(store, Settings())
    expected = suggest(scores.lines, scopes(scores.arrays, Settings()), 4)
    assert [r["run_id"] for r in document["runs"]] == [s.run_id for s in expected.suggestions]
    first, best = document["runs"][0], expected.suggestions[0]
    assert first == {
        "run_id": best.run_id,
        "stage": best.stage,
        "scope": "global",
        "flip": pytest.approx(best.flip, abs=1e-10),
        "distance": pytest.approx(best.distance, abs=1e-10),
        "inside": best.inside,
        "below": best.below,
        "above": best.above,
    }
    (scope,) = document["scopes"]
    (fitted,) = expected.estimates
    assert scope["marked_runs"] == fitted.marked_runs > 0
    assert scope["technical"] == pytest.approx(fitted.technical, abs=1e-10)
    assert scope["undecided"] == pytest.approx(list(fitted.undecided), abs=1e-10)
    assert scope["centre"] == pytest.approx(fitted.centre, abs=1e-10)
    assert scope["unmarked_runs"] == 300 - fitted.marked_runs
    with Store.open(db) as store:
        assert all(store.get_run(r["run_id"]).preferred_agent is None for r in document["runs"])


def test_next_text_fits_80_columns(where: list[str]) -> None:
    result = run("next", *where)
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert max(len(line) for line in lines) <= 80
    assert lines[0].split() == [
        "scope", "marked", "tuned", "undecided", "target", "unmarked", "changing"
    ]  # fmt: skip
    assert lines[1].startswith("global")
    header = lines.index("") + 1
    assert lines[header].split()[:4] == ["run", "stage", "flip", "distance"]
    assert len(lines) - header - 1 == NEXT_RUNS
    assert f"{NEXT_RUNS} of the " in result.stderr and "runs whose pick changes" in result.stderr
    staged = run("next", "--stage", "plan", "-n", "2", *where)
    assert staged.exit_code == 0, staged.output
    assert staged.stdout.splitlines()[1].startswith("plan")
    assert len(staged.stdout.splitlines()) == 2 + 1 + 1 + 2


def test_next_refuses_an_unknown_stage_and_a_database_without_unmarked_runs(
    where: list[str], tmp_path: Path
) -> None:
    unknown = run("next", "--stage", "nope", *where)
    assert unknown.exit_code == 1
    assert unknown.stderr.count("\n") == 1 and "no stage 'nope'" in unknown.stderr
    marked = tmp_path / "marked.jsonl"
    agents = [
        {"name": "a", "technical_score": 0.9, "trajectory": {}},
        {"name": "b", "technical_score": 0.5, "trajectory": {}},
    ]
    marked.write_text(json.dumps({"id": "r1", "agents": agents, "preferred_agent": "b"}) + "\n")
    options = ["--db", str(tmp_path / "marked.db"), "--config", where[3]]
    assert run("import", str(marked), *options).exit_code == 0
    for args in (["next"], ["next", "--json"]):
        result = run(*args, *options)
        assert result.exit_code == 1
        assert result.stdout == ""
        assert result.stderr.count("\n") == 1 and "no unmarked runs" in result.stderr
    # Unmarked, but its pick is the same at every weight: nothing to learn from it.
    marked.write_text(json.dumps({"id": "r2", "agents": agents}) + "\n")
    assert run("import", str(marked), *options).exit_code == 0
    result = run("next", *options)
    assert result.exit_code == 1 and result.stderr.count("\n") == 1
    assert "changes its pick" in result.stderr
    assert run("next", "-n", "0", *options).exit_code == 2


def test_the_default_count_is_the_cores() -> None:
    (count,) = [p for p in next_.params if p.name == "count"]
    assert count.default == NEXT_RUNS


# -- the app ---------------------------------------------------------------------------------


async def test_n_shows_the_runs_to_mark_next_and_escape_all_runs(db: Path, tmp_path: Path) -> None:
    async with opened(db, tmp_path, (80, 24)) as (app, pilot):
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, RunsScreen)
        workspace = app.workspace
        assert workspace is not None and workspace.scores is not None
        expected = suggest(workspace.scores.lines, scopes(workspace.scores.arrays, Settings()))
        await pilot.press("n")
        await app.workers.wait_for_complete()
        await pilot.pause()
        table = screen.table
        shown = [table.rows.infos[i].id for i in table.order]
        assert shown == [s.run_id for s in expected.suggestions]
        assert table.current_run() == shown[0]
        assert "to mark next" in str(screen.query_one("#runs-status").render())
        assert any("Mark these 10 runs next" in str(n.message) for n in app._notifications)
        # A mark of the first: it leaves the list, and another comes.
        workspace.mark(shown[0], expected.suggestions[0].above)
        screen.workspace_changed()
        await app.workers.wait_for_complete()
        await pilot.pause()
        again = [table.rows.infos[i].id for i in table.order]
        assert shown[0] not in again and len(again) == NEXT_RUNS
        scores = workspace.scores
        after = suggest(scores.lines, scopes(scores.arrays, Settings()))
        assert again == [s.run_id for s in after.suggestions]
        await pilot.press("escape")
        await pilot.pause()
        assert len(table.order) == 300
        assert "to mark next" not in str(screen.query_one("#runs-status").render())
        # With a stage chosen, that stage's own runs (its own scope, as `tune --stage`).
        screen.query_one("#stage-filter", Select).value = "plan"
        await pilot.pause()
        await pilot.press("n")
        await app.workers.wait_for_complete()
        await pilot.pause()
        staged = [table.rows.infos[i] for i in table.order]
        plan = suggest(scores.lines, scopes(scores.arrays, Settings(), "plan"))
        assert [i.id for i in staged] == [s.run_id for s in plan.suggestions]
        assert staged and all(i.stage == "plan" for i in staged)
