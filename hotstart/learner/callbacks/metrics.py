"""`Metrics`: the loss and the metrics over the validation phase, correct across processes.

The metrics are objects with torchmetrics' protocol (update / compute / reset / to). The tasks'
defaults are ``hotstart.metrics`` (streaming counts, no torchmetrics import in one process);
when the run has several processes each is swapped for its ``torchmetric()``, which syncs
(see hotstart/metrics.py for why). A user's ``torchmetrics.Metric`` objects are used as given.
Metric objects are built on first use, not when the learner is built, so a run that never
validates builds none. Importing torchmetrics in a background thread during the first epoch
instead was tried and was not faster on 2 cores (the import thread preempts one of torch's two
OpenMP threads, which then stall).
"""
from __future__ import annotations

import math

from .base import Callback


class Metrics(Callback):
    order = -5

    def __init__(self, metrics=None, activation=None):
        self._spec = metrics  # dict name -> metric (torchmetrics protocol), or a callable returning one
        self.activation = activation
        self._metrics = None
        self.values: dict[str, float] = {}
        self.valid_loss = math.nan

    def _build(self):
        if self._metrics is None:
            spec = self._spec() if callable(self._spec) else (self._spec or {})
            many = self.learner.backend.world_size > 1
            self._metrics = {name: (m.torchmetric() if many and hasattr(m, "torchmetric") else m).to(self.learner.device)
                             for name, m in dict(spec).items()}
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
        loss = self.learner.loss.detach()  # summed on the device (float64, as float(loss) would be): no sync
        self._loss_sum = self._loss_sum + (loss.double() if loss.device.type != "mps" else loss.float()) * n
        self._n += n
        pred = self.learner.pred.detach().float()
        if self.activation is not None:
            pred = self.activation(pred)
        for m in self._metrics.values():
            m.update(pred, self.learner.yb)

    def after_validate(self):
        # sums and counts over all processes: each validation sample counted once (the shards are
        # disjoint and unpadded, learner/data.py), every process gets the same numbers
        # the loss sum and every metric's value come to the host in one transfer (one sync a
        # phase); every process computes when any has samples (torchmetrics' compute syncs them)
        from ...metrics import read_on_host

        backend = self.learner.backend
        (n,) = backend.all_reduce_sum(self._n)
        if not n:
            self.values, self.valid_loss = {name: math.nan for name in self._metrics}, math.nan
            return
        self.values, (loss_sum,) = read_on_host(self._metrics, self._loss_sum)
        (total,) = backend.all_reduce_sum(loss_sum)
        self.valid_loss = total / n
