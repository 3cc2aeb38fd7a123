"""Classification metrics: accuracy of one label, accuracy and F1 of several labels."""
from __future__ import annotations

import torch

from ..errors import UsageError
from .base import StreamingMetric, count_tensor, outside_classes, safe_divide


class MulticlassAccuracy(StreamingMetric):
    """Fraction of samples whose top class is the target (torchmetrics' ``average="micro"``).

    ``preds``: (N, C) scores (logits or probabilities) or (N,) class indices; ``target``: (N,) indices.
    """

    _states = ("correct", "total")
    higher_is_better = True

    def __init__(self, num_classes: int):
        if num_classes < 2:
            raise UsageError(f"MulticlassAccuracy: num_classes must be >= 2 (as torchmetrics), got {num_classes}")
        self.num_classes = int(num_classes)
        super().__init__()

    def _counts(self, preds, target):
        if preds.is_floating_point() and preds.ndim == target.ndim + 1:
            if preds.shape[1] != self.num_classes:
                raise UsageError(f"MulticlassAccuracy: preds has {preds.shape[1]} classes, "
                                 f"expected num_classes={self.num_classes}")
            preds = preds.argmax(1)
        if preds.shape != target.shape or target.ndim != 1:
            raise UsageError(f"MulticlassAccuracy: preds {tuple(preds.shape)} and target {tuple(target.shape)}: "
                             f"expected (N, {self.num_classes}) scores or (N,) indices, and (N,) targets")
        target = target.long()
        return (preds.long() == target).sum(), count_tensor(target.numel(), target.device)

    def _checked_counts(self, preds, target):
        counts = self._counts(preds, target)
        return counts, outside_classes(target, self.num_classes)

    @property
    def _invalid_message(self):
        return f"target holds class indices outside 0..{self.num_classes - 1}"

    def _reduce(self, correct, total):
        return safe_divide(correct, total)

    def __repr__(self):
        return f"MulticlassAccuracy(num_classes={self.num_classes})"


class MultilabelStats(StreamingMetric):
    """Per-label true/false positives/negatives at ``threshold``: the counts of the multi-label metrics.

    ``preds``: (N, L) probabilities, or logits (a sigmoid is applied when any value lies outside
    [0, 1], as torchmetrics does); ``target``: (N, L) of 0/1.
    """

    _states = ("tp", "fp", "tn", "fn")
    higher_is_better = True  # accuracy and F1

    def __init__(self, num_labels: int, threshold: float = 0.5):
        if num_labels < 2:
            raise UsageError(f"{type(self).__name__}: num_labels must be >= 2 (as torchmetrics), got {num_labels}")
        self.num_labels, self.threshold = int(num_labels), float(threshold)
        super().__init__()

    def _state_shape(self):
        return (self.num_labels,)

    def _counts(self, preds, target):
        if preds.shape != target.shape or preds.ndim != 2 or preds.shape[1] != self.num_labels:
            raise UsageError(f"{type(self).__name__}: preds {tuple(preds.shape)} and target "
                             f"{tuple(target.shape)} must both be (N, {self.num_labels})")
        if preds.is_floating_point():  # logits -> probabilities, without a host sync
            preds = torch.where(((preds < 0) | (preds > 1)).any(), preds.sigmoid(), preds) > self.threshold
        pred, true = preds.bool(), target.bool()
        return ((pred & true).sum(0), (pred & ~true).sum(0), (~pred & ~true).sum(0), (~pred & true).sum(0))

    def __repr__(self):
        return f"{type(self).__name__}(num_labels={self.num_labels}, threshold={self.threshold})"


class MultilabelAccuracy(MultilabelStats):
    """Fraction of (sample, label) entries predicted right (torchmetrics' ``average="micro"``)."""

    def _reduce(self, tp, fp, tn, fn):
        return safe_divide((tp + tn).sum(), (tp + fp + tn + fn).sum())


class MultilabelF1Score(MultilabelStats):
    """F1 per label, averaged over labels (torchmetrics' ``average="macro"``; 0 where undefined)."""

    def _reduce(self, tp, fp, tn, fn):
        return (safe_divide(2 * tp, 2 * tp + fp + fn) / self.num_labels).sum()  # torchmetrics' order of operations
