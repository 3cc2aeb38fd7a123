"""Image inputs: reading a file, the pixel value rules, and the conversion to "L" or "RGB" that
every image goes through before it is resized (contract/image_input.py).

The value rules, one per dtype / mode (the table is in hotstart/blocks/image.py's docstring):
uint8 as is; bool 0/255; uint16 and PIL "I;16*" / "I" by the fixed 16-bit range round(v*255/65535)
("I" outside 0..65535 refused); floats and PIL "F" must lie in [0, 1], round(v*255); other integer
dtypes must be 8-bit values 0..255. Never a range measured on the image, never a clip. Files are
decoded upright (their EXIF orientation applied); alpha is flattened onto white; palettes expanded.

hotstart's `Image` block, the dataset readers and every runtime use these functions rather than a
copy: a deployed model must see the pixels it was trained on (a copy once drifted: `v >> 8` for
16-bit, "F" divided by 255, mode "I" <= 255 taken as 8-bit, out-of-range values clipped).
"""
from __future__ import annotations

import os

import numpy as np

from .errors import ImageInputError

__all__ = ["CONVERTIBLE_MODES", "pixel_values_problem", "array_image_problem", "pil_image_problem",
           "sixteen_to_eight", "array_to_pil", "to_l_or_rgb", "upright", "decompression_bomb_problem",
           "read_image_file", "load_image"]

CONVERTIBLE_MODES = frozenset({"1", "L", "LA", "P", "PA", "RGB", "RGBA", "RGBX", "CMYK", "YCbCr", "LAB", "HSV",
                               "I", "I;16", "I;16B", "I;16L", "I;16N", "F"})


def pixel_values_problem(arr: np.ndarray, what: str, int_range: tuple[int, int] | None = None) -> str | None:
    """The value rules above: None, or why `arr`'s values break them (`int_range`: PIL "I" images)."""
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


def array_image_problem(arr: np.ndarray) -> str | None:
    """None, or why a numpy array is not an image (shape H x W or H x W x C, C in 1, 3, 4; values)."""
    if not (arr.ndim == 2 or (arr.ndim == 3 and arr.shape[-1] in (1, 3, 4))):
        return f"array of shape {arr.shape} is not H x W or H x W x C (C in 1, 3, 4)"
    if arr.shape[0] < 1 or arr.shape[1] < 1:
        return f"array image has an empty size {arr.shape}"
    return pixel_values_problem(arr, "array")


def pil_image_problem(img) -> str | None:
    """None, or why a PIL image cannot be converted to L or RGB (empty, unknown mode, "I" / "F" values)."""
    if img.width < 1 or img.height < 1:
        return f"image has an empty size {img.size}"
    if img.mode not in CONVERTIBLE_MODES:
        return f"image mode {img.mode!r} cannot be converted to L or RGB"
    if img.mode in ("I", "F"):
        return pixel_values_problem(np.asarray(img), f"mode {img.mode!r} image",
                                    int_range=(0, 65535) if img.mode == "I" else None)
    return None


