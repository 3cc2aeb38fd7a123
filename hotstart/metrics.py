"""The tasks' default metrics: streaming counts in one process, torchmetrics across processes.

Why not torchmetrics everywhere: ``import torchmetrics`` (1.9) imports ``matplotlib.pyplot``
and, when scipy is installed, ``scipy.signal`` (upstream Lightning-AI/torchmetrics#3457). On the
2-core CPU, after ``import torch, timm``, that costs 0.4-0.7 s without scipy and 1.2-1.5 s with
it, paid at the first validation: the time to the end of the first epoch on the FastAI.jl
start-up workload was 0.96x-1.18x a plain loop's with it, and 0.89x-0.99x in 5 of 6 rounds
without it (benchmarks/README.md). What torchmetrics adds over a sum and a count is
synchronisation across processes, so that is where it is used:

- one process: these classes. Each keeps integer counts on the metric's device and computes
  what the torchmetrics class of the same name computes, in the same float32 operations
  (``torchmetric()`` builds that class; ``tests/test_metrics.py`` checks both agree exactly on
  random inputs, edge cases included). No host sync per batch: the target range check is a flag
  kept on the device, read by `compute()` (which raises then), and `read_on_host` reads every
  metric's value and flag, and the loss sum, in one transfer per validation phase. Differences
  only where the learner never goes: ours raise on targets outside the classes at `compute()`
  (torchmetrics raises in `update`, at the price of a sync per batch; ``metric(preds, target)``
  raises at once) and take an empty batch; on CPU, torchmetrics treats a whole multi-label batch
  as logits when one prediction is NaN, ours only when one lies outside [0, 1];
- several processes (``world_size > 1``), the ``Metrics`` callback swaps each for
  ``metric.torchmetric()``, which syncs its states across processes. Lightning Fabric has
  imported torchmetrics by then, so the swap costs nothing.

Regression metrics (`MeanSquaredError`, `R2Score`) keep float32 sums instead of counts, added
in torchmetrics' order, so they agree exactly too; `Denormalized` shows them in the target's units.

A user's own ``torchmetrics.Metric`` objects (``tasklearner(metrics={...})``) are used as given.
Every metric here has the torchmetrics protocol: ``update(preds, target)``, ``compute()``,
``reset()``, ``to(device)`` and ``metric(preds, target)`` (updates, returns the batch's value).
"""
from __future__ import annotations

import torch

from .errors import UsageError

__all__ = ["MulticlassAccuracy", "MultilabelAccuracy", "MultilabelF1Score", "StreamingMetric", "MeanSquaredError",
           "R2Score", "Denormalized", "PixelAccuracy", "MeanIoU", "MeanDistance", "point_distances", "read_on_host"]


class StreamingMetric:
    """Integer counts (named in ``_states``) accumulated batch by batch, reduced by ``compute``.

    Inputs that a batch's counts cannot hold (targets outside the classes) set ``invalid``, a
    flag on the metric's device, instead of being read on the host per batch; `compute()` raises
    the metric's error (`_invalid_message`) when it is set."""

    _states: tuple[str, ...] = ()
    _invalid_message = "the targets hold values this metric cannot count"

    def __init__(self):
        self.device = torch.device("cpu")
        self.reset()

    def reset(self):
        self._reset_states()
        self.invalid = torch.zeros((), dtype=torch.bool, device=self.device)

    def _reset_states(self):
        for name in self._states:
            setattr(self, name, torch.zeros(self._state_shape(), dtype=torch.long, device=self.device))

    def to(self, device):
        self.device = torch.device(device)
        for name in (*self._states, "invalid"):
            setattr(self, name, getattr(self, name).to(self.device))
        return self

    def update(self, preds, target):
        counts, invalid = self._checked_counts(preds, target)
        self._add(counts)
        self.invalid = self.invalid | invalid

    def compute(self) -> torch.Tensor:
        self.raise_if_invalid(self.invalid)
        return self.compute_unchecked()

    def compute_unchecked(self) -> torch.Tensor:
        """`compute` without reading the `invalid` flag (no host sync): for a caller that reads the
        flag with the value, as `read_on_host` does."""
        return self._reduce(*(getattr(self, name) for name in self._states))

    def raise_if_invalid(self, invalid) -> None:
        """Raise this metric's UsageError if `invalid` (a flag, a tensor: reading it is a sync) is set."""
        if bool(invalid):
            raise UsageError(f"{type(self).__name__}: {self._invalid_message}")

    def __call__(self, preds, target) -> torch.Tensor:
        """Update with this batch and return the batch's own value (as torchmetrics' forward);
        bad targets raise here, at once (the caller reads the value anyway)."""
        counts, invalid = self._checked_counts(preds, target)
        self.raise_if_invalid(invalid)
        self._add(counts)
        return self._reduce(*counts)

    def _checked_counts(self, preds, target):
        """(this batch's counts, a device flag set when they cannot be trusted)."""
        return self._counts(preds, target), torch.zeros((), dtype=torch.bool, device=target.device)

    def _add(self, counts):
        for name, value in zip(self._states, counts):
            getattr(self, name).add_(value)

    def torchmetric(self):
        """The equivalent ``torchmetrics.Metric`` (it syncs across processes)."""
        raise NotImplementedError

    # subclasses: state shape, per-batch counts, reduction
    def _state_shape(self):
        return ()

    def _counts(self, preds, target):
        raise NotImplementedError

    def _reduce(self, *counts):
        raise NotImplementedError


