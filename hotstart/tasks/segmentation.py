"""`ImageSegmentation`: a class for every pixel, from ``(Image(), Mask(classes))``.

Image and mask go through the same `ProjectiveTransforms` draw (torchvision picks
nearest-neighbour for the mask), the image is normalized, the mask stays an (H, W) int64 tensor
of class indices. The model is a U-Net-style decoder on the backbone's multi-scale features
(``model_kind = "unet"``: the learner builds it, see hotstart/models/unet.py); its output is
(C, H, W) logits at the input's height and width. Loss: cross entropy over pixels. Metrics:
``pixel_accuracy`` and ``mean_iou`` (hotstart.metrics, equal to torchmetrics').
"""
from __future__ import annotations

import numpy as np

from ..blocks import Mask
from ..contract.outputs import decode_mask
from ..errors import UsageTypeError
from .spatial_base import SpatialImageTask


class ImageSegmentation(SpatialImageTask):
    """``ImageSegmentation((Image(), Mask(classes)), size=(H, W))``."""

    target_kind = Mask
    model_kind = "unet"  # the learner builds an encoder-decoder with `out_channels` output maps

    @property
    def classes(self) -> list:
        return list(self.blocks[1].classes)

    @property
    def out_channels(self) -> int:
        return len(self.classes)

    def output_shape(self) -> tuple[int, int, int]:
        """What the model outputs per sample: a logit map per class, at the encoded size."""
        return (len(self.classes), *self.size)

    def head(self, num_features: int):
        raise UsageTypeError("ImageSegmentation has no pooled head: its model is a U-Net decoder on the backbone's "
                        "features (model_kind='unet'); build it with tasklearner")

    def _mock_target(self, rng, hw):
        return rng.integers(0, len(self.classes), size=hw, dtype=np.uint8)

    def _undo_view(self, flip, dx, dy):
        from .spatial_base import shift

        return (lambda out: out.flip(-1)) if flip else (lambda out: shift(out, -dx, -dy))

    def loss_fn(self):
        import torch.nn as nn

        return nn.CrossEntropyLoss()  # over (N, C, H, W) logits and (N, H, W) class indices

    def metrics(self) -> dict:
        from ..metrics import MeanIoU, PixelAccuracy

        n = len(self.classes)
        return {"pixel_accuracy": PixelAccuracy(num_classes=n), "mean_iou": MeanIoU(num_classes=n)}

    def activation(self, output):
        return output.softmax(-3)  # the class axis of (C, H, W) and of (N, C, H, W)

    def decode_output(self, output):
        """Logits (C, H, W) of one sample -> (mask: H x W uint8 class indices, probabilities (C, H, W))."""
        probs = self.activation(output.detach().float().cpu())
        return decode_mask(probs.numpy()), probs  # the model contract's decoding of a mask

    def decode_prediction(self, output, raw_input):
        """Logits at the encoded size -> (mask, probabilities) at the size of `raw_input`.

        Inference resizes the whole image to `size` (no crop), so undoing it is a resize: the
        logits are interpolated bilinearly to the original height and width, then softmaxed.
        """
        import torch.nn.functional as F

        h, w = _raw_hw(self.blocks[0], raw_input)
        logits = F.interpolate(output.detach().float().cpu()[None], size=(h, w), mode="bilinear",
                               align_corners=False)[0]
        return self.decode_output(logits)


def _raw_hw(block, raw_input) -> tuple[int, int]:
    img = block.to_pil(raw_input)
    return img.height, img.width
