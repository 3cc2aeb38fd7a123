"""The inference encoding of an image: read, convert, resize, scale, adapt channels, normalize.

    pixels = resized_pixels("cat.jpg", meta)      # H x W x C uint8 at the model's size and mode
    x = encode_image("cat.jpg", meta)             # C x H x W float32, what the model takes

`meta` holds the keys the schema checks for an image input (``size``, ``channels``,
``image_mode``, ``mean``, ``std``). The steps:

1. the image is read and converted by contract/images.py (EXIF rotation; alpha flattened onto
   white; palettes expanded; 16-bit scaled to 8 by a fixed range; floats read as [0, 1]; L or RGB),
   then to ``image_mode`` when that is "L" or "RGB";
2. resized to ``size`` by contract/resize.py (torchvision's antialiased bilinear on uint8);
3. `normalize_pixels`: / 255, gray repeated to RGB (or RGB to luminance), (x - mean) / std in
   float32. Training's `ImagePreprocessing` calls `normalize_pixels` too, in every context.

`resized_pixels` is also what the C export's ``hotstart_predict`` takes (hotstart/export/c/).
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

from .images import load_image
from .resize import resize_uint8

__all__ = ["resized_pixels", "normalize_pixels", "encode_image", "LUMINANCE"]

LUMINANCE = (0.299, 0.587, 0.114)  # ITU-R 601-2, as PIL's convert("L")


def resized_pixels(x, meta: dict) -> np.ndarray:
    """A raw image -> H x W x C uint8 at the model's size and mode: the encoding before normalization."""
    img = load_image(x)
    mode = meta.get("image_mode", "auto")
    if mode in ("L", "RGB") and img.mode != mode:
        img = img.convert(mode)
    arr = np.asarray(img, dtype=np.uint8)
    arr = arr[..., None] if arr.ndim == 2 else arr
    return resize_uint8(arr, meta["size"])


def normalize_pixels(x: np.ndarray, channels: int, mean: Sequence[float], std: Sequence[float]) -> np.ndarray:
    """C x H x W pixels (uint8 0..255, or floating point in [0, 1]) -> float32 (channels x H x W):
    scaled to [0, 1], gray repeated to RGB or RGB reduced to luminance, then (x - mean) / std."""
    x = x.astype(np.float32) / np.float32(255.0) if x.dtype == np.uint8 else np.asarray(x, dtype=np.float32)
    if x.shape[0] != channels:
        if channels == 3:  # gray -> RGB
            x = np.broadcast_to(x, (3, *x.shape[1:]))
        else:  # RGB -> luminance, in float
            x = (x * np.array(LUMINANCE, dtype=np.float32).reshape(3, 1, 1)).sum(0, keepdims=True)
    mean = np.asarray(mean, dtype=np.float32).reshape(-1, 1, 1)
    std = np.asarray(std, dtype=np.float32).reshape(-1, 1, 1)
    return (x - mean) / std


def encode_image(x, meta: dict) -> np.ndarray:
    """A raw image -> C x H x W float32, normalized: the inference encoding of an Image."""
    pixels = np.moveaxis(resized_pixels(x, meta), -1, 0)
    return normalize_pixels(pixels, int(meta["channels"]), meta["mean"], meta["std"])