def _count(n: int, device) -> torch.Tensor:
    """A count as a tensor on `device`, written by a fill kernel: ``torch.tensor(n, device=cuda)``
    copies from the host and waits for the stream (a sync per batch)."""
    return torch.full((), n, dtype=torch.long, device=device)


def _outside(indices: torch.Tensor, num_classes: int) -> torch.Tensor:
    """A device flag: does any index lie outside 0..num_classes-1 (no host read)."""
    return ((indices < 0) | (indices >= num_classes)).any()


def read_on_host(metrics: dict, *sums: torch.Tensor) -> tuple[dict[str, float], list[float]]:
    """Every metric's value as a float, and each of `sums` (tensors on the metrics' device), read
    back to the host in one transfer: one sync per validation phase on a GPU, where reading each
    value and each metric's `invalid` flag apart would take one sync each.

    A metric of this module (or `Denormalized` around one) is computed without its check, and its
    flag travels with the values; a set flag raises the metric's error once the values are read.
    Any other metric (a user's ``torchmetrics.Metric``) is computed as it is, by `compute()`."""
    parts, at, flagged = [], {}, []  # at: where each metric's value lies in `parts`
    for name, m in metrics.items():
        streaming = _streaming(m)
        value = m.compute() if streaming is None else streaming.compute_unchecked()
        if not torch.is_tensor(value) or value.numel() != 1:
            value = torch.as_tensor(float(value))  # a value that is not one number fails here, as float() would
        at[name] = len(parts)
        parts.append(value.reshape(1))
        if streaming is not None:
            flagged.append((streaming, len(parts)))
            parts.append(streaming.invalid.reshape(1))
    first_sum = len(parts)
    parts += [torch.as_tensor(s).reshape(1) for s in sums]
    if not parts:
        return {}, []
    device = next((p.device for p in parts if p.device.type != "cpu"), torch.device("cpu"))
    dtype = torch.float32 if device.type == "mps" else torch.float64  # MPS has no float64; values are float32
    host = torch.cat([p.to(device=device, dtype=dtype) for p in parts]).tolist()
    for streaming, flag in flagged:
        streaming.raise_if_invalid(host[flag])
    return {name: host[i] for name, i in at.items()}, host[first_sum:]


def _streaming(metric) -> "StreamingMetric | None":
    """The StreamingMetric that computes `metric` (itself, or inside Denormalized), else None."""
    while isinstance(metric, Denormalized):
        metric = metric.metric
    return metric if isinstance(metric, StreamingMetric) else None


def _safe_divide(num: torch.Tensor, den: torch.Tensor) -> torch.Tensor:
    """num / den in float32 (as torchmetrics; MPS has no float64), 0 where den is 0 (``zero_division=0``)."""
    num, den = num.float(), den.float()
    return torch.where(den == 0, torch.zeros_like(num), num / den.clamp(min=1))


