"""Segmentation metrics, per pixel: pixel accuracy and mean IoU from a streamed confusion matrix."""
from __future__ import annotations

import torch

from ..errors import UsageError
from .base import StreamingMetric, count_tensor, outside_classes, safe_divide


def pixel_classes(preds, target, num_classes: int, name: str):
    """(N, C, H, W) scores or (N, H, W) indices, and (N, H, W) targets -> flat predicted and true classes."""
    if preds.is_floating_point() and preds.ndim == target.ndim + 1:
        if preds.shape[1] != num_classes:
            raise UsageError(f"{name}: preds has {preds.shape[1]} classes, expected num_classes={num_classes}")
        preds = preds.argmax(1)
    if preds.shape != target.shape or target.ndim < 2:
        raise UsageError(f"{name}: preds {tuple(preds.shape)} and target {tuple(target.shape)}: expected "
                         f"(N, {num_classes}, H, W) scores or (N, H, W) indices, and (N, H, W) targets")
    return preds.long().reshape(-1), target.long().reshape(-1)


class _PerPixel(StreamingMetric):
    """Counts over the pixels' (predicted, true) classes; an index outside the classes, in the
    target or in preds given as indices, sets `invalid` (read at `compute`)."""

    def __init__(self, num_classes: int):
        if num_classes < 2:
            raise UsageError(f"{type(self).__name__}: num_classes must be >= 2, got {num_classes}")
        self.num_classes = int(num_classes)
        super().__init__()

    def _checked_counts(self, preds, target):
        pred, true = pixel_classes(preds, target, self.num_classes, type(self).__name__)
        return self._pixel_counts(pred, true), outside_classes(true, self.num_classes) | outside_classes(pred, self.num_classes)

    def _counts(self, preds, target):
        return self._checked_counts(preds, target)[0]

    @property
    def _invalid_message(self):
        return f"target (or preds given as indices) holds class indices outside 0..{self.num_classes - 1}"

    def _pixel_counts(self, pred, true):
        raise NotImplementedError


class PixelAccuracy(_PerPixel):
    """Fraction of pixels whose top class is the target's: torchmetrics' ``MulticlassAccuracy(
    num_classes, average="micro")`` on (N, C, H, W) scores and (N, H, W) targets."""

    _states = ("correct", "total")
    higher_is_better = True

    def _pixel_counts(self, pred, true):
        return (pred == true).sum(), count_tensor(true.numel(), true.device)

    def _reduce(self, correct, total):
        return safe_divide(correct, total)

    def __repr__(self):
        return f"PixelAccuracy(num_classes={self.num_classes})"


class MeanIoU(_PerPixel):
    """Intersection over union per class from a streamed confusion matrix, averaged over the
    classes that occur in the targets or the predictions (torchmetrics'
    ``MulticlassJaccardIndex(num_classes, average="macro")``: a class absent from both has no IoU
    and does not count). `per_class()` gives every class's IoU (0 where undefined)."""

    _states = ("confmat",)
    higher_is_better = True

    def _state_shape(self):
        return (self.num_classes, self.num_classes)

    def _pixel_counts(self, pred, true):
        # scatter_add_, not bincount: CUDA's bincount reads the indices' min and max on the host (a
        # sync per batch). Out-of-range indices (flagged, raised at compute) are clamped to stay in bounds.
        n = self.num_classes
        cells = (true * n + pred).clamp(0, n * n - 1)
        confmat = torch.zeros(n * n, dtype=torch.long, device=cells.device)
        return (confmat.scatter_add_(0, cells, torch.ones_like(cells)).reshape(n, n),)  # rows: target, cols: pred

    @staticmethod
    def _iou(confmat):
        confmat = confmat.float()
        num = torch.diag(confmat)
        return safe_divide(num, confmat.sum(0) + confmat.sum(1) - num)

    def _reduce(self, confmat):
        iou = self._iou(confmat)
        weights = torch.ones_like(iou)
        weights[confmat.sum(1) + confmat.sum(0) == 0] = 0.0
        return ((weights * iou) / weights.sum()).sum()  # torchmetrics' order of operations

    def per_class(self) -> torch.Tensor:
        """IoU of each class over everything seen since `reset` (0 for a class never seen)."""
        return self._iou(self.confmat)

    def __repr__(self):
        return f"MeanIoU(num_classes={self.num_classes})"
