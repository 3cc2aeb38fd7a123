"""`EarlyStopping`: stop when a monitored value (a history key) has not improved for `patience` epochs."""
from __future__ import annotations

import math

from ...errors import UsageError
from .base import Callback, CancelFit


class EarlyStopping(Callback):
    order = 60

    def __init__(self, monitor: str = "valid_loss", patience: int = 3, min_delta: float = 0.0, mode: str | None = None):
        self.monitor, self.patience, self.min_delta = monitor, int(patience), float(min_delta)
        self.mode = mode or ("min" if "loss" in monitor else "max")
        if self.mode not in ("min", "max"):
            raise UsageError(f"mode must be 'min' or 'max', got {mode!r}")

    def before_fit(self):
        self.best, self.wait = (math.inf if self.mode == "min" else -math.inf), 0
        self.stopped_epoch = None

    def after_epoch(self):
        row = self.learner.history[-1]
        if self.monitor not in row:
            raise KeyError(f"EarlyStopping monitors {self.monitor!r}, not in the history keys {sorted(row)}")
        value = row[self.monitor]
        better = value < self.best - self.min_delta if self.mode == "min" else value > self.best + self.min_delta
        if better:
            self.best, self.wait = value, 0
            return
        self.wait += 1
        if self.wait >= self.patience:
            self.stopped_epoch = self.learner.epoch
            raise CancelFit(f"{self.monitor} has not improved for {self.patience} epochs")
