"""Image classification tasks: one label per image, or any number of labels per image."""
from __future__ import annotations

from typing import Sequence

from ..blocks import Block, Label, LabelMulti
from ..encodings import MultiHot, OneHot
from ..errors import UsageError
from .image_base import ImageTask


class _ImageClassification(ImageTask):
    target_kind: type = Label
    target_hint = "(classes)"
    bf16_by_default = True  # measured: learner/precision.py, benchmarks/results/precision-accuracy.json

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

    label_smoothing: float = 0.0  # ImageClassificationSingle(label_smoothing=) sets it

    def loss_fn(self):
        """Cross-entropy on logits; with `label_smoothing` > 0 torch's own smoothing
        (``cross_entropy(label_smoothing=)``: the target is ``(1 - eps) * one_hot + eps / classes``)."""
        import torch.nn as nn

        return nn.CrossEntropyLoss(label_smoothing=float(self.label_smoothing))

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
    """``(Image(), Label(classes))``: cross-entropy loss, accuracy, softmax probabilities.

    ``label_smoothing=0.1`` trains on smoothed targets (torch's ``cross_entropy(label_smoothing=)``);
    it is part of the task, so it is saved in ``task.json`` (written only when it is not 0, so the
    JSON of a task without it is unchanged) and a resume with another value is refused."""

    target_kind = Label

    def __init__(self, blocks: Sequence[Block], size=(128, 128), augment: bool | dict = True,
                 mean=None, std=None, label_smoothing: float = 0.0):
        try:
            eps = float(label_smoothing)
        except (TypeError, ValueError):
            eps = float("nan")
        if not 0.0 <= eps < 1.0:
            raise UsageError(f"label_smoothing must be a number in [0, 1), got {label_smoothing!r}")
        super().__init__(blocks, size, augment, mean, std)
        self.label_smoothing = eps

    def with_stats(self, mean, std):
        return type(self)(self.blocks, self.size, self.augment, mean, std, label_smoothing=self.label_smoothing)

    def to_dict(self) -> dict:
        d = super().to_dict()
        if self.label_smoothing:
            d["label_smoothing"] = self.label_smoothing
        return d

    @classmethod
    def _from_params(cls, d):
        task = super()._from_params(d)
        smoothing = d.get("label_smoothing", 0.0)
        return task if not smoothing else task.with_label_smoothing(smoothing)

    def with_label_smoothing(self, label_smoothing: float):
        """The same task with another `label_smoothing` (e.g. to change it between fits)."""
        mean, std = self.stats
        return type(self)(self.blocks, self.size, self.augment, mean, std, label_smoothing=label_smoothing)


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
