"""How a count reads: "1 run", "2 runs", "1,204 marked runs"."""

from __future__ import annotations


def counted(n: int, noun: str, plural: str | None = None) -> str:
    """`n` (with thousands separated) and `noun`, in the plural unless `n` is one."""
    return f"{n:,} {noun if n == 1 else plural or noun + 's'}"
