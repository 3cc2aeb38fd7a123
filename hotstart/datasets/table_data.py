"""`TableData`: a CSV file or a pandas DataFrame -> ``(Data(rows, targets), (TableRow, Label | Continuous))``.

    data, blocks = TableData("penguins.csv", target="species")          # columns inferred
    data, blocks = TableData(df, categorical=["island", "sex"], continuous=["bill_length_mm"],
                             target="body_mass_g")

Rows are dicts ``{column: value}`` holding the chosen columns; a missing cell is ``None``.
A CSV is read with the standard library (cells ``""``, ``NA``, ``N/A``, ``NaN``, ``nan``, ``NULL``
and ``None`` are missing; a column whose other cells are all numbers becomes numbers). A
DataFrame is read column by column through ``.tolist()``: pandas itself is never imported here.

Which columns are categorical and which continuous, when not given, is decided as fastai's
``cont_cat_split(max_card=20)`` does: a column of numbers that are not all integers, or of more
than 20 distinct integers, is continuous; anything else (text, few integers) is categorical.
The target follows the same rule, unless `regression` says otherwise: a continuous target makes
a `Continuous` block (a regression), a categorical one a `Label` of its sorted values.
"""
from __future__ import annotations

import csv
import math
import os
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from ..blocks import Continuous, Label
from ..blocks.table import TableRow, category_key, is_missing
from .containers import Data
from .errors import DatasetError
from ..errors import UsageTypeError

__all__ = ["TableData", "read_csv_columns", "MISSING_CELLS", "MAX_CARD"]

MISSING_CELLS = frozenset({"", "NA", "N/A", "NaN", "nan", "NULL", "null", "None", "#N/A"})
MAX_CARD = 20  # fastai's cont_cat_split default: integer columns with more distinct values are continuous


def TableData(table, *, target: str | Sequence[str], categorical: Sequence[str] | None = None,  # noqa: N802
              continuous: Sequence[str] | None = None, regression: bool | None = None,
              dropna_target: bool = False):
    """A table -> ``(Data(rows, targets), (TableRow(categorical, continuous), Label(classes) | Continuous(n)))``.

    `table`: a CSV path or a pandas DataFrame. `target`: the column to predict (a list of
    columns for several regression targets). `categorical` / `continuous`: the input columns;
    those not given are inferred from the columns mentioned nowhere else (see the module doc).
    `regression`: force a Continuous (True) or Label (False) target. Rows whose target is missing
    raise an error naming the column, or are dropped with ``dropna_target=True``.
    """
    columns, source = _read_columns(table)
    targets_cols = [target] if isinstance(target, str) else list(target)
    if not targets_cols:
        raise DatasetError("TableData(target=...) needs a column name")
    named = targets_cols + list(categorical or []) + list(continuous or [])
    absent = [c for c in named if c not in columns]
    if absent:
        raise DatasetError(f"TableData: {source} has no column(s) {absent}; available: {list(columns)}")
    overlap = sorted(set(targets_cols) & set(list(categorical or []) + list(continuous or [])))
    if overlap:
        raise DatasetError(f"TableData: target column(s) {overlap} are also listed as inputs")
    n = len(columns[targets_cols[0]])
    if n == 0:
        raise DatasetError(f"TableData: {source} has a header but no rows")

    keep = np.ones(n, dtype=bool)
    for t in targets_cols:
        gone = [i for i, v in enumerate(columns[t]) if is_missing(v)]
        if gone and not dropna_target:
            raise DatasetError(f"TableData: target column {t!r} of {source} has {len(gone)} missing value(s), "
                               f"first in row {gone[0]}; drop those rows (dropna_target=True) or fill them")
        keep[gone] = False
    rows_kept = np.flatnonzero(keep)
    if len(rows_kept) == 0:
        raise DatasetError(f"TableData: every row of {source} has a missing target")

    free = [c for c in columns if c not in set(named)]
    if categorical is None:
        categorical = [c for c in free if not _is_continuous(columns[c]) and (continuous is None or c not in continuous)]
    if continuous is None:
        continuous = [c for c in free if c not in categorical and _is_continuous(columns[c])]
    categorical, continuous = list(categorical), list(continuous)
    for c in categorical + continuous:
        if all(is_missing(columns[c][i]) for i in rows_kept):
            raise DatasetError(f"TableData: column {c!r} of {source} has no values at all (every cell is missing)")
    for c in continuous:
        bad = next((i for i in rows_kept if not is_missing(columns[c][i]) and not _is_number(columns[c][i])), None)
        if bad is not None:
            raise DatasetError(f"TableData: continuous column {c!r} of {source} holds {columns[c][bad]!r} "
                               f"in row {bad}, which is not a number")
    for c in categorical:
        bad = next((i for i in rows_kept if _category_problem(columns[c][i])), None)
        if bad is not None:
            raise DatasetError(f"TableData: categorical column {c!r} of {source}, row {bad}: "
                               f"{_category_problem(columns[c][bad])}")

    row_block = TableRow(categorical, continuous)
    rows = [{**{c: _category_value(columns[c][i]) for c in categorical},
             **{c: _float(columns[c][i]) for c in continuous}} for i in rows_kept]
    is_regression = (len(targets_cols) > 1 or all(_is_continuous(columns[t]) for t in targets_cols)) \
        if regression is None else bool(regression)
    if is_regression:
        for t in targets_cols:
            bad = next((i for i in rows_kept if not _is_number(columns[t][i])), None)
            if bad is not None:
                raise DatasetError(f"TableData: target column {t!r} of {source} holds {columns[t][bad]!r} in row "
                                   f"{bad}, which is not a number (pass regression=False for classes)")
        targets = [np.array([float(columns[t][i]) for t in targets_cols], dtype=np.float32) for i in rows_kept]
        target_block = Continuous(len(targets_cols))
    else:
        if len(targets_cols) > 1:
            raise DatasetError(f"TableData: several target columns {targets_cols} make a regression, not classes")
        t = targets_cols[0]
        targets = [category_key(columns[t][i]) for i in rows_kept]
        target_block = Label(sorted(set(targets)))
    return Data(rows, targets), (row_block, target_block)


