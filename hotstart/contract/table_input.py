"""The inference encoding of a table row: categorify, fill missing, normalize, as training learned.

    enc = TableEncoder(meta["table"])   # the statistics of the training split
    x = enc.encode({"island": "Biscoe", "bill_length_mm": 41.5, ...})   # float32 (width,)

``table`` holds the columns and statistics that hotstart/encodings/tabular.py learns
(``categorical``, ``continuous``, ``na_columns``, ``vocab``, ``median``, ``mean``, ``std``). The
encoded row is ``[category indices (categorical columns, then missing-value indicators)...,
normalized continuous values...]`` as float32: an unseen or missing category is index 0; a missing
number is the training median, and its indicator 2 (1 when present). Training's
`TabularPreprocessing` encodes every row with a `TableEncoder` too: one implementation.

A row is a mapping ``{column: value}`` (a dict, a pandas Series, or a one-row DataFrame), its
column names read as text, as training reads them (``1`` is column ``"1"``, see `as_row`). A value
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

__all__ = ["NA", "is_missing", "category_key", "is_dataframe", "as_row", "finite_number", "row_problem", "TableEncoder"]

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


def is_dataframe(value: Any) -> bool:
    """A pandas DataFrame, duck-typed (it has ``columns`` and ``iloc``): the contract never imports
    pandas. The one test of it in hotstart: the table and series readers (datasets/frames.py),
    `as_row` and `ContractModel.predict_many` all ask it."""
    return hasattr(value, "columns") and hasattr(value, "iloc")


def as_row(value: Any) -> Any:
    """A row as a dict keyed by column names as text, from a dict (or any mapping), a pandas
    Series or a one-row DataFrame (duck-typed: no pandas import); anything else unchanged, for
    `row_problem` to refuse.

    Training reads a table's column names as text (``str(name)``: a CSV header is text, and
    `TableData` turns a DataFrame's ``1`` into ``"1"``), so a row is read the same way: a row of
    the very DataFrame the model was trained on is found by its own keys. Two keys with the same
    text (``1`` and ``"1"``) are an `InputValueError`: which one is the column cannot be told."""
    if is_dataframe(value):
        if len(value) != 1:
            raise InputValueError(f"expected one row, got a DataFrame with {len(value)} rows "
                                  "(predict one row at a time, e.g. df.iloc[[i]])")
        value = {c: value[c].iloc[0] for c in value.columns}
    elif hasattr(value, "index") and hasattr(value, "to_dict") and hasattr(value, "iloc"):  # a Series
        value = value.to_dict()
    if not _is_mapping(value):
        return value
    row = _text_keyed(value)
    if isinstance(row, str):
        raise InputValueError(row)
    return row


def _is_mapping(value: Any) -> bool:
    return hasattr(value, "keys") and hasattr(value, "__getitem__") and not isinstance(value, (str, bytes))


def _text_keyed(row: Any) -> dict | str:
    """A mapping as a dict keyed by text (the row itself when it is one: the usual row, no copy),
    or, as a message, which of its keys have the same text (``1`` and ``"1"``), so are one column."""
    if isinstance(row, dict) and all(type(k) is str for k in row):
        return row
    by_text: dict[str, list] = {}
    for k in row.keys():
        by_text.setdefault(str(k), []).append(k)
    same = next((keys for keys in by_text.values() if len(keys) > 1), None)
    if same is not None:
        return (f"row has {len(same)} keys that read as the same column name {str(same[0])!r}: "
                f"{' and '.join(map(repr, same))} (column names are read as text, as in training); rename one")
    return {text: row[keys[0]] for text, keys in by_text.items()}


def _scalar(v):
    """A one-element tensor or array as its Python number (duck-typed: no torch import)."""
    if hasattr(v, "numel") and hasattr(v, "item") and v.numel() == 1:
        return v.item()
    return v


def finite_number(v: Any) -> float | None:
    """`v` as a finite float when it is one: a number (not a bool), or text that reads as one
    (``"0.126"``: a CSV cell, or a DataFrame column of numbers stored as text, which training reads
    as numbers too: datasets/table_data.py uses this rule); else None (text, an infinity, NaN)."""
    if isinstance(v, (bool, np.bool_, bytes)):
        return None
    try:
        f = float(v)
    except (TypeError, ValueError):
        return None
    return f if math.isfinite(f) else None


def row_problem(row: Any, categorical: Sequence[str], continuous: Sequence[str]) -> str | None:
    """None, or why `row` is not a row of these columns: not a mapping, two keys of the same text
    (see `as_row`), a column absent, a category of a type that has no text, a continuous value
    that is not a finite number. Keys are read as text, as `as_row` reads them."""
    if not _is_mapping(row):
        return f"a table row must be a mapping of column -> value (a dict), got {type(row).__name__}"
    by_text = _text_keyed(row)
    if isinstance(by_text, str):
        return by_text
    absent = [c for c in list(categorical) + list(continuous) if c not in by_text]
    if absent:  # the row's own keys, by repr: an int key 1 and a text key '1' look different
        return f"row has no column(s) {absent}; it has {sorted(row.keys(), key=str)!r}"
    for c in categorical:
        try:
            category_key(_scalar(by_text[c]))
        except TypeError as e:
            return f"column {c!r}: {e}"
    for c in continuous:
        v = _scalar(by_text[c])
        if is_missing(v):
            continue
        if finite_number(v) is not None:
            continue
        if isinstance(v, (str, bytes, bool, np.bool_)) or not isinstance(v, numbers.Real):
            return f"column {c!r} is continuous: expected a number or a missing value, got {type(v).__name__} {v!r}"
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
