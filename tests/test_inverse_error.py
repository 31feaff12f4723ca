"""Inverse error weighting (`tune --method inverse-error`): the weight against a
hand-worked three-run example and against every run ranked one by one, its guards, its
figures beside the exact optimum's, and the command line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from ppp_tui.cli import cli
from ppp_tui.core.arrays import AgentRow, ScoreArrays
from ppp_tui.core.inverse_error import (
    NoTrajectoryError,
    inverse_error,
    inverse_error_weight,
    tune_inverse_error,
)
from ppp_tui.core.scoring import rank_run
from ppp_tui.core.settings import Settings, Weights
from ppp_tui.core.tuning import optimum
from ppp_tui.storage.config import load_settings
from ppp_tui.storage.store import Store


def three_runs(preferred: tuple[str | None, ...] = ("a", "b", "a")) -> ScoreArrays:
    """Three runs; agent b of the first has no trajectory (it does not count)."""
    return ScoreArrays.build(
        [
            ("r1", "plan", [AgentRow("a", 0.9, 0.05), AgentRow("b", 0.6, None)], preferred[0]),
            ("r2", "plan", [AgentRow("a", 0.8, -0.1), AgentRow("b", 0.7, 0.0)], preferred[1]),
            ("r3", "plan", [AgentRow("a", 1.0, -0.5)], preferred[2]),
        ]
    )


def test_the_weight_by_hand() -> None:
    # Agents with a trajectory: technical 0.9, 0.8, 0.7, 1.0 -> norms 0.8, 0.6, 0.4, 1.0,
    # mean 0.7, error_t = 0.3; interaction 0.05, -0.1, 0, -0.5 -> norms 0.5, -1, 0, -5,
    # mean -1.375, error_i = 1.375. w_t = (1/0.3) / (1/0.3 + 1/1.375) = 1.375 / 1.675.
    estimate = inverse_error(three_runs())
    assert estimate is not None
    assert estimate.agents == 4
    assert estimate.technical_norm == pytest.approx(0.7, abs=1e-15)
    assert estimate.interaction_norm == pytest.approx(-1.375, abs=1e-15)
    assert estimate.technical_error == pytest.approx(0.3, abs=1e-15)
    assert estimate.interaction_error == pytest.approx(1.375, abs=1e-15)
    assert estimate.technical == pytest.approx(1.375 / 1.675, rel=1e-14)
    assert estimate.interaction == pytest.approx(0.3 / 1.675, rel=1e-11)


def test_zero_errors_take_all_the_weight() -> None:
    assert inverse_error_weight(0.0, 0.4) == 1.0  # technical perfect
    assert inverse_error_weight(0.4, 0.0) == 0.0  # interaction perfect
    assert inverse_error_weight(0.0, 0.0) == 0.5  # both
    assert inverse_error_weight(0.25, 0.75) == pytest.approx(0.75, rel=1e-15)
    perfect = ScoreArrays.build(
        [("r", None, [AgentRow("a", 1.0, -0.1), AgentRow("b", 1.0, 0.3)], "a")]
    )
    estimate = inverse_error(perfect)
    assert estimate is not None and estimate.technical_error == 0.0 and estimate.technical == 1.0
    balanced = ScoreArrays.build(
        [("r", None, [AgentRow("a", 0.5, -0.1), AgentRow("b", 0.7, 0.1)], "a")]
    )
    estimate = inverse_error(balanced)
    assert estimate is not None and estimate.interaction_error == 0.0 and estimate.technical == 0.0
    both = ScoreArrays.build([("r", None, [AgentRow("a", 1.0, 0.0)], "a")])
    estimate = inverse_error(both)
    assert estimate is not None and (estimate.technical, estimate.interaction) == (0.5, 0.5)


def test_the_figures_beside_the_exact_optimum() -> None:
    settings = Settings(stage_weights={"plan": Weights.pair(0.6, 0.4)})
    arrays = three_runs(("a", "b", None))
    tuning = tune_inverse_error(arrays.lines(settings), settings, "plan")
    assert tuning is not None
    # The weight comes from every run (the unmarked one too), the figures from the marked.
    assert (tuning.runs, tuning.marked_runs, tuning.estimate.agents) == (3, 2, 4)
    w = 1.375 / 1.675
    assert tuning.technical == pytest.approx(w, rel=1e-14)
    marked = arrays.lines(settings).marked_only()
    for choice, technical in (
        (tuning.inverse_error, tuning.technical),
        (tuning.before, 0.6),
        (tuning.exact, optimum(marked, 0.6)),
    ):
        outcome = marked.outcome(technical)
        assert choice.technical == technical
        assert (choice.mean_regret, choice.agreement) == (outcome.mean_regret, outcome.agreement)
    # By hand at w = 0.8209: r1 selects a (0.9 w + 0.05 (1 - w) = 0.748 against b's
    # technical-only 0.6), the preferred agent; r2 selects a (0.8 w - 0.1 (1 - w) =
    # 0.639) over b (0.7 w = 0.575), which was preferred: its regret is the difference.
    r2_a = 0.8 * w + (-0.1) * (1 - w)
    r2_b = 0.7 * w
    assert tuning.inverse_error.agreement == 0.5
    assert tuning.inverse_error.mean_regret == pytest.approx((r2_a - r2_b) / 2, rel=1e-12)
    assert tuning.exact.mean_regret <= tuning.inverse_error.mean_regret


def test_no_trajectory_and_no_marks() -> None:
    bare = ScoreArrays.build([("r", "plan", [AgentRow("a", 0.8, None)], "a")])
    assert inverse_error(bare) is None
    with pytest.raises(NoTrajectoryError, match="plan: no agent has a trajectory"):
        tune_inverse_error(bare.lines(Settings()), Settings(), "plan")
    unmarked = three_runs((None, None, None))
    assert tune_inverse_error(unmarked.lines(Settings()), Settings(), "plan") is None


# -- against every run ranked one by one, through the command line -----------------------------


def run(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args))


@pytest.fixture
def where(db: Path, tmp_path: Path) -> list[str]:
    config = tmp_path / "config.toml"
    assert run("config", "init", "--config", str(config)).exit_code == 0
    return ["--db", str(db), "--config", str(config)]


def brute_weight(store: Store, settings: Settings, stage: str | None) -> tuple[float, int, int]:
    """(w_t, agents, runs) from every run of the scope ranked one by one."""
    technical, interaction, runs = [], [], 0
    for info in store.run_infos():
        in_scope = (
            info.stage == stage if stage is not None else info.stage not in settings.stage_weights
        )
        if not in_scope:
            continue
        runs += 1
        for agent in rank_run(store.get_run(info.id), settings).agents:
            if agent.interaction is not None:
                technical.append((agent.technical - 0.5) / 0.5)
                interaction.append(agent.interaction / 0.1)
    error_t = 1 - sum(technical) / len(technical)
    error_i = abs(sum(interaction) / len(interaction))
    return (1 / error_t) / (1 / error_t + 1 / error_i), len(technical), runs


def test_the_command_is_every_run_ranked_one_by_one(where: list[str], db: Path) -> None:
    settings = load_settings(Path(where[3]))
    result = run("tune", "--method", "inverse-error", "--per-stage", "--json", *where)
    assert result.exit_code == 0, result.output
    documents = json.loads(result.stdout)
    exact = {d["scope"]: d for d in json.loads(run("tune", "--per-stage", "--json", *where).stdout)}
    assert [d["scope"] for d in documents] == list(exact)
    with Store.open(db) as store:
        for document in documents:
            stage = document["scope"]
            w, agents, runs = brute_weight(store, settings, stage)
            assert document["method"] == "inverse-error"
            assert (document["agents"], document["runs"]) == (agents, runs)
            assert document["technical"] == pytest.approx(w, abs=1e-9)
            assert document["interaction"] == pytest.approx(1 - w, abs=1e-9)
            # The exact optimum and the current weights are `tune`'s.
            tuned = exact[stage]
            assert document["marked_runs"] == tuned["marked_runs"]
            assert document["exact"] == {
                key: tuned[key] for key in ("technical", "interaction", "mean_regret", "agreement")
            }
            assert document["before"] == tuned["before"]
            # One stage alone gives the same document.
            alone = run("tune", "--method", "inverse-error", "--stage", stage, "--json", *where)
            assert json.loads(alone.stdout) == document
    # The global scope: only the runs whose stage has no table of its own.
    global_run = run("tune", "--method", "inverse-error", "--json", *where)
    assert global_run.exit_code == 0, global_run.output
    document = json.loads(global_run.stdout)
    with Store.open(db) as store:
        w, agents, runs = brute_weight(store, settings, None)
    assert (document["scope"], document["agents"], document["runs"]) == ("global", agents, runs)
    assert document["technical"] == pytest.approx(w, abs=1e-9)


def test_text_and_write(where: list[str]) -> None:
    result = run("tune", "--method", "inverse-error", "--stage", "plan", *where)
    assert result.exit_code == 0, result.output
    document = json.loads(
        run("tune", "--method", "inverse-error", "--stage", "plan", "--json", *where).stdout
    )
    lines = result.stdout.splitlines()
    assert lines[0].startswith(f"plan: inverse-error weights from {document['agents']:,} agents")
    assert f"error_t = 1 - {document['technical_norm']:.4f}" in lines[1]
    rows = {line.split()[0]: line.split() for line in lines[3:]}
    assert rows["inverse-error"][1:3] == [
        f"{document['technical']:.4f}",
        f"{document['interaction']:.4f}",
    ]
    assert rows["exact"][2] == f"{document['exact']['technical']:.4f}"
    assert rows["current"][1] == "0.6000"
    written = run("tune", "--method", "inverse-error", "--stage", "plan", "--write", *where)
    assert written.exit_code == 0, written.output
    saved = load_settings(Path(where[3])).weights_for("plan")
    # Saved as `tune --write` saves: the pair, to six decimals.
    assert saved.is_pair
    assert saved.technical == pytest.approx(document["technical"], abs=1e-6)
    assert saved.interaction == pytest.approx(document["interaction"], abs=1e-6)
    assert "inverse-error weights" in Path(where[3]).read_text()


def test_refused_combinations_and_scopes(where: list[str], tmp_path: Path) -> None:
    three = run("tune", "--method", "inverse-error", "--three-weights", *where)
    assert three.exit_code == 2
    assert "--method inverse-error gives the technical/interaction pair" in three.stderr
    unknown = run("tune", "--method", "nope", *where)
    assert unknown.exit_code == 2
    bad_stage = run("tune", "--method", "inverse-error", "--stage", "nope", *where)
    assert bad_stage.exit_code == 1 and bad_stage.stderr.count("\n") == 1
    # No agent with a trajectory: one line, exit 1.
    bare = tmp_path / "bare.jsonl"
    rows = [
        {
            "id": f"r{i}",
            "preferred_agent": "a",
            "agents": [
                {"name": "a", "technical_score": 0.5},
                {"name": "b", "technical_score": 0.6},
            ],
        }
        for i in range(2)
    ]
    bare.write_text("".join(json.dumps(row) + "\n" for row in rows))
    empty = ["--db", str(tmp_path / "bare.db"), "--config", where[3]]
    assert run("import", str(bare), *empty).exit_code == 0
    result = run("tune", "--method", "inverse-error", *empty)
    assert result.exit_code == 1
    assert result.stderr.count("\n") == 1
    assert "global: no agent has a trajectory" in result.stderr
    # No marked run: tune's own message.
    unmarked = tmp_path / "unmarked.jsonl"
    unmarked.write_text(json.dumps({**rows[0], "preferred_agent": None}) + "\n")
    none = ["--db", str(tmp_path / "unmarked.db"), "--config", where[3]]
    assert run("import", str(unmarked), *none).exit_code == 0
    result = run("tune", "--method", "inverse-error", *none)
    assert result.exit_code == 1 and "no marked runs to tune on" in result.stderr
