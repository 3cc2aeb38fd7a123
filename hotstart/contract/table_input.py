"""The inference encoding of a table row: categorify, fill missing, normalize, as training learned.

    enc = TableEncoder(meta["table"])   # the statistics of the training split
    x = enc.encode({"island": "Biscoe", "bill_length_mm": 41.5, ...})   # float32 (width,)

``table`` holds the columns and statistics that hotstart/encodings/tabular.py learns
(``categorical``, ``continuous``, ``na_columns``, ``vocab``, ``median``, ``mean``, ``std``). The
encoded row is ``[category indices (categorical columns, then missing-value indicators)...,
normalized continuous values...]`` as float32: an unseen or missing category is index 0; a missing
number is the training median, and its indicator 2 (1 when present). Training's
`TabularPreprocessing` encodes every row with a `TableEncoder` too: one implementation.

A row is a mapping ``{column: value}`` (a dict, a pandas Series, or a one-row DataFrame). A value
the model cannot take is an `InputValueError` naming the column: text in a continuous column, an
infinity, or a number so large that, normalized, it overflows float32 (a 1e308 cell would
otherwise become infinite, and every probability NaN).
"""
from __future__ import annotations

import math
import numbers
from typing import Any, Sequence

import numpy as np

from .errors import InputValueError

__all__ = ["NA", "is_missing", "category_key", "as_row", "row_problem", "TableEncoder"]

NA = "#na#"  # index 0 of every vocabulary: missing or unseen
FLOAT32_MAX = float(np.finfo(np.float32).max)


def is_missing(value: Any) -> bool:
    """None, NaN (float or numpy), or pandas' NA / NaT, without importing pandas."""
    if value is None:
        return True
    if isinstance(value, (float, np.floating)):
        return math.isnan(value)
    return type(value).__name__ in ("NAType", "NaTType")


def category_key(value: Any) -> str | None:
    """The text a categorical value is known by: None when missing; integral numbers without
    a fraction (``2007.0`` -> ``"2007"``); booleans as ``"True"`` / ``"False"``; text as is.
    Anything else is a `TypeError`."""
    if is_missing(value):
        return None
    if isinstance(value, (bool, np.bool_)):
        return str(bool(value))
    if isinstance(value, numbers.Integral):
        return str(int(value))
    if isinstance(value, numbers.Real):
        f = float(value)
        return str(int(f)) if f.is_integer() else repr(f)
    if isinstance(value, str):
        return value
    raise TypeError(f"a category must be text, a number, a bool or missing, got {type(value).__name__} {value!r}")


def as_row(value: Any) -> Any:
    """A dict from a one-row pandas DataFrame or a Series; anything else unchanged (duck-typed:
    no pandas import)."""
    if hasattr(value, "columns") and hasattr(value, "iloc"):  # a DataFrame
        if len(value) != 1:
            raise InputValueError(f"expected one row, got a DataFrame with {len(value)} rows "
                                  "(predict one row at a time, e.g. df.iloc[[i]])")
        return {c: value[c].iloc[0] for c in value.columns}
    if hasattr(value, "index") and hasattr(value, "to_dict") and hasattr(value, "iloc"):  # a Series
        return value.to_dict()
    return value


def _scalar(v):
    """A one-element tensor or array as its Python number (duck-typed: no torch import)."""
    if hasattr(v, "numel") and hasattr(v, "item") and v.numel() == 1:
        return v.item()
    return v


def row_problem(row: Any, categorical: Sequence[str], continuous: Sequence[str]) -> str | None:
    """None, or why `row` is not a row of these columns: not a mapping, a column absent, a
    category of a type that has no text, a continuous value that is not a finite number."""
    if not (hasattr(row, "keys") and hasattr(row, "__getitem__")) or isinstance(row, (str, bytes)):
        return f"a table row must be a mapping of column -> value (a dict), got {type(row).__name__}"
    keys = set(row.keys())
    absent = [c for c in list(categorical) + list(continuous) if c not in keys]
    if absent:
        return f"row has no column(s) {absent}; it has {sorted(map(str, keys))}"
    for c in categorical:
        try:
            category_key(_scalar(row[c]))
        except TypeError as e:
            return f"column {c!r}: {e}"
    for c in continuous:
        v = _scalar(row[c])
        if is_missing(v):
            continue
        if isinstance(v, (str, bytes)) or not isinstance(v, numbers.Real):
            return f"column {c!r} is continuous: expected a number or a missing value, got {type(v).__name__} {v!r}"
        if not math.isfinite(float(v)):
            return f"column {c!r}: {v!r} is not a finite number"
    return None


class TableEncoder:
    """Encodes rows with one table's statistics (the ``table`` metadata key, or
    `TabularPreprocessing`'s JSON): the lookups are built once, each row is then a few loops."""

    def __init__(self, table: dict):
        self.categorical = list(table["categorical"])
        self.continuous = list(table["continuous"])
        self.na_columns = list(table["na_columns"])
        self.index = {c: {str(v): i for i, v in enumerate(table["vocab"][c])} for c in self.categorical}
        self.fill = np.array([table["median"][c] for c in self.continuous], dtype=np.float64)
        self.mean = np.array([table["mean"][c] for c in self.continuous], dtype=np.float64)
        self.std = np.array([table["std"][c] for c in self.continuous], dtype=np.float64)
        self.na_positions = [self.continuous.index(c) for c in self.na_columns]

    @property
    def width(self) -> int:
        return len(self.categorical) + len(self.na_columns) + len(self.continuous)

    def encode(self, row: Any) -> np.ndarray:
        """One row -> float32 (width,); an `InputValueError` naming the column for a value it cannot take."""
        return self.encode_rows([row])[0]

    def encode_rows(self, rows: Sequence[Any]) -> np.ndarray:
        """Rows -> float32 (N, width)."""
        n_cat, n_na = len(self.categorical), len(self.na_columns)
        out = np.empty((len(rows), self.width), dtype=np.float32)
        raw = np.empty(len(self.continuous), dtype=np.float64)
        for r, row in enumerate(rows):
            row = as_row(row)
            problem = row_problem(row, self.categorical, self.continuous)
            if problem:
                raise InputValueError(problem)
            for j, c in enumerate(self.categorical):
                key = category_key(_scalar(row[c]))
                out[r, j] = self.index[c].get(key, 0)  # unseen or missing: 0
            for j, c in enumerate(self.continuous):
                v = _scalar(row[c])
                raw[j] = math.nan if is_missing(v) else float(v)
            missing = np.isnan(raw)
            for k, j in enumerate(self.na_positions):
                out[r, n_cat + k] = 2.0 if missing[j] else 1.0
            z = (np.where(missing, self.fill, raw) - self.mean) / self.std
            if not (np.abs(z) <= FLOAT32_MAX).all():
                j = int(np.argmax(~(np.abs(z) <= FLOAT32_MAX)))
                raise InputValueError(f"column {self.continuous[j]!r}: {float(raw[j])!r} is out of this model's range: "
                                      f"normalized with the training mean and std it is {z[j]:.3g}, beyond float32's "
                                      f"+-{FLOAT32_MAX:.3g}")
            out[r, n_cat + n_na:] = z
        return out
