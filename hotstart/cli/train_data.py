"""`train`'s data: the folder, table or built-in set that the arguments name, as ``(data, blocks, name)``.

Tables (``--task tabular``) and series (``--task timeseries``) are read in train_tabular.py and
train_timeseries.py; this module reads images: class folders, a CSV of image paths, and the
spatial tasks' folders and tables.
"""
from __future__ import annotations

from pathlib import Path


def load_data(args):
    from .. import datasets
    from ..errors import UsageError

    task = getattr(args, "task", None)
    if task in ("segmentation", "keypoints"):
        return _load_spatial_data(args, task)
    if args.path is None:
        data, blocks = datasets.load("digits")
        return data, blocks, "digits"
    path = Path(args.path)
    if not path.exists():
        raise FileNotFoundError(f"{path}: no such file or folder")
    if path.is_dir():
        data, blocks = datasets.ImageFolders(path)
    elif path.suffix.lower() in (".csv", ".tsv"):
        data, blocks = datasets.ImageTable(path, args.path_col, args.label_col, label_sep=args.label_sep,
                                           allow_outside=getattr(args, "allow_outside", False))
    else:
        raise UsageError(f"{path}: expected a folder of class folders or a .csv table")
    return data, blocks, str(path)


def _load_spatial_data(args, task: str):
    """Segmentation: PATH/images + PATH/masks (paired by stem) and --classes; keypoints: a CSV
    with --path-col and --point-cols. Without PATH: digits-segmentation or discs."""
    from .. import datasets
    from ..errors import UsageError

    if args.path is None:
        name = "digits-segmentation" if task == "segmentation" else "discs"
        data, blocks = datasets.load(name)
        return data, blocks, name
    path = Path(args.path)
    if not path.exists():
        raise FileNotFoundError(f"{path}: no such file or folder")
    if task == "segmentation":
        if not args.classes:
            raise UsageError("--task segmentation with a PATH needs --classes name0,name1,... (mask value order)")
        data, blocks = datasets.SegmentationFolders(path / "images", path / "masks", args.classes.split(","))
    else:
        if not args.point_cols:
            raise UsageError("--task keypoints with a PATH needs --point-cols x0,y0,...")
        data, blocks = datasets.KeypointTable(path, args.path_col, args.point_cols.split(","))
    return data, blocks, str(path)
