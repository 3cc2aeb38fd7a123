"""`ImagePreprocessing`: an image to a normalized float32 C x H x W tensor, and back to PIL.

The normalization stats (`mean`, `std`) belong to the task: they are saved with it, so a loaded
model preprocesses exactly as it was trained. Channels adapt to what the model expects
(grayscale repeated to RGB, or RGB reduced to luminance). The arithmetic is the model contract's
`normalize_pixels` (hotstart/contract/image_input.py), in every context: the predictor and every
runtime normalize with that same function.
"""
from __future__ import annotations

from ..blocks import Image, ImageTensor
from ..contract.image_input import normalize_pixels
from ..blocks.base import is_tensor
from ..errors import UsageError
from .base import Context, Encoding

IMAGENET_MEAN = (0.485, 0.456, 0.406)
"""ImageNet's per-channel pixel means (R, G, B, in [0, 1]): `ImagePreprocessing`'s default for RGB,
the statistics most pretrained backbones were trained with."""
IMAGENET_STD = (0.229, 0.224, 0.225)
"""ImageNet's per-channel pixel standard deviations (R, G, B, in [0, 1]), with `IMAGENET_MEAN`."""
GRAY_MEAN = (0.5,)
GRAY_STD = (0.25,)


class ImagePreprocessing(Encoding):
    """The encoding of an `Image` into the float32 C x H x W tensor a model takes: pixels scaled
    to [0, 1], the channels adapted, then ``(x - mean) / std`` per channel; `decode` undoes it for
    display. The image tasks put it after their augmentation (tasks/image_base.py).

    The arithmetic is the model contract's `normalize_pixels`, the one every runtime of an
    exported model runs too, so a pixel is the same float32 in training, in `predict` and in the
    exported file. The statistics are saved with the task: a loaded model normalizes exactly as
    it was trained (``pretrained=True`` replaces them with the backbone's).

    Args:
        mean (Sequence[float] | None): one value per channel, in [0, 1] pixel units. None:
            ImageNet's (0.485, 0.456, 0.406) for RGB, 0.5 for grayscale.
        std (Sequence[float] | None): one positive value per channel. None: ImageNet's (0.229,
            0.224, 0.225) for RGB, 0.25 for grayscale.
        channels: what the model takes: 3 (RGB; a grayscale image is repeated) or 1 (gray; an
            RGB image becomes its luminance, 0.299 R + 0.587 G + 0.114 B, as PIL's "L").
    """

    def __init__(self, mean=None, std=None, channels: int = 3):
        if channels not in (1, 3):
            raise UsageError(f"ImagePreprocessing(channels=...) must be 1 or 3, got {channels!r}")
        self.channels = channels
        self.mean = tuple(float(m) for m in (mean or (IMAGENET_MEAN if channels == 3 else GRAY_MEAN)))
        self.std = tuple(float(s) for s in (std or (IMAGENET_STD if channels == 3 else GRAY_STD)))
        if len(self.mean) != channels or len(self.std) != channels:
            raise UsageError(f"mean/std need {channels} value(s) each, got mean={self.mean}, std={self.std}")
        if min(self.std) <= 0:
            raise UsageError(f"std must be positive, got {self.std}")

    def _params(self):
        return {"mean": list(self.mean), "std": list(self.std), "channels": self.channels}

    def applies(self, block):
        return isinstance(block, Image)

    def encoded_block(self, block):
        if isinstance(block, Image):
            if block.size is None:  # raw images of any size; shape known only at run time
                return ImageTensor(self.channels, (0, 0))
            return ImageTensor(self.channels, block.size)
        return None

    def encode(self, block, value, context, rng=None):
        import torch

        pixels = image_tensor(block, value).numpy()  # uint8, or float in [0, 1]
        return torch.from_numpy(normalize_pixels(pixels, self.channels, self.mean, self.std))

    def decode(self, block, value, context=Context.INFERENCE):
        """An encoded tensor (C x H x W) back to a PIL image, for display."""
        import torch
        from PIL import Image as PILImage

        x = value.detach().cpu().to(torch.float32)
        x = x * torch.tensor(self.std).view(-1, 1, 1) + torch.tensor(self.mean).view(-1, 1, 1)
        arr = (x.clamp(0, 1) * 255 + 0.5).to(torch.uint8).permute(1, 2, 0).numpy()
        return PILImage.fromarray(arr[..., 0], "L") if arr.shape[-1] == 1 else PILImage.fromarray(arr, "RGB")


def image_tensor(block: Image, value):
    """An `Image` value as a C x H x W tensor: uint8 (0..255), or float in [0, 1].

    uint8 tensors pass as they are; float tensors keep their precision once checked to lie in
    [0, 1] (up to resampling's rounding error, which is clamped away); everything else goes
    through `Image.to_pil`, which applies the value rules of `hotstart.blocks.image` (16-bit by
    a fixed range, errors, never a clip).
    """
    import torch
    import torchvision.transforms.v2.functional as F

    if is_tensor(value) and value.dtype == torch.uint8:
        return value
    if is_tensor(value) and value.is_floating_point():
        # resampling a [0, 1] image can land a rounding error outside: tolerate that, not more
        if value.numel() and not (value.min() >= -1e-4 and value.max() <= 1 + 1e-4):
            block.validate(value)  # raises, naming the range found
        return value.clamp(0.0, 1.0)
    return F.pil_to_tensor(block.to_pil(value))
