"""What the image tasks with a spatial target (a mask, keypoints) share beyond `ImageTask`: a mock
whose target fits its image, and test-time views that can be undone on the output."""
from __future__ import annotations

import numpy as np

from .image_base import ImageTask


class SpatialImageTask(ImageTask):
    """``(Image(), <target on the image's grid>)`` resized / augmented jointly to `size`."""

    targets_on_input_grid = True  # the image is never resized apart from its mask / keypoints

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
