"""`GradientClip`: clip the global gradient norm to `max_norm` before each optimizer step."""
from __future__ import annotations

import torch

from .base import Callback


class GradientClip(Callback):
    order = 10  # after NonFiniteGuard has checked the gradients

    def __init__(self, max_norm: float = 1.0):
        self.max_norm = float(max_norm)

    def after_backward(self):
        backend = self.learner.backend
        if hasattr(backend, "fabric"):
            backend.fabric.clip_gradients(self.learner.model, self.learner.opt, max_norm=self.max_norm)
        else:
            torch.nn.utils.clip_grad_norm_(self.learner.model.parameters(), self.max_norm)
