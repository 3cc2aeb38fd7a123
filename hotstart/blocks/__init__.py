"""Blocks: pure descriptions of kinds of data (what the data IS, not how it is stored).

Every block has ``check(value) -> bool``, ``validate(value)`` (raises a clear error),
``mock(rng)`` (a valid random value from a ``numpy.random.Generator``), ``to_dict`` /
``Block.from_dict`` (JSON round trip) and a readable repr.
"""
from .base import Block, BlockValueError
from .encoded import ClassIndex, ImageTensor, OneHotTensor
from .encoded_spatial import KeypointTensor
from .image import Image
from .label import Label, LabelMulti
from .spatial import Continuous, Keypoints, Mask
from .table import TableRow, TableTensor
from .timeseries import SeriesTensor, TimeSeries

__all__ = ["Block", "BlockValueError", "Image", "Label", "LabelMulti", "Mask", "Keypoints",
           "Continuous", "ImageTensor", "ClassIndex", "OneHotTensor", "TableRow", "TableTensor",
           "KeypointTensor", "TimeSeries", "SeriesTensor"]
