"""The three walking weight sliders: the walking rule, the lock, the keys, the mouse,
and the open run re-ranking at every step (Pilot at 80x24)."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import opened
from hypothesis import given
from hypothesis import strategies as st
from textual.pilot import Pilot

from ppp_tui.app.app import PPPApp
from ppp_tui.app.screens.run import RunScreen
from ppp_tui.app.widgets.weight_sliders import FreeWeightSlider, WeightSliders, walk
from ppp_tui.app.widgets.weights_bar import WeightsBar
from ppp_tui.core.regions import plane
from ppp_tui.core.scoring import rank_run
from ppp_tui.core.settings import Weights
from ppp_tui.storage.store import Store

SIZE = (80, 24)


def rule(weights: tuple[float, float, float]) -> float:
    technical, proactivity, personalization = weights
    return technical + (proactivity + personalization) / 2


def test_moving_one_rescales_the_others_in_proportion() -> None:
    # Shares 0.5 / 0.3 / 0.2; proactivity to 0.2 (share 0.1): the rest, 0.9, is split
    # 5:2 between technical and personalization.
    assert walk((0.5, 0.6, 0.4), 1, 0.2) == pytest.approx(
        (
            0.9 * 5 / 7,
            0.2,
            2 * 0.9 * 2 / 7,
        )
    )
    # In the pair form the technical slider keeps the two free weights equal.
    assert walk((0.7, 0.3, 0.3), 0, 0.55) == (0.55, 0.45, 0.45)


def test_when_both_others_are_zero_they_share_equally() -> None:
    assert walk((1.0, 0.0, 0.0), 0, 0.4) == (0.4, 0.6, 0.6)
    assert walk((0.0, 2.0, 0.0), 1, 1.0) == (0.25, 1.0, 0.5)
    # Shares of only binary noise count as 0 (they once lost the rest: the sum fell to 0.5).
    assert walk((0.0, 2.0, 5e-324), 1, 1.0) == (0.25, 1.0, 0.5)


def test_a_locked_weight_holds_and_the_move_is_clamped() -> None:
    # Technical locked at 0.5: proactivity and personalization share the other half.
    assert walk((0.5, 0.6, 0.4), 1, 0.8, locked=0) == (0.5, 0.8, 0.2)
    # Beyond what the lock leaves (proactivity at most 1.0 here): clamped, the third at 0.
    assert walk((0.5, 0.6, 0.4), 1, 1.7, locked=0) == (0.5, 1.0, 0.0)
    # The locked weight itself does not move.
    assert walk((0.5, 0.6, 0.4), 0, 0.9, locked=0) == (0.5, 0.6, 0.4)
    # Personalization locked at 0.4 (share 0.2): technical goes up to 0.8 at most.
    assert walk((0.5, 0.6, 0.4), 0, 0.6, locked=2) == pytest.approx((0.6, 0.4, 0.4))
    assert walk((0.5, 0.6, 0.4), 0, 0.95, locked=2) == (0.8, 0.0, 0.4)


weight = st.floats(0, 1, allow_nan=False)


@given(
    st.tuples(weight, weight, weight).filter(lambda s: sum(s) > 1e-3),
    st.integers(0, 2),
    st.floats(-1, 3, allow_nan=False),
    st.one_of(st.none(), st.integers(0, 2)),
)
def test_every_step_keeps_the_rule(
    raw: tuple[float, float, float], moved: int, value: float, locked: int | None
) -> None:
    total = sum(raw)
    start = (raw[0] / total, 2 * raw[1] / total, 2 * raw[2] / total)
    after = walk(start, moved, value, locked)
    assert rule(after) == pytest.approx(1.0, abs=1e-9)
    assert all(w >= 0 for w in after) and after[0] <= 1 + 1e-9
    if locked is not None:
        assert after[locked] == pytest.approx(start[locked], abs=1e-9)
    if locked is None or locked == moved:
        return
    maximum = 1.0 if moved == 0 else 2.0
    assert after[moved] == pytest.approx(min(max(value, 0.0), maximum), abs=1e-9) or (
        after[3 - moved - locked] == pytest.approx(0.0, abs=1e-9)  # clamped by the lock
    )


async def _run_screen(app: PPPApp, pilot: Pilot[None]) -> RunScreen:
    await app.load_done.wait()
    await pilot.pause()
    app.open_run("demo-000001")
    await pilot.pause()
    screen = app.screen
    assert isinstance(screen, RunScreen)
    return screen


def _expected_order(screen: RunScreen, weights: tuple[float, float, float]) -> list[str]:
    """The agents by final under the three weights, computed here from their scores."""
    assert screen.ranking is not None and screen.app.workspace is not None
    settings = screen.app.workspace.settings
    finals = {
        a.name: (
            a.failure is not None,
            -round(
                plane(a, settings).c
                + plane(a, settings).p * weights[0]
                + plane(a, settings).q_p * weights[1]
                + plane(a, settings).q_s * weights[2],
                9,
            ),
            -a.technical,
            a.name,
        )
        for a in screen.ranking.agents
    }
    return sorted(finals, key=lambda name: finals[name])


async def test_keys_walk_the_weights_and_the_run_reranks(db: Path, tmp_path: Path) -> None:
    async with opened(db, tmp_path, SIZE) as (app, pilot):
        screen = await _run_screen(app, pilot)
        sliders = screen.query_one(WeightSliders)
        assert sliders.weights == (0.7, 0.3, 0.3)
        figures_before = screen.query_one("#weights-figures").render()
        await pilot.press(*")" * 4)  # proactivity +0.2
        await pilot.pause()
        technical, proactivity, personalization = sliders.weights
        assert proactivity == pytest.approx(0.5)
        # Shares 0.7 / 0.15 / 0.15, proactivity's to 0.25: the rest 0.75 split 14:3.
        assert technical == pytest.approx(0.75 * 14 / 17)
        assert personalization == pytest.approx(2 * 0.75 * 3 / 17)
        assert screen.ranking is not None
        names = [a.name for a in screen.ranking.agents]
        assert names == _expected_order(screen, sliders.weights)
        for agent in screen.ranking.agents:
            pl = plane(agent, app.workspace.settings)  # type: ignore[union-attr]
            assert agent.final == pytest.approx(
                pl.c + pl.p * technical + pl.q_p * proactivity + pl.q_s * personalization
            )
        # The technical weight moved, so agreement and regret followed.
        assert app.workspace is not None
        assert app.workspace.weights_for(screen.scope).technical == pytest.approx(technical)
        assert screen.query_one("#weights-figures").render() != figures_before
        await pilot.press("<", "<")  # personalization -0.1
        await pilot.pause()
        assert sliders.weights[2] == pytest.approx(personalization - 0.1, abs=0.011)
        assert screen.ranking is not None
        assert [a.name for a in screen.ranking.agents] == _expected_order(screen, sliders.weights)


async def test_the_lock_holds_one_weight(db: Path, tmp_path: Path) -> None:
    async with opened(db, tmp_path, SIZE) as (app, pilot):
        screen = await _run_screen(app, pilot)
        sliders = screen.query_one(WeightSliders)
        await pilot.press("l")  # technical
        await pilot.pause()
        assert sliders.locked == 0
        assert "lock: tech" in str(screen.query_one("#weights-lock").render())
        await pilot.press(*">" * 10)  # personalization up until proactivity reaches 0
        await pilot.pause()
        assert sliders.weights == pytest.approx((0.7, 0.0, 0.6))
        await pilot.press("]")  # the locked weight does not move
        await pilot.pause()
        assert sliders.weights == pytest.approx((0.7, 0.0, 0.6))
        await pilot.press("l", "l", "l")  # proactivity, personalization, none
        await pilot.pause()
        assert sliders.locked is None
        await pilot.press("]")
        await pilot.pause()
        assert sliders.weights == (pytest.approx(0.75), 0.0, pytest.approx(0.5))


async def test_dragging_a_free_weight_with_the_mouse(db: Path, tmp_path: Path) -> None:
    async with opened(db, tmp_path, SIZE) as (app, pilot):
        screen = await _run_screen(app, pilot)
        slider = screen.query_one("#weights-proactivity", FreeWeightSlider)
        assert not slider.allow_select
        assert app.focused is not slider
        await pilot.mouse_down(slider, offset=(0, 0))
        assert app.focused is slider  # a press takes the focus
        await pilot.hover(slider, offset=(slider.size.width - 1, 0))
        await pilot.mouse_up(slider, offset=(slider.size.width - 1, 0))
        await pilot.pause()
        # All the way right: proactivity 2, so technical and personalization are 0.
        assert screen.query_one(WeightsBar).sliders.weights == (0.0, 2.0, 0.0)
        assert screen.ranking is not None
        assert [a.name for a in screen.ranking.agents] == _expected_order(screen, (0.0, 2.0, 0.0))


async def test_agreement_and_regret_follow_all_three_weights(db: Path, tmp_path: Path) -> None:
    """After a step off the pair form, the bar's figures are those of ranking every
    marked run one by one under the three weights."""
    async with opened(db, tmp_path, SIZE) as (app, pilot):
        screen = await _run_screen(app, pilot)
        await pilot.press(*"<" * 5, *")" * 3)
        await pilot.pause()
        weights = screen.query_one(WeightSliders).weights
        assert weights[1] != weights[2]
        assert app.workspace is not None
        settings = app.workspace.settings
        assert settings.weights == Weights(*weights)
        figures = app.workspace.figures()
    agree, regret, marked = 0, 0.0, 0
    with Store.open(db) as store:
        for run_id, preferred in store.preferred_agents().items():
            if preferred is None:
                continue
            ranking = rank_run(store.get_run(run_id), settings)
            chosen = ranking.agent(preferred)
            assert chosen is not None
            marked += 1
            agree += ranking.best_agent == preferred
            regret += ranking.best.final - chosen.final
    assert figures.marked_runs == marked
    assert figures.agreement == pytest.approx(agree / marked)
    assert figures.mean_regret == pytest.approx(regret / marked, abs=1e-12)


async def test_brackets_anywhere_keep_the_free_weights_ratio(db: Path, tmp_path: Path) -> None:
    """On the runs list `]` moves technical; proactivity and personalization walk as on
    the sliders (their 4:1 ratio stays) rather than falling back to the pair form."""
    async with opened(db, tmp_path, SIZE) as (app, pilot):
        await pilot.pause()
        app.change_weights(Weights(0.5, 0.8, 0.2), None, started=0.0)
        await pilot.press("right_square_bracket")
        await pilot.pause()
        assert app.workspace is not None
        weights = app.workspace.settings.weights
        assert (weights.technical, weights.proactivity, weights.personalization) == pytest.approx(
            (
                0.55,
                0.72,
                0.18,
            )
        )
