"""`TableData`: a CSV file or a pandas DataFrame -> ``(Data(rows, targets), (TableRow, Label | Continuous))``.

    data, blocks = TableData("penguins.csv", target="species")          # columns inferred
    data, blocks = TableData(df, categorical=["island", "sex"], continuous=["bill_length_mm"],
                             target="body_mass_g")

Rows are dicts ``{column: value}`` holding the chosen columns; a missing cell is ``None``.
A CSV is read with the standard library (cells ``""``, ``NA``, ``N/A``, ``#N/A``, ``NaN``, ``NULL``
and ``None`` are missing, in any case: ``NAN`` and ``nan`` too; a column whose other cells are all
numbers becomes numbers; a DataFrame's text cells that read as numbers, as from
``pandas.read_csv(path, dtype=str)``, count as numbers by the same rule). Numbers are trained on
as float32: a number beyond float32's range (``1e308``) in a continuous column or a regression
target is an error naming the file, the line (or the DataFrame's row) and the column, before
training (it would become infinite, and training would only say that it diverged). A DataFrame
is read column by column through ``.tolist()``: pandas itself is never imported here.

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
from typing import Any, Callable, Sequence

import numpy as np

from ..blocks import Continuous, Label
from ..blocks.table import TableRow, category_key, is_missing
from ..contract.table_input import finite_number  # one rule for a number, at training and at predict
from ..contract.table_rows import MISSING_CELLS  # one list of the cells read as missing, here and at predict
from .containers import Data
from .errors import DatasetError
from .frames import is_dataframe, row_namer
from ..errors import UsageTypeError

__all__ = ["TableData", "read_csv_columns", "MISSING_CELLS", "MAX_CARD", "NumbersReadAsCategories"]

FLOAT32_MAX = float(np.finfo(np.float32).max)  # inputs and regression targets are float32
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
    columns, source, row_name = _read_columns(table)
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
                               f"first in {row_name(gone[0])}; drop those rows (dropna_target=True) or fill them")
        keep[gone] = False
    rows_kept = np.flatnonzero(keep)
    if len(rows_kept) == 0:
        raise DatasetError(f"TableData: every row of {source} has a missing target")

    free = [c for c in columns if c not in set(named)]
    if categorical is None:
        categorical = [c for c in free if not _is_continuous(columns[c]) and (continuous is None or c not in continuous)]
    if continuous is None:
        continuous = [c for c in free if c not in categorical and _is_continuous(columns[c])]
    for c in free:
        if c in categorical:
            _warn_if_numbers_read_as_categories(c, columns[c], source, row_name, is_target=False)
    categorical, continuous = list(categorical), list(continuous)
    for c in categorical + continuous:
        if all(is_missing(columns[c][i]) for i in rows_kept):
            raise DatasetError(f"TableData: column {c!r} of {source} has no values at all (every cell is missing)")
    for c in continuous:
        bad = next((i for i in rows_kept if not is_missing(columns[c][i]) and finite_number(columns[c][i]) is None), None)
        if bad is not None:
            raise DatasetError(f"TableData: continuous column {c!r} of {source} holds {columns[c][bad]!r} "
                               f"in {row_name(bad)}, which is not a finite number")
        big = next((i for i in rows_kept if not is_missing(columns[c][i]) and abs(finite_number(columns[c][i])) > FLOAT32_MAX),
                   None)
        if big is not None:  # inputs are float32: it would become inf, and training would diverge
            raise DatasetError(f"TableData: continuous column {c!r} of {source} holds {columns[c][big]!r} in "
                               f"{row_name(big)}, beyond float32's range (+-{FLOAT32_MAX:.4g}), which training "
                               f"uses; rescale the column (e.g. its logarithm or other units) or fix the cell")
    for c in categorical:
        bad = next((i for i in rows_kept if _category_problem(columns[c][i])), None)
        if bad is not None:
            raise DatasetError(f"TableData: categorical column {c!r} of {source}, {row_name(bad)}: "
                               f"{_category_problem(columns[c][bad])}")

    row_block = TableRow(categorical, continuous)
    rows = [{**{c: _category_value(columns[c][i]) for c in categorical},
             **{c: _float(columns[c][i]) for c in continuous}} for i in rows_kept]
    is_regression = (len(targets_cols) > 1 or all(_is_continuous(columns[t]) for t in targets_cols)) \
        if regression is None else bool(regression)
    if regression is None and not is_regression:
        _warn_if_numbers_read_as_categories(targets_cols[0], columns[targets_cols[0]], source, row_name, is_target=True)
    if is_regression:
        for t in targets_cols:
            bad = next((i for i in rows_kept if finite_number(columns[t][i]) is None), None)
            if bad is not None:
                raise DatasetError(f"TableData: target column {t!r} of {source} holds {columns[t][bad]!r} in "
                                   f"{row_name(bad)}, which is not a finite number (pass regression=False for classes)")
            big = next((i for i in rows_kept if abs(finite_number(columns[t][i])) > FLOAT32_MAX), None)
            if big is not None:  # targets are float32: it would become inf
                raise DatasetError(f"TableData: target column {t!r} of {source} holds {columns[t][big]!r} in "
                                   f"{row_name(big)}, beyond float32's range (+-{FLOAT32_MAX:.4g}); rescale the "
                                   f"target (e.g. its logarithm or other units)")
        targets = [np.array([float(columns[t][i]) for t in targets_cols], dtype=np.float32) for i in rows_kept]
        target_block = Continuous(len(targets_cols))
    else:
        if len(targets_cols) > 1:
            raise DatasetError(f"TableData: several target columns {targets_cols} make a regression, not classes")
        t = targets_cols[0]
        targets = [category_key(columns[t][i]) for i in rows_kept]
        classes = sorted(set(targets))
        if len(classes) < 2:  # the task would refuse it too, without the column's name
            raise DatasetError(f"TableData: target column {t!r} of {source} holds one value only "
                               f"({classes[0]!r}, in all {len(targets)} rows): a classifier needs two classes or "
                               f"more; choose another target column, or pass regression=True for numbers")
        target_block = Label(classes)
    return Data(rows, targets), (row_block, target_block)


def read_csv_columns(path: str | os.PathLike) -> dict[str, list]:
    """A CSV as ``{column: values}``: missing cells None; columns of numbers as floats, others as text."""
    return _read_csv(path)[0]


def _read_csv(path) -> tuple[dict[str, list], list[int]]:
    """(`read_csv_columns`, the file's line number of each data row): errors name the line."""
    path = Path(path)
    if not path.is_file():
        raise DatasetError(f"TableData: {path} does not exist or is not a file")
    try:
        return _parse_csv(path)
    except UnicodeDecodeError:
        raise DatasetError(_not_utf8(path)) from None


def _not_utf8(path: Path) -> str:
    """Where a file stops being UTF-8, and what to do about it."""
    raw = path.read_bytes()
    try:
        raw.decode("utf-8-sig")
        where = ""
    except UnicodeDecodeError as e:
        line = raw[:e.start].count(b"\n") + 1
        where = f" (byte 0x{raw[e.start]:02x} on line {line})"
    return (f"TableData: {path} is not UTF-8 text{where}. Save it as UTF-8 (CSV UTF-8 in Excel), or read it "
            f"with pandas in its encoding, e.g. pandas.read_csv(path, encoding='cp1252') (Windows) or "
            f"encoding='latin-1', and pass the DataFrame")


def _parse_csv(path: Path) -> tuple[dict[str, list], list[int]]:
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
        lines: list[int] = []
        for line in reader:
            if not line:
                continue
            lines.append(reader.line_num)
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
    return columns, lines


def _read_columns(table) -> tuple[dict[str, list], str, Callable[[int], str]]:
    """(columns, the source's name, data row index -> how to find that row: a CSV line, a DataFrame index)."""
    if isinstance(table, (str, os.PathLike)):
        columns, lines = _read_csv(table)
        return columns, str(table), lambda i: f"line {lines[i]}"
    if is_dataframe(table):
        names = [str(c) for c in table.columns]  # as text, as a row's keys are read (contract.as_row)
        if len(set(names)) != len(names):
            same = [c for c in table.columns if names.count(str(c)) > 1]
            raise DatasetError(f"TableData: the DataFrame has duplicate column names {same!r} (column names are "
                               f"read as text, so 1 and '1' are one name); rename them")
        return {str(c): table[c].tolist() for c in table.columns}, "the DataFrame", row_namer(table)
    raise UsageTypeError(f"TableData takes a CSV path or a pandas DataFrame, got {type(table).__name__}")


def _as_floats(values: list) -> list | None:
    """The CSV reader's rule for a column: its cells as floats when every present one reads as a
    finite number (`finite_number`), else None (the column stays text)."""
    out = []
    for v in values:
        f = None if v is None else finite_number(v)
        if f is None and v is not None:
            return None
        out.append(f)
    return out


class NumbersReadAsCategories(UserWarning):
    """A column of numbers read as categorical because of a few cells that are not numbers.

    `column`, `is_target` and `found` (what was found, naming the file, the row and the first
    such cell) let a caller give its own advice (the command line names its flag)."""

    def __init__(self, message: str, *, column: str, is_target: bool, found: str):
        super().__init__(message)
        self.column, self.is_target, self.found = column, is_target, found


def _warn_if_numbers_read_as_categories(column: str, values: list, source: str, row_name, is_target: bool) -> None:
    """A column of numbers with a few text or infinite cells is read as categorical, by the rule;
    usually one cell is a typo or a sentinel (``inf``, ``?``, ``n/a ``). Say so, naming the first."""
    present = [(i, v) for i, v in enumerate(values) if not is_missing(v)]
    odd = [(i, v) for i, v in present if finite_number(v) is None]
    if not odd or len(odd) * 2 >= len(present):
        return
    import warnings

    i, v = odd[0]
    found = (f"column {column!r} of {source} is read as categorical although {len(present) - len(odd)} of its "
             f"{len(present)} values are numbers; {len(odd)} not, first {v!r} in {row_name(i)}")
    advice = "regression=True" if is_target else f"continuous=[{column!r}]"
    warnings.warn(NumbersReadAsCategories(f"TableData: {found}. Fix or empty those cells, or pass {advice} (then "
                                          f"they are an error naming the cell)", column=column, is_target=is_target,
                                          found=found), stacklevel=3)


def _is_continuous(values: list) -> bool:
    """fastai's cont_cat_split rule: numbers, and either not all integers or more than MAX_CARD distinct.

    Text that reads as a number counts as one (`finite_number`), as the CSV reader reads it: a DataFrame
    column of numbers stored as text (``pandas.read_csv(path, dtype=str)``, ``df[c].astype(str)``) is
    decided as the same column read from the file, not made a category per value."""
    floats = [finite_number(v) for v in values if not is_missing(v)]
    if not floats or None in floats:
        return False
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
