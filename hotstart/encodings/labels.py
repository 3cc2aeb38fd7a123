"""Label encodings: `OneHot` for `Label` (a class index or a one-hot vector), `MultiHot` for `LabelMulti`."""
from __future__ import annotations

from ..blocks import ClassIndex, Label, LabelMulti, OneHotTensor
from .base import Context, Encoding


class OneHot(Encoding):
    """`Label` -> class index (``as_index=True``, what cross-entropy wants) or a one-hot vector.

    Decoding takes a class index, or a vector of scores/probabilities (argmax), back to the label.
    """

    def __init__(self, as_index: bool = True):
        self.as_index = bool(as_index)

    def _params(self):
        return {"as_index": self.as_index}

    def applies(self, block):
        return isinstance(block, Label)

    def encoded_block(self, block):
        if isinstance(block, Label):
            return ClassIndex(block.classes) if self.as_index else OneHotTensor(block.classes)
        return None

    def encode(self, block, value, context, rng=None):
        import torch

        idx = block.index(block.validate(value))
        if self.as_index:
            return torch.tensor(idx, dtype=torch.int64)
        out = torch.zeros(len(block.classes), dtype=torch.float32)
        out[idx] = 1.0
        return out

    def decode(self, block, value, context=Context.INFERENCE):
        idx = int(value) if value.ndim == 0 else int(value.argmax())
        return block.classes[idx]


class MultiHot(Encoding):
    """`LabelMulti` -> multi-hot float vector; decoding thresholds scores (probabilities) at `threshold`."""

    def __init__(self, threshold: float = 0.5):
        self.threshold = float(threshold)

    def _params(self):
        return {"threshold": self.threshold}

    def applies(self, block):
        return isinstance(block, LabelMulti)

    def encoded_block(self, block):
        return OneHotTensor(block.classes) if isinstance(block, LabelMulti) else None

    def encode(self, block, value, context, rng=None):
        import torch

        block.validate(value)
        out = torch.zeros(len(block.classes), dtype=torch.float32)
        for v in value:
            out[block._index[v]] = 1.0
        return out

    def decode(self, block, value, context=Context.INFERENCE):
        return [c for c, p in zip(block.classes, value.tolist()) if p >= self.threshold]
