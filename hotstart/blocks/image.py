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
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import UsageError
from .base import Block, is_tensor, require_rng

_CONVERTIBLE_MODES = {"1", "L", "LA", "P", "PA", "RGB", "RGBA", "RGBX", "CMYK", "YCbCr", "LAB", "HSV",
                      "I", "I;16", "I;16B", "I;16L", "I;16N", "F"}


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
            if value.width < 1 or value.height < 1:
                return f"image has an empty size {value.size}"
            if value.mode not in _CONVERTIBLE_MODES:
                return f"image mode {value.mode!r} cannot be converted to L or RGB"
            if value.mode in ("I", "F"):
                return _values_problem(np.asarray(value), f"mode {value.mode!r} image",
                                       int_range=(0, 65535) if value.mode == "I" else None)
            return None
        if isinstance(value, np.ndarray):
            if value.ndim == 3 and value.shape[-1] in (1, 3, 4):
                h, w = value.shape[:2]
            elif value.ndim == 2:
                h, w = value.shape
            else:
                return f"array of shape {value.shape} is not H x W or H x W x C (C in 1, 3, 4)"
            if h < 1 or w < 1:
                return f"array image has an empty size {value.shape}"
            return _values_problem(value, "array")
        if is_tensor(value):
            if value.ndim != 3 or value.shape[0] not in (1, 3):
                return f"tensor image of shape {tuple(value.shape)} is not C x H x W with C in 1, 3"
            if str(value.dtype) in ("torch.uint8", "torch.bool"):
                return None
            return _values_problem(_tensor_to_numpy(value), "tensor")
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
        from PIL import Image as PILImage, ImageOps

        self.validate(value, where=where)
        if isinstance(value, np.ndarray):
            value = _array_to_pil(value)
        elif not isinstance(value, PILImage.Image):  # torch tensor C x H x W uint8
            arr = np.moveaxis(_tensor_to_numpy(value), 0, -1)
            value = _array_to_pil(arr)
        value = ImageOps.exif_transpose(value) if value.getexif() else value
        value = _to_l_or_rgb(value)
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


def _values_problem(arr: np.ndarray, what: str, int_range: tuple[int, int] | None = None) -> str | None:
    """The value rules of the module docstring: None, or why `arr`'s values break them."""
    kind = arr.dtype.kind
    if kind == "b" or arr.dtype in (np.uint8, np.uint16):
        return None
    if kind not in "iuf":
        return f"{what} has dtype {arr.dtype}; images need unsigned/signed integers, bool or floats"
    if arr.size == 0:
        return None
    if kind == "f":
        if not np.isfinite(arr).all():
            return f"{what} has NaN or infinite values"
        lo, hi = float(arr.min()), float(arr.max())
        if lo < 0.0 or hi > 1.0:
            return (f"{what} of dtype {arr.dtype} has values in [{lo:g}, {hi:g}]; float images must lie in "
                    f"[0, 1] (for 0..255 data pass uint8, e.g. arr.astype(numpy.uint8))")
        return None
    allowed = int_range or (0, 255)
    lo, hi = int(arr.min()), int(arr.max())
    if lo < allowed[0] or hi > allowed[1]:
        bits = "16-bit" if allowed[1] == 65535 else "8-bit"
        hint = "" if int_range else " (for 16-bit data pass uint16)"
        return (f"{what} of dtype {arr.dtype} has values in {lo}..{hi}; it is read as {bits} data, "
                f"which must lie in {allowed[0]}..{allowed[1]}{hint}")
    return None


def _tensor_to_numpy(t) -> np.ndarray:
    t = t.detach().cpu()
    if str(t.dtype) in ("torch.bfloat16", "torch.float16"):  # numpy has no bfloat16
        t = t.float()
    return t.numpy()


def _sixteen_to_eight(arr: np.ndarray) -> np.ndarray:
    """16-bit values (0..65535) to 8-bit by the fixed range: round(v * 255 / 65535)."""
    return ((arr.astype(np.uint32) * 255 + 32767) // 65535).astype(np.uint8)


def _array_to_pil(arr: np.ndarray):
    """A (validated) array to a PIL image, by the value rules of the module docstring."""
    from PIL import Image as PILImage

    if arr.ndim == 3 and arr.shape[-1] == 1:
        arr = arr[..., 0]
    if arr.dtype.kind == "b":
        arr = arr.astype(np.uint8) * 255
    elif arr.dtype.kind == "f":  # checked to be in [0, 1]
        arr = np.floor(arr.astype(np.float64) * 255.0 + 0.5).astype(np.uint8)
    elif arr.dtype == np.uint16:
        arr = _sixteen_to_eight(arr)
    elif arr.dtype != np.uint8:  # other integers: checked to be 8-bit values
        arr = arr.astype(np.uint8)
    mode = {2: "L"}.get(arr.ndim) or {3: "RGB", 4: "RGBA"}[arr.shape[-1]]
    return PILImage.fromarray(np.ascontiguousarray(arr), mode=mode)


def _to_l_or_rgb(img):
    """Modes other than L / RGB: flatten alpha onto white, expand palettes, scale 16-bit to 8.

    "I;16*" and "I" are 16-bit data (fixed range 0..65535), "F" is [0, 1]: the module's rules,
    checked by `validate` before this runs.
    """
    from PIL import Image as PILImage

    mode = img.mode
    if mode in ("L", "RGB"):
        return img
    if mode in ("I;16", "I;16B", "I;16L", "I;16N", "I"):
        return PILImage.fromarray(_sixteen_to_eight(np.asarray(img).astype(np.int64)), mode="L")
    if mode == "F":
        return _array_to_pil(np.asarray(img))
    if mode == "1":
        return img.convert("L")
    if mode in ("P", "PA"):
        img = img.convert("RGBA")
        mode = "RGBA"
    if mode in ("RGBA", "LA"):
        base = "RGB" if mode == "RGBA" else "L"
        bg = PILImage.new(base, img.size, (255, 255, 255) if base == "RGB" else 255)
        bg.paste(img.convert(base), mask=img.getchannel("A"))
        return bg
    return img.convert("RGB")
