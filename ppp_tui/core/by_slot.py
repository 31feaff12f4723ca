"""The coefficients of a `Lines` transposed to (slots, runs), for the 1-D tuner.

With few slots, per-slot vector arithmetic over contiguous (runs,) vectors is many
times faster than reductions along each run's short row; `BySlot` is that copy,
cached per `Lines` (`Lines.by_slot`), with reusable scratch buffers (`_Scratch`)
that spare the page faults of fresh multi-megabyte temporaries. It selects and
counts agreement at many weights cheaply (`agreements`, `select`, `reselect`).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import numpy as np

from .arrays import BoolArray, FloatArray, IntArray, Lines
from .scoring import TIE_SCALE


class _Scratch:
    """Two float buffers and a mask of one (slots, runs) shape, lent to one caller at
    a time and kept between calls: fresh multi-megabyte temporaries each call would
    cost page faults on the scale of the arithmetic itself."""

    def __init__(self, shape: tuple[int, int]) -> None:
        self._shape = shape
        self._lock = threading.Lock()
        self._buffers: tuple[FloatArray, FloatArray, BoolArray] | None = None

    def __reduce__(self) -> tuple[type[_Scratch], tuple[tuple[int, int]]]:
        return _Scratch, (self._shape,)  # copies and pickles get buffers of their own

    def _fresh(self) -> tuple[FloatArray, FloatArray, BoolArray]:
        return np.empty(self._shape), np.empty(self._shape), np.empty(self._shape, dtype=bool)

    @contextmanager
    def lend(self) -> Iterator[tuple[FloatArray, FloatArray, BoolArray]]:
        if not self._lock.acquire(blocking=False):
            yield self._fresh()  # lent out (another thread): this caller gets its own
            return
        try:
            if self._buffers is None:
                self._buffers = self._fresh()
            yield self._buffers
        finally:
            self._lock.release()


@dataclass(frozen=True)
class BySlot:
    """What tuning needs of a `Lines`, as (slots, runs) C-contiguous arrays: each
    agent slot is one contiguous vector, so per-slot arithmetic and reductions over
    slots (axis 0) run at memory speed, where reductions over a short last axis cost
    per run."""

    # The (runs, slots) arrays of the `Lines` (shared, not copied: no reference back
    # to the `Lines`, which caches this), for `Lines.outcome`'s exact arithmetic.
    c: FloatArray
    p: FloatArray
    q: FloatArray
    preferred: IntArray
    a: FloatArray  # final at w = 0 (C + Q); -inf in padding
    b: FloatArray  # slope of final in w (P - Q); -inf in padding, so never steeper
    steepest: FloatArray  # (runs,) the steepest valid slope of each run
    # Bounds over valid agents of |P| + |Q| (how fast a final can move with w) and of
    # |C| + |P| + |Q| (the size of a final, for its rounding error).
    reach: float
    size: float
    # Each run's line on top at w = 1 if it leads every other line there by a clear
    # margin, else -1: once the walk reaches it, no steeper line crosses it before 1.
    last: IntArray
    scratch: _Scratch

    @classmethod
    @np.errstate(invalid="ignore")  # -inf * 0 in padding, on purpose
    def build(cls, lines: Lines) -> BySlot:
        n, slots = lines.c.shape
        a = np.empty((slots, n))
        np.add(lines.c.T, lines.q.T, out=a)
        b = np.empty((slots, n))
        np.subtract(lines.p.T, lines.q.T, out=b)
        b[~lines.arrays.valid.T] = -np.inf
        scratch = _Scratch((slots, n))
        with scratch.lend() as (work, _, mask):
            # P and Q are 0 in padding; C is -inf there, which C + C * 0 turns into
            # nan, which fmax / fmin skip.
            reach = _largest(lines.p) + _largest(lines.q)
            c = work.reshape(lines.c.shape)
            np.multiply(lines.c, 0.0, out=c)
            np.add(lines.c, c, out=c)
            size = reach + _largest(c)
            # Finals at w = 1. A lead of more than 1e-12 * (1 + size) is far beyond
            # the rounding of the walk's crossings, which then all come out >= 1.
            end = np.add(a, b, out=work)
            top = end.max(axis=0)
            last = first_true(np.equal(end, top, out=mask))
            end.ravel()[last * n + np.arange(n)] = -np.inf
            last[~(top - end.max(axis=0) > 1e-12 * (1.0 + size))] = -1
        return cls(
            lines.c,
            lines.p,
            lines.q,
            lines.arrays.preferred,
            a,
            b,
            b.max(axis=0),
            reach,
            size,
            last,
            scratch,
        )

    def agreements(self, weights: Sequence[float], counts: IntArray | None = None) -> list[float]:
        """`[lines.outcome(w).agreement or 0.0 for w in weights]`, sharing the work.

        A run whose selected agent leads (quantised, as the tie rule compares) by more
        than any final can move between the weights keeps it at all of them; only
        the other runs are selected again at each weight.

        `counts` (per run, how many times it counts: a bootstrap resample) weights the
        runs: the agreement of the runs repeated that many times, exactly.
        """

        def tally(agree: BoolArray, rows: IntArray | None = None) -> int:
            if counts is None:
                return int(agree.sum())
            return int(np.dot(agree, counts if rows is None else counts[rows]))

        preferred = self.preferred
        marked_runs = tally(preferred >= 0)
        if not marked_runs:
            return [0.0] * len(weights)
        first = weights[0]
        agree, lead = self.select(first, lead=len(weights) > 1)
        agreeing = [tally(agree)]
        if len(weights) == 1:
            return [agreeing[0] / marked_runs]
        unsure = np.flatnonzero(~(lead > self.threshold(weights, first)))
        sure = agreeing[0] - tally(agree[unsure], unsure)
        for chosen in self.reselect(unsure, weights[1:]):
            agreeing.append(sure + tally(chosen == preferred[unsure], unsure))
        return [count / marked_runs for count in agreeing]

    def select(self, technical: float, lead: bool = True) -> tuple[BoolArray, FloatArray]:
        """Whether each run's selected agent at `technical` is its preferred one (an
        unmarked run never agrees), and (if `lead`) by how much, quantised, it leads
        the runner-up (inf for a single agent)."""
        n = self.preferred.size
        with self.scratch.lend() as (key, work, mask):
            # The keys in the arrays' (runs, slots) layout, then transposed.
            by_run = work.reshape(self.c.shape)
            _keys(self.c, self.p, self.q, technical, by_run, key.reshape(self.c.shape))
            np.copyto(key, by_run.T)
            top = key.max(axis=0)
            selected = first_true(np.equal(key, top, out=mask))
            # An unmarked run's preferred slot is -1: it never agrees.
            agree = selected == self.preferred
            if not lead:
                return agree, np.zeros(0)
            key.ravel()[selected * n + np.arange(n)] = -np.inf
            leads: FloatArray = top - key.max(axis=0)
        return agree, leads

    def threshold(self, weights: Sequence[float], anchor: float) -> float:
        """The lead (quantised) above which a run selected at `anchor` keeps its agent
        at every one of `weights`: twice how far a key can move from `anchor` (the
        weight change, the rounding of final, and rint's half unit), plus one."""
        spread = max(abs(w - anchor) for w in weights)
        move = TIE_SCALE * (self.reach * spread + 1e-14 * self.size) + 1.0
        return 2.0 * move + 1.0

    def reselect(self, rows: IntArray, weights: Sequence[float]) -> Iterator[IntArray]:
        """The selected slot of each of `rows` at each of `weights`, in turn."""
        c, p, q = self.c[rows], self.p[rows], self.q[rows]
        for w in weights:
            keys = _keys(c, p, q, w, np.empty(c.shape), np.empty(c.shape))
            chosen: IntArray = np.argmax(keys, axis=1)
            yield chosen


def _largest(values: FloatArray) -> float:
    """The largest |value|, skipping nan (0 if there is none)."""
    if values.size == 0:
        return 0.0
    high, low = float(np.fmax.reduce(values, axis=None)), float(np.fmin.reduce(values, axis=None))
    return 0.0 if high != high else max(high, -low)


def _keys(
    c: FloatArray, p: FloatArray, q: FloatArray, technical: float, out: FloatArray, work: FloatArray
) -> FloatArray:
    """rint(final * TIE_SCALE) at `technical`, into `out`: `Lines.outcome`'s arithmetic,
    so the same bits and the same selection, ties included."""
    np.multiply(p, technical, out=out)
    np.add(c, out, out=out)
    np.multiply(q, 1.0 - np.asarray(technical), out=work)
    out += work
    np.multiply(out, TIE_SCALE, out=out)
    return np.rint(out, out=out)


# The first set slot of each packed bit pattern of up to 8 slots (0 when none is set).
_FIRST_SET = np.array(
    [(code & -code).bit_length() - 1 if code else 0 for code in range(256)], dtype=np.int64
)
_SLOT_BITS = (1 << np.arange(8, dtype=np.uint8))[:, None]


def first_true(mask: BoolArray) -> IntArray:
    """`np.argmax(mask, axis=0)` of a (slots, runs) mask: the first true slot, else 0.

    argmax over a short axis 0 costs per run; up to 8 slots, the slots are packed
    into one byte per run and the first set bit read off a table instead.
    """
    if mask.shape[0] > len(_SLOT_BITS):
        wide: IntArray = np.argmax(mask, axis=0)
        return wide
    packed = (mask.view(np.uint8) * _SLOT_BITS[: mask.shape[0]]).sum(axis=0, dtype=np.uint8)
    result: IntArray = _FIRST_SET[packed]
    return result


def infinities(margin: FloatArray) -> FloatArray:
    """In place: +inf where `margin` >= 0 (x - y >= 0 exactly when x >= y), else -inf.

    fmax / fmin with it select without a branch, where np.where and masked copies
    cost several times more on unpredictable masks.
    """
    result: FloatArray = np.copysign(np.inf, margin, out=margin)
    return result


class Stepper:
    """Agreement and mean regret of every run of a `Lines` at new weights: the
    sliders' step, with no (runs, slots) temporaries.

    The coefficients are kept transposed to (slots, runs), so each operation is one
    pass over contiguous vectors and the selection a reduction over the short slot
    axis, and every step computes into the same kept buffers (`_Scratch`). The float
    operations are `Lines.outcome`'s and `Lines.outcome3`'s, in the same order, so
    the picks, agreement and mean regret are the same bits as `Lines.outcome_under`.
    """

    def __init__(self, lines: Lines) -> None:
        n, slots = lines.c.shape
        self.c, self.p, self.q, self.qp, self.qs = (
            np.ascontiguousarray(x.T) for x in (lines.c, lines.p, lines.q, lines.qp, lines.qs)
        )
        preferred = lines.arrays.preferred
        self.preferred = preferred
        self.marked: BoolArray = preferred >= 0
        self.marked_runs = int(self.marked.sum())
        self.all_marked = self.marked_runs == n
        self.runs = np.arange(n)
        # Where each run's preferred final sits in the flat (slots, runs) buffer.
        self.preferred_at = np.where(self.marked, preferred, 0) * n + self.runs
        self.scratch = _Scratch((slots, n))

    def figures(
        self,
        technical: float | FloatArray,
        proactivity: float | FloatArray,
        personalization: float | FloatArray,
    ) -> tuple[int, float | None, float | None]:
        """(marked runs, mean regret, agreement) at the weights, scalars or one per run;
        a run whose proactivity and personalization weights are equal is scored in the
        pair form (interaction = that weight), any other with three weights."""
        n = self.runs.size
        if not self.marked_runs:
            return 0, None, None
        three: BoolArray | bool = np.not_equal(proactivity, personalization)
        with self.scratch.lend() as (final, work, mask):
            if not np.any(three):
                self._pair(technical, proactivity, final, work)
            elif np.all(three):
                self._three(technical, proactivity, personalization, final, work)
            else:
                self._pair(technical, proactivity, final, work)
                other = np.empty_like(final)
                self._three(technical, proactivity, personalization, other, work)
                np.copyto(final, other, where=three)
            # The ranking's tie rule, as `Lines.outcome` applies it.
            np.multiply(final, TIE_SCALE, out=work)
            np.rint(work, out=work)
            selected = first_true(np.equal(work, work.max(axis=0), out=mask))
            flat = final.ravel()
            regret = flat[selected * n + self.runs]
            regret -= flat[self.preferred_at]
        if not self.all_marked:
            regret[~self.marked] = 0.0  # as nansum skips the unmarked runs' nan
        agree = int(np.count_nonzero(selected == self.preferred))
        total = float(np.sum(regret))
        return self.marked_runs, total / self.marked_runs, agree / self.marked_runs

    def _pair(self, wt: Any, wi: Any, final: FloatArray, work: FloatArray) -> None:
        np.multiply(self.p, wt, out=final)
        np.add(self.c, final, out=final)
        np.multiply(self.q, wi, out=work)
        final += work

    def _three(self, wt: Any, wp: Any, ws: Any, final: FloatArray, work: FloatArray) -> None:
        np.multiply(self.p, wt, out=final)
        np.add(self.c, final, out=final)
        np.multiply(self.qp, wp, out=work)
        final += work
        np.multiply(self.qs, ws, out=work)
        final += work
