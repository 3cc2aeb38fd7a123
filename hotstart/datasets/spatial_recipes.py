"""Recipes for dense and keypoint data on disk.

    data, blocks = SegmentationFolders("images/", "masks/", ["background", "road", "car"])
    data, blocks = KeypointTable("points.csv", "file", ["x0", "y0", "x1", "y1"])

As in `recipes`, files are listed (cheap) and decoded when a sample is read; everything that can
be checked without decoding an image (a missing partner file, a bad coordinate) is checked now,
with the file or the row named.
"""
from __future__ import annotations

import csv
import math
import os
from pathlib import Path
from typing import Sequence

import numpy as np

from ..blocks import Image, Keypoints, Mask
from .containers import Data, mapobs
from .errors import DatasetError
from .images import load_image
from .table_data import FLOAT32_MAX
from .walk import IMAGE_EXTENSIONS, list_image_files, normalize_extensions, require_dir

__all__ = ["SegmentationFolders", "KeypointTable", "load_mask"]


def load_mask(path) -> np.ndarray:
    """A mask file (an L or P PNG whose pixel values are class indices) as an H x W uint8 array."""
    from PIL import Image as PILImage

    try:
        with PILImage.open(path) as img:
            if img.mode not in ("L", "P", "1", "I", "I;16"):
                raise DatasetError(f"{path}: a mask must be a single-channel image of class indices "
                                   f"(mode L or P), got mode {img.mode}")
            arr = np.asarray(img)
    except (OSError, SyntaxError) as e:
        raise DatasetError(f"{path}: cannot read the mask: {e}") from None
    if arr.max(initial=0) > 255:
        raise DatasetError(f"{path}: mask values go up to {int(arr.max())}; at most 256 classes are supported")
    return arr.astype(np.uint8)


def SegmentationFolders(images_dir, masks_dir, classes: Sequence, *,  # noqa: N802
                        extensions: Sequence[str] = IMAGE_EXTENSIONS):
    """Images and masks paired by file stem (``img/cat_1.jpg`` <-> ``masks/cat_1.png``), as
    fastai's ``label_func``: ``(Data, (Image(), Mask(classes)))``.

    Every image needs a mask and every mask an image: otherwise a `DatasetError` lists (up to ten
    of) each. A stem that occurs twice in one folder (``a.jpg`` and ``a.png``) is an error too.
    """
    images_dir = require_dir(images_dir, "SegmentationFolders(images_dir=...)")
    masks_dir = require_dir(masks_dir, "SegmentationFolders(masks_dir=...)")
    exts = normalize_extensions(extensions)
    images, masks = _by_stem(images_dir, exts), _by_stem(masks_dir, exts)
    no_mask = sorted(set(images) - set(masks))
    no_image = sorted(set(masks) - set(images))
    if no_mask or no_image:
        parts = []
        if no_mask:
            parts.append(f"{len(no_mask)} image(s) in {images_dir} have no mask in {masks_dir}: "
                         f"{_preview([images[s] for s in no_mask])}")
        if no_image:
            parts.append(f"{len(no_image)} mask(s) in {masks_dir} have no image in {images_dir}: "
                         f"{_preview([masks[s] for s in no_image])}")
        raise DatasetError("SegmentationFolders: " + "; ".join(parts))
    if not images:
        raise DatasetError(f"SegmentationFolders: no images with extensions {list(exts)} in {images_dir}")
    stems = sorted(images)
    return Data(mapobs(load_image, [images[s] for s in stems]), mapobs(load_mask, [masks[s] for s in stems])), \
        (Image(), Mask(list(classes)))


def _by_stem(folder: Path, exts) -> dict[str, Path]:
    """{stem: image file} under `folder`; called by `SegmentationFolders` itself, so a skipped link's
    warning names the user's line (stacklevel 4: the walk, this, SegmentationFolders, the user)."""
    out: dict[str, Path] = {}
    for f in list_image_files(folder, exts, stacklevel=4):
        stem = str(f.relative_to(folder).with_suffix(""))
        if stem in out:
            raise DatasetError(f"SegmentationFolders: {out[stem]} and {f} have the same stem; pairing is ambiguous")
        out[stem] = f
    return out


def _preview(paths, k: int = 10) -> str:
    shown = ", ".join(str(p) for p in paths[:k])
    return shown + (f", ... ({len(paths) - k} more)" if len(paths) > k else "")


def KeypointTable(csv_path, path_col: str, point_cols: Sequence[str], *,  # noqa: N802
                  root: str | os.PathLike | None = None):
    """A CSV with an image path and point coordinates -> ``(Data, (Image(), Keypoints(n)))``.

    `point_cols` names the columns in pairs: ``["x0", "y0", "x1", "y1", ...]`` (pixels; pixel
    (column i, row j) is centred at (i, j)). Paths are relative to `root` (default: the CSV's
    folder). An empty, non-numeric or non-finite coordinate, or a missing image file, is reported
    with its row number before anything is trained.
    """
    csv_path = Path(csv_path)
    if not csv_path.is_file():
        raise DatasetError(f"KeypointTable(csv_path=...): {csv_path} does not exist or is not a file")
    point_cols = list(point_cols)
    if not point_cols or len(point_cols) % 2:
        raise DatasetError(f"KeypointTable(point_cols=...): need x, y column pairs, got {point_cols}")
    base = Path(root) if root is not None else csv_path.parent
    with open(csv_path, newline="", encoding="utf-8-sig") as f:
        reader = csv.DictReader(f)
        columns = reader.fieldnames or []
        missing = [c for c in [path_col, *point_cols] if c not in columns]
        if missing:
            raise DatasetError(f"KeypointTable: {csv_path} has no column(s) {missing}; available: {columns}")
        paths, points = [], []
        for row_number, row in enumerate(reader, start=1):
            where = f"{csv_path} row {row_number} (line {reader.line_num})"
            rel = (row.get(path_col) or "").strip()
            if not rel:
                raise DatasetError(f"KeypointTable: {where} has an empty {path_col!r}")
            file = base / rel
            if not file.is_file():
                raise DatasetError(f"KeypointTable: {where}: image file {file} does not exist")
            values = []
            for col in point_cols:
                cell = (row.get(col) or "").strip()
                try:
                    v = float(cell)
                except ValueError:
                    raise DatasetError(f"KeypointTable: {where}: column {col!r} holds {cell!r}, "
                                       f"not a number") from None
                if not math.isfinite(v):
                    raise DatasetError(f"KeypointTable: {where}: column {col!r} holds {cell!r}, not a finite number")
                if abs(v) > FLOAT32_MAX:  # points are float32: it would become inf
                    raise DatasetError(f"KeypointTable: {where}: column {col!r} holds {cell!r}, beyond float32's "
                                       f"range (+-{FLOAT32_MAX:.4g}), which training uses")
                values.append(v)
            paths.append(file)
            points.append(np.asarray(values, dtype=np.float32).reshape(-1, 2))
    if not paths:
        raise DatasetError(f"KeypointTable: {csv_path} has a header but no rows")
    return Data(mapobs(load_image, paths), points), (Image(), Keypoints(len(point_cols) // 2))
