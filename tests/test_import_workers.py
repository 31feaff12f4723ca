"""An import's parse workers: batch numbers taken by whichever worker is free, their
messages read as they come and written in batch order, whatever the order they arrive
in; a worker that stops early is one error line; a stalled worker changes nothing
written."""

from __future__ import annotations

import json
import os
import sqlite3
import time
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest
from helpers import table_rows
from hypothesis import given, settings
from hypothesis import strategies as st

from ppp_tui.core.errors import PPPError
from ppp_tui.storage import importer
from ppp_tui.storage.files import (
    ChainedRecords,
    Line,
    LineRecords,
    Record,
    line_record,
    open_records,
    read_records,
)
from ppp_tui.storage.store import Store
from ppp_tui.storage.swap import import_new


def _read_tickets(fd: int) -> list[int]:
    numbers = []
    while ticket := os.read(fd, 4):
        assert len(ticket) == 4
        numbers.append(int.from_bytes(ticket, "little"))
    return numbers


def test_the_tickets_hold_every_batch_number_once_in_order() -> None:
    fd = importer._tickets(300)
    assert fd is not None
    try:
        assert _read_tickets(fd) == list(range(300))
    finally:
        os.close(fd)


def test_more_tickets_than_a_pipe_holds_are_refused_not_waited_for() -> None:
    # 4 MB of numbers: more than a pipe holds; the import then parses in its own process.
    assert importer._tickets(1 << 20) is None


def _pipes(count: int) -> list[tuple[int, int]]:
    return [os.pipe() for _ in range(count)]


def _post(write_fd: int, *messages: tuple[Any, ...]) -> None:
    with open(write_fd, "wb", closefd=False) as pipe:
        for message in messages:
            importer._send(pipe, message)


def test_the_inbox_gives_the_batches_in_their_order_whatever_pipe_they_came_on() -> None:
    (a_read, a_write), (b_read, b_write) = _pipes(2)
    _post(a_write, *((n, "rows", f"batch {n}") for n in (0, 2, 3, 7)))
    _post(b_write, *((n, "rows", f"batch {n}") for n in (1, 4, 5, 6)))
    os.close(a_write)
    os.close(b_write)
    inbox = importer._Inbox([a_read, b_read])
    try:
        assert [inbox.take(n) for n in range(8)] == [("rows", f"batch {n}") for n in range(8)]
    finally:
        inbox.close()
        os.close(a_read)
        os.close(b_read)


@pytest.mark.parametrize("cut", [0, 5, 12])
def test_a_batch_no_worker_sent_is_one_error_line(cut: int) -> None:
    """Batch 1 never comes: its worker stopped after batch 0, cleanly or half way through
    its next message (`cut` bytes of it)."""
    (a_read, a_write), (b_read, b_write) = _pipes(2)
    _post(a_write, (0, "rows", "batch 0"))
    if cut:
        partial_read, partial_write = os.pipe()
        _post(partial_write, (1, "rows", "batch 1"))
        os.close(partial_write)
        os.write(a_write, os.read(partial_read, 100)[:cut])
        os.close(partial_read)
    _post(b_write, (2, "rows", "batch 2"))
    os.close(a_write)
    os.close(b_write)
    inbox = importer._Inbox([a_read, b_read])
    try:
        assert inbox.take(0) == ("rows", "batch 0")
        with pytest.raises(PPPError, match="a process parsing the runs stopped unexpectedly"):
            inbox.take(1)
    finally:
        inbox.close()
        os.close(a_read)
        os.close(b_read)


def test_the_inbox_reads_ahead_only_so_far_and_stops_when_closed() -> None:
    """A reader waits with a batch far ahead of the one wanted; closing lets it go."""
    read_fd, write_fd = os.pipe()
    far = importer._READ_AHEAD + 3
    _post(write_fd, (far, "rows", "far ahead"))
    inbox = importer._Inbox([read_fd])
    try:
        time.sleep(0.1)
        assert far not in inbox._ready  # held back until batch 3 is wanted
    finally:
        os.close(write_fd)  # the worker gone
        inbox.close()
        os.close(read_fd)


