"""`ImageKeypointRegression`: where `n` points are, from ``(Image(), Keypoints(n))``.

The points move with the image through every transform (`ProjectiveTransforms` wraps them as
``tv_tensors.KeyPoints``), then `KeypointScaling` maps them to [-1, 1] of the encoded image (points
pushed out of the image stay, outside [-1, 1], and count in the loss; see
hotstart/encodings/keypoints.py). Head: a linear layer to 2n outputs, not squashed.

Loss: L1 (mean absolute error of the scaled coordinates). Why not MSE: the error we care about
is a distance, which grows linearly; MSE's gradient shrinks as the error does, so the last pixel
of precision is learned slowly, and its square lets a few hard samples (a point rotated out of
the image) dominate a batch. L1 keeps a constant pull on every point; facial-landmark work
(Feng et al., "Wing loss", CVPR 2018) found L1 more accurate than L2 for the same reason.
Metric: ``mean_distance``, the mean Euclidean error in pixels of the encoded image.
"""
from __future__ import annotations

import numpy as np

from ..blocks import Keypoints
from ..encodings import KeypointScaling
from .spatial_base import SpatialImageTask


class ImageKeypointRegression(SpatialImageTask):
    """``ImageKeypointRegression((Image(), Keypoints(n)), size=(H, W))``."""

    target_kind = Keypoints

    def _target_encodings(self):
        return [KeypointScaling(self.size)]

    @property
    def n(self) -> int:
        return self.blocks[1].n

    def output_shape(self) -> tuple[int]:
        return (2 * self.n,)

    def head(self, num_features: int):
        import torch.nn as nn

        return nn.Linear(num_features, 2 * self.n)

    def _mock_target(self, rng, hw):
        h, w = hw
        return (rng.random((self.n, 2)) * np.array([w - 1, h - 1])).astype(np.float32)

    def _undo_view(self, flip, dx, dy):
        """Outputs are scaled (x, y) pairs: a flip negates x (pixel centres, see KeypointScaling);
        a shift by dx pixels adds 2 dx / W."""
        import torch

        h, w = self.size
        if flip:
            sign = torch.tensor([-1.0, 1.0])
            return lambda out: (out.reshape(len(out), -1, 2) * sign.to(out.device)).reshape(len(out), -1)
        delta = torch.tensor([2.0 * dx / w, 2.0 * dy / h])
        return lambda out: (out.reshape(len(out), -1, 2) - delta.to(out.device)).reshape(len(out), -1)

    def loss_fn(self):
        import torch.nn as nn

        return nn.L1Loss()

    def metrics(self) -> dict:
        from ..metrics import MeanDistance

        return {"mean_distance": MeanDistance(self.size)}

    def activation(self, output):
        return output

    def decode_output(self, output):
        """(2n,) output -> (points (n, 2) in pixels of the encoded image, the raw scaled output)."""
        out = output.detach().float().cpu()
        return self.encodings[2].decode(None, out), out

    def decode_prediction(self, output, raw_input):
        """(2n,) output -> (points (n, 2) in pixels of `raw_input`, the raw scaled output).

        Inference resizes the image to `size`, which maps x to (x + 0.5) * r - 0.5 (pixel centres
        at integers, see ProjectiveTransforms); this is its inverse.
        """
        points, out = self.decode_output(output)
        img = self.blocks[0].to_pil(raw_input)
        h, w = self.size
        ratio = np.array([img.width / w, img.height / h], dtype=np.float32)
        return ((points + 0.5) * ratio - 0.5).astype(np.float32), out
