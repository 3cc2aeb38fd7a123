"""`load_image(path)`: one file -> a fully decoded PIL image in mode "L" or "RGB", or a clear error.

Why a function of our own rather than ``PIL.Image.open``:

- ``open`` is lazy: a truncated or corrupt file "opens" fine and fails later, deep inside a
  DataLoader worker, without saying which file. We call ``img.load()`` here so it fails *here*,
  and every failure becomes an `ImageLoadError` whose message starts with the path.
- Phones store rotation as an EXIF tag, not in the pixels; we apply it (``exif_transpose``), so
  a portrait photo is portrait for the model too.
- Real folders mix modes (RGBA screenshots, paletted GIFs, 16-bit TIFFs, CMYK JPEGs). The model
  wants L or RGB, so we convert with `hotstart.blocks.Image.to_pil`, the one place that knows how.
- Decompression bombs (a tiny file declaring a gigapixel image) are refused. PIL only *warns*
  between ``MAX_IMAGE_PIXELS`` and twice that; we turn that warning into an error inside a local
  ``warnings.catch_warnings()`` and also check the size ourselves, without touching PIL's globals.
  (``catch_warnings`` swaps the process-wide filter list for the duration, so with threads the
  explicit size check is what guarantees the refusal; DataLoader workers are processes anyway.)

PIL is imported inside the function, so ``import hotstart.datasets`` stays cheap.
"""
from __future__ import annotations

import os
import warnings
from pathlib import Path

from .errors import ImageLoadError

__all__ = ["load_image", "ImageLoadError"]


def load_image(path: str | os.PathLike):
    """Read the image at `path`, decoded now, upright (EXIF), in mode "L" or "RGB".

    Raises `ImageLoadError` (a ValueError) naming `path` when the file is not a readable image:
    corrupt or truncated data, a non-image with an image extension, or more pixels than
    ``PIL.Image.MAX_IMAGE_PIXELS``. A missing file raises the usual `FileNotFoundError`.
    """
    from PIL import Image as PILImage, ImageOps

    from ..blocks import Image as ImageBlock

    path = Path(path)
    # Opening the file ourselves keeps "no such file" / "permission denied" as the OSErrors they
    # are (they already name the path); everything PIL raises after this is about the contents.
    with open(path, "rb") as f:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("error", PILImage.DecompressionBombWarning)
                img = PILImage.open(f)
                _refuse_bomb(img, PILImage.MAX_IMAGE_PIXELS)
                img.load()
                upright = ImageOps.exif_transpose(img)  # a new image, detached from `f`
            return ImageBlock().to_pil(upright, where=str(path))
        except MemoryError:
            raise
        except ImageLoadError:
            raise
        except Exception as e:  # PIL raises a zoo: OSError, SyntaxError, ValueError, struct.error...
            raise ImageLoadError(f"{path}: cannot load image ({_describe(e)})") from e


class _Bomb(Exception):
    pass


def _refuse_bomb(img, max_pixels):
    """Check the declared size before decoding; the warning filter alone is process-global state."""
    if max_pixels and img.width * img.height > max_pixels:
        raise _Bomb(f"{img.width}x{img.height} = {img.width * img.height} pixels is more than "
                    f"PIL.Image.MAX_IMAGE_PIXELS = {max_pixels}; possible decompression bomb")


def _describe(e: Exception) -> str:
    from PIL import Image as PILImage

    if isinstance(e, (_Bomb, PILImage.DecompressionBombError, PILImage.DecompressionBombWarning)):
        return f"decompression bomb: {e}"
    if isinstance(e, PILImage.UnidentifiedImageError):
        return "not an image file PIL can identify (corrupt, or not an image)"
    return f"{type(e).__name__}: {e}"
