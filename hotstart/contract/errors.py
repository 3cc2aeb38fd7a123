"""The contract's errors: plain ``ValueError`` subclasses, not hotstart's `HotstartError`.

The contract imports nothing of hotstart's (a bundle copies it alone, beside ``predictor.py``), so
its errors derive from the built-in only. hotstart's callers wrap or extend them:
``datasets.ImageLoadError`` derives from `ImageInputError`, and the command line turns each into
one line that names the file, row, column or key.
"""
from __future__ import annotations

__all__ = ["MetadataError", "ImageInputError", "InputValueError"]


class MetadataError(ValueError):
    """A model file's hotstart metadata is damaged, or does not match the model it describes; the
    message names the file and the key. Decoding with wrong metadata would give wrong labels
    without a word, so every key is checked when the model is opened."""


class ImageInputError(ValueError):
    """An image input that cannot be read (corrupt, not an image, a decompression bomb) or whose
    pixel values break the value rules (contract/images.py); the message names the file when there
    is one. hotstart's `datasets.ImageLoadError` derives from it: the predictor and
    ``learner.predict`` refuse the same files with the same kind of error."""


class InputValueError(ValueError):
    """A table row or a series that the model cannot take: a missing column, text in a continuous
    column, a value that is not finite or that overflows float32 once normalized. The message names
    the column (or channel and step); callers that read files add the file and the line."""
