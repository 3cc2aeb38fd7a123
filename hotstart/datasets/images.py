"""`load_image(path)`: one file -> a fully decoded PIL image in mode "L" or "RGB", or a clear error.

Why a function of our own rather than ``PIL.Image.open``:

- ``open`` is lazy: a truncated or corrupt file "opens" fine and fails later, deep inside a
  DataLoader worker, without saying which file. We call ``img.load()`` here so it fails *here*,
  and every failure becomes an `ImageLoadError` whose message starts with the path.
- Phones store rotation as an EXIF tag, not in the pixels; we apply it (``exif_transpose``), so
  a portrait photo is portrait for the model too.
- Real folders mix modes (RGBA screenshots, paletted GIFs, 16-bit TIFFs, CMYK JPEGs). The model
  wants L or RGB, so we convert by the value rules of `hotstart.blocks.image`.
- Decompression bombs (a tiny file declaring a gigapixel image) are refused. PIL only *warns*
  between ``MAX_IMAGE_PIXELS`` and twice that; we check the declared size ourselves before
  decoding, without touching PIL's globals.

The reading and converting is the model contract's `load_image` (hotstart/contract/images.py:
every runtime must refuse and convert exactly as training does, so the contract holds the one
implementation, which `hotstart.blocks.Image.to_pil` uses too).

PIL is imported inside the function, so ``import hotstart.datasets`` stays cheap.
"""
from __future__ import annotations

import os

from .errors import ImageLoadError

__all__ = ["load_image", "ImageLoadError"]


def load_image(path: str | os.PathLike):
    """Read the image at `path`, decoded now, upright (EXIF), in mode "L" or "RGB".

    Raises `ImageLoadError` (a ValueError) naming `path` when the file is not a readable image:
    corrupt or truncated data, a non-image with an image extension, or more pixels than
    ``PIL.Image.MAX_IMAGE_PIXELS``. A missing file raises the usual `FileNotFoundError`.
    Reading and converting is the model contract's `load_image` (the same code as
    `Image.to_pil`), so a deployed model reads every file as training did.
    """
    from ..contract.errors import ImageInputError
    from ..contract.images import load_image as read_and_convert

    try:
        return read_and_convert(path)
    except ImageLoadError:
        raise
    except ImageInputError as e:
        raise ImageLoadError(str(e)) from e
