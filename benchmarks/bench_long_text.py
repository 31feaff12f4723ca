"""The effort classifier and question extraction on very long texts: linear time.

    python benchmarks/bench_long_text.py [--sizes 1,2,4] [--shape NAME ...]

Each shape is one short piece of question text repeated to 1, 2 and 4 MB (by
default) and classified once (`classify`, `classify_effort`) and extracted once
(`extract_questions`). The ratio of each time to the first size's is printed
beside it: about 2 and 4 for linear time, 4 and 16 for quadratic. Timings are the
best of `--repeat` tries (default 1; the caches are bypassed, so every try works).
A quick check that it works: --sizes 0.01,0.02.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

from ppp_tui.core.effort import classifier, classify, classify_effort
from ppp_tui.core.extraction import extract_questions

# Pieces that once made a step quadratic: a split or a lead-in at every few words,
# an option list that never closes, sentences and their abbreviations.
SHAPES = {
    "plain": "Should we use PostgreSQL or MySQL for the main database? ",
    "conjoined": "which one and ",
    "sentences": "Why? ",
    "semicolons": "a; ",
    "lead-ins": "two quick ones: which ",
    "comma-leads": "so, which db ",
    "dash-leads": "quick one - what db ",
    "options": "(a) keep it ",
    "open-options": "Default branch name? a) main ",
    "abbreviations": "e.g. This one ",
    "mixed": "Hmm, which one: a or b; also what about c? And should I? ",
    # One list, one nest of lists, titles and options: the blocks a text question reads.
    "list-items": "- Edge cases: what if the file moved?\n",
    "nested-lists": "It might be:\n  - what if?\n    - and then?\n",
    "titles": "## Is it safe?\n**Is this a problem?**\nIn most cases, no.\n",
    "option-lists": "Would you like me to:\n1. Revise it?\n",
    "answered": "Is it set at init? Yes. ",
}

TASK = "Use PostgreSQL 16 with a line length of 100"


def _timed(function: Callable[[str], object], text: str, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        function(text)
        best = min(best, time.perf_counter() - start)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1,2,4", help="sizes in MB, comma-separated")
    parser.add_argument("--shape", action="append", choices=sorted(SHAPES), help="only these")
    parser.add_argument("--repeat", type=int, default=1)
    args = parser.parse_args()
    sizes = [float(size) for size in args.sizes.split(",")]
    steps: dict[str, Callable[[str], object]] = {
        "classify": lambda text: classify.__wrapped__(text, TASK),
        "classify_effort": lambda text: (
            classifier._own_effort.cache_clear(),
            classify_effort.__wrapped__(text, TASK),
        ),
        "extract": extract_questions,
    }
    worst = 0.0
    for name in args.shape or SHAPES:
        piece = SHAPES[name]
        for step, function in steps.items():
            times = []
            for size in sizes:
                text = piece * max(1, int(size * 1_000_000 / len(piece))) + "?"
                times.append(_timed(function, text, args.repeat))
            ratios = [t / times[0] if times[0] else 0.0 for t in times]
            # How far from linear: the last ratio over the size ratio (1.0: linear).
            excess = ratios[-1] / (sizes[-1] / sizes[0])
            worst = max(worst, excess)
            cells = "  ".join(
                f"{size:g} MB {t:6.3f} s (x{r:4.1f})"
                for size, t, r in zip(sizes, times, ratios, strict=True)
            )
            print(f"{name:<14} {step:<16} {cells}", flush=True)
    print(f"worst: {worst:.2f} times the linear growth (1.00 is linear)")


if __name__ == "__main__":
    main()
