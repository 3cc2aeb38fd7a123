"""What the image tasks with a spatial target (a mask, keypoints) share: size, augmentation,
normalization stats (saved with the task), and a mock whose target fits its image."""
from __future__ import annotations

from typing import Sequence

import numpy as np

from ..blocks import Block, Image
from ..encodings import ImagePreprocessing, ProjectiveTransforms
from .base import SupervisedTask


class SpatialImageTask(SupervisedTask):
    """``(Image(), <target on the image's grid>)`` resized / augmented jointly to `size`."""

    target_kind: type = Block

    def __init__(self, blocks: Sequence[Block], size=(128, 128), augment: bool | dict = True, mean=None, std=None):
        blocks = tuple(blocks)
        name = type(self).__name__
        if len(blocks) != 2 or not isinstance(blocks[0], Image) or not isinstance(blocks[1], self.target_kind):
            raise TypeError(f"{name} needs blocks=(Image(), {self.target_kind.__name__}(...)), got {blocks!r}")
        projective = ProjectiveTransforms(size, augment=augment)
        self.size = projective.size
        self.augment = projective.augment
        channels = blocks[0].channels or 3
        super().__init__(blocks, [projective, ImagePreprocessing(mean, std, channels=channels),
                                  *self._target_encodings()])

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

    def mock_sample(self, rng: np.random.Generator) -> tuple:
        """An image of random size and a target drawn for *that* size (a mask of the same shape)."""
        image = self.blocks[0].mock(rng)
        return image, self._mock_target(rng, (image.height, image.width))

    def _mock_target(self, rng, hw):
        raise NotImplementedError

    # --- test-time augmentation: views of an encoded batch that can be undone on the output ----
    def tta_views(self, n: int) -> list:
        """`n` pairs (apply to an encoded (N, C, H, W) batch, undo on the model's output): a
        horizontal flip when training flips, then shifts by 1, 2, ... pixels (edges repeated)."""
        flip = self.augment is True or (isinstance(self.augment, dict) and self.augment.get("flip", 0.5) > 0)
        views = [(True, 0, 0)] if flip else []
        step = 1
        while len(views) < n:
            views += [(False, step, 0), (False, 0, step), (False, -step, 0), (False, 0, -step)]
            step += 1
        return [(_view(f, dx, dy), self._undo_view(f, dx, dy)) for f, dx, dy in views[:n]]

    def _undo_view(self, flip: bool, dx: int, dy: int):
        raise NotImplementedError

    def to_dict(self) -> dict:
        mean, std = self.stats
        return {"kind": type(self).__name__, "blocks": [b.to_dict() for b in self.blocks],
                "size": list(self.size), "augment": self.augment, "mean": list(mean), "std": list(std)}

    @classmethod
    def _from_params(cls, d):
        return cls([Block.from_dict(b) for b in d["blocks"]], size=d["size"], augment=d["augment"],
                   mean=d["mean"], std=d["std"])

    def __repr__(self):
        return f"{type(self).__name__}(blocks={self.blocks!r}, size={self.size})"


def _view(flip: bool, dx: int, dy: int):
    def apply(x):
        return x.flip(-1) if flip else shift(x, dx, dy)
    return apply


def shift(x, dx: int, dy: int):
    """Translate (..., H, W) maps by (dx, dy) pixels, repeating the edge into the gap."""
    import torch.nn.functional as F

    p = max(abs(dx), abs(dy))
    if p == 0:
        return x
    h, w = x.shape[-2:]
    padded = F.pad(x, (p, p, p, p), mode="replicate")
    return padded[..., p - dy:p - dy + h, p - dx:p - dx + w]
