"""Views and interpretation on a task of your own: clear errors naming what cannot be shown or
computed (the input block; a loss that ignores ``reduction``), not matplotlib's or torch's."""
import numpy as np
import pytest
import torch
import torch.nn as nn

from hotstart import datasets, tasklearner
from hotstart.blocks import Block
from hotstart.blocks.base import is_tensor, require_rng
from hotstart.encodings import Encoding, OneHot
from hotstart.errors import UsageError, UsageTypeError
from hotstart.interpret import ClassificationInterpretation
from hotstart.tasks.base import SupervisedTask


class Vector(Block):
    """A 1-D float vector of length n: an input block the views cannot draw."""

    def __init__(self, n):
        self.n = int(n)

    def _params(self):
        return {"n": self.n}

    def _problem(self, v):
        if not isinstance(v, np.ndarray) or v.shape != (self.n,):
            return f"expected an ndarray of shape ({self.n},)"

    def mock(self, rng):
        return require_rng(rng).random(self.n).astype(np.float32)


class VectorTensor(Vector):
    def _problem(self, v):
        if not is_tensor(v) or tuple(v.shape) != (self.n,):
            return f"expected a tensor of shape ({self.n},)"

    def mock(self, rng):
        return torch.from_numpy(super().mock(rng))

    def shape(self):
        return (self.n,)


class ToTensor(Encoding):
    def encoded_block(self, b):
        return VectorTensor(b.n) if type(b) is Vector else None

    def encode(self, b, v, ctx, rng=None):
        return torch.as_tensor(v, dtype=torch.float32) / 16

    def decode(self, b, v, ctx=None):
        return (v * 16).numpy()


class VectorClassification(SupervisedTask):
    def __init__(self, blocks, encodings=None):
        super().__init__(blocks, encodings if encodings is not None else [ToTensor(), OneHot()])

    @property
    def classes(self):
        return list(self.blocks[1].classes)

    def head(self, nf):
        return nn.Linear(nf, len(self.classes))

    def loss_fn(self):
        return nn.CrossEntropyLoss()

    def activation(self, out):
        return out.softmax(-1)

    def decode_output(self, out):
        p = self.activation(out.detach().float().cpu())
        return self.classes[int(p.argmax())], p


class Body(nn.Module):
    num_features = 16

    def __init__(self):
        super().__init__()
        self.l1 = nn.Linear(64, 16)

    def forward(self, x):
        return self.l1(x).relu()


class ReducesAnyway(nn.CrossEntropyLoss):
    """Has ``reduction`` but always returns the mean."""

    def forward(self, out, y):
        return nn.functional.cross_entropy(out, y)


@pytest.fixture(scope="module")
def learner():
    data, blocks = datasets.load("digits")
    xs = [np.asarray(data.inputs[i], dtype=np.float32).reshape(-1) for i in range(120)]
    ys = [data.targets[i] for i in range(120)]
    learner = tasklearner(VectorClassification((Vector(64), blocks[1])), (xs, ys), backbone=Body(), seed=0,
                          progress=False)
    learner.fit(1, 1e-2)
    return learner


def test_show_batch_and_show_results_name_the_block_they_cannot_show(learner):
    for view in ("show_batch", "show_results"):
        with pytest.raises(UsageError, match=rf"{view}: cannot show VectorClassification's input block Vector: "
                                             r"the views draw Image and TimeSeries"):
            getattr(learner, view)()


def test_interpretation_names_a_loss_that_ignores_reduction(learner):
    interp = ClassificationInterpretation.from_learner(learner)  # CrossEntropyLoss: one loss per sample
    assert interp.losses.shape == (len(learner.valid_loader.dataset),)
    with pytest.raises(UsageError, match="plot_top_losses: cannot show VectorClassification's input block Vector"):
        interp.plot_top_losses(2)
    kept = learner.loss_func
    learner.loss_func = ReducesAnyway()
    try:
        with pytest.raises(UsageTypeError, match=r"ReducesAnyway: with reduction='none' it returned shape \(\) "
                                                 r"for a batch of \d+, so its forward ignores `reduction`"):
            ClassificationInterpretation.from_learner(learner)
    finally:
        learner.loss_func = kept