def read_csv_columns(path: str | os.PathLike) -> dict[str, list]:
    """A CSV as ``{column: values}``: missing cells None; columns of numbers as floats, others as text."""
    path = Path(path)
    if not path.is_file():
        raise DatasetError(f"TableData: {path} does not exist or is not a file")
    with open(path, newline="", encoding="utf-8-sig") as f:  # -sig: Excel's byte-order mark
        reader = csv.reader(f)
        header = next(reader, None)
        if not header:
            raise DatasetError(f"TableData: {path} is empty (no header row)")
        header = [h.strip() for h in header]
        dup = sorted({h for h in header if header.count(h) > 1})
        if dup or "" in header:
            raise DatasetError(f"TableData: {path} has duplicate or empty column names {dup or ['']}")
        cells: list[list] = [[] for _ in header]
        for line in reader:
            if not line:
                continue
            if len(line) != len(header):
                raise DatasetError(f"TableData: {path} line {reader.line_num} has {len(line)} cells, "
                                   f"the header has {len(header)}")
            for j, cell in enumerate(line):
                cell = cell.strip()
                cells[j].append(None if cell in MISSING_CELLS else cell)
    columns = {}
    for name, values in zip(header, cells):
        numbers = _as_floats(values)
        columns[name] = numbers if numbers is not None else values
    return columns


def _read_columns(table) -> tuple[dict[str, list], str]:
    if isinstance(table, (str, os.PathLike)):
        return read_csv_columns(table), str(table)
    if hasattr(table, "columns") and hasattr(table, "iloc"):  # a pandas DataFrame, duck-typed
        names = [str(c) for c in table.columns]
        if len(set(names)) != len(names):
            raise DatasetError(f"TableData: the DataFrame has duplicate column names {names}")
        return {str(c): table[c].tolist() for c in table.columns}, "the DataFrame"
    raise UsageTypeError(f"TableData takes a CSV path or a pandas DataFrame, got {type(table).__name__}")


def _as_floats(values: list) -> list | None:
    out = []
    for v in values:
        if v is None:
            out.append(None)
            continue
        try:
            f = float(v)
        except ValueError:
            return None
        if not math.isfinite(f):
            return None
        out.append(f)
    return out


def _is_number(v: Any) -> bool:
    if isinstance(v, (bool, np.bool_)) or isinstance(v, (str, bytes)) or is_missing(v):
        return False
    try:
        return math.isfinite(float(v))
    except (TypeError, ValueError):
        return False


def _is_continuous(values: list) -> bool:
    """fastai's cont_cat_split rule: numbers, and either not all integers or more than MAX_CARD distinct."""
    present = [v for v in values if not is_missing(v)]
    if not present or not all(_is_number(v) for v in present):
        return False
    floats = [float(v) for v in present]
    return not all(f.is_integer() for f in floats) or len(set(floats)) > MAX_CARD


def _category_problem(v) -> str | None:
    try:
        category_key(v)
    except TypeError as e:
        return str(e)
    return None


def _category_value(v):
    """A category as its text (None when missing), so CSV and DataFrame rows agree."""
    return category_key(v)


def _float(v) -> float:
    return math.nan if is_missing(v) else float(v)