class MulticlassAccuracy(StreamingMetric):
    """Fraction of samples whose top class is the target (torchmetrics' ``average="micro"``).

    ``preds``: (N, C) scores (logits or probabilities) or (N,) class indices; ``target``: (N,) indices.
    """

    _states = ("correct", "total")

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
        return (preds.long() == target).sum(), _count(target.numel(), target.device)

    def _checked_counts(self, preds, target):
        counts = self._counts(preds, target)
        return counts, _outside(target, self.num_classes)

    @property
    def _invalid_message(self):
        return f"target holds class indices outside 0..{self.num_classes - 1}"

    def _reduce(self, correct, total):
        return _safe_divide(correct, total)

    def torchmetric(self):
        from torchmetrics.classification import MulticlassAccuracy as TM

        return TM(num_classes=self.num_classes, average="micro")

    def __repr__(self):
        return f"MulticlassAccuracy(num_classes={self.num_classes})"


class _MultilabelStats(StreamingMetric):
    """Per-label true/false positives/negatives at ``threshold``.

    ``preds``: (N, L) probabilities, or logits (a sigmoid is applied when any value lies outside
    [0, 1], as torchmetrics does); ``target``: (N, L) of 0/1.
    """

    _states = ("tp", "fp", "tn", "fn")

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


class MultilabelAccuracy(_MultilabelStats):
    """Fraction of (sample, label) entries predicted right (torchmetrics' ``average="micro"``)."""

    def _reduce(self, tp, fp, tn, fn):
        return _safe_divide((tp + tn).sum(), (tp + fp + tn + fn).sum())

    def torchmetric(self):
        from torchmetrics.classification import MultilabelAccuracy as TM

        return TM(num_labels=self.num_labels, threshold=self.threshold, average="micro")


class MultilabelF1Score(_MultilabelStats):
    """F1 per label, averaged over labels (torchmetrics' ``average="macro"``; 0 where undefined)."""

    def _reduce(self, tp, fp, tn, fn):
        return (_safe_divide(2 * tp, 2 * tp + fp + fn) / self.num_labels).sum()  # torchmetrics' order of operations

    def torchmetric(self):
        from torchmetrics.classification import MultilabelF1Score as TM

        return TM(num_labels=self.num_labels, threshold=self.threshold, average="macro")


# --- regression: float sums instead of integer counts ------------------------------------------------

class _FloatSums(StreamingMetric):
    """Float32 sums (and an integer count, ``total``), added out of place as torchmetrics does, so
    states take the shape of the first batch's sums."""

    def _reset_states(self):
        for name in self._states:
            dtype = torch.long if name == "total" else torch.float32
            setattr(self, name, torch.zeros(self._state_shape(), dtype=dtype, device=self.device))

    def _add(self, counts):
        for name, value in zip(self._states, counts):
            setattr(self, name, getattr(self, name) + value)

    def _check(self, preds, target):
        if preds.shape != target.shape:
            raise UsageError(f"{type(self).__name__}: preds {tuple(preds.shape)} and target {tuple(target.shape)} "
                             "must have the same shape")


class MeanSquaredError(_FloatSums):
    """Mean squared error, or its root with ``squared=False`` (torchmetrics' ``MeanSquaredError``).

    With ``num_outputs=1`` every entry counts alike (inputs are flattened); otherwise ``(N, num_outputs)``
    inputs give one value per output.
    """

    _states = ("sum_squared_error", "total")

    def __init__(self, squared: bool = True, num_outputs: int = 1):
        self.squared, self.num_outputs = bool(squared), int(num_outputs)
        super().__init__()

    def _state_shape(self):
        return ()

    def _reset_states(self):
        super()._reset_states()
        self.sum_squared_error = torch.zeros(self.num_outputs, device=self.device)

    def _counts(self, preds, target):
        self._check(preds, target)
        if self.num_outputs == 1:
            preds, target = preds.reshape(-1), target.reshape(-1)
        diff = preds - target
        return torch.sum(diff * diff, dim=0), _count(target.shape[0], target.device)

    def _reduce(self, sum_squared_error, total):
        mse = sum_squared_error / total
        out = mse if self.squared else torch.sqrt(mse)
        return out.squeeze() if out.numel() == 1 else out

    def torchmetric(self):
        from torchmetrics import MeanSquaredError as TM

        return TM(squared=self.squared, num_outputs=self.num_outputs)

    def __repr__(self):
        return f"MeanSquaredError(squared={self.squared}, num_outputs={self.num_outputs})"


