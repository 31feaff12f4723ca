"""Agreement between reviewers: Krippendorff's alpha and Cohen's kappa against worked
examples and an independent implementation, and `ppp-tui agreement` end to end."""

from __future__ import annotations

import json
from pathlib import Path

import krippendorff
import numpy as np
import pytest
from helpers import run_cli
from hypothesis import given, settings
from hypothesis import strategies as st

from ppp_tui.core.agreement import agreement, cohen_kappa, krippendorff_alpha

EXAMPLES = Path(__file__).parent.parent / "examples" / "runs.jsonl"

# Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", section C: four
# observers, twelve units, some values missing. Its nominal alpha is 0.743.
K2011 = [
    [1, 2, 3, 3, 2, 1, 4, 1, 2, None, None, None],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, None, 3],
    [None, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, None],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, None],
]


def _units(matrix: list[list[int | None]]) -> list[list[str]]:
    return [[str(row[u]) for row in matrix if row[u] is not None] for u in range(len(matrix[0]))]


def test_alpha_of_krippendorffs_own_example() -> None:
    assert krippendorff_alpha(_units(K2011)) == pytest.approx(0.743, abs=5e-4)
    reference = krippendorff.alpha(
        reliability_data=np.array(K2011, dtype=float), level_of_measurement="nominal"
    )
    assert krippendorff_alpha(_units(K2011)) == pytest.approx(reference, abs=1e-12)


def test_kappa_of_a_worked_example() -> None:
    # 50 items: both yes 20, yes/no 5, no/yes 10, both no 15. p_o = 0.7, p_e = 0.5.
    pairs = [("y", "y")] * 20 + [("y", "n")] * 5 + [("n", "y")] * 10 + [("n", "n")] * 15
    assert cohen_kappa(pairs) == pytest.approx(0.4, abs=1e-12)


def _kappa_by_confusion_matrix(pairs: list[tuple[str, str]]) -> float:
    labels = sorted({v for pair in pairs for v in pair})
    index = {label: i for i, label in enumerate(labels)}
    matrix = np.zeros((len(labels), len(labels)))
    for a, b in pairs:
        matrix[index[a], index[b]] += 1
    matrix /= matrix.sum()
    observed = np.trace(matrix)
    expected = float(matrix.sum(axis=1) @ matrix.sum(axis=0))
    return float((observed - expected) / (1 - expected))


AGENTS = st.sampled_from(["claude-code", "codex", "gemini-cli", "aider"])


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(AGENTS, AGENTS), min_size=1, max_size=40))
def test_kappa_is_the_confusion_matrix_formula(pairs: list[tuple[str, str]]) -> None:
    if len({v for pair in pairs for v in pair}) < 2:
        assert cohen_kappa(pairs) is None  # one agent throughout: chance agreement is 1
        return
    assert cohen_kappa(pairs) == pytest.approx(_kappa_by_confusion_matrix(pairs), abs=1e-9)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.lists(st.one_of(st.none(), AGENTS), min_size=5, max_size=5), min_size=2, max_size=25
    )
)
def test_alpha_is_the_reference_implementations(units: list[list[str | None]]) -> None:
    values = [[v for v in unit if v is not None] for unit in units]
    pairable = [v for v in values if len(v) >= 2]
    mine = krippendorff_alpha(values)
    if not pairable or len({v for unit in pairable for v in unit}) < 2:
        assert mine is None  # nothing to pair, or no disagreement to expect
        return
    code = {"claude-code": 1.0, "codex": 2.0, "gemini-cli": 3.0, "aider": 4.0}
    data = np.full((5, len(units)), np.nan)  # one row per reviewer, one column per run
    for u, unit in enumerate(units):
        for r, value in enumerate(unit):
            if value is not None:
                data[r, u] = code[value]
    reference = krippendorff.alpha(reliability_data=data, level_of_measurement="nominal")
    assert mine == pytest.approx(reference, abs=1e-9)


