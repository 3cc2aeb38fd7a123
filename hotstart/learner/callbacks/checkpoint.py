"""`SaveBestModel`: save the model (atomically) whenever a monitored value improves."""
from __future__ import annotations

import math
from pathlib import Path

from .base import Callback


class SaveBestModel(Callback):
    order = 55  # before EarlyStopping, so the epoch that ends a fit is still considered

    def __init__(self, path, monitor: str = "valid_loss", mode: str | None = None, load_best: bool = False):
        self.path = Path(path)
        self.monitor = monitor
        self.mode = mode or ("min" if "loss" in monitor else "max")
        self.load_best = load_best
        self.best = math.inf if self.mode == "min" else -math.inf
        self.best_epoch = None

    def after_epoch(self):
        value = self.learner.history[-1][self.monitor]
        if (value < self.best) if self.mode == "min" else (value > self.best):
            self.best, self.best_epoch = value, self.learner.history[-1]["epoch"]
            if self.learner.backend.is_global_zero:
                self.learner.save(self.path)

    def after_fit(self):
        if self.load_best and self.best_epoch is not None:
            from ..serialization import load_weights

            load_weights(self.learner, self.path)