def test_a_stalled_worker_leaves_its_batches_to_the_other_and_changes_nothing_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ppp_tui.storage.demo import generate

    lines = [json.dumps(run) for run in generate(3000, seed=11)]
    lines += lines[100:110]  # already there: skipped, from batches parsed out of turn
    lines.insert(1234, "{not json")
    source = tmp_path / "runs.jsonl"
    source.write_text("\n".join(lines) + "\n", encoding="utf-8")
    monkeypatch.setattr(importer, "_PIPE_BATCH", 100)
    parse = importer.Import.parse
    main = os.getpid()

    def stalling(self: importer.Import, record: Record | Line, rows: Any, report: Any) -> None:
        # The worker that takes batch 0 is late with it: the other takes the batches after.
        number = record[1] if isinstance(record, tuple) else record.line
        if os.getpid() != main and number == 1:
            time.sleep(1.0)
        parse(self, record, rows, report)

    monkeypatch.setattr(importer.Import, "parse", stalling)
    new = tmp_path / "new.db"
    report = import_new(new, read_records(str(source)), skip_invalid=True)
    monkeypatch.setattr(importer, "_can_fork", lambda: False)
    plain = tmp_path / "plain.db"
    plain_report = import_new(plain, read_records(str(source)), skip_invalid=True)
    assert (report.added, report.skipped, report.invalid, report.marks) == (
        plain_report.added,
        plain_report.skipped,
        plain_report.invalid,
        plain_report.marks,
    )
    assert report.added == 3000 and report.skipped == 10 and len(report.invalid) == 1
    assert table_rows(new) == table_rows(plain)
    with Store.open(new) as store:
        assert len(store.run_infos()) == 3000


def test_a_first_import_makes_its_indexes_while_the_last_batches_are_parsed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ppp_tui.storage.demo import generate

    source = tmp_path / "runs.jsonl"
    source.write_text("".join(json.dumps(run) + "\n" for run in generate(3000, seed=13)))
    # Three chunks of ten batches: the indexes come 3 batches before the end of the last.
    monkeypatch.setattr(importer, "_FORK_CHUNK", 1000)
    monkeypatch.setattr(importer, "_PIPE_BATCH", 100)
    monkeypatch.setattr(importer, "_NEARLY_DONE", 3)
    made: list[tuple[int, int]] = []  # (runs written, indexes) when the indexes are made
    init = importer.Import.__init__

    def watched(self: importer.Import, *args: Any, **kwargs: Any) -> None:
        init(self, *args, **kwargs)
        make = self.nearly_done
        assert make is not None
        conn = self.writer.conn

        def making() -> None:
            make()
            runs = conn.execute("SELECT count(*) FROM runs").fetchone()[0]
            indexes = conn.execute(
                "SELECT count(*) FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL"
            ).fetchone()[0]
            made.append((runs, indexes))

        self.nearly_done = making

    monkeypatch.setattr(importer.Import, "__init__", watched)
    new = tmp_path / "new.db"
    assert import_new(new, read_records(str(source))).added == 3000
    assert len(made) == 1 and made[0][0] == 2700 and made[0][1] > 10
    monkeypatch.setattr(importer, "_can_fork", lambda: False)
    plain = tmp_path / "plain.db"
    assert import_new(plain, read_records(str(source))).added == 3000
    assert len(made) == 1  # in one process, the indexes come after the rows
    assert table_rows(new) == table_rows(plain)
    schemas = []
    for path in (new, plain):  # every index there, the same, the trigger back
        with closing(sqlite3.connect(path)) as conn:
            schemas.append(
                conn.execute("SELECT type, name, sql FROM sqlite_master ORDER BY 1, 2").fetchall()
            )
    assert schemas[0] == schemas[1]


