"""Series values as float64, or an error naming the first cell that is not a number.

numpy converts a whole table of cells at once, and fast, but when it cannot its error names no
cell: ``could not convert string to float: 'oops'``, ``setting an array element with a sequence``.
A user with 10,000 series needs the series (or DataFrame row) and the step (or column). So the
conversion is tried first, and only when it fails are the cells walked, one by one, to find the
first bad one (`bad_cell_error`): the slow search costs nothing on good data.

A cell is fine when numpy reads it as a float: a number, text that reads as one, or ``None``
(missing, NaN). A cell holding an array is what a numpy object array of series of different
lengths gives: the error says to pass a plain list of arrays, which `TimeSeriesData` takes.
"""
from __future__ import annotations

from typing import Any, Callable, Iterator

import numpy as np

from .errors import DatasetError

__all__ = ["float_cells", "bad_cell_error", "series_place", "LIST_HINT"]

LIST_HINT = ("pass series of different lengths as a plain list of arrays, [a0, a1, ...], each (length,) or "
             "(channels, length)")
"""What to do instead of a numpy object array of series: `TimeSeriesData` takes a list of arrays."""


def float_cells(values, source: str, place: Callable[[tuple[int, ...]], str],
                prefix: tuple[int, ...] = ()) -> np.ndarray:
    """`values` as float64; else a `DatasetError` naming the first bad cell. `source` names the
    whole ("the array"), `place` a cell's position (``prefix`` + its index in `values`)."""
    try:
        return np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError) as e:
        raise bad_cell_error(values, source, place, e, prefix) from None


def bad_cell_error(values, source: str, place: Callable[[tuple[int, ...]], str], error: Exception,
                   prefix: tuple[int, ...] = ()) -> DatasetError:
    """The error for `values`, which numpy could not convert (`error`): the first cell that is not
    a number, by its place; or, when every cell is one, the shape that numpy refused."""
    for path, v in _cells(values, prefix):
        if _is_sequence(v):
            return DatasetError(f"TimeSeriesData: {source} holds {_describe(v)} in {place(path)}, where a number "
                                f"belongs: {LIST_HINT}")
        if not _reads_as_float(v):
            return DatasetError(f"TimeSeriesData: {source} holds {_shown(v)!r} in {place(path)}, which is not a number")
    where = place(prefix) if prefix else source
    return DatasetError(f"TimeSeriesData: {where} cannot be read as an array of numbers ({error}); a series is "
                        f"(length,) or (channels, length), with channels of one length")


def series_place(path: tuple[int, ...]) -> str:
    """A cell of an array or list of series: ``series 3, step 7`` or ``series 3, channel 1, step 7``."""
    head = f"series {path[0]}"
    if len(path) == 1:
        return head
    if len(path) == 2:
        return f"{head}, step {path[1]}"
    if len(path) == 3:
        return f"{head}, channel {path[1]}, step {path[2]}"
    return f"{head}, cell {list(path[1:])}"


def _cells(value, path: tuple[int, ...]) -> Iterator[tuple[tuple[int, ...], Any]]:
    """(index path, cell) in row-major order. Lists are walked into; an array's own cells are not
    (an object array's cells may themselves be arrays: that is the problem to report)."""
    if isinstance(value, (list, tuple)):
        for i, v in enumerate(value):
            yield from _cells(v, path + (i,))
    elif _is_sequence(value):
        for i, v in np.ndenumerate(np.asarray(value, dtype=object)):
            yield path + i, v
    else:
        yield path, value


def _is_sequence(v) -> bool:
    """A list, tuple, array or pandas Series: not text, not a 0-d array."""
    if isinstance(v, (list, tuple)):
        return True
    if isinstance(v, (str, bytes)):
        return False
    return hasattr(v, "__len__") and len(getattr(v, "shape", (0,))) > 0


def _reads_as_float(v) -> bool:
    if v is None:
        return True
    try:
        float(v)
    except (TypeError, ValueError):
        return False
    return True


def _shown(v):
    """numpy scalars as Python's (``'a'``, not ``np.str_('a')``) for the message."""
    return v.item() if isinstance(v, np.generic) else v


def _describe(v) -> str:
    shape = getattr(v, "shape", None)
    return f"an array of shape {tuple(shape)}" if shape is not None else f"a {type(v).__name__} of {len(v)} values"
