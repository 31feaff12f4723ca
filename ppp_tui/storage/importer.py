"""The import: records parsed into runs, checked against the runs already there, written.

`Store.import_records` runs one `Import` inside its transaction. Long runs of JSON
Lines records are parsed by forked worker processes while this process writes (see
`Import`); workers never touch the database.
"""

from __future__ import annotations

import gc
import marshal
import os
import pickle
import signal
import sys
import threading
from collections.abc import Callable, Iterable
from contextlib import suppress
from dataclasses import dataclass, field
from functools import cache
from typing import TYPE_CHECKING, Any, BinaryIO, NoReturn

from ..core.errors import PPPError
from ..core.runs.fast import _Unusual
from .direct_rows import add_object
from .rows import BATCH, Rows, Writer, batch_database

if TYPE_CHECKING:
    from ..core.model import Run
    from .files import Line, Record

# JSON Lines imports (see Import): parse worker processes, the fewest lines in a row
# worth them, the most they share (held in memory until they are done), lines per batch.
_WORKERS = 2
_FORK_MIN = 1000
_FORK_CHUNK = 100_000
_PIPE_BATCH = 500
_PIPE_SIZE = 1 << 20
# Batches of each worker read off its pipe ahead of their turn (`_Inbox`): a worker goes
# on parsing while this process takes the full-text index's rows in (about 0.3 s at a
# time), and its pipe, which holds about one batch, would be full.
_READ_AHEAD = 16
# Batches still to come when the last chunk's import calls `nearly_done` (a bulk load's
# indexes made): about what the workers parse while the indexes are made (0.5 s), so that
# is not left for the end, with one core idle.
_NEARLY_DONE = 24


@dataclass
class ImportReport:
    added: int = 0
    skipped: int = 0  # already in the database (same id or content)
    invalid: list[str] = field(default_factory=list)  # one line per rejected run
    unknown_preferences: set[str] = field(default_factory=set)
    marks: int = 0


