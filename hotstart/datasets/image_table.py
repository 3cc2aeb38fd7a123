"""`ImageTable`: a CSV of image paths and labels -> ``(Data, blocks)``, read defensively.

A table often comes from someone else (a Kaggle download, a colleague, a scraper), so:

- Paths stay inside the table's folder (or `root`): an absolute path or one that climbs out with
  ``..`` is refused unless ``allow_outside=True``, so a table cannot make the loader open any file
  on the machine. The check is on the path as written (lexical), so links inside the folder that
  lead elsewhere (a shared image store) still work.
- The text must decode as `encoding` (UTF-8, with or without Excel's byte-order mark, by
  default); anything else is an error naming the file and line, never mojibake labels.
- A bad cell (empty or NaN path or label, a row with more or fewer cells than the header, a
  missing file) is an error naming the file, the row and the column, before any training starts.
- Repeated rows for one file: with the same label they are dropped with a warning (one sample per
  file), so a duplicate can never sit in training and validation at once; with different labels
  they are an error naming both rows.
"""
from __future__ import annotations

import csv
import io
import os
import warnings
from pathlib import Path, PurePath

from ..blocks import Image, Label, LabelMulti
from .containers import Data, mapobs
from .errors import DatasetError
from .images import load_image

__all__ = ["ImageTable"]

_MISSING = {"nan", "<na>"}  # how pandas writes a missing value when it is turned into text


def ImageTable(csv_path: str | os.PathLike, path_col: str, label_col: str, *,  # noqa: N802
               label_sep: str | None = None, root: str | os.PathLike | None = None,
               allow_outside: bool = False, encoding: str = "utf-8-sig", delimiter: str | None = None):
    """A CSV with an image-path column and a label column -> ``(Data, (Image(), Label/LabelMulti))``.

    Paths are relative to `root` (default: the CSV's folder) and must stay inside it, unless
    ``allow_outside=True`` (then absolute paths and ``..`` are taken as written). With `label_sep`
    (e.g. " " or ";") a cell holds several labels and the target is a list (split, stripped,
    empties dropped), so the blocks use `LabelMulti`; otherwise the cell is one label for `Label`.
    Every listed file must exist: a missing one is reported with its row number. `delimiter`
    defaults to a tab for ``.tsv`` files and a comma otherwise. See the module docstring for bad
    cells, encodings and repeated rows.
    """
    csv_path = Path(csv_path)
    if not csv_path.is_file():
        raise DatasetError(f"ImageTable(csv_path=...): {csv_path} does not exist or is not a file")
    base = Path(root) if root is not None else csv_path.parent
    if root is not None and not base.is_dir():
        raise DatasetError(f"ImageTable(root=...): {base} does not exist or is not a folder")
    if delimiter is None:
        delimiter = "\t" if csv_path.suffix.lower() == ".tsv" else ","
    reader = csv.DictReader(io.StringIO(_read_text(csv_path, encoding), newline=""), delimiter=delimiter)
    try:
        columns = reader.fieldnames or []
        missing = [c for c in (path_col, label_col) if c not in columns]
        if missing:
            raise DatasetError(f"ImageTable: {csv_path} has no column(s) {missing}; available: {columns}")
        paths, targets, first_row, dropped = [], [], {}, []
        for row_number, row in enumerate(reader, start=1):
            where = f"{csv_path} row {row_number} (line {reader.line_num})"
            if None in row:
                raise DatasetError(f"ImageTable: {where} has {len(columns) + len(row[None])} cells but the header "
                                   f"has {len(columns)} (a comma inside a cell that is not quoted?)")
            file = _confined_path(_cell(row, path_col, where, "image path"), base, where, allow_outside)
            target = _target(row, label_col, label_sep, where)
            key = os.path.normpath(file)
            if key in first_row:
                earlier, earlier_target = first_row[key]
                if _same(earlier_target, target):
                    dropped.append((row_number, earlier, file))
                    continue
                raise DatasetError(f"ImageTable: {where} lists {file} again with label {target!r}, but row "
                                   f"{earlier} gave it {earlier_target!r}; one file has one label")
            if not file.is_file():
                what = "is not a file" if file.exists() else "does not exist"
                raise DatasetError(f"ImageTable: {where}: image file {file} {what}")
            first_row[key] = (row_number, target)
            paths.append(file)
            targets.append(target)
    except csv.Error as e:
        raise DatasetError(f"ImageTable: {csv_path} line {reader.line_num} is not valid CSV: {e}") from e
    if dropped:
        row, earlier, file = dropped[0]
        warnings.warn(f"ImageTable: {csv_path}: dropped {len(dropped)} repeated row(s) (same file, same label), "
                      f"so no file is in training and validation at once; e.g. row {row} repeats row {earlier} "
                      f"({file})", UserWarning, stacklevel=2)
    if not paths:
        raise DatasetError(f"ImageTable: {csv_path} has a header but no rows")
    if label_sep is None:
        label_block = Label(sorted(set(targets)))
    else:
        classes = sorted({c for t in targets for c in t})
        if not classes:
            raise DatasetError(f"ImageTable: column {label_col!r} of {csv_path} has no labels at all")
        label_block = LabelMulti(classes)
    return Data(mapobs(load_image, paths), targets), (Image(), label_block)