def test_a_json_lines_file_s_records_are_what_the_record_class_makes(tmp_path: Path) -> None:
    """The records of JSON Lines lines are made without the frozen class's __init__:
    equal to the class's own, field for field and in its order; blank lines skipped."""
    source = tmp_path / "runs.jsonl"
    source.write_text('{"a": 1}\n\n  \n{"b": [2]}\n{not json\n', encoding="utf-8")
    made = list(read_records(str(source)))
    expected = [
        Record(str(source), 1, "$", None, None, '{"a": 1}'),
        Record(str(source), 4, "$", None, None, '{"b": [2]}'),
        Record(str(source), 5, "$", None, None, "{not json"),
    ]
    assert made == expected
    assert [vars(record) for record in made] == [vars(record) for record in expected]
    assert [list(vars(record)) for record in made] == [list(vars(r)) for r in expected]
    assert {hash(record) for record in made} == {hash(record) for record in expected}
    with pytest.raises(PPPError, match=r"runs\.jsonl:5: invalid JSON"):
        made[2].parse()


@settings(max_examples=200, deadline=None)
@given(
    lines=st.lists(st.sampled_from(["", " ", "\t", '{"a": 1}', "x", "\u2003"]), max_size=30),
    steps=st.lists(st.one_of(st.none(), st.integers(1, 7)), max_size=12),
)
def test_lines_taken_as_they_are_are_the_records_made_one_by_one(
    lines: list[str], steps: list[int | None]
) -> None:
    """`take` (some lines, records not made) and `next` (one record) in any order give
    what iterating the records alone gives, blank lines left out, numbered from 1."""
    expected = [(r.source, r.line, r.text) for r in LineRecords("f", lines)]
    given_back: list[tuple[str, int | None, str | None]] = []
    records = LineRecords("f", lines)
    for step in steps:
        if step is None:
            record = next(records, None)
            if record is not None:
                given_back.append((record.source, record.line, record.text))
        else:
            taken = records.take(step)
            assert len(taken) <= step
            given_back += taken
    given_back += [(r.source, r.line, r.text) for r in records]
    assert given_back == expected
    assert list(LineRecords("f", lines)) == [
        line_record("f", number, text)
        for number, text in enumerate(lines, start=1)
        if text and not text.isspace()
    ]


def test_several_files_import_as_one_chain_the_same_with_workers_or_without(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """JSON Lines, a JSON document and JSON Lines again, read as the import command reads
    them (ChainedRecords): the workers take the lines of each file as they are, and the
    rows, the report and the bad lines' file and line are those of the plain loop."""
    from ppp_tui.storage.demo import generate

    runs = [json.dumps(run) for run in generate(1300, seed=3)]
    first = tmp_path / "first.jsonl"
    first.write_text("\n".join(runs[:600]) + "\n\n  \n" + runs[600] + "\n", encoding="utf-8")
    document = tmp_path / "middle.json"
    document.write_text("[" + ",".join(runs[601:700]) + "]", encoding="utf-8")
    last = tmp_path / "last.jsonl"
    tail = [*runs[700:], runs[5], "{not json", *runs[10:12]]
    last.write_text("\r\n".join(tail), encoding="utf-8")
    monkeypatch.setattr(importer, "_FORK_MIN", 100)
    monkeypatch.setattr(importer, "_PIPE_BATCH", 64)

    def run_import(path: Path) -> tuple[int, int, list[str]]:
        files = [str(first), str(document), str(last)]
        chained = ChainedRecords(open_records(name).records for name in files)
        with Store.open(path, create=True) as store:
            report = store.import_records(chained, skip_invalid=True)
        return report.added, report.skipped, report.invalid

    parallel = run_import(tmp_path / "parallel.db")
    monkeypatch.setattr(importer, "_can_fork", lambda: False)
    single = run_import(tmp_path / "single.db")
    assert parallel == single
    assert parallel[:2] == (1300, 3)
    assert parallel[2] == [
        f"{last}:602: invalid JSON: Expecting property name enclosed in double quotes (column 2)"
    ]
    assert table_rows(tmp_path / "parallel.db") == table_rows(tmp_path / "single.db")
