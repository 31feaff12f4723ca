"""An edit's diff and counts (core/sessions/changes.py): what difflib says, bounded."""

from __future__ import annotations

import difflib

from hypothesis import given, settings
from hypothesis import strategies as st

from ppp_tui.core.sessions.changes import (
    MAX_MATCHED_LINES,
    EditKind,
    Piece,
    SessionEdit,
    agent_edits,
    diff_edit,
    file_changes,
    lines,
    relative,
)
from ppp_tui.core.sessions.model import Session, SessionTurn, Tool


def _unified(old: str, new: str) -> tuple[str, int, int]:
    """(hunks, added, removed) of difflib.unified_diff, the reference."""
    diff = list(difflib.unified_diff(lines(old), lines(new), lineterm="", n=3))[2:]
    added = sum(1 for line in diff if line.startswith("+"))
    removed = sum(1 for line in diff if line.startswith("-"))
    return "".join(line + "\n" for line in diff), added, removed


def _edit(old: str, new: str, kind: EditKind = EditKind.UPDATE) -> SessionEdit:
    edit = diff_edit("f.py", [Piece(old, new, 1, 1)], kind)
    assert edit is not None
    return edit


_LINE = st.sampled_from(["a", "b", "c", "", "def f():", "    return 1", "x = 2"])
_TEXT = st.lists(_LINE, max_size=30).map(lambda rows: "".join(row + "\n" for row in rows))


@settings(max_examples=300, deadline=None)
@given(_TEXT, _TEXT)
def test_a_small_edit_is_exactly_difflibs_unified_diff(old: str, new: str) -> None:
    edit = diff_edit("f.py", [Piece(old, new, 1, 1)])
    hunks, added, removed = _unified(old, new)
    if old == new:
        assert edit is None  # an update that changes nothing is no change
        return
    assert edit is not None
    assert (edit.hunks, edit.added, edit.removed) == (hunks, added, removed)


def test_a_long_file_diffs_as_difflib_does_with_its_common_ends_set_aside() -> None:
    old = "".join(f"line {i}\n" for i in range(5000))
    new = old.replace("line 2500\n", "line 2500 changed\nan added line\n")
    edit = _edit(old, new)
    assert (edit.added, edit.removed) == (2, 1)
    assert edit.hunks == _unified(old, new)[0]
    assert edit.hunks.startswith("@@ -2498,7 +2498,8 @@\n line 2497\n")


def test_a_rewrite_too_long_to_match_counts_every_line_removed_and_added() -> None:
    half = MAX_MATCHED_LINES // 2 + 1
    old = "".join(f"old {i}\n" for i in range(half))
    new = "".join(f"new {i}\n" for i in range(half))
    edit = _edit(old, new)
    assert (edit.added, edit.removed) == (half, half)


def test_a_new_file_counts_every_line_added_and_a_deleted_one_every_line_removed() -> None:
    created = diff_edit("n.py", [Piece("", "a\nb\nc")], EditKind.CREATE)
    assert created is not None
    assert (created.added, created.removed) == (3, 0)
    assert created.hunks == "@@ -0,0 +1,3 @@\n+a\n+b\n+c\n"
    deleted = diff_edit("n.py", [Piece("a\nb\n", "")], EditKind.DELETE)
    assert deleted is not None
    assert (deleted.added, deleted.removed) == (0, 2)
    empty = diff_edit("e.txt", [Piece("", "")], EditKind.CREATE)
    assert empty is not None and (empty.added, empty.removed) == (0, 0)  # still made


def test_a_huge_diff_is_cut_with_a_note_and_its_counts_stay_whole() -> None:
    new = "".join(f"{i:08d} some text of the new file\n" for i in range(100_000))
    edit = diff_edit("big.txt", [Piece("", new)], EditKind.CREATE, limit=10_000)
    assert edit is not None
    assert edit.added == 100_000
    assert len(edit.hunks) < 10_200
    note = edit.hunks.splitlines()[-1]
    assert note.startswith("\\ diff cut here:") and "the counts are the whole edit's" in note
    assert "more lines not kept" in note


