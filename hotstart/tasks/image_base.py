"""What every task with an `Image` input shares: joint resize / augmentation to `size`, the
normalization stats (saved with the task, replaceable by a pretrained backbone's), and the JSON
form. Subclasses say which target block they take and which encodings it gets."""
from __future__ import annotations

from typing import Sequence

from ..blocks import Block, Image
from ..encodings import ImagePreprocessing, ProjectiveTransforms
from ..errors import UsageTypeError
from .base import SupervisedTask


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
        """The same task normalizing with other stats (e.g. a pretrained backbone's)."""
        return type(self)(self.blocks, self.size, self.augment, mean, std)

    def load_input(self, raw_input):
        """An image file's path (str or ``os.PathLike``) is read as in training (`datasets.load_image`:
        EXIF rotation, mode conversion, errors that name the file); anything else is left as it is."""
        import os

        if isinstance(raw_input, (str, os.PathLike)):
            from ..datasets.images import load_image

            return load_image(raw_input)
        return raw_input

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
