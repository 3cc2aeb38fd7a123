"""What every task with an `Image` input shares: joint resize / augmentation to `size`, the
normalization stats (saved with the task, replaceable by a pretrained backbone's), and the JSON
form. Subclasses say which target block they take and which encodings it gets."""
from __future__ import annotations

from typing import Sequence

from ..blocks import Block, Image
from ..encodings import ImagePreprocessing, ProjectiveTransforms
from ..errors import UsageTypeError
from .base import SupervisedTask
from .config import build, require_keys

SMALL_SET = 4096
"""An image task's training split of fewer samples than this (fewer than 64 steps of 64 an
epoch) trains in batches of `SMALL_SET_BATCH` when no batch size is given."""

SMALL_SET_BATCH = 32
"""The default batch for an image training split smaller than `SMALL_SET` (`ImageTask.default_batch_size`)."""


class ImageTask(SupervisedTask):
    """``(Image(), <target>)``: encodings ``[ProjectiveTransforms, ImagePreprocessing, *target's]``."""

    target_kind: type = Block
    target_hint = "(...)"  # how the target block is written in the error for wrong blocks

    def __init__(self, blocks: Sequence[Block], size=(128, 128), augment: bool | dict = True,
                 mean=None, std=None):
        blocks = tuple(blocks)
        if len(blocks) != 2 or not isinstance(blocks[0], Image) or not self._accepts_target(blocks[1]):
            raise UsageTypeError(f"{type(self).__name__} needs blocks=(Image(), "
                            f"{self.target_kind.__name__}{self.target_hint}), got {blocks!r}")
        projective = ProjectiveTransforms(size, augment=augment)
        self.size = projective.size
        self.augment = projective.augment  # JSON-native, so to_dict round-trips unchanged
        channels = blocks[0].channels or 3
        super().__init__(blocks, [projective, ImagePreprocessing(mean, std, channels=channels),
                                  *self._target_encodings()])

    def default_batch_size(self, n_train: int) -> int | None:
        """`SMALL_SET_BATCH` (32) for a training split of fewer than `SMALL_SET` (4,096) images,
        else None: the learner's 64.

        Why: on a small split the number of optimizer steps, not of images seen, limits what a
        short fit learns, and on the CPU a batch of 32 costs about as much an image as one of 64
        (an epoch took 1.1-1.2x as long), so it gives twice the steps for little more time. Measured
        2026-12-07 on the 2-core AVX-512 BF16 EPYC, resnet10t from random weights, bf16-mixed, lr
        1e-3, seeds 0-2 (benchmarks/scripts/hotstart_fit.py with ``--bs 32`` and ``--bs 64``):

        - the jpegdigits folder (2,000 training JPEGs at 64x64, 6 epochs): validation accuracy
          after epoch 3 was 0.936, 0.866, 0.944 at 32 against 0.742, 0.640, 0.828 at 64; after
          epoch 6, 0.988, 0.984, 0.982 against 0.960, 0.950, 0.970;
        - the digits (1,437 training images at 32x32, 5 epochs): after epoch 2, 0.947, 0.955,
          0.961 at 32 against 0.844, 0.903, 0.916 at 64; after epoch 5, 0.992, 0.994, 0.992
          against 0.994, 0.992, 0.989.

        Batches of 16 (the same runs) took 1.1-1.3x as long an epoch as 32 and learned no sooner:
        0.872, 0.716, 0.696 on the folder and 0.981, 0.969, 0.891 on the digits after epoch 2.
        Peak rates of 2e-3 and 3e-3 at 32 (the folder, seeds 0-1), with fastai's 25 % warm-up,
        reached 0.73-0.79 after epoch 2; with a 10 % warm-up 2e-3 reached 0.85-0.86, which single-label
        classification now takes by default (tasks/classification.py). benchmarks/README.md ("Time to accuracy") has what the batch does
        to the time to a target. Larger splits keep 64 (not measured to gain: they have many steps
        an epoch already)."""
        return SMALL_SET_BATCH if int(n_train) < SMALL_SET else None

    def _accepts_target(self, block: Block) -> bool:
        return isinstance(block, self.target_kind)

    def _target_encodings(self) -> list:
        return []

    @property
    def channels(self) -> int:
        return self.encodings[1].channels

    @property
    def stats(self) -> tuple[tuple, tuple]:
        return self.encodings[1].mean, self.encodings[1].std

    def with_stats(self, mean, std):
        """The same task normalizing with other stats (e.g. a pretrained backbone's); None: the default."""
        as_list = lambda v: None if v is None else [float(x) for x in v]  # noqa: E731
        return self.with_config(mean=as_list(mean), std=as_list(std))

    def load_input(self, raw_input):
        """An image file's path (str or ``os.PathLike``) is read as in training (`datasets.load_image`:
        EXIF rotation, mode conversion, errors that name the file); anything else is left as it is."""
        import os

        if isinstance(raw_input, (str, os.PathLike)):
            from ..datasets.images import load_image

            return load_image(raw_input)
        return raw_input

    def get_config(self) -> dict:
        """Size, augmentation and normalization stats (the encodings follow from them)."""
        mean, std = self.stats
        return {"size": list(self.size), "augment": self.augment, "mean": list(mean), "std": list(std)}

    @classmethod
    def from_config(cls, blocks, config):
        require_keys(cls, config, ("size", "augment", "mean", "std"))  # what get_config always writes
        return build(cls, [blocks], config)

    def __repr__(self):
        return f"{type(self).__name__}(blocks={self.blocks!r}, size={self.size})"
