"""`GradientClip`: clip the global gradient norm to `max_norm` before each optimizer step."""
from __future__ import annotations

from .base import Callback


class GradientClip(Callback):
    order = 10  # after NonFiniteGuard has checked the gradients

    def __init__(self, max_norm: float = 1.0):
        self.max_norm = float(max_norm)

    def after_backward(self):
        # the backend's: under fp16 mixed precision Fabric unscales the gradients first
        self.learner.backend.clip_gradients(self.learner.model, self.learner.opt, self.max_norm)
