"""Blocks that live on an image's pixel grid: `Mask` (a class per pixel) and `Keypoints`."""
from __future__ import annotations

import numpy as np

from ..errors import UsageError
from .base import Block, is_tensor, require_rng
from .label import _as_classes, _preview


class Mask(Block):
    """A segmentation mask: an H x W integer array whose values index `classes`."""

    def __init__(self, classes):
        self.classes = _as_classes(classes, "Mask")

    def _params(self):
        return {"classes": list(self.classes)}

    def _problem(self, value):
        arr = _as_array(value)
        if arr is None or arr.ndim != 2:
            shape = getattr(value, "shape", getattr(value, "size", None))
            return f"mask must be a 2-D integer array or an L/P PIL image, got {type(value).__name__} {shape}"
        if arr.dtype.kind not in "iub":
            return f"mask must hold integers, got dtype {arr.dtype}"
        if arr.size and (arr.min() < 0 or arr.max() >= len(self.classes)):
            return (f"mask values span {int(arr.min())}..{int(arr.max())} but there are only "
                    f"{len(self.classes)} classes {_preview(self.classes)}")
        return None

    def mock(self, rng: np.random.Generator):
        rng = require_rng(rng)
        h, w = (int(v) for v in rng.integers(16, 49, size=2))
        return rng.integers(0, len(self.classes), size=(h, w), dtype=np.uint8)


class Keypoints(Block):
    """`n` points (x, y) in pixel coordinates of the image they belong to: an n x 2 float array."""

    def __init__(self, n: int):
        if int(n) < 1:
            raise UsageError(f"Keypoints(n=...) must be at least 1, got {n!r}")
        self.n = int(n)

    def _params(self):
        return {"n": self.n}

    def _problem(self, value):
        arr = _as_array(value)
        if arr is None or arr.shape != (self.n, 2):
            return f"keypoints must be an array of shape ({self.n}, 2), got {getattr(arr, 'shape', type(value).__name__)}"
        if not np.isfinite(arr.astype(np.float64)).all():
            return "keypoints contain NaN or infinite values"
        return None

    def mock(self, rng: np.random.Generator):
        return (require_rng(rng).random((self.n, 2)) * 16.0).astype(np.float32)


class Continuous(Block):
    """A vector of `n` real numbers (regression targets, tabular features)."""

    def __init__(self, n: int):
        if int(n) < 1:
            raise UsageError(f"Continuous(n=...) must be at least 1, got {n!r}")
        self.n = int(n)

    def _params(self):
        return {"n": self.n}

    def _problem(self, value):
        arr = _as_array(value)
        if arr is None or arr.shape != (self.n,):
            return f"expected a vector of length {self.n}, got {getattr(arr, 'shape', type(value).__name__)}"
        if arr.dtype.kind not in "iuf" or not np.isfinite(arr.astype(np.float64)).all():
            return "values must be finite numbers"
        return None

    def mock(self, rng: np.random.Generator):
        return require_rng(rng).standard_normal(self.n).astype(np.float32)


def _as_array(value):
    """numpy view of an array-like, PIL image or torch tensor; None if it is none of those."""
    if isinstance(value, np.ndarray):
        return value
    if is_tensor(value):
        return value.detach().cpu().numpy()
    if type(value).__module__.startswith("PIL"):
        if value.mode not in ("L", "P", "I", "1"):
            return None
        return np.asarray(value)
    if isinstance(value, (list, tuple)):
        try:
            return np.asarray(value)
        except ValueError:
            return None
    return None
