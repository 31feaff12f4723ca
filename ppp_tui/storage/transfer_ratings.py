"""Hand ratings, and the judge's technical scores and efforts, of the runs two stores
both hold: brought from one to the other by a copy (transfer.bring_in), after the marks.

Marks merge by time (the later wins). A rating records no time, so it moves by what it
is, by the same rules that decide what may overwrite what in a single store:

- a hand rating (`technical`, `e` in the app) replaces any score that is not a hand
  rating: the one given with the run, a test run's, the judge's, none;
- the judge's technical score replaces only "unscored", as the judge itself only
  scores agents with no test run and no hand rating;
- the judge's effort of a question replaces the classifier's (never a label given with
  the run), as `judge` does;
- the same value on both sides is left as it is, and two different values of the same
  kind (two hand ratings, two judges' answers) too: without a time, neither is known to
  be the later. They are counted, so the import can say so.

A question is the same on both sides when its run, agent, turn and text are (the n-th of
several alike pairs with the n-th). The agents whose questions changed have their counts
by effort made again, and every run changed its packed scores.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..core.model import HAND, JUDGED, UNSCORED, Source
from . import packs

if TYPE_CHECKING:
    from .store import Store

_LABEL = Source.LABEL.value
_JUDGED_EFFORT = Source.JUDGED.value
_RUNS = "SELECT value FROM json_each(?)"


@dataclass
class Brought:
    """What moved: technical scores, efforts; and values left because both sides gave
    their own."""

    ratings: int = 0
    efforts: int = 0
    differ: int = 0


def bring_ratings(source: Store, target: Store, held: set[str]) -> Brought:
    """Bring `source`'s hand ratings and judged scores and efforts of the runs in `held`
    into `target`, inside the target's transaction (which the caller holds)."""
    done = Brought()
    _technical(source, target, held, done)
    _efforts(source, target, held, done)
    if done.ratings or done.efforts:
        packs.fill_missing(target.conn)  # the agents' update dropped their runs' packs
    return done


def _technical(source: Store, target: Store, held: set[str], done: Brought) -> None:
    given = [
        row
        for row in source._query(
            "SELECT run_id, name, technical, technical_source, judged_model FROM agents"
            " WHERE technical_source IN (?, ?) ORDER BY run_id, name",
            (HAND, JUDGED),
        )
        if row[0] in held
    ]
    if not given:
        return
    runs = json.dumps(sorted({row[0] for row in given}))
    here = {
        (run_id, name): (technical, kind, model)
        for run_id, name, technical, kind, model in target.conn.execute(
            "SELECT run_id, name, technical, technical_source, judged_model FROM agents"
            f" WHERE run_id IN ({_RUNS})",
            (runs,),
        )
    }
    changes = []
    for run_id, name, technical, kind, model in given:
        ours = here.get((run_id, name))
        if ours is None:
            continue  # an agent the target's run lacks
        verdict = _technical_verdict((technical, kind, model), ours)
        if verdict is None:
            done.differ += 1
        elif verdict:
            changes.append((technical, kind, model, run_id, name))
    if changes:
        target.conn.executemany(
            "UPDATE agents SET technical = ?, technical_source = ?, judged_model = ?"
            " WHERE run_id = ? AND name = ?",
            changes,
        )
    done.ratings += len(changes)


def _technical_verdict(theirs: tuple[Any, ...], ours: tuple[Any, ...]) -> bool | None:
    """Whether `theirs` (a hand rating or a judged score) replaces `ours`; None when
    both are of the same kind and differ."""
    if theirs == ours:
        return False
    kind, ours_kind = theirs[1], ours[1]
    if kind == HAND:
        return None if ours_kind == HAND else True
    # The judge's: over nothing but "unscored" (and another judge's answer: differing).
    if ours_kind == JUDGED:
        return None
    return bool(ours_kind == UNSCORED)


def _efforts(source: Store, target: Store, held: set[str], done: Brought) -> None:
    question = (
        "SELECT a.run_id, a.name, q.turn, q.text, q.id, q.trajectory_id, q.effort, q.source,"
        " q.judged_model, q.judged_prompt FROM trajectory_questions AS q"
        " JOIN agents AS a ON a.id = q.trajectory_id"
    )
    given = [
        row
        for row in source._query(f"{question} WHERE q.source = ? ORDER BY q.id", (_JUDGED_EFFORT,))
        if row[0] in held
    ]
    if not given:
        return
    agents = {(row[0], row[1]) for row in given}
    runs = json.dumps(sorted({run_id for run_id, _ in agents}))
    # Each side's questions, the n-th of several alike with the n-th.
    theirs = _numbered(
        source._query(
            f"{question} WHERE a.run_id IN ({_RUNS}) ORDER BY q.id",
            (runs,),
        )
    )
    ours = _numbered(
        target.conn.execute(f"{question} WHERE a.run_id IN ({_RUNS}) ORDER BY q.id", (runs,))
    )
    changes = []
    touched: set[int] = set()
    for key, row in theirs.items():
        here = ours.get(key)
        if row[7] != _JUDGED_EFFORT or here is None:
            continue
        value, current = (row[6], row[7], row[8], row[9]), (here[6], here[7], here[8], here[9])
        if value == current or current[1] == _LABEL:
            continue
        if current[1] == _JUDGED_EFFORT:
            done.differ += 1
            continue
        changes.append((*value, here[4]))
        touched.add(here[5])
    if changes:
        target.conn.executemany(
            "UPDATE trajectory_questions SET effort = ?, source = ?, judged_model = ?,"
            " judged_prompt = ? WHERE id = ?",
            changes,
        )
        from .judgments import _count_questions

        _count_questions(target.conn, touched)
    done.efforts += len(changes)


def _numbered(rows: Any) -> dict[tuple[Any, ...], tuple[Any, ...]]:
    """Questions by (run, agent, turn, text, the how-many-th alike), in id order."""
    found: dict[tuple[Any, ...], tuple[Any, ...]] = {}
    seen: dict[tuple[Any, ...], int] = {}
    for row in rows:
        alike = tuple(row[:4])
        number = seen.get(alike, 0)
        seen[alike] = number + 1
        found[(*alike, number)] = tuple(row)
    return found
