"""The runs list's columns at each width, how cells fit them, and run times as shown."""

from __future__ import annotations

import time

from hypothesis import given
from hypothesis import strategies as st

from ppp_tui.app.widgets.runs_columns import BY_KEY, GAP, fit, fit_middle, layout
from ppp_tui.core.times import compact_time, moment
from ppp_tui.safe_text import line_start, literal


def _widths(room: int) -> dict[str, int]:
    return {column.key: width for column, width in layout(room)}


def _total(widths: dict[str, int]) -> int:
    return sum(widths.values()) + GAP * (len(widths) - 1)


def test_at_80_columns_every_column_of_old_shows_with_the_date_and_a_dozen_of_task() -> None:
    widths = _widths(78)  # an 80-column terminal less the scroll bar
    assert list(widths) == [
        "id",
        "date",
        "stage",
        "agents",
        "task",
        "selected",
        "preferred",
        "regret",
    ]
    assert _total(widths) == 78
    # The date alone (`2026-11-26`), ids as long as the demo's whole, names of 10.
    assert widths["date"] == 10 and widths["id"] == 11 and widths["selected"] == 10
    assert widths["task"] == 12


def test_wider_terminals_give_the_task_the_room() -> None:
    at_120, at_200 = _widths(118), _widths(198)
    assert at_120["date"] == 16  # with the time of day
    assert at_120["id"] < 20 and at_120["task"] >= 30
    assert set(at_200) == set(BY_KEY)  # every column
    assert {key: width for key, width in at_200.items() if key != "task"} == {
        key: column.width for key, column in BY_KEY.items() if key != "task"
    }
    assert at_200["task"] == 198 - _total({k: v for k, v in at_200.items() if k != "task"}) - 1


@given(st.integers(min_value=76, max_value=600))
def test_the_columns_fill_the_room_and_the_task_takes_what_is_left(room: int) -> None:
    widths = _widths(room)
    assert _total(widths) == room
    assert all(width >= BY_KEY[key].least for key, width in widths.items())
    assert {"id", "date", "stage", "agents", "task", "selected", "preferred", "regret"} <= set(
        widths
    )
    # The date is whole or the date alone, never cut in its time.
    assert widths["date"] in (10, 16)
    if room >= 100:
        assert widths["task"] >= BY_KEY["task"].width
    if len(widths) == len(BY_KEY):  # every column at its width: the rest is the task's
        assert _widths(room + 1)["task"] == widths["task"] + 1


def test_below_the_least_widths_the_columns_keep_them_and_overflow() -> None:
    widths = _widths(40)
    assert all(width == BY_KEY[key].least for key, width in widths.items())
    assert _total(widths) > 40


def test_fit_pads_or_cuts_by_terminal_cells() -> None:
    assert fit("plan", 6) == "plan  " and fit("3", 3, ">") == "  3"
    assert fit("implementation", 9) == "implemen…"
    # Wide characters take two cells: cut between them, never through one.
    assert fit("修复上传测试", 7) == "修复上…"
    assert fit("修复上传测试", 8) == "修复上… "
    assert fit("修复", 4) == "修复"


def test_ids_are_cut_in_their_middle() -> None:
    # The kind of run and the end of its hash, the part that tells runs apart.
    assert fit_middle("session-052858cd73fb", 11) == "sess…cd73fb"
    assert fit_middle("spec-kit-0123456789abcdef", 20) == "spec-kit-…6789abcdef"
    assert fit_middle("demo-000001", 11) == "demo-000001"
    assert fit_middle("demo-1", 11) == "demo-1     "
    assert fit_middle("运行-0123456789", 8) == "运…56789"
    assert fit_middle("运行运行运行运行", 8) == "运…运行 "  # padded: no half a character


def test_times_show_as_recorded_compactly() -> None:
    assert compact_time("2026-11-26T14:03:59.123Z") == "2026-11-26 14:03"
    # In the offset it was recorded in: the day the dashboard counts it on.
    assert compact_time("2026-11-26T23:30:00-05:00") == "2026-11-26 23:30"
    assert compact_time("2026-11-26 14:03") == "2026-11-26 14:03"
    assert compact_time("2026-11-26T14:03:59Z", with_time=False) == "2026-11-26"
    assert compact_time("2026-11-26") == "2026-11-26"  # no time of day to show
    assert compact_time("yesterday") is None and compact_time("") is None
    assert compact_time(None) is None


def test_moments_order_times_whatever_their_offset() -> None:
    # 14:00 at +02:00 is 12:00 UTC, before 13:00 UTC.
    assert moment("2026-11-26T14:00:00+02:00") == moment("2026-11-26T12:00:00Z")
    earlier, later = moment("2026-11-26T14:00:00+02:00"), moment("2026-11-26T13:00:00Z")
    assert earlier is not None and later is not None and earlier < later
    assert moment("2026-11-26T12:00:00") == moment("2026-11-26T12:00:00Z")  # no zone: UTC
    assert moment("26/11/2026") is None and moment(None) is None


@given(
    st.text(alphabet=st.sampled_from("ab \n\t\x1b[/]修\u202e\x9b"), max_size=300),
    st.integers(min_value=1, max_value=40),
)
def test_line_start_is_the_start_of_the_whole_text_on_one_line(text: str, length: int) -> None:
    assert line_start(text, length) == literal(text, one_line=True)[: length + 1]


def test_line_start_reads_only_the_start_of_a_long_text() -> None:
    task = "Fix the [b]flaky[/] test\n\n" + "x" * 50_000_000
    started = time.perf_counter()
    assert line_start(task, 30) == "Fix the [b]flaky[/] test xxxxxx"
    assert time.perf_counter() - started < 0.01  # the whole text takes about a second
    # A start of white space is read on through.
    assert line_start(" \n" * 10_000 + "task", 10) == "task"
