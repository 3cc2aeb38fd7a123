"""`Metrics`: torchmetrics over the validation phase (correct across processes: they sync).

Metric objects are built on first use, not when the learner is built: importing torchmetrics
costs start-up time (it imports matplotlib.pyplot, about 0.3 s, and scipy.signal when scipy is
installed, about 1.6 s), and a run that never validates should not pay it. Importing it in a
background thread during the first epoch was not faster on 2 cores (4 alternating runs,
noisy): the import thread preempts one of torch's two OpenMP threads, which then stall.
"""
from __future__ import annotations

import math

from .base import Callback


class Metrics(Callback):
    order = -5

    def __init__(self, metrics=None, activation=None):
        self._spec = metrics  # dict name -> torchmetrics.Metric, or a callable returning one
        self.activation = activation
        self._metrics = None
        self.values: dict[str, float] = {}
        self.valid_loss = math.nan

    def _build(self):
        if self._metrics is None:
            spec = self._spec() if callable(self._spec) else (self._spec or {})
            self._metrics = {name: m.to(self.learner.device) for name, m in dict(spec).items()}
        return self._metrics

    def before_epoch(self):
        # an epoch cancelled before validation must not report the previous epoch's numbers
        self.values = {name: math.nan for name in self.values}
        self.valid_loss = math.nan

    def before_validate(self):
        for m in self._build().values():
            m.reset()
        self._loss_sum, self._n = 0.0, 0

    def after_loss(self):
        if self.learner.training:
            return
        n = len(self.learner.yb)
        self._loss_sum += float(self.learner.loss.detach()) * n
        self._n += n
        pred = self.learner.pred.detach().float()
        if self.activation is not None:
            pred = self.activation(pred)
        for m in self._metrics.values():
            m.update(pred, self.learner.yb)

    def after_validate(self):
        self.valid_loss = self.learner.backend.all_reduce_mean(self._loss_sum / self._n if self._n else math.nan)
        self.values = {name: float(m.compute()) if self._n else math.nan for name, m in self._metrics.items()}
