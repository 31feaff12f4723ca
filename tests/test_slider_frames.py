"""A slider move holds the screen's frames until the screen shows the new weights."""

from __future__ import annotations

import asyncio

from textual import on
from textual.app import App, ComposeResult

from ppp_tui.app.widgets.weight_sliders import HOLD_S, WeightSliders


class Bar(App[None]):
    def __init__(self, answer: bool) -> None:
        super().__init__()
        self.answer = answer
        self.held_at_answer: list[int] = []

    def compose(self) -> ComposeResult:
        yield WeightSliders(id="sliders")

    @on(WeightSliders.Changed)
    def _changed(self, event: WeightSliders.Changed) -> None:
        if self.answer:
            self.held_at_answer.append(self._batch_count)
            self.query_one(WeightSliders).show(event.weights)


async def test_a_move_is_drawn_in_one_frame_with_the_screens_answer() -> None:
    app = Bar(answer=True)
    async with app.run_test() as pilot:
        app.query_one(WeightSliders).step(0, 0.05)
        await pilot.pause()
        assert app.held_at_answer == [1]  # no frame between the move and the answer
        assert app._batch_count == 0


async def test_an_unanswered_move_lets_frames_go_after_the_hold() -> None:
    app = Bar(answer=False)
    async with app.run_test() as pilot:
        sliders = app.query_one(WeightSliders)
        sliders.step(0, 0.05)
        sliders.step(0, 0.05)  # a second move in the same hold holds nothing more
        assert app._batch_count == 1
        await asyncio.sleep(HOLD_S * 2)
        await pilot.pause()
        assert app._batch_count == 0
