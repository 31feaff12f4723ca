"""Evaluate the effort classifier on the labelled sets in tests/data/.

    python benchmarks/classifier_eval.py [--misses] [FILE...]

Prints accuracy, per-class precision / recall / F1 and macro F1 for each file
(default: the development set and the held-out set), and with --misses every
question the classifier gets wrong.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from ppp_tui.core.effort import classify
from ppp_tui.core.evaluation import evaluate
from ppp_tui.core.model import Effort

DATA = Path(__file__).resolve().parent.parent / "tests" / "data"
DEFAULT = [DATA / "effort_labelled.jsonl", DATA / "effort_holdout.jsonl"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="*", type=Path, default=DEFAULT)
    parser.add_argument("--misses", action="store_true", help="list misclassified questions")
    args = parser.parse_args()
    for path in args.files:
        rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
        expected = [Effort(row["effort"]) for row in rows]
        predicted = [classify(row["question"], row.get("context")).effort for row in rows]
        result = evaluate(expected, predicted)
        print(f"{path.name}: {result.total} questions")
        print(f"  accuracy {result.accuracy:.3f}   macro F1 {result.macro_f1:.3f}")
        for level, m in result.per_class.items():
            print(
                f"  {level.value:<7} precision {m.precision:.3f}  recall {m.recall:.3f}"
                f"  F1 {m.f1:.3f}  (n={m.support})"
            )
        print("  confusion (rows expected, columns predicted: low medium high)")
        for e in Effort:
            counts = "  ".join(f"{result.confusion[e, p]:>4}" for p in Effort)
            print(f"  {e.value:<7} {counts}")
        if args.misses:
            for row, got in zip(rows, predicted, strict=True):
                if got.value != row["effort"]:
                    print(f"    [{row['effort']} -> {got.value}] {row['question']}")
                    print(f"        task: {row.get('context', '')}")
        print()


if __name__ == "__main__":
    main()
