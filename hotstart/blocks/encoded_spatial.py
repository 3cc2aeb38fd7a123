"""Encoded blocks on the pixel grid: keypoints as a flat vector of scaled coordinates."""
from __future__ import annotations

import numpy as np

from ..errors import UsageError
from .base import Block, is_tensor, require_rng


class KeypointTensor(Block):
    """`n` points as a float32 vector (x0, y0, x1, y1, ...) scaled so the image spans [-1, 1].

    Values outside [-1, 1] are points outside the image (see ``encodings.KeypointScaling``).
    """

    def __init__(self, n: int):
        if int(n) < 1:
            raise UsageError(f"KeypointTensor(n=...) must be at least 1, got {n!r}")
        self.n = int(n)

    def _params(self):
        return {"n": self.n}

    def shape(self):
        return (2 * self.n,)

    def _problem(self, value):
        if not is_tensor(value) or tuple(value.shape) != self.shape():
            return f"expected a tensor of shape {self.shape()}, got {getattr(value, 'shape', type(value).__name__)}"
        if not value.is_floating_point():
            return f"expected a float tensor, got {value.dtype}"
        return None

    def mock(self, rng: np.random.Generator):
        import torch

        return torch.from_numpy(require_rng(rng).uniform(-1, 1, self.shape()).astype(np.float32))
