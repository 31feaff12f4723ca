"""Agreement and mean regret on the slider's path follow every mark, all runs marked."""

from __future__ import annotations

from pathlib import Path

from ppp_tui.app.workspace import Workspace, outcome_under
from ppp_tui.core.settings import Settings
from ppp_tui.storage.demo import write_demo
from ppp_tui.storage.store import Store


def test_figures_follow_a_changed_mark_when_every_run_is_marked(tmp_path: Path) -> None:
    db = tmp_path / "demo.db"
    write_demo(db, 40, seed=3)
    store = Store.open(db)
    workspace = Workspace(store, tmp_path / "config.toml", Settings())
    workspace.load()
    assert workspace.scores is not None
    arrays = workspace.scores.arrays
    for i, info in enumerate(workspace.infos):  # every run marked: its last agent
        last = [name for name in arrays.names[i] if name][-1]
        workspace.mark(info.id, str(last))
    before = workspace.figures()
    assert before.marked_runs == 40
    # The first run re-marked to the agent ranked first (not its last agent), so
    # agreement and mean regret both move.
    outcome = outcome_under(workspace.scores.lines, workspace.settings)
    i = 0
    pick = str(arrays.names[i][outcome.selected[i]])
    workspace.mark(workspace.infos[i].id, pick)
    after = workspace.figures()
    expected = outcome_under(workspace.scores.lines, workspace.settings)
    assert after.agreement == float(expected.agree.sum() / 40)
    assert after.mean_regret == float(expected.regret.sum() / 40)
    assert (after.agreement, after.mean_regret) != (before.agreement, before.mean_regret)
    store.close()