class R2Score(_FloatSums):
    """Coefficient of determination, averaged uniformly over outputs (torchmetrics' ``R2Score``).

    ``preds`` and ``target``: (N,) or (N, outputs). One difference: with fewer than two samples,
    where torchmetrics raises, this returns NaN (a one-row validation set must not stop a fit).
    """

    _states = ("sum_squared_error", "sum_error", "residual", "total")

    def _counts(self, preds, target):
        self._check(preds, target)
        if preds.ndim > 2:
            raise UsageError(f"R2Score: expected 1-D or 2-D preds and target, got {tuple(preds.shape)}")
        residual = target - preds
        return (torch.sum(target * target, dim=0), torch.sum(target, dim=0), torch.sum(residual * residual, dim=0),
                _count(target.size(0), target.device))

    def _reduce(self, sum_squared_obs, sum_obs, rss, total):
        # torch.where, not masked assignment or `if int(total) < 2`: no host sync (same values)
        mean_obs = sum_obs / total
        tss = sum_squared_obs - sum_obs * mean_obs
        cond_rss = ~torch.isclose(rss, torch.zeros_like(rss), atol=1e-4)  # torchmetrics' near-constant rules
        cond_tss = ~torch.isclose(tss, torch.zeros_like(tss), atol=1e-4)
        cond = cond_rss & cond_tss
        raw = torch.where(cond, 1 - rss / tss, torch.ones_like(rss))
        raw = torch.where(cond_rss & ~cond_tss, torch.zeros_like(raw), raw)
        r2 = torch.mean(raw)
        return torch.where(total < 2, torch.full_like(r2, float("nan")), r2)

    def torchmetric(self):
        from torchmetrics import R2Score as TM

        return TM()

    def __repr__(self):
        return "R2Score()"


class Denormalized:
    """A metric that sees predictions and targets in their own units, ``x * std + mean``.

    Regression tasks train on normalized targets; an RMSE in grams means more than one in
    standard deviations. With `output` = i, the metric sees only output i of (N, outputs) inputs
    (one RMSE per target column: grams and millimetres do not average). `torchmetric()` wraps the
    inner metric's torchmetrics twin in ``torchmetrics.wrappers.LambdaInputTransformer`` with the
    same transform.
    """

    def __init__(self, metric, mean, std, output: int | None = None):
        self.metric = metric
        self.mean = [float(m) for m in mean]
        self.std = [float(s) for s in std]
        self.output = None if output is None else int(output)
        self._on_device = None  # ((dtype, device), mean, std) as tensors

    def _units(self, x):
        if self.output is not None:
            return x[:, self.output] * self.std[self.output] + self.mean[self.output]
        key = (x.dtype, x.device)
        if self._on_device is None or self._on_device[0] != key:  # copied to the device once, not per batch
            self._on_device = (key, torch.tensor(self.mean, dtype=x.dtype, device=x.device),
                               torch.tensor(self.std, dtype=x.dtype, device=x.device))
        _, mean, std = self._on_device
        if x.ndim == 1 and len(self.mean) == 1:
            return x * std[0] + mean[0]
        return x * std + mean

    def update(self, preds, target):
        self.metric.update(self._units(preds), self._units(target))

    def compute(self):
        return self.metric.compute()

    def reset(self):
        self.metric.reset()

    def to(self, device):
        self.metric = self.metric.to(device)
        return self

    def __call__(self, preds, target):
        return self.metric(self._units(preds), self._units(target))

    def torchmetric(self):
        from torchmetrics.wrappers import LambdaInputTransformer

        return LambdaInputTransformer(self.metric.torchmetric(), transform_pred=self._units,
                                      transform_target=self._units)

    def __repr__(self):
        out = "" if self.output is None else f", output={self.output}"
        return f"Denormalized({self.metric!r}, mean={self.mean}, std={self.std}{out})"