class Import:
    """One import: each record parsed, checked against the runs already there, written.

    Runs of at least `_FORK_MIN` JSON Lines records in a row (records that still hold
    their line) are parsed by `_WORKERS` forked worker processes, on Linux and from the
    main thread: the lines are cut into batches of `_PIPE_BATCH`, each worker takes the
    next batch number free (`_tickets`), parses that batch and sends back its rows and
    report, numbered; threads here read them as they come (`_Inbox`), and this process
    writes them in batch order, making a bulk load's indexes (`nearly_done`) while the
    last batches are parsed. The rows come as a small database the worker
    wrote them into (rows.batch_database), copied in with INSERT ... SELECT, so this
    process binds no value of them; as values where that cannot be
    (rows.batches_attached). A worker numbers the agents of each batch from 0 (the
    insert adds the next agent id here) and knows the ids that were there when it
    started plus those it added itself, so a batch that adds a run another worker
    already added is parsed again here. Together they write exactly what the plain loop
    would, in the same order, and report the same, bad runs first to last. Workers never
    touch the database: the transaction, and rolling it back on any error, stays here.
    """

    def __init__(
        self,
        writer: Writer,
        known: set[str],
        report: ImportReport,
        skip_invalid: bool,
        progress: Callable[[int], None] | None,
        schema: list[str] | None = None,
        nearly_done: Callable[[], None] | None = None,
    ) -> None:
        self.writer = writer
        self.nearly_done = nearly_done
        # The tables a worker writes each batch into (rows.batches_attached), or None
        # for batches sent as values.
        self.schema = schema
        self.known = known
        self.report = report
        self.skip_invalid = skip_invalid
        self.progress = progress
        self.forks = _can_fork()

    def run(self, records: Iterable[Record]) -> None:
        stream = self.stream = _Stream(records)
        while (record := stream.next()) is not None:
            if self.forks and _is_line(record):
                self.lines(record)
            else:
                self.one(record)
        self.writer.finish()
        self.report.unknown_preferences = self.writer.rows.unknown

    def one(self, record: Record | Line) -> None:
        if self.progress is not None:
            self.progress(1)
        self.parse(record, self.writer.rows, self.report)
        if len(self.writer.rows.runs) >= BATCH:
            self.writer.flush()

    def parse(self, record: Record | Line, rows: Rows, report: ImportReport) -> None:
        """Add the run of a record (or of a JSON Lines `Line`) to `rows` unless it is
        there already: straight from its JSON to rows (direct_rows) if it takes the fast
        way, else made a `Run` first."""
        try:
            run = self._run(record, rows, report)
        except PPPError as error:
            if not self.skip_invalid:
                raise
            report.invalid.append(str(error))
            return
        if run is None:
            return  # its rows added (or it was there already) by the direct rows
        if run.id in self.known:
            report.skipped += 1
            return
        self.known.add(run.id)
        rows.add(run)
        report.added += 1
        report.marks += run.preferred_agent is not None

    def _run(self, record: Record | Line, rows: Rows, report: ImportReport) -> Run | None:
        """The run of a record to add; None if the direct rows took it (and counted it
        in `report`). A `Line` is made a record only if its run leaves the fast way."""
        if isinstance(record, tuple):
            raw, surrogates = _decoded_line()(*record)
        elif type(record) is _record_type():
            raw, surrogates = record.decoded()
        else:
            return record.parse()  # a run parsed already, or another kind of record
        fast = not surrogates and type(raw) is dict
        if fast:
            try:
                marked = add_object(rows, raw, self.known)
            except (_Unusual, RecursionError):
                fast = False  # the checked parser says what is wrong (or takes it)
            else:
                if marked is None:
                    report.skipped += 1
                else:
                    report.added += 1
                    report.marks += marked
                return None
        return _record(record).run_of(raw, surrogates, fast)

    # -- parse workers -------------------------------------------------------------

    def lines(self, first: Record) -> None:
        """`first` and the JSON Lines lines after it (up to `_FORK_CHUNK`): records, or
        `Line`s where the records can give them so (`_Stream.lines`)."""
        chunk: list[Record | Line] = [first]
        # The records hold no reference cycles: the cycle collector would only walk the
        # chunk again and again as it grows (a quarter of the time it takes to read).
        collecting = gc.isenabled()
        gc.disable()
        try:
            while len(chunk) < _FORK_CHUNK:
                # Lines a JSON Lines file gives as they are: the workers make their
                # records, rather than this process before they start.
                if taken := self.stream.lines(_FORK_CHUNK - len(chunk)):
                    chunk += taken
                elif (line := self.stream.line()) is not None:
                    chunk.append(line)
                else:
                    break
        finally:
            if collecting:
                gc.enable()
        if len(chunk) < _FORK_MIN or not self.forked(chunk):
            for record in chunk:
                self.one(record)

    def forked(self, chunk: list[Record | Line]) -> bool:
        """Parse `chunk` in workers and write it; False if they could not start."""
        import fcntl  # Linux only, as forking is here

        self.writer.flush()  # rows go in in record order
        workers: list[tuple[int, int]] = []  # (pid, read end of its pipe)
        inbox: _Inbox | None = None
        batches = range(0, len(chunk), _PIPE_BATCH)
        tickets = _tickets(len(batches))
        if tickets is None:
            return False
        # The lines, their JSON, runs and rows have no reference cycles: the cycle
        # collector (here and in the workers) would only walk them again and again.
        collecting = gc.isenabled()
        gc.disable()
        try:
            # No SIGINT between a fork and the worker's own handling of it.
            mask = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
            try:
                for _ in range(_WORKERS):
                    try:
                        read_fd, write_fd = os.pipe()
                    except OSError:
                        return False
                    others = [read_fd, *(fd for _, fd in workers)]
                    try:
                        pid = os.fork()
                    except OSError:
                        os.close(read_fd)
                        os.close(write_fd)
                        return False
                    if pid == 0:
                        self._work(chunk, tickets, write_fd, others, mask)  # never returns
                    os.close(write_fd)
                    workers.append((pid, read_fd))
                    with suppress(OSError):  # room for a whole batch: workers need not wait
                        fcntl.fcntl(read_fd, fcntl.F_SETPIPE_SZ, _PIPE_SIZE)
            finally:
                signal.pthread_sigmask(signal.SIG_SETMASK, mask)
            inbox = _Inbox([fd for _, fd in workers])
            nearly = len(batches) - _NEARLY_DONE if self.stream.ended() else -1
            for number, start in enumerate(batches):
                if number == nearly and self.nearly_done is not None:
                    self.nearly_done()
                message = inbox.take(number)
                if message[0] == "error":
                    raise message[1]
                self._apply(chunk[start : start + _PIPE_BATCH], message)
        finally:
            for pid, _ in workers:
                # Done, failed or interrupted: the worker has nothing more to do.
                with suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
                with suppress(ChildProcessError):  # reaped already (SIGCHLD ignored)
                    os.waitpid(pid, 0)
            if inbox is not None:
                inbox.close()  # the workers are gone: their pipes end, and the readers
            for _, fd in workers:
                os.close(fd)
            os.close(tickets)
            if collecting:
                gc.enable()
        return True

    def _apply(self, batch: list[Record | Line], message: tuple[Any, ...]) -> None:
        """Write a worker's batch: its rows, or (if it added a run already added) it again."""
        kind, data, ids, agents, added, skipped, invalid, marks, unknown = message
        known = self.known
        if not known.isdisjoint(ids):  # another worker's batch added one of its runs
            for record in batch:
                self.one(record)
            self.writer.flush()
            return
        known.update(ids)
        rows = self.writer.rows
        if kind == "db":
            self.writer.copy(data, len(ids), offset=rows.next_agent)
        else:
            self.writer.write(data, offset=rows.next_agent)
        rows.next_agent += agents
        rows.unknown.update(unknown)
        report = self.report
        report.added += added
        report.skipped += skipped
        report.invalid.extend(invalid)
        report.marks += marks
        if self.progress is not None:
            self.progress(len(batch))

    def _work(
        self,
        chunk: list[Record | Line],
        tickets: int,
        write_fd: int,
        inherited: list[int],
        mask: Any,
    ) -> NoReturn:
        """A worker: parse the batches of `chunk` whose numbers it takes from `tickets`, in
        the order taken (ascending), and send each with its number; never returns."""
        status = 1
        try:
            signal.signal(signal.SIGINT, signal.SIG_DFL)
            signal.pthread_sigmask(signal.SIG_SETMASK, mask)
            for fd in inherited:
                os.close(fd)
            rows = Rows(self.writer.rows.stamp, 0, self.writer.rows.reviewer)
            with open(write_fd, "wb") as pipe:
                number = -1
                try:
                    while ticket := os.read(tickets, 4):
                        number = int.from_bytes(ticket, "little")
                        start = number * _PIPE_BATCH
                        report = ImportReport()
                        rows.next_agent = 0
                        rows.unknown = set()
                        for record in chunk[start : start + _PIPE_BATCH]:
                            self.parse(record, rows, report)
                        tables = rows.take()
                        ids = [row[0] for row in tables[0]]
                        message = (
                            number,
                            *(
                                ("rows", tables)
                                if self.schema is None
                                else ("db", batch_database(self.schema, tables))
                            ),
                            ids,
                            rows.next_agent,
                            report.added,
                            report.skipped,
                            report.invalid,
                            report.marks,
                            rows.unknown,
                        )
                        _send(pipe, message)
                except Exception as error:
                    _send(pipe, (number, "error", _portable(error)))
            status = 0
        finally:
            os._exit(status)


