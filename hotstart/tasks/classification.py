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

    default_lr = 2e-3
    """`fit_one_cycle`'s peak rate when none is given (fastai's `fine_tune` base rate too); with
    `default_pct_start` a short fit from random weights learns an epoch sooner than with fastai's
    1e-3 and 25 % (`default_pct_start` has the measurements)."""

    default_pct_start = 0.1
    """`fit_one_cycle`'s warm-up share when none is given: the peak after a tenth of the steps.

    Measured 2026-12-07 on the 2-core AVX-512 BF16 EPYC, resnet10t from random weights, batch 32,
    bf16-mixed, seeds 0-2, on the time-to-accuracy benchmark's two tasks (benchmarks/tta.py; a
    throwaway script building the learner as benchmarks/scripts/hotstart_fit.py does, with
    ``fit_one_cycle(epochs, lr_max, pct_start=)``), validation accuracy:

    - the jpegdigits folder (2,000 training JPEGs at 64x64, 6 epochs), 2 torch threads: after
      epoch 2, 0.864, 0.860, 0.852 at 2e-3 and 10 % against 0.658, 0.460, 0.624 at 1e-3 and 25 %
      (after epoch 3: 0.962, 0.942, 0.922 against 0.936, 0.866, 0.952). At 1e-3 and 10 %, 0.796
      (seed 0); without any augmentation at 1e-3 and 25 %, 0.720 and 0.730 (seeds 0-1): the
      schedule, not the augmentation, held the early epochs back. After epoch 6 (1 thread),
      0.988, 0.986, 0.986 at 2e-3 and 10 % against 0.988, 0.984, 0.982 (2 threads).
    - the digits (1,437 training images at 32x32, 5 epochs), 1 thread: after epoch 2, 0.939,
      0.961, 0.903 against 0.922, 0.919, 0.791; after epoch 5, 0.992, 0.992, 0.992 against 0.994,
      0.992, 0.994.

    Earlier, peak rates of 2e-3 and 3e-3 with a 25 % warm-up reached 0.73-0.79 after epoch 2 on
    the folder (tasks/image_base.py's `default_batch_size`). benchmarks/README.md ("Time to
    accuracy") has what it does to the time to a target, and precision_accuracy.py ``--defaults``
    the final accuracy over 5 seeds. A fit of a single epoch or a few steps peaks at once (torch's
    ``OneCycleLR`` puts the peak at step ``pct_start * steps - 1``); fine-tuning a pretrained
    backbone has its own schedule (`Learner.fine_tune`)."""

    default_ema = 0.999
    """`tasklearner` validates on, and keeps, an average of the weights (the `EMA` callback, decay
    0.999 with timm's warm-up of the decay, ``1 - k ** (-2/3)`` after k steps: an average over
    the last ~20 steps after 90, ~100 after 1,000) unless given ``ema=False``.

    Why: a fit at the peak of its schedule validates on weights that jump from step to step; the
    average does not. Measured 2026-12-07 on the 2-core AVX-512 BF16 EPYC, 2 torch threads,
    resnet10t from random weights, batch 32, bf16-mixed, 2e-3 with a 10 % warm-up, built as
    benchmarks/scripts/hotstart_fit.py builds it (a throwaway script adding the callback),
    validation accuracy:

    - the digits (1,437 training images at 32x32, 5 epochs), seeds 0-5, after epoch 2: 0.961,
      0.978, 0.975, 0.981, 0.983, 0.981 with the average against 0.889, 0.942, 0.958, 0.889,
      0.947, 0.861 without; after epoch 1, 0.638-0.866 against 0.429-0.861; after epoch 5
      (seeds 0-2) 0.994, 0.989, 0.989 against 0.994, 0.992, 0.989.
    - the jpegdigits folder (2,000 training JPEGs at 64x64, 6 epochs), seeds 0-2: after epoch 2,
      0.922, 0.910, 0.916 against 0.864, 0.860, 0.852; after epoch 6, 0.990, 0.988, 0.986. After
      epoch 1 the average lags (0.18-0.19): it trails weights that are still far from trained.

    The benchmark's time-to-accuracy targets (0.9 and 0.8) are then reached in epoch 2 on every
    seed. An update costs 0.9 ms a step for resnet10t's 4.9 M parameters (2.1 ms for resnet18's
    11 M) against steps of 34-50 ms; the copy of the model costs its size in memory."""

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

    def get_config(self) -> dict:
        config = super().get_config()
        if self.label_smoothing:  # only when set: the JSON of a task without it is unchanged
            config["label_smoothing"] = self.label_smoothing
        return config

    def with_label_smoothing(self, label_smoothing: float):
        """The same task with another `label_smoothing` (e.g. to change it between fits)."""
        return self.with_config(label_smoothing=label_smoothing)


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
