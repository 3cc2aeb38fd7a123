"""Table rows from a CSV file, and one prediction per row: ``hotstart predict TABLE_MODEL rows.csv``
and a bundle's ``python predictor.py model.onnx rows.csv`` (so it lives in the contract, which the
bundle carries; the standard library only).

A model trained with ``--task tabular`` (TabularClassificationSingle / TabularRegression; an
.onnx from ``hotstart export``, or the saved model folder) predicts rows, not images. The CSV
holds the model's input columns (any order; other columns, the target included, are ignored),
read with the ``csv`` module as training read its table: UTF-8 (Excel's byte-order mark allowed),
the cells of `MISSING_CELLS` missing, continuous columns numbers, categorical cells as the text
the model knows them by (or their number, as in a numeric column: 2007 and "2007" agree).

Each row is printed as ``rows.csv line 3: label (top-k)`` (a regression: its value(s)); with
``--json`` one object per row, always valid JSON. A row that cannot be read or encoded (a text cell
in a continuous column, a wrong cell count, a number like 1e308 that overflows float32 once
normalized) gets an error line naming the file, line and column; so does a row whose prediction is
not finite. The other rows are still predicted, and the exit status is 1. A missing input column
is an error line naming it, as is a file that cannot be read; the other files are still predicted.
"""
from __future__ import annotations

import csv
import io
import itertools
from pathlib import Path

from .errors import InputValueError
from .table_input import finite_number

__all__ = ["MISSING_CELLS", "RowError", "read_rows", "predict_rows"]

_MISSING_WORDS = ("", "na", "n/a", "#n/a", "nan", "-nan", "+nan", "null", "none")
MISSING_CELLS = frozenset("".join(chars) for word in _MISSING_WORDS
                          for chars in itertools.product(*[{c.lower(), c.upper()} for c in word]))
"""The cells read as missing, in training's CSV reader (datasets/table_data.py) as here: every
spelling of each word in any case ("NAN", "Null"...), as a set so that ``cell in MISSING_CELLS`` holds."""


class RowError(InputValueError):
    """A row of the CSV that cannot be given to the model; the message names file, line and column."""


def read_rows(path, table: dict):
    """``(line number, row dict or RowError)`` for each data row of the CSV at `path`, an iterator.

    `table`: the model's columns (``categorical``, ``continuous``, ``vocab``), as in the ONNX
    metadata's ``table`` key. Raises at once (not at the first row) `InputValueError` when the
    file is not UTF-8 or its header lacks an input column, and `OSError` when it cannot be read."""
    path = Path(path)
    cats, conts = list(table["categorical"]), list(table["continuous"])
    delimiter = "\t" if path.suffix.lower() == ".tsv" else ","
    try:
        text = path.read_bytes().decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise InputValueError(f"{path} is not UTF-8 text (byte {e.start}); save it as UTF-8") from None
    # split as training's reader splits the file (open(..., newline="")): a quoted cell may hold a
    # newline, and \u2028, \x85 or \x0c inside a cell are text, not line ends (str.splitlines breaks on them)
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter)
    header = [h.strip() for h in next(reader, [])]
    absent = [c for c in cats + conts if c not in header]
    if absent:
        raise InputValueError(f"{path} lacks the model's input column(s) {absent} (its columns: {header[:20]})")
    index = {c: header.index(c) for c in cats + conts}
    return _rows(reader, header, index, table, path)


def _rows(reader, header: list, index: dict, table: dict, path: Path):
    cats, conts = list(table["categorical"]), list(table["continuous"])
    for cells in reader:
        line = reader.line_num
        if not cells or all(not c.strip() for c in cells):
            continue
        if len(cells) != len(header):
            yield line, RowError(f"{path} line {line}: {len(cells)} cells, the header has {len(header)}")
            continue
        try:
            row = {c: _continuous(cells[index[c]], path, line, c) for c in conts}
            row.update({c: _categorical(cells[index[c]], table["vocab"][c]) for c in cats})
        except RowError as e:
            yield line, e
            continue
        yield line, row


def _continuous(cell: str, path, line: int, column: str):
    cell = cell.strip()
    if cell in MISSING_CELLS:
        return None
    value = finite_number(cell)  # training's rule (datasets/table_data.py uses it too)
    if value is None:
        raise RowError(f"{path} line {line}, column {column!r}: {cell!r} is not a finite number (the column is "
                       f"continuous; leave the cell empty for a missing value)")
    return value


def _categorical(cell: str, vocab: list):
    """The cell as the text the model knows, else as a number (a numeric column's categories are
    known by their number's text), else as it is (an unseen category: the model's "other")."""
    cell = cell.strip()
    if cell in MISSING_CELLS:
        return None
    if cell in vocab:
        return cell
    try:
        return float(cell)
    except ValueError:
        return cell


def predict_rows(model, paths, top_k: int = 3, as_json: bool = False, out=None) -> int:
    """Print one prediction per row of each CSV in `paths`; 1 if any row failed, else 0.

    `model`: a runtime (hotstart/contract/model.py's `ContractModel`) of a table kind: its
    ``predict(row dict)``, ``meta["table"]`` (the input columns) and ``classes`` (None for a
    regression)."""
    from .report import print_predictions

    def rows():
        for path in paths:
            try:
                lines = read_rows(path, model.meta["table"])
            except (OSError, InputValueError) as e:  # this file has no rows to give: say so, go on
                yield str(path), {"file": str(path)}, e
                continue
            for line, row in lines:
                yield f"{path} line {line}", {"file": str(path), "line": line}, row

    return print_predictions(model, rows(), top_k, as_json, out)
