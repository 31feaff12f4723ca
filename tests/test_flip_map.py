"""The flip map: pixels coloured by the exact regions, edges shown where they cross a
pixel, and clicks on the map setting the weights (Pilot at 80x24)."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from helpers import opened
from test_sensitivity import random_run, random_settings
from textual.pilot import Pilot

from ppp_tui.app.app import PPPApp
from ppp_tui.app.screens.run import RunScreen
from ppp_tui.app.widgets.flip_map import PALETTE, FlipMap, colours, pixel_owners
from ppp_tui.app.widgets.weight_sliders import WeightSliders
from ppp_tui.core.regions import Region, on_edge, run_regions, winner
from ppp_tui.core.scoring import rank_run

SIZE = (80, 24)


@pytest.mark.parametrize("seed", range(12))
def test_every_pixel_is_its_regions_colour_or_an_edge(seed: int) -> None:
    rng = random.Random(seed)
    run, settings = random_run(rng, rng.randint(1, 6)), random_settings(rng)
    regions = run_regions(run, settings)
    agents = rank_run(run, settings).agents
    columns, rows = 30, 20
    owners = pixel_owners(regions, columns, rows)
    for row in range(rows):
        for column in range(columns):
            owner = owners[row][column]
            w_p, w_s = (column + 0.5) / columns * 2, 2 - (row + 0.5) / rows * 2
            if w_p + w_s > 2:
                continue  # the pixel's middle is beyond the triangle
            assert owner is not None
            if owner:
                # One region meets this pixel: the ranking puts its agent first there.
                assert winner(agents, w_p, w_s, settings) == owner
            elif not on_edge(agents, w_p, w_s, settings):
                # An edge crosses the pixel: at least two regions meet it.
                met = [r.agent for r in regions if r.contains(w_p, w_s, 0.2)]
                assert len(met) >= 2
    if len(regions) == 1:
        assert all(o in (regions[0].agent, None) for line in owners for o in line)


def test_a_sliver_thinner_than_a_pixel_shows_as_an_edge() -> None:
    """A region 0.001 wide along the bottom edge covers no pixel's middle, yet every
    pixel of the bottom row it crosses shows the edge."""
    sliver = Region("thin", ((0.0, 0.0), (2.0, 0.0), (1.999, 0.001), (0.0, 0.001)))
    rest = Region("rest", ((0.0, 0.001), (1.999, 0.001), (0.0, 2.0)))
    owners = pixel_owners((sliver, rest), 10, 10)
    assert owners[-1][:9] == [""] * 9
    assert owners[-2][:8] == ["rest"] * 8
    assert colours((sliver, rest)) == {"thin": PALETTE[0], "rest": PALETTE[1]}


async def _map(app: PPPApp, pilot: Pilot[None]) -> tuple[RunScreen, FlipMap]:
    await app.load_done.wait()
    await pilot.pause()
    app.open_run("demo-000004")
    await pilot.pause()
    screen = app.screen
    assert isinstance(screen, RunScreen)
    await pilot.press("m")
    await pilot.pause()
    flip_map = screen.query_one(FlipMap)
    assert flip_map.region.width > 20 and flip_map.region.height >= 4  # on screen
    return screen, flip_map


async def test_the_map_shows_the_runs_regions_and_the_current_weights(
    db: Path, tmp_path: Path
) -> None:
    async with opened(db, tmp_path, SIZE) as (app, pilot):
        screen, flip_map = await _map(app, pilot)
        assert app.workspace is not None
        assert flip_map.regions == run_regions(screen.run, app.workspace.settings)
        assert flip_map.current == (0.3, 0.3)
        # Each cell's glyph is drawn in the colours of the regions at its two pixels.
        palette = colours(flip_map.regions)
        owners = flip_map.owners()
        lines = flip_map.render().split()
        x, y = flip_map.cell_of(0.3, 0.3)
        assert lines[y].plain[x] == "◆"
        for cy in range(len(lines)):
            for cx in range(0, flip_map.size.width, 7):
                top, bottom = owners[2 * cy][cx], owners[2 * cy + 1][cx]
                if (cx, cy) == (x, y) or not top or not bottom:
                    continue
                spans = [s for s in lines[cy].spans if s.start <= cx < s.end]
                assert spans and str(spans[-1].style) == f"{palette[top]} on {palette[bottom]}"
        # m goes back to the tab shown before the map.
        await pilot.press("m")
        await pilot.pause()
        assert not flip_map.display or flip_map.region.width == 0


async def test_clicking_the_map_sets_the_weights(db: Path, tmp_path: Path) -> None:
    async with opened(db, tmp_path, SIZE) as (app, pilot):
        screen, flip_map = await _map(app, pilot)
        columns, rows = flip_map.grid
        # The bottom-right of the triangle: proactivity near 2, personalization near 0.
        await pilot.click(flip_map, offset=(columns - 2, rows // 2 - 1))
        await pilot.pause()
        proactivity, personalization = flip_map.weights_at(columns - 2, rows // 2 - 1)
        assert proactivity > 1.8 and personalization < 0.2
        sliders = screen.query_one(WeightSliders)
        assert sliders.weights == pytest.approx(
            (
                1 - (proactivity + personalization) / 2,
                proactivity,
                personalization,
            )
        )
        assert flip_map.current == (proactivity, personalization)
        assert screen.ranking is not None and app.workspace is not None
        best = winner(screen.ranking.agents, proactivity, personalization, app.workspace.settings)
        assert screen.ranking.best_agent == best
        # A drag walks the weights with the pointer.
        await pilot.mouse_down(flip_map, offset=(1, 0))
        await pilot.hover(flip_map, offset=(2, 1))
        await pilot.mouse_up(flip_map, offset=(2, 1))
        await pilot.pause()
        assert sliders.weights[1:] == flip_map.weights_at(2, 1)
        assert not screen.selections