def sixteen_to_eight(arr: np.ndarray) -> np.ndarray:
    """16-bit values (0..65535) to 8-bit by the fixed range: round(v * 255 / 65535)."""
    return ((arr.astype(np.uint32) * 255 + 32767) // 65535).astype(np.uint8)


def array_to_pil(arr: np.ndarray):
    """An array that `array_image_problem` accepts -> a PIL image (L, RGB or RGBA), by the value rules."""
    from PIL import Image

    if arr.ndim == 3 and arr.shape[-1] == 1:
        arr = arr[..., 0]
    if arr.dtype.kind == "b":
        arr = arr.astype(np.uint8) * 255
    elif arr.dtype.kind == "f":  # checked to be in [0, 1]
        arr = np.floor(arr.astype(np.float64) * 255.0 + 0.5).astype(np.uint8)
    elif arr.dtype == np.uint16:
        arr = sixteen_to_eight(arr)
    elif arr.dtype != np.uint8:  # other integers: checked to be 8-bit values
        arr = arr.astype(np.uint8)
    mode = {2: "L"}.get(arr.ndim) or {3: "RGB", 4: "RGBA"}[arr.shape[-1]]
    return Image.fromarray(np.ascontiguousarray(arr), mode=mode)


def to_l_or_rgb(img):
    """A PIL image that `pil_image_problem` accepts -> mode L or RGB: alpha flattened onto white,
    palettes expanded, "I;16*" / "I" scaled by the fixed 16-bit range, "F" read as [0, 1]."""
    from PIL import Image

    mode = img.mode
    if mode in ("L", "RGB"):
        return img
    if mode in ("I;16", "I;16B", "I;16L", "I;16N", "I"):
        return Image.fromarray(sixteen_to_eight(np.asarray(img).astype(np.int64)), mode="L")
    if mode == "F":
        return array_to_pil(np.asarray(img))
    if mode == "1":
        return img.convert("L")
    if mode in ("P", "PA"):
        img, mode = img.convert("RGBA"), "RGBA"
    if mode in ("RGBA", "LA"):
        base = "RGB" if mode == "RGBA" else "L"
        bg = Image.new(base, img.size, (255, 255, 255) if base == "RGB" else 255)
        bg.paste(img.convert(base), mask=img.getchannel("A"))
        return bg
    return img.convert("RGB")


def upright(img):
    """The image as displayed: its EXIF orientation applied (phones store rotation as a tag)."""
    from PIL import ImageOps

    return ImageOps.exif_transpose(img) if img.getexif() else img


def decompression_bomb_problem(width: int, height: int) -> str | None:
    """None, or why an image of this declared size is refused: more pixels than
    ``PIL.Image.MAX_IMAGE_PIXELS`` (read now, so a caller's setting counts). PIL itself only warns
    between that limit and twice it; this check, made before decoding, refuses all of them."""
    from PIL import Image

    limit = Image.MAX_IMAGE_PIXELS
    if limit and width * height > limit:
        return (f"decompression bomb: {width}x{height} = {width * height} pixels is more than "
                f"PIL.Image.MAX_IMAGE_PIXELS = {limit}")
    return None


def read_image_file(path):
    """The image file at `path`, decoded now (not lazily) and upright, in its own mode.

    A missing or unreadable file raises the usual OSError (it names the path); contents that are
    not a readable image, or a decompression bomb, raise `ImageInputError` naming the path.
    """
    import warnings

    from PIL import Image

    path = os.fspath(path)
    with open(path, "rb") as f:
        try:
            with warnings.catch_warnings():  # the explicit size check below is what guarantees it
                warnings.simplefilter("error", Image.DecompressionBombWarning)
                img = Image.open(f)
                problem = decompression_bomb_problem(img.width, img.height)
                if problem:
                    raise ImageInputError(f"{path}: cannot load image ({problem})")
                img.load()  # the pixels are in memory now: the image no longer reads `f`
                # no copy to detach it: a copy cost 0.1 ms of the folder workload's ~1.5 ms an image
                return upright(img)
        except MemoryError:
            raise
        except ImageInputError:
            raise
        except Exception as e:  # PIL raises a zoo: OSError, SyntaxError, ValueError, struct.error...
            raise ImageInputError(f"{path}: cannot load image ({_describe_read_error(e)})") from e


def _describe_read_error(e: Exception) -> str:
    from PIL import Image

    if isinstance(e, (Image.DecompressionBombError, Image.DecompressionBombWarning)):
        return f"decompression bomb: {e}"
    if isinstance(e, Image.UnidentifiedImageError):
        return "not an image file PIL can identify (corrupt, or not an image)"
    return f"{type(e).__name__}: {e}"


def load_image(x):
    """A path, a PIL image or a numpy array (H x W, H x W x C) -> PIL image in mode L or RGB.

    Bad values raise `ImageInputError` naming the file (or "array" / "image")."""
    from PIL import Image

    where = None
    if isinstance(x, (str, os.PathLike)):
        where = os.fspath(x)
        x = read_image_file(x)
    if isinstance(x, np.ndarray):
        problem = array_image_problem(x)
        if problem:
            raise ImageInputError(problem)
        x = array_to_pil(x)
    elif not isinstance(x, Image.Image):
        raise TypeError(f"expected an image path, a PIL image or a numpy array, got {type(x).__name__}")
    problem = pil_image_problem(x)
    if problem:
        raise ImageInputError(f"{where}: {problem}" if where else problem)
    return to_l_or_rgb(x if where is not None else upright(x))  # read_image_file made a file upright
