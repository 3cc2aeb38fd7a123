"""`DetectAnomaly`: check every module's output and gradient on every training batch (debugging).

    learner.fit(1, 3e-3, detect_anomaly=True)     # or callbacks=[DetectAnomaly()]

The non-finite guard (nan_guard.py) checks only the loss, the gradients and the buffers, and looks
for where a NaN began once it has found one. This callback keeps forward and gradient hooks on
every module for the whole fit (learner/nonfinite_origin.py's `NonFiniteHooks`), so it also
stops on a non-finite intermediate value that the loss would not show, at the cost of one
``isfinite`` pass per module output per batch: for debugging, not for every run.
"""
from __future__ import annotations

from .base import Callback
from .nan_guard import NonFiniteLossError


class DetectAnomaly(Callback):
    order = -30  # before the guard, which would otherwise stop first with less to say

    def __init__(self):
        self._hooks = None

    def before_fit(self):
        from ..nonfinite_origin import NonFiniteHooks

        self._hooks = NonFiniteHooks(self.learner.model).__enter__()

    def after_fit(self):
        if self._hooks is not None:
            self._hooks.__exit__(None, None, None)
            self._hooks = None

    def before_batch(self):
        self._hooks.reset()

    def after_loss(self):
        self._check(self.learner.loss.detach() if self.learner.training else None)

    def after_backward(self):
        self._check(None)

    def _check(self, loss):
        learner = self.learner
        origin = self._hooks.origin(learner.epoch, learner.iter, loss)
        if origin is not None:
            learner.nonfinite_origin = origin
            phase = "training" if learner.training else "validation"
            raise NonFiniteLossError(f"detect_anomaly: {origin} ({phase}); fitting stopped")
