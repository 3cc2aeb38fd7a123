"""Image classification tasks: one label per image, or any number of labels per image."""
from __future__ import annotations

from typing import Sequence

from ..blocks import Block, Image, Label, LabelMulti
from ..encodings import ImagePreprocessing, MultiHot, OneHot, ProjectiveTransforms
from .base import SupervisedTask


class _ImageClassification(SupervisedTask):
    target_kind: type = Label

    def __init__(self, blocks: Sequence[Block], size=(128, 128), augment: bool | dict = True,
                 mean=None, std=None):
        blocks = tuple(blocks)
        name = type(self).__name__
        if len(blocks) != 2 or not isinstance(blocks[0], Image) or type(blocks[1]) is not self.target_kind:
            raise TypeError(f"{name} needs blocks=(Image(), {self.target_kind.__name__}(classes)), got {blocks!r}")
        if hasattr(blocks[1], "check_trainable"):
            blocks[1].check_trainable(name)
        projective = ProjectiveTransforms(size, augment=augment)
        self.size = projective.size
        self.augment = projective.augment  # JSON-native, so to_dict round-trips unchanged
        channels = blocks[0].channels or 3
        encodings = [projective,
                     ImagePreprocessing(mean, std, channels=channels),
                     OneHot() if self.target_kind is Label else MultiHot()]
        super().__init__(blocks, encodings)

    @property
    def classes(self) -> list:
        return list(self.blocks[1].classes)

    @property
    def channels(self) -> int:
        return self.encodings[1].channels

    @property
    def stats(self) -> tuple[tuple, tuple]:
        return self.encodings[1].mean, self.encodings[1].std

    def with_stats(self, mean, std) -> "_ImageClassification":
        """The same task normalizing with other stats (e.g. a pretrained backbone's)."""
        return type(self)(self.blocks, self.size, self.augment, mean, std)

    def head(self, num_features: int):
        import torch.nn as nn

        return nn.Linear(num_features, len(self.classes))

    def to_dict(self) -> dict:
        mean, std = self.stats
        return {"kind": self.kind, "blocks": [b.to_dict() for b in self.blocks],
                "size": list(self.size), "augment": self.augment, "mean": list(mean), "std": list(std)}

    @classmethod
    def _from_params(cls, d):
        return cls([Block.from_dict(b) for b in d["blocks"]], size=d["size"], augment=d["augment"],
                   mean=d["mean"], std=d["std"])

    def __repr__(self):
        return f"{type(self).__name__}(blocks={self.blocks!r}, size={self.size})"


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