def test_agreement_counts_runs_pairs_and_each_pair_of_reviewers() -> None:
    marks = [
        ("r1", "plan", "ana", "a"),
        ("r1", "plan", "ben", "a"),
        ("r1", "plan", "cy", "b"),
        ("r2", "plan", "ana", "b"),
        ("r2", "plan", "ben", "b"),
        ("r3", "tasks", "ana", "a"),  # one reviewer only: not a shared run
        ("r4", "tasks", "ben", "a"),
        ("r4", "tasks", "cy", "b"),
    ]
    result = agreement(marks)
    assert (result.marked_runs, result.shared_runs, result.marks) == (4, 3, 7)
    # r1: 3 pairs, 1 agreeing; r2: 1 pair, agreeing; r4: 1 pair, disagreeing.
    assert (result.pairs, result.agreeing_pairs, result.raw) == (5, 2, 0.4)
    pairs = {(p.first, p.second): (p.runs, p.agreed) for p in result.by_pair}
    assert pairs == {("ana", "ben"): (2, 2), ("ana", "cy"): (1, 0), ("ben", "cy"): (2, 0)}
    # By hand: the coincidences of r1 (a,a,b) weigh 1/2 each, r2 and r4 1 each.
    # o_aa = 1, o_ab = o_ba = 1 + 1 = 2, o_bb = 2: n_a = 3, n_b = 4, n = 7.
    # alpha = 1 - (n - 1) * (o_ab + o_ba) / (2 * n_a * n_b) = 1 - 6 * 4 / 24 = 0.
    assert result.alpha == pytest.approx(0.0, abs=1e-12)


def test_perfect_agreement_on_one_agent_leaves_alpha_undefined() -> None:
    result = agreement([("r", None, "ana", "a"), ("r", None, "ben", "a")])
    assert result.alpha is None and result.raw == 1.0
    assert result.by_pair[0].kappa is None


# -- the command ------------------------------------------------------------------


run = run_cli


@pytest.fixture
def db(examples_db: Path) -> Path:
    return examples_db


def test_agreement_command_over_two_reviewers(db: Path, tmp_path: Path) -> None:
    marks = tmp_path / "marks.csv"
    marks.write_text(
        "run_id,agent,reviewer\n"
        "seed-003,claude,ana\nseed-003,claude,ben\n"
        "seed-000,agent_a,ana\nseed-000,agent_b,ben\n"
        "run-0042,codex,ana\n"
    )
    assert run("prefer", "--file", str(marks), "--db", str(db)).exit_code == 0
    result = run("agreement", "--json", "--db", str(db))
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    assert document["reviewers"] == ["ana", "ben"]
    assert (document["marked_runs"], document["shared_runs"], document["marks"]) == (3, 2, 4)
    assert document["raw_agreement"] == 0.5
    expected_alpha = krippendorff_alpha([["claude", "claude"], ["agent_a", "agent_b"]])
    assert document["alpha"] == pytest.approx(expected_alpha, abs=1e-9)
    [pair] = document["kappa"]
    assert pair["reviewers"] == ["ana", "ben"] and (pair["runs"], pair["agreed"]) == (2, 1)
    assert pair["kappa"] == pytest.approx(
        _kappa_by_confusion_matrix([("claude", "claude"), ("agent_a", "agent_b")]), abs=1e-9
    )
    assert set(document["per_stage"]) == {"plan", "implement"}
    assert document["per_stage"]["plan"]["shared_runs"] == 0
    text = run("agreement", "--db", str(db)).stdout
    assert "2 runs marked by two or more of 2 reviewers" in text
    assert "ana / ben" in text


def test_agreement_without_shared_runs_is_one_line(db: Path) -> None:
    nothing = run("agreement", "--db", str(db))
    assert nothing.exit_code == 1 and "no marked runs" in nothing.output
    run("prefer", "seed-003", "claude", "--reviewer", "ana", "--db", str(db))
    alone = run("agreement", "--db", str(db))
    assert alone.exit_code == 1
    assert "no run is marked by two or more reviewers" in alone.output
    assert len(alone.output.strip().splitlines()) == 1
    staged = run("agreement", "--stage", "nowhere", "--db", str(db))
    assert staged.exit_code == 1 and "known stages" in staged.output


def test_the_demo_has_colleagues_to_agree_with(tmp_path: Path) -> None:
    db = tmp_path / "demo.db"
    assert run("demo", "--runs", "200", "--db", str(db)).exit_code == 0
    document = json.loads(run("agreement", "--json", "--db", str(db)).stdout)
    assert document["reviewers"] == ["ana", "ben", "tester"]
    assert document["shared_runs"] > 20
    # The colleagues mostly agree with the demo's user, so alpha is well above chance.
    assert 0.3 < document["alpha"] < 0.95
    # The colleagues' picks are seeded: the same demo gives the same figures.
    again = tmp_path / "again.db"
    run("demo", "--runs", "200", "--db", str(again))
    assert json.loads(run("agreement", "--json", "--db", str(again)).stdout) == document
