"""Two simulated colleagues who mark some of the demo's marked runs too, so that the
demo has reviewers to compare (`ppp-tui agreement`, the dashboard's agreement panel).

ana marks about a third of the runs the demo's user marked and picks the same agent
about four times in five; ben marks about a quarter and agrees about two times in
three. Otherwise each picks another working agent of the run at random. Everything is
drawn from the seed and the run id: the same demo gets the same marks.
"""

from __future__ import annotations

import random
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..store import Store

# name -> (share of the user's marked runs they mark, chance they pick the same agent)
COLLEAGUES = {"ana": (0.35, 0.8), "ben": (0.25, 0.65)}


def add_colleague_marks(store: Store, seed: int) -> int:
    """Record the colleagues' marks of `store`'s runs the current reviewer marked;
    returns how many."""
    from ..mark_files import FileMark

    conn = store.conn
    with store.lock:
        marked = conn.execute(
            "SELECT m.run_id, m.agent, m.marked_at,"
            " (SELECT group_concat(name, char(31)) FROM agents AS a"
            "  WHERE a.run_id = m.run_id AND a.failure IS NULL)"
            " FROM marks AS m WHERE m.reviewer = ? ORDER BY m.run_id",
            (store.reviewer,),
        ).fetchall()
    marks = []
    for run_id, agent, at, names in marked:
        others = sorted(set((names or "").split("\x1f")) - {agent, ""})
        for name, (share, same) in COLLEAGUES.items():
            if name == store.reviewer:
                continue
            rng = random.Random(f"{seed}:{name}:{run_id}")
            if rng.random() >= share:
                continue
            pick = agent if not others or rng.random() < same else rng.choice(others)
            marks.append(FileMark(run_id, pick, name, at))
    return store.insert_new_marks(marks, source="demo")