def _read_text(csv_path: Path, encoding: str) -> str:
    data = csv_path.read_bytes()
    try:
        return data.decode(encoding)
    except UnicodeDecodeError as e:
        line = data[:e.start].count(b"\n") + 1
        raise DatasetError(f"ImageTable: {csv_path} is not {encoding} text (line {line}, byte {e.start}: "
                           f"{data[e.start:e.start + 4]!r}); save it as UTF-8, or pass its encoding, e.g. "
                           f"encoding='cp1252' or 'latin-1'") from None
    except LookupError:
        raise DatasetError(f"ImageTable(encoding=...): unknown text encoding {encoding!r}") from None


def _cell(row: dict, column: str, where: str, what: str) -> str:
    value = row.get(column)
    if value is None:
        raise DatasetError(f"ImageTable: {where} has no {column!r} cell (fewer cells than the header)")
    value = value.strip()
    if not value:
        raise DatasetError(f"ImageTable: {where} has an empty {column!r} ({what})")
    if value.lower() in _MISSING:
        raise DatasetError(f"ImageTable: {where} has {value!r} in {column!r}, a missing value ({what})")
    return value


def _confined_path(rel: str, base: Path, where: str, allow_outside: bool) -> Path:
    if allow_outside:
        return base / rel
    drive = len(rel) > 1 and rel[0].isalpha() and rel[1] == ":"  # C:\x or C:x, absolute on Windows
    if PurePath(rel).is_absolute() or rel.startswith(("/", "\\")) or drive:
        raise DatasetError(f"ImageTable: {where}: {rel!r} is an absolute path; paths must be relative to {base} "
                           f"(pass allow_outside=True, or --allow-outside to `hotstart train`, to read files anywhere)")
    norm = os.path.normpath(rel)
    # a table written on Windows may climb out with backslashes: check that reading as well
    for candidate in (norm, os.path.normpath(rel.replace("\\", "/"))):
        if candidate.replace(os.sep, "/").split("/")[0] == os.pardir:  # normpath leaves ".." only in front
            raise DatasetError(f"ImageTable: {where}: {rel!r} leads outside {base}; paths must stay inside it "
                               f"(pass allow_outside=True, or --allow-outside to `hotstart train`, to read files "
                               f"anywhere)")
    return base / norm


def _target(row: dict, column: str, label_sep: str | None, where: str):
    if label_sep is None:
        return _cell(row, column, where, "label")
    cell = row.get(column)
    if cell is None:
        raise DatasetError(f"ImageTable: {where} has no {column!r} cell (fewer cells than the header)")
    if cell.strip().lower() in _MISSING:
        raise DatasetError(f"ImageTable: {where} has {cell.strip()!r} in {column!r}, a missing value (labels)")
    return [s.strip() for s in cell.split(label_sep) if s.strip()]


def _same(a, b) -> bool:
    return set(a) == set(b) if isinstance(a, list) else a == b
