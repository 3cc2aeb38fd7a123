"""Blocks for encoded data: what a sample looks like after the encodings, as tensors.

Tasks derive these statically from their blocks and encodings, so the model head, the loss,
mocks and `describe()` all follow from the task without running any data through it.
"""
from __future__ import annotations

import numpy as np

from .base import Block, is_tensor, require_rng
from .label import _as_classes


class ImageTensor(Block):
    """A normalized float32 C x H x W tensor of a fixed `size` (H, W)."""

    def __init__(self, channels: int, size):
        self.channels = int(channels)
        self.size = tuple(int(s) for s in size)

    def _params(self):
        return {"channels": self.channels, "size": list(self.size)}

    def shape(self):
        return (self.channels, *self.size)

    def _problem(self, value):
        if not is_tensor(value):
            return f"expected a torch tensor, got {type(value).__name__}"
        if tuple(value.shape) != self.shape():
            return f"expected shape {self.shape()}, got {tuple(value.shape)}"
        if not value.is_floating_point():
            return f"expected a float tensor, got {value.dtype}"
        return None

    def mock(self, rng: np.random.Generator):
        import torch

        return torch.from_numpy(require_rng(rng).standard_normal(self.shape()).astype(np.float32))


class ClassIndex(Block):
    """A class as an int64 scalar tensor, its position in `classes` (for cross-entropy)."""

    def __init__(self, classes):
        self.classes = _as_classes(classes, "ClassIndex")

    def _params(self):
        return {"classes": list(self.classes)}

    def shape(self):
        return ()

    def _problem(self, value):
        if not is_tensor(value) or value.ndim != 0 or value.is_floating_point():
            return f"expected an integer scalar tensor, got {value!r}"
        if not 0 <= int(value) < len(self.classes):
            return f"class index {int(value)} is outside 0..{len(self.classes) - 1}"
        return None

    def mock(self, rng):
        import torch

        return torch.tensor(int(require_rng(rng).integers(len(self.classes))), dtype=torch.int64)


class OneHotTensor(Block):
    """A float32 vector with one entry per class: one-hot, multi-hot, or a model's scores."""

    def __init__(self, classes):
        self.classes = _as_classes(classes, "OneHotTensor")

    def _params(self):
        return {"classes": list(self.classes)}

    def shape(self):
        return (len(self.classes),)

    def _problem(self, value):
        if not is_tensor(value) or tuple(value.shape) != self.shape():
            return f"expected a tensor of shape {self.shape()}, got {getattr(value, 'shape', type(value).__name__)}"
        if not value.is_floating_point():
            return f"expected a float tensor, got {value.dtype}"
        return None

    def mock(self, rng):
        import torch

        return torch.from_numpy((require_rng(rng).random(len(self.classes)) < 0.5).astype(np.float32))
