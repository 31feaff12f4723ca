"""Classifier evaluation: accuracy, per-class precision and recall, macro F1."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .model import Effort


@dataclass(frozen=True)
class ClassMetrics:
    precision: float
    recall: float
    f1: float
    support: int


@dataclass(frozen=True)
class Evaluation:
    total: int
    accuracy: float
    per_class: dict[Effort, ClassMetrics]
    confusion: dict[tuple[Effort, Effort], int]  # (expected, predicted) -> count

    @property
    def macro_f1(self) -> float:
        return sum(m.f1 for m in self.per_class.values()) / len(self.per_class)


def evaluate(expected: Sequence[Effort], predicted: Sequence[Effort]) -> Evaluation:
    if len(expected) != len(predicted):
        raise ValueError("expected and predicted labels differ in length")
    confusion = {(e, p): 0 for e in Effort for p in Effort}
    for e, p in zip(expected, predicted, strict=True):
        confusion[e, p] += 1
    per_class = {}
    for level in Effort:
        hits = confusion[level, level]
        said = sum(confusion[e, level] for e in Effort)
        support = sum(confusion[level, p] for p in Effort)
        precision = hits / said if said else 0.0
        recall = hits / support if support else 0.0
        f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
        per_class[level] = ClassMetrics(precision, recall, f1, support)
    total = len(expected)
    correct = sum(confusion[level, level] for level in Effort)
    return Evaluation(total, correct / total if total else 0.0, per_class, confusion)
