"""Keypoint metrics: the mean distance in pixels between predicted and true points."""
from __future__ import annotations

import torch

from ..errors import UsageError
from .base import StreamingMetric, count_tensor


class MeanDistance(StreamingMetric):
    """Mean Euclidean distance, in pixels of an image of `size` (H, W), between predicted and true
    points given as (N, 2n) coordinates scaled to [-1, 1] (x, y, x, y, ...; see
    ``encodings.KeypointScaling``). No torchmetrics class computes this: the tests check it
    against a direct computation."""

    _states = ("total", "count")
    higher_is_better = False  # a distance

    def __init__(self, size):
        self.size = tuple(int(s) for s in size)
        if len(self.size) != 2 or min(self.size) < 1:
            raise UsageError(f"MeanDistance: size must be (height, width), got {size!r}")
        super().__init__()

    def _reset_states(self):
        self.total = torch.zeros((), dtype=torch.float64, device=self.device)
        self.count = torch.zeros((), dtype=torch.long, device=self.device)

    def _counts(self, preds, target):
        if preds.shape != target.shape or preds.ndim != 2 or preds.shape[1] % 2:
            raise UsageError(f"MeanDistance: preds {tuple(preds.shape)} and target {tuple(target.shape)} "
                             f"must both be (N, 2 * points)")
        d = point_distances(preds, target, self.size)
        return d.sum(), count_tensor(d.numel(), preds.device)

    def _reduce(self, total, count):
        return (total / count.clamp(min=1)).float()

    def __repr__(self):
        return f"MeanDistance(size={self.size})"


def point_distances(preds, target, size) -> torch.Tensor:
    """(N, n) distances in pixels between (N, 2n) scaled points (half a side per unit of scale)."""
    h, w = size
    d = (preds.double() - target.double()).reshape(len(preds), -1, 2)
    # scaled by Python numbers: a scale tensor built per batch would be a host-to-device copy (a sync)
    d = torch.stack((d[..., 0] * (w / 2.0), d[..., 1] * (h / 2.0)), -1)
    return d.pow(2).sum(-1).sqrt()
