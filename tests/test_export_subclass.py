"""A task class of your own exports as the hotstart kind it subclasses when it changes training only
(the loss here), and is refused, naming the method, when it changes what a runtime does again from
the metadata (the activation). Before, both were refused with "not supported yet ... add an entry
to hotstart/export/metadata.py's KIND_METADATA": an edit to the library's source."""
from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn as nn

from hotstart import ImageClassificationSingle, datasets, tasklearner
from hotstart.blocks import Image, ImageTensor, Label
from hotstart.encodings import Encoding
from hotstart.errors import UsageError
from hotstart.export.metadata import exported_kind
from hotstart.predictor import Predictor


class Focal(nn.Module):
    def forward(self, out, y):
        ce = nn.functional.cross_entropy(out, y, reduction="none")
        return ((1 - torch.exp(-ce)) ** 2 * ce).mean()


class FocalDigits(ImageClassificationSingle):  # training only: exports as ImageClassificationSingle
    def loss_fn(self):
        return Focal()


class TemperedDigits(ImageClassificationSingle):  # a runtime would decode it as softmax: refused
    def activation(self, output):
        return (output / 3.0).softmax(-1)


def _learner(task_class):
    data, blocks = datasets.load("digits")
    data = data.subset(range(240))
    learner = tasklearner(task_class(blocks, size=(12, 12), augment={"flip": 0.0}), data, seed=0, progress=False,
                          precision="32-true")
    learner.fit_one_cycle(1, 3e-3)
    return learner, data


def test_a_task_that_changes_only_the_loss_exports_as_its_parent_and_predicts_as_the_learner(tmp_path):
    learner, data = _learner(FocalDigits)
    path = tmp_path / "m.onnx"
    learner.export(path)
    predictor = Predictor.load(path)
    assert predictor.meta["kind"] == "ImageClassificationSingle"
    images = [data.inputs[i] for i in range(200, 240)]
    for image in images:
        label, probs = learner.predict(image)
        got_label, got_probs = predictor.predict(image)
        assert got_label == label
        np.testing.assert_allclose(got_probs, np.asarray(probs), atol=1e-4)


def test_a_task_that_overrides_the_activation_is_refused_naming_it_and_writes_nothing(tmp_path):
    learner, _ = _learner(TemperedDigits)
    with pytest.raises(UsageError, match=r"TemperedDigits.*overrides activation.*ImageClassificationSingle"):
        learner.export(tmp_path / "m.onnx")
    assert list(tmp_path.iterdir()) == []


class Invert(Encoding):
    def encoded_block(self, block):
        return block if isinstance(block, ImageTensor) else None

    def encode(self, block, value, context, rng=None):
        return -value


class InvertedDigits(ImageClassificationSingle):  # an encoding the runtime would not apply: refused
    def __init__(self, blocks, **kwargs):
        super().__init__(blocks, **kwargs)
        self.encodings = (*self.encodings, Invert())


class WeightedDigits(ImageClassificationSingle):  # its own declared parameter: exports as its parent
    def __init__(self, blocks, weight=1.0, **kwargs):
        super().__init__(blocks, **kwargs)
        self.weight = weight

    def get_config(self):
        return {**super().get_config(), "weight": self.weight}


def test_a_task_whose_encodings_differ_from_its_parents_is_refused_and_its_own_parameters_are_not():
    blocks = (Image(channels=1), Label(["a", "b"]))
    with pytest.raises(UsageError, match=r"encodings .*Invert.* differ"):
        exported_kind(InvertedDigits(blocks, size=8))
    assert exported_kind(WeightedDigits(blocks, size=8, weight=3.0)) == "ImageClassificationSingle"
