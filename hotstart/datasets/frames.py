"""pandas DataFrames as the table and series readers take them, without importing pandas.

`TableData` and `TimeSeriesData` both accept a DataFrame; both recognise one the same way and
name a row the same way in their errors (its position, and its index label when that differs),
so a user fixing "row 2 (index 12)" finds the same row whichever reader said it.
"""
from __future__ import annotations

from typing import Callable

from ..contract.table_input import is_dataframe  # the one duck-typed test (no pandas import)

__all__ = ["is_dataframe", "row_namer"]


def row_namer(frame) -> Callable[[int], str]:
    """Row position -> how an error names it: ``row 2``, or ``row 2 (index 12)`` where the
    DataFrame's index label is not the position (after a filter, or a custom index)."""
    index = list(frame.index)
    return lambda i: f"row {i}" if index[i] == i else f"row {i} (index {index[i]!r})"