def _tickets(count: int) -> int | None:
    """A pipe holding the batch numbers 0 to `count` - 1, each taken by the first worker
    free (a worker that gets less of the processor parses fewer batches): 4 bytes each,
    which a pipe gives to one reader whole. Its read end, or None if they do not fit in
    it (a pipe holds 16k of them) or it cannot be made."""
    try:
        tickets, filling = os.pipe()
    except OSError:
        return None
    data = b"".join(number.to_bytes(4, "little") for number in range(count))
    try:
        os.set_blocking(filling, False)
        written = os.write(filling, data)
    except OSError:
        written = -1
    finally:
        os.close(filling)
    if written == len(data):
        return tickets
    os.close(tickets)
    return None


class _Inbox:
    """The workers' messages, read off their pipes by a thread for each as they come (up
    to `_READ_AHEAD` batches ahead of the one wanted), so that a worker never waits for
    this process to be ready for them: reading and unpacking go on while the importing
    thread writes (SQLite lets go of the interpreter meanwhile)."""

    def __init__(self, fds: list[int]) -> None:
        self._ready: dict[int, tuple[Any, ...]] = {}
        self._wanted = 0
        self._reading = len(fds)  # pipes not ended yet
        self._failure: Exception | None = None  # a message that could not be read
        self._closed = False
        self._changed = threading.Condition()
        self._threads = [
            threading.Thread(target=self._read, args=(fd,), name="import-inbox", daemon=True)
            for fd in fds
        ]
        for thread in self._threads:
            thread.start()

    def take(self, number: int) -> tuple[Any, ...]:
        """Batch `number`'s message, once it is there; the batches before it were taken."""
        with self._changed:
            self._wanted = number
            self._changed.notify_all()
            while number not in self._ready:
                if not self._reading:  # a worker stopped without sending it
                    raise self._failure or _stopped()
                self._changed.wait()
            return self._ready.pop(number)

    def close(self) -> None:
        """Stop reading; call once the workers are gone (their pipes then end)."""
        with self._changed:
            self._closed = True
            self._changed.notify_all()
        for thread in self._threads:
            thread.join()

    def _read(self, fd: int) -> None:
        try:
            while (message := _read_message(fd, ended=None)) is not None:
                with self._changed:
                    while message[0] >= self._wanted + _READ_AHEAD and not self._closed:
                        self._changed.wait()
                    if self._closed:
                        return
                    self._ready[message[0]] = message[1:]
                    self._changed.notify_all()
        except Exception as error:  # cut short, or a message that cannot be read
            with self._changed:
                self._failure = self._failure or error
        finally:
            with self._changed:
                self._reading -= 1
                self._changed.notify_all()


