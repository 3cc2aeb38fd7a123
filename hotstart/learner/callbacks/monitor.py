"""`monitor_mode`: whether lower or higher is better for a monitored history key.

`EarlyStopping` and `SaveBestModel` watch one key of the history. For a loss, lower is better. For
a metric, its object says so: ``higher_is_better``, torchmetrics' attribute, which hotstart's own
metrics declare too (hotstart/metrics/). Guessing from the name, as these callbacks once did
("max" unless the name holds "loss"), stopped fits whose ``rmse`` or ``mean_distance`` was
improving and kept their worst epoch as the best. A metric that does not say is an error asking
for ``mode=``, not a guess.
"""
from __future__ import annotations

import math

from ...errors import UsageError

__all__ = ["MODES", "check_mode", "monitor_mode", "worst", "improves"]

MODES = ("min", "max")


def check_mode(mode: str | None) -> str | None:
    """`mode` if it is None, "min" or "max"; else a `UsageError`."""
    if mode is not None and mode not in MODES:
        raise UsageError(f"mode must be 'min', 'max' or None (from the metric), got {mode!r}")
    return mode


def monitor_mode(learner, monitor: str, mode: str | None, owner: str) -> str:
    """`mode` when given; else "min" for a loss (a key holding "loss"), else the direction the
    learner's metric named `monitor` declares. `owner` names the callback in the error, which the
    callbacks raise in ``before_fit``: before any step is trained."""
    if mode is not None:
        return mode
    if "loss" in monitor:
        return "min"
    from .metrics import Metrics

    metrics = learner.cb(Metrics)
    if monitor not in metrics.names():
        raise UsageError(f"{owner}: {monitor!r} is not a loss or one of the learner's metrics {metrics.names()}, so "
                         f"which way is better is unknown; pass mode='min' or mode='max'")
    better = metrics.higher_is_better(monitor)
    if better is None:
        raise UsageError(f"{owner}: the metric {monitor!r} does not say whether higher is better (it has no "
                         f"higher_is_better); pass mode='min' or mode='max'")
    return "max" if better else "min"


def worst(mode: str) -> float:
    """The value every real one improves on: +inf when lower is better, -inf when higher is."""
    return math.inf if mode == "min" else -math.inf


def improves(value: float, best: float, mode: str, min_delta: float = 0.0) -> bool:
    """Whether `value` is better than `best` by more than `min_delta` (NaN never is)."""
    return value < best - min_delta if mode == "min" else value > best + min_delta
