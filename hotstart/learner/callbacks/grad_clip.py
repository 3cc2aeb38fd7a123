"""`GradientClip`: clip the global gradient norm to `max_norm` before each optimizer step."""
from __future__ import annotations

from .base import Callback


class GradientClip(Callback):
    """Clip the gradients' global norm (over every parameter) to `max_norm` before each optimizer
    step, as ``torch.nn.utils.clip_grad_norm_`` does: a batch whose gradients have norm 50 steps
    as if their norm were 1, in the same direction.

    ``fit_one_cycle(5, callbacks=[GradientClip(1.0)])``. Through the backend, so under fp16 mixed
    precision the gradients are unscaled first (Fabric's ``clip_gradients``), and the norm is that
    of the true gradients. With ``fit(accumulate=k)`` it clips the accumulated gradient of the k
    batches, once per step. Order 10: after `NonFiniteGuard` (-20) has checked the gradients.

    Args:
        max_norm: the largest global L2 norm the gradients may have.
    """

    order = 10  # after NonFiniteGuard has checked the gradients

    def __init__(self, max_norm: float = 1.0):
        self.max_norm = float(max_norm)

    def after_backward(self):
        # the backend's: under fp16 mixed precision Fabric unscales the gradients first
        self.learner.backend.clip_gradients(self.learner.model, self.learner.opt, self.max_norm)
