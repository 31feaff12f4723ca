"""The app with hostile text everywhere: no markup parsed, no crash, no escape sequence.

Stages, names and config.toml keys such as `[/]` used to be parsed as markup (a crash
when the stage menu opened, on `g`, on `p`, at start) and escape sequences reached the
terminal through the menus and toasts. Each test drives the app as a user would and
reads what it drew.
"""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

import pytest
from helpers import HOSTILE, UNSAFE, hostile_runs, opened, toml_key
from textual.pilot import Pilot
from textual.widgets import Select

from ppp_tui.app.app import PPPApp
from ppp_tui.app.screens.run import RunScreen
from ppp_tui.app.screens.tuning import TuningScreen
from ppp_tui.storage.files import Record
from ppp_tui.storage.store import Store

SIZE = (160, 50)
MARKUP = ("[/]", "[red]x[/red]", "[/bold]")
TEXT = re.compile(r'<text [^>]*clip-path="url\(#terminal-\d+-line-(\d+)\)">([^<]*)</text>')


@pytest.fixture
def hostile_db(tmp_path: Path) -> Path:
    db = tmp_path / "hostile.db"
    with Store.open(db, create=True) as store:
        store.import_records(Record("t", None, "$", run) for run in hostile_runs())
    return db


def _screen_text(app: PPPApp) -> str:
    """What the app drew, line by line (from its SVG screenshot, which keeps brackets and
    control characters as they were drawn)."""
    lines: dict[int, list[str]] = {}
    for line, text in TEXT.findall(app.export_screenshot()):
        lines.setdefault(int(line), []).append(html.unescape(text).replace("\xa0", " "))
    return "\n".join("".join(parts) for _, parts in sorted(lines.items()))


def _assert_drawn_safely(app: PPPApp) -> str:
    shown = _screen_text(app)
    found = UNSAFE.findall(shown)
    assert not found, f"the screen holds {found!r}"
    return shown


async def _loaded(app: PPPApp, pilot: Pilot[None]) -> None:
    await app.load_done.wait()
    await pilot.pause()


async def _open_menu(pilot: Pilot[None], select: Select[str]) -> None:
    select.focus()
    await pilot.pause()
    await pilot.press("enter")
    await pilot.pause()
    assert select.expanded


async def test_the_stage_menu_shows_hostile_stages_literally(
    hostile_db: Path, tmp_path: Path
) -> None:
    async with opened(hostile_db, tmp_path, SIZE) as (app, pilot):
        menu = app.screen.query_one("#stage-filter", Select)
        await _open_menu(pilot, menu)
        shown = _assert_drawn_safely(app)
        for markup in MARKUP:
            assert f"st{markup}" in shown
        assert "st␛]52;c;SGVsbG8=␇" in shown and "st<U+202E>gnp.exe" in shown
        # Choosing one filters by the exact stage.
        await pilot.press("escape")
        menu.value = "st[/]"
        await pilot.pause()
        assert "1 of 9 runs" in _assert_drawn_safely(app)


async def test_the_runs_list_shows_hostile_tasks_and_dates_literally(tmp_path: Path) -> None:
    db = tmp_path / "dated.db"
    runs = hostile_runs()
    for run, text in zip(runs, HOSTILE.values(), strict=True):
        run["created_at"] = f"at{text}"  # not a time: shown as written
    with Store.open(db, create=True) as store:
        store.import_records(Record("t", None, "$", run) for run in runs)
    async with opened(db, tmp_path, (200, 50)) as (app, _pilot):
        shown = _assert_drawn_safely(app)
        for text in MARKUP:
            assert f" at{text} " in shown and f" task {text} " in shown
        assert " task ␛]52;c;SGVsbG8=␇ " in shown and " at␛[2J " in shown
        assert " task fake row " in shown and " task \\x9b2J " in shown
        assert " task <U+202E>gnp.exe " in shown