# --- dense and spatial metrics: segmentation (per pixel) and keypoints --------------------------

def _pixel_classes(preds, target, num_classes: int, name: str):
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
        pred, true = _pixel_classes(preds, target, self.num_classes, type(self).__name__)
        return self._pixel_counts(pred, true), _outside(true, self.num_classes) | _outside(pred, self.num_classes)

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

    def _pixel_counts(self, pred, true):
        return (pred == true).sum(), _count(true.numel(), true.device)

    def _reduce(self, correct, total):
        return _safe_divide(correct, total)

    def torchmetric(self):
        from torchmetrics.classification import MulticlassAccuracy as TM

        return TM(num_classes=self.num_classes, average="micro")

    def __repr__(self):
        return f"PixelAccuracy(num_classes={self.num_classes})"


class MeanIoU(_PerPixel):
    """Intersection over union per class from a streamed confusion matrix, averaged over the
    classes that occur in the targets or the predictions (torchmetrics'
    ``MulticlassJaccardIndex(num_classes, average="macro")``: a class absent from both has no IoU
    and does not count). `per_class()` gives every class's IoU (0 where undefined)."""

    _states = ("confmat",)

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
        return _safe_divide(num, confmat.sum(0) + confmat.sum(1) - num)

    def _reduce(self, confmat):
        iou = self._iou(confmat)
        weights = torch.ones_like(iou)
        weights[confmat.sum(1) + confmat.sum(0) == 0] = 0.0
        return ((weights * iou) / weights.sum()).sum()  # torchmetrics' order of operations

    def per_class(self) -> torch.Tensor:
        """IoU of each class over everything seen since `reset` (0 for a class never seen)."""
        return self._iou(self.confmat)

    def torchmetric(self):
        from torchmetrics.classification import MulticlassJaccardIndex as TM

        return TM(num_classes=self.num_classes, average="macro")

    def __repr__(self):
        return f"MeanIoU(num_classes={self.num_classes})"


class MeanDistance(StreamingMetric):
    """Mean Euclidean distance, in pixels of an image of `size` (H, W), between predicted and true
    points given as (N, 2n) coordinates scaled to [-1, 1] (x, y, x, y, ...; see
    ``encodings.KeypointScaling``). No torchmetrics class computes this; across processes
    `torchmetric()` builds a ``torchmetrics.Metric`` with the same two sum states."""

    _states = ("total", "count")

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
        return _point_distances(preds, target, self.size)

    def _reduce(self, total, count):
        return (total / count.clamp(min=1)).float()

    def torchmetric(self):
        return _torchmetrics_mean_distance(self.size)

    def __repr__(self):
        return f"MeanDistance(size={self.size})"


def point_distances(preds, target, size) -> torch.Tensor:
    """(N, n) distances in pixels between (N, 2n) scaled points (half a side per unit of scale)."""
    h, w = size
    d = (preds.double() - target.double()).reshape(len(preds), -1, 2)
    # scaled by Python numbers: a scale tensor built per batch would be a host-to-device copy (a sync)
    d = torch.stack((d[..., 0] * (w / 2.0), d[..., 1] * (h / 2.0)), -1)
    return d.pow(2).sum(-1).sqrt()


def _point_distances(preds, target, size):
    d = point_distances(preds, target, size)
    return d.sum(), _count(d.numel(), preds.device)


def _torchmetrics_mean_distance(size):
    from torchmetrics import Metric

    class MeanDistanceTM(Metric):
        full_state_update = False

        def __init__(self):
            super().__init__()
            self.size = size
            self.add_state("total", default=torch.zeros((), dtype=torch.float64), dist_reduce_fx="sum")
            self.add_state("count", default=torch.zeros((), dtype=torch.long), dist_reduce_fx="sum")

        def update(self, preds, target):
            total, count = _point_distances(preds, target, self.size)
            self.total += total
            self.count += count

        def compute(self):
            return (self.total / self.count.clamp(min=1)).float()

    return MeanDistanceTM()
