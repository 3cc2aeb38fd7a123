"""`Image`: a 2-D image with 1 (grayscale) or 3 (RGB) channels.

Accepted values: a PIL image, a numpy array (H x W, or H x W x C), or a torch tensor
(C x H x W, what `ProjectiveTransforms` produces). `Image.to_pil` converts the modes that
cameras and editors produce (RGBA, paletted, 16-bit, CMYK, EXIF-rotated) to "L" or "RGB":
conversion, not an error, is the right answer for those.

Pixel values: one fixed rule per dtype / mode, never a range measured on the image itself (two
images of one folder must be scaled alike), and never a silent clip:

| value                                   | rule                                                     |
|-----------------------------------------|----------------------------------------------------------|
| uint8 array / tensor, PIL 8-bit modes   | as is (0..255)                                           |
| bool array / tensor, PIL "1"            | False -> 0, True -> 255                                  |
| uint16 array, PIL "I;16" / "I;16B/L/N"  | 16-bit data: ``round(v * 255 / 65535)`` (fixed range)    |
| PIL "I" (32-bit integers; older Pillow  | 16-bit data as above; values outside 0..65535 -> error   |
| opens 16-bit PNGs as "I")               |                                                          |
| float array / tensor, PIL "F"           | must lie in [0, 1]: ``round(v * 255)``; else -> error    |
|                                         | (`ImagePreprocessing` keeps a float tensor's precision)  |
| other integer arrays / tensors (int8,   | 8-bit values (numpy makes int64 from ``np.array([..])``):|
| int16, int32, int64, uint32, uint64)    | must lie in 0..255; else -> error (use uint16 for 16-bit)|

The errors are `BlockValueError`s that name the value range found and the rule broken, so
``check`` is False for such values and `load_image` reports the file.

The rules and the mode conversion are implemented once, in the model contract
(hotstart/contract/images.py, which needs them without torch or the rest of hotstart); this block
imports them, so every runtime and training convert every pixel alike.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import UsageError
from ..contract.images import (array_image_problem, array_to_pil, pil_image_problem, pixel_values_problem,
                         to_l_or_rgb, upright)
from .base import Block, is_tensor, require_rng


class Image(Block):
    """A 2-D image. `channels` is 1, 3, or None (whatever the data has; 3 when mocking).

    `size` (H, W) is None for raw data of any size; encodings that resize (ProjectiveTransforms)
    return an `Image` block with the size they produce, so later encodings know it statically.
    """

    def __init__(self, channels: int | None = None, size=None):
        if channels not in (None, 1, 3):
            raise UsageError(f"Image(channels=...) must be 1, 3 or None, got {channels!r}")
        self.channels = channels
        self.size = None if size is None else tuple(int(s) for s in size)
        if self.size is not None and (len(self.size) != 2 or min(self.size) < 1):
            raise UsageError(f"Image(size=...) must be (height, width) with positive values, got {size!r}")

    def _params(self):
        p = {"channels": self.channels}
        if self.size is not None:
            p["size"] = list(self.size)
        return p

    def _problem(self, value: Any) -> str | None:
        problem = self._kind_problem(value)
        if problem is None and self.size is not None:
            hw = _hw(value)
            if hw != self.size:
                return f"image size (H, W) = {hw} differs from the block's {self.size}"
        return problem

    def _kind_problem(self, value: Any) -> str | None:
        try:
            from PIL import Image as PILImage
        except ImportError:  # pragma: no cover
            PILImage = None
        if PILImage is not None and isinstance(value, PILImage.Image):
            return pil_image_problem(value)
        if isinstance(value, np.ndarray):
            return array_image_problem(value)
        if is_tensor(value):
            if value.ndim != 3 or value.shape[0] not in (1, 3):
                return f"tensor image of shape {tuple(value.shape)} is not C x H x W with C in 1, 3"
            if str(value.dtype) in ("torch.uint8", "torch.bool"):
                return None
            return pixel_values_problem(_tensor_to_numpy(value), "tensor")
        return f"expected a PIL image, a numpy array or a C x H x W tensor, got {type(value).__name__}"

    def mock(self, rng: np.random.Generator):
        """A random RGB (or L) PIL image of random size between 16 and 48 pixels a side."""
        from PIL import Image as PILImage

        rng = require_rng(rng)
        h, w = self.size or (int(v) for v in rng.integers(16, 49, size=2))
        c = self.channels or 3
        arr = rng.integers(0, 256, size=(h, w, c), dtype=np.uint8)
        return PILImage.fromarray(arr[..., 0] if c == 1 else arr, mode="L" if c == 1 else "RGB")

    def to_pil(self, value: Any, *, where: str | None = None):
        """Convert any accepted value to a PIL image in mode "L" or "RGB" (per `channels`)."""
        from PIL import Image as PILImage

        self.validate(value, where=where)
        if isinstance(value, np.ndarray):
            value = array_to_pil(value)
        elif not isinstance(value, PILImage.Image):  # torch tensor C x H x W
            value = array_to_pil(np.moveaxis(_tensor_to_numpy(value), 0, -1))
        value = to_l_or_rgb(upright(value))
        if self.channels == 1 and value.mode != "L":
            value = value.convert("L")
        elif self.channels == 3 and value.mode != "RGB":
            value = value.convert("RGB")
        return value


def _hw(value) -> tuple[int, int]:
    if isinstance(value, np.ndarray):
        return tuple(value.shape[:2])
    if hasattr(value, "height") and not hasattr(value, "ndim"):
        return (value.height, value.width)
    return tuple(int(s) for s in value.shape[-2:])


def _tensor_to_numpy(t) -> np.ndarray:
    t = t.detach().cpu()
    if str(t.dtype) in ("torch.bfloat16", "torch.float16"):  # numpy has no bfloat16
        t = t.float()
    return t.numpy()
