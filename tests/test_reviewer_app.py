"""Switching the reviewer in the app (`w`): whose marks the runs list shows and counts,
and whom a new mark is recorded for."""

from __future__ import annotations

from pathlib import Path

from helpers import opened
from textual.widgets import Input, OptionList

from ppp_tui.app.app import PPPApp
from ppp_tui.app.screens.reviewer import ReviewerScreen
from ppp_tui.storage.reviewers import Scope
from ppp_tui.storage.store import Store


def _marks_of(db: Path, reviewer: str) -> dict[str, str | None]:
    with Store.open(db) as store:
        store.scope = Scope(reviewer)
        return store.preferred_agents()


async def _settle(app: PPPApp, pilot: object) -> None:
    await app.workers.wait_for_complete()
    await pilot.pause()  # type: ignore[attr-defined]


async def test_w_switches_to_a_colleagues_marks_and_back(db: Path, tmp_path: Path) -> None:
    async with opened(db, tmp_path, (100, 30)) as (app, pilot):
        workspace = app.workspace
        assert workspace is not None and workspace.scores is not None
        assert app.sub_title.startswith("reviewer tester · ")
        mine = workspace.scores.arrays.marked.sum()
        assert {i.id: i.preferred for i in workspace.infos} == _marks_of(db, "tester")

        await pilot.press("w")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, ReviewerScreen)
        listing = screen.query_one(OptionList)
        ids = [listing.get_option_at_index(i).id for i in range(listing.option_count)]
        assert ids == ["r:ana", "r:ben", "r:tester"]
        assert listing.highlighted == 2  # the current reviewer
        await pilot.press("home", "enter")
        await _settle(app, pilot)
        assert app.sub_title.startswith("reviewer ana · ")
        ana = _marks_of(db, "ana")
        assert {i.id: i.preferred for i in workspace.infos} == ana
        marked = workspace.scores.arrays.marked
        assert marked.sum() == sum(agent is not None for agent in ana.values()) < mine
        # The regret figures follow: every marked row is one of ana's marks.
        for row in marked.nonzero()[0]:
            assert ana[workspace.infos[row].id] is not None

        await pilot.press("w")
        await pilot.pause()
        await pilot.press("end", "enter")  # back to tester
        await _settle(app, pilot)
        assert workspace.scores.arrays.marked.sum() == mine


async def test_a_new_reviewer_starts_with_no_marks_and_marks_for_themself(
    db: Path, tmp_path: Path
) -> None:
    async with opened(db, tmp_path, (100, 30)) as (app, pilot):
        workspace = app.workspace
        assert workspace is not None and workspace.scores is not None
        await pilot.press("w")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, ReviewerScreen)
        field = screen.query_one(Input)
        field.focus()
        field.value = "bad\x1bname"
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, ReviewerScreen)  # refused, said why
        assert "control characters" in str(screen.query_one("#reviewer-error").render())
        field.value = "dana"
        await pilot.press("enter")
        await _settle(app, pilot)
        assert app.sub_title.startswith("reviewer dana · ")
        assert not workspace.scores.arrays.marked.any()
        run_id = workspace.infos[0].id
        agent = str(workspace.scores.arrays.names[0, 0])
        workspace.mark(run_id, agent)  # what `p` on a run's agent does
        await _settle(app, pilot)
    with Store.open(db) as store:
        assert store.current_marks(run_id)["dana"] == agent
        assert store.marks(run_id)[-1].reviewer == "dana"


async def test_reviewer_names_are_shown_as_written_never_as_markup(
    db: Path, tmp_path: Path
) -> None:
    from helpers import run_cli

    with Store.open(db) as store:
        run_id = store.run_infos()[0].id
        agent = store.get_run(run_id).agents[0].name
    marks = tmp_path / "marks.csv"
    marks.write_text(f"run_id,agent,reviewer\n{run_id},{agent},[/]\n{run_id},{agent},[red]x\n")
    assert run_cli("prefer", "--file", str(marks), "--db", str(db)).exit_code == 0
    async with opened(db, tmp_path, (80, 24)) as (app, pilot):
        await pilot.press("w")
        await pilot.pause()
        listing = app.screen.query_one(OptionList)
        prompts = [str(listing.get_option_at_index(i).prompt) for i in range(3)]
        assert prompts[:2] == ["[/]  (1 marked run)", "[red]x  (1 marked run)"]
        await pilot.press("home", "down", "enter")
        await _settle(app, pilot)
        assert app.sub_title.startswith("reviewer [red]x · ")
        assert "[red]x" in str(app.screen.query_one("HeaderTitle").render())
