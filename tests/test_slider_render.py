"""The slider's track: the same cells as one span per cell, in a few spans."""

from __future__ import annotations

from textual.app import App, ComposeResult

from ppp_tui.app.widgets.slider import WeightSlider


class One(App[None]):
    def compose(self) -> ComposeResult:
        yield WeightSlider(0.5, id="s")


async def test_track_is_drawn_in_a_few_spans_with_the_knob_and_marks_in_place() -> None:
    app = One()
    async with app.run_test(size=(41, 3)) as pilot:
        slider = app.query_one(WeightSlider)
        slider.marks = (0.25, 0.5, 1.0)  # one mark under the knob: the knob wins
        await pilot.pause()
        content = slider.render()
        assert content.plain == "━" * 10 + "┃" + "━" * 9 + "●" + "─" * 19 + "┃"
        styles = [str(span.style) for span in content.spans]
        # filled, mark, filled, knob, empty, mark: not one span per cell
        assert len(content.spans) == 6
        assert styles[1] == styles[5] == "bold $warning"
        assert content.spans[3].start == 20 and content.spans[3].end == 21
