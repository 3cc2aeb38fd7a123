"""`KeypointScaling`: keypoints in pixels of the encoded image <-> coordinates in [-1, 1].

It runs after `ProjectiveTransforms`, so the points it sees are already in the encoded image's
pixel coordinates (the same crop, flip and rotation as the image). Pixel coordinates follow
torchvision's keypoint kernels: pixel (column i, row j) has its centre at (i, j). Scaling maps the
image's *edges* to -1 and +1::

    x_scaled = (x + 0.5) / W * 2 - 1        x = (x_scaled + 1) / 2 * W - 0.5

Points that leave the image (a crop or a rotation pushed them out) are kept as they are: their
scaled coordinates lie outside [-1, 1] and they still count in the loss and the metric. The
model's output is not squashed (no tanh), so it can say where such a point went; nothing is
clipped or masked, which keeps every target well defined and every batch the same shape.

Both directions are the model contract's (`points_to_unit`, `points_from_unit` in
hotstart/contract/outputs.py), the functions a runtime decodes a keypoint model's output with.
"""
from __future__ import annotations


from ..blocks import Keypoints, KeypointTensor
from ..contract.outputs import points_from_unit, points_to_unit
from ..errors import UsageError
from .base import Context, Encoding


class KeypointScaling(Encoding):
    """`Keypoints` in pixels of an image of `size` (H, W) -> `KeypointTensor` (2n values in [-1, 1])."""

    def __init__(self, size):
        self.size = tuple(int(s) for s in size)
        if len(self.size) != 2 or min(self.size) < 1:
            raise UsageError(f"KeypointScaling(size=...) must be (height, width), got {size!r}")

    def _params(self):
        return {"size": list(self.size)}

    def applies(self, block):
        return isinstance(block, Keypoints)

    def encoded_block(self, block):
        return KeypointTensor(block.n) if isinstance(block, Keypoints) else None

    def encode(self, block, value, context, rng=None):
        import torch

        pts = value.detach().cpu().float().numpy() if torch.is_tensor(value) else value
        return torch.from_numpy(points_to_unit(pts, self.size).reshape(-1))

    def decode(self, block, value, context=Context.INFERENCE):
        """(2n,) scaled coordinates -> an (n, 2) float32 array in pixels of the encoded image."""
        import torch

        v = value.detach().cpu().float().numpy() if torch.is_tensor(value) else value
        return points_from_unit(v, self.size)