def test_pieces_keep_their_line_numbers_and_later_pieces_follow_the_earlier_ones() -> None:
    edit = diff_edit(
        "f.py",
        [Piece("a\nb\nc\n", "a\nB\nB2\nc\n", 10), Piece("x\ny\nz\n", "x\nz\n", 40)],
    )
    assert edit is not None
    assert edit.hunks == ("@@ -10,3 +10,4 @@\n a\n-b\n+B\n+B2\n c\n@@ -40,3 +41,2 @@\n x\n-y\n z\n")
    assert (edit.added, edit.removed) == (2, 2)


def test_paths_are_relative_to_the_sessions_folder_only_when_inside_it() -> None:
    assert relative("/home/ana/shop/app/x.py", "/home/ana/shop") == "app/x.py"
    assert relative("/home/ana/shop/app/x.py", "/home/ana/shop/") == "app/x.py"
    assert relative("/home/ana/shopping/x.py", "/home/ana/shop") == "/home/ana/shopping/x.py"
    assert relative("/etc/hosts", "/home/ana/shop") == "/etc/hosts"
    assert relative("./app/../lib/y.py", "/home/ana/shop") == "lib/y.py"
    assert relative("../other/z.py", "/home/ana/shop") == "../other/z.py"
    assert relative("C:\\src\\shop\\app\\x.py", "C:\\src\\shop") == "app\\x.py"
    assert relative("/a/b.py", None) == "/a/b.py"


def _session(*turns: list[SessionEdit]) -> Session:
    session = Session(tool=Tool.CODEX, id="s", path="s.jsonl", cwd="/w")
    for number, edits in enumerate(turns):
        session.turns.append(SessionTurn(f"prompt {number}", edits=list(edits)))
    return session


def test_an_agents_edits_are_numbered_by_turn_and_headed_with_their_paths() -> None:
    first = _edit("a\n", "b\n")
    moved = diff_edit("/w/new.py", [Piece("x\n", "y\n")], moved_from="/w/old.py")
    outside = _edit("", "z\n", EditKind.CREATE)
    assert moved is not None
    edits = agent_edits(
        _session(
            [SessionEdit("/w/app.py", first.kind, 1, 1, first.hunks)],
            [],
            [moved, SessionEdit("/tmp/o.txt", outside.kind, 1, 0, outside.hunks)],
        )
    )
    assert [(e.turn, e.path, e.added, e.removed) for e in edits] == [
        (1, "app.py", 1, 1),
        (3, "new.py", 1, 1),
        (3, "/tmp/o.txt", 1, 0),
    ]
    assert edits[0].diff.startswith("--- a/app.py\n+++ b/app.py\n@@ -1 +1 @@\n-a\n+b\n")
    assert edits[1].diff.startswith("--- a/old.py\n+++ b/new.py\n")
    assert edits[2].diff.startswith("--- /tmp/o.txt\n+++ /tmp/o.txt\n")


def test_a_path_with_a_newline_cannot_break_the_diff_header() -> None:
    edit = _edit("a\n", "b\n")
    edits = agent_edits(_session([SessionEdit("/w/x\n+++ b/evil", edit.kind, 1, 1, edit.hunks)]))
    assert edits[0].diff.splitlines()[:2] == ["--- a/x\\n+++ b/evil", "+++ b/x\\n+++ b/evil"]


def test_past_the_agents_budget_an_edit_keeps_its_counts_and_a_note() -> None:
    big = _edit("", "".join(f"{i}\n" for i in range(1000)), EditKind.CREATE)
    edits = agent_edits(_session([big, big, big]), limit=len(big.hunks) * 2 + 100)
    assert [e.added for e in edits] == [1000, 1000, 1000]
    assert "+999" in edits[1].diff
    assert "+999" not in edits[2].diff and "diff not kept" in edits[2].diff


def test_file_changes_sum_each_file_in_the_order_first_touched() -> None:
    edits = agent_edits(
        _session(
            [_edit("a\n", "b\n"), _edit("", "x\ny\n", EditKind.CREATE)],
            [_edit("b\n", "b\nc\n")],
        )
    )
    # every edit above is of "f.py": one file, three edits
    assert [(c.path, c.added, c.removed, c.edits) for c in file_changes(edits)] == [
        ("f.py", 4, 1, 3)
    ]
