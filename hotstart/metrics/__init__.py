"""The tasks' default metrics: streaming counts, the same code in one process and in many.

Why not torchmetrics: ``import torchmetrics`` (1.9) imports ``matplotlib.pyplot`` and, when
scipy is installed, ``scipy.signal`` (upstream Lightning-AI/torchmetrics#3457). On the 2-core
CPU, after ``import torch, timm``, that costs 0.4-0.7 s without scipy and 1.2-1.5 s with it,
paid at the first validation: the time to the end of the first epoch on the FastAI.jl start-up
workload was 0.96x-1.18x a plain loop's with it, and 0.89x-0.99x in 5 of 6 rounds without it
(benchmarks/README.md). What torchmetrics adds over a sum and a count is synchronisation across
processes, and that is a sum too: `read_on_host` adds every metric's counts over the processes
through the learner's backend (``Backend.sum_tensors``, the identity in one process) before it
reduces them, so one process and many run the same code.

Each class keeps integer counts (or float32 sums, for regression) on the metric's device and
computes what the torchmetrics class of the same name computes, in the same float32 operations;
torchmetrics is the reference in the tests (tests/test_metrics.py, tests/test_vision_metrics.py,
tests/test_learner_ddp.py: one process and two equal it). No host sync per batch: the target
range check is a flag kept on the device, read by `compute()` (which raises then), and
`read_on_host` reads every metric's value and flag, and the loss sum, in one transfer per
validation phase. Differences only where the learner never goes: ours raise on targets outside
the classes at `compute()` (torchmetrics raises in `update`, at the price of a sync per batch;
``metric(preds, target)`` raises at once) and take an empty batch; on CPU, torchmetrics treats a
whole multi-label batch as logits when one prediction is NaN, ours only when one lies outside
[0, 1].

A user's own ``torchmetrics.Metric`` objects (``tasklearner(metrics={...})``) are used as given:
their ``compute()`` syncs them across processes by itself. Every metric here has the torchmetrics
protocol: ``update(preds, target)``, ``compute()``, ``reset()``, ``to(device)`` and
``metric(preds, target)`` (updates, returns the batch's value).

    base.py            StreamingMetric: counts, the device flag, the states processes sum
    classification.py  MulticlassAccuracy, MultilabelAccuracy, MultilabelF1Score
    regression.py      MeanSquaredError, R2Score, Denormalized (in the target's units)
    dense.py           PixelAccuracy, MeanIoU (segmentation, per pixel)
    keypoints.py       MeanDistance, point_distances
    reading.py         read_on_host: sum over processes, compute, one transfer
"""
from .base import StreamingMetric
from .classification import MulticlassAccuracy, MultilabelAccuracy, MultilabelF1Score
from .dense import MeanIoU, PixelAccuracy
from .keypoints import MeanDistance, point_distances
from .reading import read_on_host
from .regression import Denormalized, MeanSquaredError, R2Score

__all__ = ["MulticlassAccuracy", "MultilabelAccuracy", "MultilabelF1Score", "StreamingMetric", "MeanSquaredError",
           "R2Score", "Denormalized", "PixelAccuracy", "MeanIoU", "MeanDistance", "point_distances", "read_on_host"]