class _Stream:
    """The records of an import, read one at a time, or a line ahead for the workers.

    An error reading ahead is raised in its turn, once the records before it are in.
    """

    def __init__(self, records: Iterable[Record]) -> None:
        self._records = iter(records)
        self._held: Record | None = None
        self._failure: Exception | None = None
        self._ended = False

    def next(self) -> Record | None:
        held = self._held
        if held is not None:
            self._held = None
            return held
        if self._failure is not None:
            raise self._failure
        if self._ended:
            return None
        record = next(self._records, None)
        self._ended = record is None
        return record

    def ended(self) -> bool:
        """Whether every record has been taken (looking one ahead if need be: a record
        read then is held for `next`, an error raised in its turn)."""
        if self._held is None and self._failure is None and not self._ended:
            try:
                record = next(self._records, None)
            except Exception as error:
                self._failure = error
                return False
            self._ended = record is None
            self._held = record
        return self._ended and self._held is None and self._failure is None

    def lines(self, most: int) -> list[Line]:
        """Up to `most` of the next records as `Line`s, if they are the lines of a JSON
        Lines file that gives them so: the records given are files.LineRecords or
        files.ChainedRecords (anything else wrapped around them gives one record at a
        time, the same records, only slower); else none."""
        if self._held is not None or self._failure is not None or self._ended:
            return []
        take = getattr(self._records, "take", None)
        return take(most) if take is not None else []

    def line(self) -> Record | None:
        """The next record if it is a JSON Lines one; else None, and `next` gives it."""
        if self._held is not None or self._failure is not None or self._ended:
            return None
        try:
            record = next(self._records, None)
        except Exception as error:
            self._failure = error
            return None
        if record is None:
            self._ended = True
        elif not _is_line(record):
            self._held = record
            return None
        return record


def _can_fork() -> bool:
    if sys.platform != "linux" or threading.current_thread() is not threading.main_thread():
        return False
    return len(os.sched_getaffinity(0)) > 1  # on one core a worker only adds work


def _record(item: Record | Line) -> Record:
    """The record of a chunk's item: a `Line` made one."""
    if isinstance(item, tuple):
        return _line_record()(*item)
    return item


@cache
def _line_record() -> Callable[[str, int, str], Record]:
    from .files import line_record  # as _record_type

    return line_record


@cache
def _decoded_line() -> Callable[[str, int | None, str], tuple[Any, bool]]:
    from .files import decoded_line  # as _record_type

    return decoded_line


def _is_line(record: Record) -> bool:
    return record.text is not None and type(record) is _record_type()


@cache
def _record_type() -> type[Record]:
    # Imported on first use: files brings the classifier, which reports never need.
    from .files import Record

    return Record


# How a message is packed: marshal, for rows (plain tuples of str, int, float, bytes and
# None: half pickle's time to pack and to unpack), else pickle (an error; a value of a
# subclass of str or int, which marshal refuses).
_MARSHAL, _PICKLE = b"m", b"p"
_NO_END = object()


def _send(pipe: BinaryIO, message: tuple[Any, ...]) -> None:
    try:
        kind, data = _MARSHAL, marshal.dumps(message)
    except ValueError:
        kind, data = _PICKLE, pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    pipe.write(kind + len(data).to_bytes(8, "little"))
    pipe.write(data)
    pipe.flush()


def _read_message(fd: int, ended: Any = _NO_END) -> Any:
    """The next message on the pipe; at its end, `ended` if given (else an error)."""
    head = os.read(fd, 9)
    if not head and ended is not _NO_END:
        return ended
    head += _read_exactly(fd, 9 - len(head))
    data = _read_exactly(fd, int.from_bytes(head[1:], "little"))
    return marshal.loads(data) if head[:1] == _MARSHAL else pickle.loads(data)


def _read_exactly(fd: int, size: int) -> bytes:
    parts = []
    while size:
        part = os.read(fd, min(size, 1 << 20))
        if not part:
            raise _stopped()
        parts.append(part)
        size -= len(part)
    return b"".join(parts)


def _stopped() -> PPPError:
    return PPPError("import: a process parsing the runs stopped unexpectedly")


def _portable(error: Exception) -> Exception:
    """`error`, or an equivalent that survives pickling, to raise in the importing process."""
    try:
        pickle.loads(pickle.dumps(error, protocol=pickle.HIGHEST_PROTOCOL))
    except Exception:
        return RuntimeError(f"{type(error).__name__}: {error}")
    return error
