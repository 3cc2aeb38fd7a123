"""Errors the datasets package raises, so callers can catch "bad data" apart from bugs.

Both are hotstart errors (`hotstart.errors.HotstartError`: the CLI reports them as one line) and
`ValueError` subclasses: a bad folder, table or file is a bad *value* handed to us, and code that
already catches ValueError keeps working.
"""
from __future__ import annotations

from ..errors import HotstartError
from ..contract.errors import ImageInputError


class DatasetError(HotstartError, ValueError):
    """A dataset is empty, malformed or inconsistent; the message names the path or argument."""


class ImageLoadError(HotstartError, ImageInputError):
    """A file could not be read as an image (corrupt, truncated, not an image, too large).

    The message always starts with the file's path, because the first thing anyone needs when a
    training run dies on sample 48,213 is *which file* it was. It is the model contract's
    `ImageInputError` (a ValueError) too: both refuse the same files with the same kind of error.
    """


class ChecksumError(DatasetError):
    """A downloaded file's sha256 differs from the one declared for it (the file is deleted)."""
