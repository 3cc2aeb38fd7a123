"""Image classification tasks: one label per image, or any number of labels per image."""
from __future__ import annotations

from typing import Sequence

from ..blocks import Block, Label, LabelMulti
from ..encodings import MultiHot, OneHot
from .image_base import ImageTask


class _ImageClassification(ImageTask):
    target_kind: type = Label
    target_hint = "(classes)"

    def __init__(self, blocks: Sequence[Block], size=(128, 128), augment: bool | dict = True,
                 mean=None, std=None):
        super().__init__(blocks, size, augment, mean, std)
        if hasattr(self.blocks[1], "check_trainable"):
            self.blocks[1].check_trainable(type(self).__name__)

    def _accepts_target(self, block) -> bool:
        return type(block) is self.target_kind

    def _target_encodings(self) -> list:
        return [OneHot() if self.target_kind is Label else MultiHot()]

    @property
    def classes(self) -> list:
        return list(self.blocks[1].classes)

    def head(self, num_features: int):
        import torch.nn as nn

        return nn.Linear(num_features, len(self.classes))


class SingleLabelOutputs:
    """What a single-label classifier's outputs mean, whatever its input (images here, table rows in
    tabular.py): cross-entropy on logits, accuracy, softmax probabilities, the top class.
    A mixin: put it first among the bases, before the task that provides `classes`."""

    def loss_fn(self):
        import torch.nn as nn

        return nn.CrossEntropyLoss()

    def metrics(self) -> dict:
        from ..metrics import MulticlassAccuracy

        return {"accuracy": MulticlassAccuracy(num_classes=len(self.classes))}

    def activation(self, output):
        return output.softmax(-1)

    def decode_output(self, output):
        """Logits of one sample -> (label, probabilities over `classes`)."""
        probs = self.activation(output.detach().float().cpu())
        return self.classes[int(probs.argmax())], probs


class ImageClassificationSingle(SingleLabelOutputs, _ImageClassification):
    """``(Image(), Label(classes))``: cross-entropy loss, accuracy, softmax probabilities."""

    target_kind = Label


class ImageClassificationMulti(_ImageClassification):
    """``(Image(), LabelMulti(classes))``: binary cross-entropy, F1 and accuracy, sigmoid scores."""

    target_kind = LabelMulti

    def loss_fn(self):
        import torch.nn as nn

        return nn.BCEWithLogitsLoss()

    def metrics(self) -> dict:
        from ..metrics import MultilabelAccuracy, MultilabelF1Score

        n = len(self.classes)
        return {"f1": MultilabelF1Score(num_labels=n), "accuracy": MultilabelAccuracy(num_labels=n)}

    def activation(self, output):
        return output.sigmoid()

    def decode_output(self, output, threshold: float | None = None):
        """Logits of one sample -> (labels whose probability >= threshold, probabilities)."""
        probs = self.activation(output.detach().float().cpu())
        t = self.encodings[2].threshold if threshold is None else threshold
        return [c for c, p in zip(self.classes, probs.tolist()) if p >= t], probs
