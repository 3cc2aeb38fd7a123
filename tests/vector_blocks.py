"""A block of the user's own for tests: a vector of `n` numbers (a digit's 8x8 pixels, flattened),
its encoded tensor, an encoding between them and a classification task over it. One definition
for the tests of user blocks (tests/test_user_blocks.py), task configuration (test_task_config.py)
and views of custom blocks (test_views_custom_blocks.py)."""
from __future__ import annotations

import numpy as np
import torch
import torch.nn as nn

from hotstart import datasets
from hotstart.blocks import Block
from hotstart.blocks.base import is_tensor, require_rng
from hotstart.encodings import Encoding, OneHot
from hotstart.tasks import SupervisedTask


class Vector(Block):
    """A 1-D float array of `n` numbers: an input block hotstart's views cannot draw."""

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
    """The encoded vector; its declared ``shape()`` is what a backbone is measured on."""

    def __init__(self, n):
        self.n = int(n)

    def _params(self):
        return {"n": self.n}

    def shape(self):
        return (self.n,)

    def _problem(self, value):
        return None if is_tensor(value) and tuple(value.shape) == (self.n,) else f"expected a tensor of shape ({self.n},)"

    def mock(self, rng):
        return torch.from_numpy(require_rng(rng).random(self.n).astype(np.float32))


class Scale(Encoding):
    """Vector -> VectorTensor, divided by `scale` (16: the digits' largest pixel)."""

    def __init__(self, scale=16.0):
        self.scale = scale

    def _params(self):
        return {"scale": self.scale}

    def encoded_block(self, block):
        return VectorTensor(block.n) if type(block) is Vector else None

    def encode(self, block, value, context, rng=None):
        return torch.as_tensor(value, dtype=torch.float32) / self.scale

    def decode(self, block, value, context=None):
        return (value * self.scale).numpy()


class VectorClassification(SupervisedTask):
    """One class per vector: a linear head, cross-entropy, accuracy, softmax."""

    def __init__(self, blocks, encodings=None):
        super().__init__(blocks, encodings if encodings is not None else [Scale(), OneHot()])

    @property
    def classes(self):
        return list(self.blocks[1].classes)

    def head(self, num_features):
        return nn.Linear(num_features, len(self.classes))

    def loss_fn(self):
        return nn.CrossEntropyLoss()

    def metrics(self):
        from torchmetrics.classification import MulticlassAccuracy

        return {"accuracy": MulticlassAccuracy(num_classes=len(self.classes), average="micro")}

    def activation(self, output):
        return output.softmax(-1)

    def decode_output(self, output):
        probs = self.activation(output.detach().float().cpu())
        return self.classes[int(probs.argmax())], probs


def digit_vectors(n: int):
    """The first `n` digits as (vectors, labels), and the digits' Label block."""
    data, (_, label) = datasets.load("digits")
    xs = [np.asarray(data.inputs[i], dtype=np.float32).reshape(-1) for i in range(n)]
    return (xs, [data.targets[i] for i in range(n)]), label
