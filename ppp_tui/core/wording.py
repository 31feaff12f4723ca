"""How a count reads: "1 run", "2 runs", "1,204 marked runs"."""

from __future__ import annotations


def counted(n: int, noun: str, plural: str | None = None) -> str:
    """`n` (with thousands separated) and `noun`, in the plural unless `n` is one."""
    return f"{n:,} {noun if n == 1 else plural or noun + 's'}"


def left_out(marks: int, where: str) -> str:
    """Marks an import could not merge, their run or agent not in the database `where`
    names: "1 mark left out, its run or agent not there"."""
    whose = "its" if marks == 1 else "their"
    return f"{counted(marks, 'mark')} left out, {whose} run or agent not in {where}"
