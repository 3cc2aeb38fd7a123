"""Recipes: turn a folder layout or a table on disk into ``(Data, blocks)``.

    data, blocks = ImageFolders("pets/")                 # pets/<class>/*.jpg, or pets/{train,valid}/<class>/
    data, blocks = ImageTable("labels.csv", "file", "tags", label_sep=" ")

Recipes only *list* files (cheap: directory walks and ``stat``); images are decoded lazily by
`load_image` when a sample is read, so a 100,000-image folder is ready in well under a second
and a bad file is reported when (and where) it is used. Everything is listed in sorted order,
so the same folder always gives the same indices, splits and class order.
"""
from __future__ import annotations

import csv
import os
from pathlib import Path
from typing import Iterable, Sequence

from ..blocks import Image, Label, LabelMulti
from .containers import Data, mapobs
from .errors import DatasetError
from .images import load_image

__all__ = ["ImageFolders", "ImageTable", "IMAGE_EXTENSIONS", "list_images"]

IMAGE_EXTENSIONS = (".jpg", ".jpeg", ".png", ".bmp", ".gif", ".tif", ".tiff", ".webp")


def ImageFolders(path: str | os.PathLike, *, train: str | None = "train", valid: str | None = "valid",  # noqa: N802
                 extensions: Sequence[str] = IMAGE_EXTENSIONS):
    """One subfolder per class: ``path/<class>/...images`` -> ``(Data, (Image(), Label(classes)))``.

    When both ``path/<train>`` and ``path/<valid>`` are folders, each holds the class folders and
    the returned Data has ``splits={"train": [...], "valid": [...]}`` (train samples first);
    otherwise every subfolder of `path` is a class and there are no splits. Images are found
    recursively inside a class folder; names starting with "." are skipped (``.ipynb_checkpoints``,
    macOS ``._x.jpg``); `extensions` match case-insensitively. Targets are class folder names.
    """
    root = _require_dir(path, "ImageFolders(path=...)")
    exts = _normalize_extensions(extensions)
    if train and valid and (root / train).is_dir() and (root / valid).is_dir():
        parts = {name: _class_folders(root / name, exts) for name in (train, valid)}
        role = {train: "train", valid: "valid"}
    else:
        parts = {None: _class_folders(root, exts)}
        role = {}
    paths, targets, splits = [], [], {}
    for part, folders in parts.items():
        start = len(paths)
        for cls, files in folders.items():
            paths += files
            targets += [cls] * len(files)
        if part is not None:
            splits[role[part]] = list(range(start, len(paths)))
    if not paths:
        raise DatasetError(f"ImageFolders: no images with extensions {list(exts)} under {root}")
    for part, folders in parts.items():
        for cls, files in folders.items():
            if not files:
                where = root / part / cls if part else root / cls
                raise DatasetError(f"ImageFolders: class folder {where} has no images with extensions "
                                   f"{list(exts)}; remove it or add images")
    classes = sorted({c for folders in parts.values() for c in folders})
    return Data(mapobs(load_image, paths), targets, splits), (Image(), Label(classes))


def ImageTable(csv_path: str | os.PathLike, path_col: str, label_col: str, *,  # noqa: N802
               label_sep: str | None = None, root: str | os.PathLike | None = None):
    """A CSV with an image-path column and a label column -> ``(Data, (Image(), Label/LabelMulti))``.

    Paths are relative to `root` (default: the CSV's folder). With `label_sep` (e.g. " " or ";")
    a cell holds several labels and the target is a list (split, stripped, empties dropped), so
    the blocks use `LabelMulti`; otherwise the cell is one label for `Label`. Every listed file
    must exist: a missing one is reported with its row number, before any training starts.
    """
    csv_path = Path(csv_path)
    if not csv_path.is_file():
        raise DatasetError(f"ImageTable(csv_path=...): {csv_path} does not exist or is not a file")
    base = Path(root) if root is not None else csv_path.parent
    if root is not None and not base.is_dir():
        raise DatasetError(f"ImageTable(root=...): {base} does not exist or is not a folder")
    with open(csv_path, newline="", encoding="utf-8-sig") as f:  # -sig: Excel's byte-order mark
        reader = csv.DictReader(f)
        columns = reader.fieldnames or []
        missing = [c for c in (path_col, label_col) if c not in columns]
        if missing:
            raise DatasetError(f"ImageTable: {csv_path} has no column(s) {missing}; available: {columns}")
        paths, targets = [], []
        for row_number, row in enumerate(reader, start=1):
            where = f"{csv_path} row {row_number} (line {reader.line_num})"
            rel = (row.get(path_col) or "").strip()
            if not rel:
                raise DatasetError(f"ImageTable: {where} has an empty {path_col!r}")
            file = base / rel
            if not file.is_file():
                raise DatasetError(f"ImageTable: {where}: image file {file} does not exist")
            cell = row.get(label_col) or ""
            if label_sep is None:
                label = cell.strip()
                if not label:
                    raise DatasetError(f"ImageTable: {where} has an empty {label_col!r}")
                targets.append(label)
            else:
                targets.append([s.strip() for s in cell.split(label_sep) if s.strip()])
            paths.append(file)
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


def list_images(folder: str | os.PathLike, extensions: Sequence[str] = IMAGE_EXTENSIONS) -> list[Path]:
    """Image files under `folder`, recursively, sorted; hidden files and folders are skipped."""
    return _list_images(Path(folder), _normalize_extensions(extensions))


# --- helpers -------------------------------------------------------------------------------

def _require_dir(path, argument: str) -> Path:
    p = Path(path)
    if not p.exists():
        raise DatasetError(f"{argument}: {p} does not exist")
    if not p.is_dir():
        raise DatasetError(f"{argument}: {p} is not a folder")
    return p


def _normalize_extensions(extensions: Iterable[str]) -> tuple[str, ...]:
    if isinstance(extensions, str):
        extensions = (extensions,)
    exts = tuple(sorted({e.lower() if e.startswith(".") else "." + e.lower() for e in extensions}))
    if not exts:
        raise ValueError("extensions must name at least one file extension, e.g. ('.jpg', '.png')")
    return exts


def _class_folders(folder: Path, exts: tuple[str, ...]) -> dict[str, list[Path]]:
    """{class name: sorted image paths} for the non-hidden subfolders of `folder`."""
    classes = sorted(d.name for d in folder.iterdir() if d.is_dir() and not d.name.startswith("."))
    if not classes:
        loose = len(_list_images(folder, exts, recursive=False))
        hint = f" (it holds {loose} images directly; put them in one subfolder per class)" if loose else ""
        raise DatasetError(f"ImageFolders: {folder} has no class folders{hint}")
    return {c: _list_images(folder / c, exts) for c in classes}


def _list_images(folder: Path, exts: tuple[str, ...], recursive: bool = True) -> list[Path]:
    found = []
    for dirpath, dirnames, filenames in os.walk(folder):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith(".")) if recursive else []
        found += [Path(dirpath) / n for n in filenames
                  if not n.startswith(".") and os.path.splitext(n)[1].lower() in exts]
    return sorted(found)