async def test_g_and_p_on_every_hostile_run(hostile_db: Path, tmp_path: Path) -> None:
    async with opened(hostile_db, tmp_path, SIZE, notifications=True) as (app, pilot):
        for key, text in HOSTILE.items():
            app.open_run(f"run-{key}{text}")
            await pilot.pause()
            assert isinstance(app.screen, RunScreen)
            await pilot.press("g")  # the scope becomes the run's stage
            await pilot.pause()
            assert app.screen.scope == f"st{text}"
            await pilot.press("down", "p")  # mark agent a (b is marked): a toast names it
            await pilot.pause()
            shown = _assert_drawn_safely(app)
            scope = str(app.screen.query_one("#weights-scope").render())
            assert not UNSAFE.search(scope)
            if text in MARKUP:
                assert scope == f"scope: st{text}"
                assert f"run-{key}{text}: preferred a{text}" in shown
            await pilot.press("escape")
            await pilot.pause()
        marks = [info.preferred for info in app.workspace.infos]  # type: ignore[union-attr]
        assert sorted(str(mark) for mark in marks) == sorted(
            f"a{text}" for text in HOSTILE.values()
        )


async def test_the_tuning_panel_scope_menu_and_stage_table(
    hostile_db: Path, tmp_path: Path
) -> None:
    async with opened(hostile_db, tmp_path, SIZE, notifications=True) as (app, pilot):
        await pilot.press("t")
        await pilot.pause(0.3)
        screen = app.screen
        assert isinstance(screen, TuningScreen)
        scope = screen.query_one("#tuning-scope", Select)
        await _open_menu(pilot, scope)
        shown = _assert_drawn_safely(app)
        for markup in MARKUP:
            assert f"stage st{markup}" in shown
        await pilot.press("escape")
        screen.choose_scope("st[/bold]")
        status = screen.query_one("#tuning-status")
        while "stage st[/bold]: 1 marked run ·" not in str(status.render()):
            await pilot.pause(0.05)
        await pilot.press("u")  # use the optimum: a toast names the stage
        await pilot.pause()
        shown = _assert_drawn_safely(app)
        assert "stage st[/bold]: technical" in shown


async def test_the_dashboard_and_help_with_hostile_data(hostile_db: Path, tmp_path: Path) -> None:
    async with opened(hostile_db, tmp_path, SIZE) as (app, pilot):
        await pilot.press("d")
        await pilot.pause(0.5)
        stage = app.screen.query_one("#dashboard-stage", Select)
        await _open_menu(pilot, stage)
        assert "st[red]x[/red]" in _assert_drawn_safely(app)
        await pilot.press("escape")
        for text in HOSTILE.values():
            stage.value = f"st{text}"
            await pilot.pause(0.2)
            _assert_drawn_safely(app)
        await pilot.press("escape")
        await pilot.press("question_mark")
        await pilot.pause()
        _assert_drawn_safely(app)


async def test_markup_in_config_toml_keys_does_not_stop_the_app(
    hostile_db: Path, tmp_path: Path
) -> None:
    config = tmp_path / "config.toml"
    tables = "".join(
        f"\n[ppp.weights.{toml_key('st' + text)}]\ntechnical = 0.6\ninteraction = 0.4\n"
        for text in HOSTILE.values()
    )
    config.write_text(tables)
    async with opened(hostile_db, config, SIZE) as (app, pilot):
        app.open_run("run-close[/]")
        await pilot.pause()
        await pilot.press("t")
        await pilot.pause(0.5)
        assert "st[/]" in _assert_drawn_safely(app)  # the per-stage table


async def test_an_invalid_config_quoting_markup_and_escapes_is_shown_literally(
    hostile_db: Path, tmp_path: Path
) -> None:
    config = tmp_path / "config.toml"
    key = json.dumps("[/]\x1b]2;pwned\x07")
    config.write_text(f"[ppp.weights.{key}]\ntechnical = 2\ninteraction = -1\n")
    async with opened(hostile_db, config, SIZE, notifications=True) as (app, _pilot):
        shown = _assert_drawn_safely(app)
        assert "Invalid config.toml" in shown
        assert "[/]␛]2;pwned␇" in shown
