"""A block of the user's own, end to end: the encoded block's declared ``shape()`` is what the
backbone is measured on, so a backbone for a vector (no ``num_features`` attribute) gets its head
and trains. Before, the width was measured on a made-up 3 x 64 x 64 image, and tasklearner failed
with "it returned shape (1, 3, 64, 32)"."""
from __future__ import annotations

import numpy as np
import torch
import torch.nn as nn

from hotstart import datasets, tasklearner
from hotstart.blocks import Block
from hotstart.blocks.base import is_tensor, require_rng
from hotstart.encodings import Encoding, OneHot
from hotstart.tasks import SupervisedTask


class Vector(Block):
    """A float vector of `n` numbers (a digit's 8x8 pixels, flattened)."""

    def __init__(self, n):
        self.n = int(n)

    def _params(self):
        return {"n": self.n}

    def _problem(self, value):
        if not isinstance(value, np.ndarray) or value.shape != (self.n,):
            return f"expected an array of shape ({self.n},), got {getattr(value, 'shape', type(value).__name__)}"
        return None

    def mock(self, rng):
        return require_rng(rng).random(self.n).astype(np.float32)


class VectorTensor(Block):
    def __init__(self, n):
        self.n = int(n)

    def _params(self):
        return {"n": self.n}

    def shape(self):
        return (self.n,)

    def _problem(self, value):
        return None if is_tensor(value) and tuple(value.shape) == (self.n,) else "expected a vector tensor"

    def mock(self, rng):
        return torch.from_numpy(require_rng(rng).random(self.n).astype(np.float32))


class Scale(Encoding):
    def _params(self):
        return {}

    def encoded_block(self, block):
        return VectorTensor(block.n) if isinstance(block, Vector) else None

    def encode(self, block, value, context, rng=None):
        return torch.as_tensor(value, dtype=torch.float32) / 16.0

    def decode(self, block, value, context=None):
        return (value * 16.0).numpy()


class VectorClassification(SupervisedTask):
    def __init__(self, blocks, encodings=None):
        super().__init__(blocks, encodings if encodings is not None else [Scale(), OneHot()])

    def head(self, nf):
        return nn.Linear(nf, len(self.blocks[1].classes))

    def loss_fn(self):
        return nn.CrossEntropyLoss()

    def metrics(self):
        from torchmetrics.classification import MulticlassAccuracy

        return {"accuracy": MulticlassAccuracy(num_classes=len(self.blocks[1].classes), average="micro")}


class MLP(nn.Module):  # no num_features: the learner measures the width on the block's shape
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(64, 48), nn.ReLU(), nn.Linear(48, 32), nn.ReLU())

    def forward(self, x):
        return self.body(x)


def test_a_backbone_for_a_users_vector_block_is_measured_on_its_shape_and_learns_the_digits():
    data, (_, label) = datasets.load("digits")
    n = 600
    xs = [np.asarray(data.inputs[i], dtype=np.float32).reshape(-1) for i in range(n)]
    ys = [data.targets[i] for i in range(n)]
    learner = tasklearner(VectorClassification((Vector(64), label)), (xs, ys), backbone=MLP(), seed=0,
                          progress=False)
    assert learner.model.head.in_features == 32
    learner.fit_one_cycle(6, 1e-2)
    assert learner.history[-1]["accuracy"] >= 0.85, learner.history[-1]
