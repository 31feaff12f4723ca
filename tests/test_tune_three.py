"""`ppp-tui tune --three-weights`: proactivity and personalization tuned apart."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import tomlkit
from click.testing import Result
from helpers import run_cli

from ppp_tui.storage.config import load_settings

Invoke = Callable[..., Result]

FREE_KEYS = {
    "scope",
    "marked_runs",
    "technical",
    "proactivity",
    "personalization",
    "mean_regret",
    "agreement",
    "before",
    "cv",
    "bootstrap",
}


invoke = run_cli


@pytest.fixture(scope="module")
def demo_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("demo") / "runs.db"
    assert invoke("demo", "--db", str(path), "--runs", "240", "--seed", "5").exit_code == 0
    return path


@pytest.fixture
def ppp(demo_db: Path, tmp_path: Path) -> Invoke:
    db = tmp_path / "runs.db"
    shutil.copy(demo_db, db)
    config = tmp_path / "config.toml"
    config.write_text("")

    def call(*args: str) -> Result:
        return invoke(*args, "--db", str(db), "--config", str(config))

    return call


def as_json(result: Result) -> Any:
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_json_gives_three_weights_no_worse_than_the_pair(ppp: Invoke) -> None:
    free = as_json(ppp("tune", "--three-weights", "--json"))
    pair = as_json(ppp("tune", "--json"))
    assert set(free) == FREE_KEYS
    assert free["scope"] == "global" and free["marked_runs"] == pair["marked_runs"] > 0
    assert free["technical"] + (free["proactivity"] + free["personalization"]) / 2 == (
        pytest.approx(1.0, abs=1e-9)
    )
    assert min(free["technical"], free["proactivity"], free["personalization"]) >= 0
    # The pair form is one line of the triangle: freeing both can only do as well or better.
    assert free["mean_regret"] <= pair["mean_regret"] + 1e-9
    assert free["mean_regret"] <= free["before"]["mean_regret"] + 1e-9
    assert free["before"] == {
        "technical": 0.7,
        "proactivity": 0.3,
        "personalization": 0.3,
        "mean_regret": pair["before"]["mean_regret"],
        "agreement": pair["before"]["agreement"],
    }
    assert free["cv"]["folds"] == 5 and free["cv"]["mean_regret"] >= 0
    boot = free["bootstrap"]
    assert boot["resamples"] == 50 and boot["spread"] >= 0
    for name in ("technical", "proactivity", "personalization"):
        low, high = boot[name]
        assert 0 <= low <= high


def test_write_saves_three_weights_that_regret_then_uses(ppp: Invoke, tmp_path: Path) -> None:
    tuned = as_json(ppp("tune", "--three-weights", "--json"))
    written = ppp("tune", "--three-weights", "--write")
    assert written.exit_code == 0 and "saved to" in written.stderr
    config = tmp_path / "config.toml"
    settings = load_settings(config)
    assert settings.weights.proactivity == pytest.approx(tuned["proactivity"], abs=5e-7)
    assert settings.weights.personalization == pytest.approx(tuned["personalization"], abs=5e-7)
    table = tomlkit.parse(config.read_text())["ppp"]["weights"]
    note = table["technical"].trivia.comment
    assert f"from {tuned['marked_runs']} marked runs" in note
    assert ppp("config", "validate").exit_code == 0
    after = as_json(ppp("regret", "--json"))
    assert after["mean_regret"] == pytest.approx(tuned["mean_regret"], abs=1e-6)
    # Tuning again from the saved weights (6 decimals of the exact optimum) finds it again.
    again = as_json(ppp("tune", "--three-weights", "--json"))
    assert again["before"]["proactivity"] == settings.weights.proactivity
    assert again["proactivity"] == pytest.approx(tuned["proactivity"], abs=1e-9)
    assert again["personalization"] == pytest.approx(tuned["personalization"], abs=1e-9)


def test_text_names_the_three_weights(ppp: Invoke) -> None:
    result = ppp("tune", "--three-weights")
    assert result.exit_code == 0
    first, second = result.stdout.splitlines()
    assert first.startswith("global: ")
    for name in ("technical 0.7 -> ", "proactivity 0.3 -> ", "personalization 0.3 -> "):
        assert name in first
    assert "5-fold CV" in first
    assert second.startswith("  95% intervals: technical ")
    assert "(50 bootstrap resamples)" in second


def test_per_stage_is_a_list_and_one_stage_matches_it(ppp: Invoke) -> None:
    documents = as_json(ppp("tune", "--three-weights", "--per-stage", "--json"))
    assert isinstance(documents, list) and documents
    assert all(set(d) == FREE_KEYS for d in documents)
    first = documents[0]
    one = as_json(ppp("tune", "--three-weights", "--stage", first["scope"], "--json"))
    assert one == first


def test_bad_uses_exit_with_one_line(ppp: Invoke, tmp_path: Path) -> None:
    both = ppp("tune", "--three-weights", "--stage", "plan", "--per-stage")
    assert both.exit_code == 2 and "exclude each other" in both.stderr
    empty = tmp_path / "empty.db"
    result = invoke(
        "tune", "--three-weights", "--db", str(empty), "--config", str(tmp_path / "config.toml")
    )
    assert result.exit_code == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: ") and "no database" in lines[0]


def test_a_failing_solver_is_one_line_and_exit_1(
    ppp: Invoke, monkeypatch: pytest.MonkeyPatch
) -> None:
    import scipy.optimize

    class Failed:
        status, x, message = 4, None, "Numerical difficulties."

    monkeypatch.setattr(scipy.optimize, "linprog", lambda *args, **kwargs: Failed())
    result = ppp("tune", "--three-weights", "--write")
    assert result.exit_code == 1
    assert result.stderr.strip().splitlines() == [
        "Error: the linear program failed: Numerical difficulties."
    ]
    assert "saved" not in result.stderr
