"""``python -m hotstart train [PATH] ...``: train a model on a folder, a table or built-in data.

    python -m hotstart train                          # the built-in digits, small CNN, 32x32
    python -m hotstart train photos/ --backbone resnet18 --size 128 128 --epochs 5 --out runs/photos
    python -m hotstart train table.csv --path-col file --label-col tags --label-sep " "
    python -m hotstart train --task segmentation     # digits-segmentation; or PATH with images/ masks/ --classes
    python -m hotstart train --task keypoints        # discs; or a CSV with --path-col --point-cols x0,y0

PATH is a folder of class folders (optionally split into train/ and valid/) or a CSV table.
The run writes to --out: the model (weights.safetensors + task.json), history.csv and loss.png.
"""
from __future__ import annotations

import argparse
import csv
from pathlib import Path


def add_parser(sub) -> argparse.ArgumentParser:
    t = sub.add_parser("train", help="train an image model (classifier, segmentation, keypoints) and save it",
                       description="Train on PATH (a folder of class folders or a CSV), or on the built-in digits.")
    t.add_argument("path", nargs="?", default=None, help="folder of class folders, or a CSV table; default: digits")
    t.add_argument("--backbone", default=None, help="timm model name (e.g. resnet18); default: a small CNN")
    t.add_argument("--pretrained", action="store_true", help="start from the backbone's pretrained weights")
    t.add_argument("--epochs", type=_positive_int, default=5)
    t.add_argument("--size", type=_positive_int, nargs=2, metavar=("H", "W"), default=None,
                   help="input size; default 32 32 for digits, 128 128 otherwise")
    t.add_argument("--batch-size", type=_positive_int, default=64)
    t.add_argument("--lr", type=float, default=None, help="maximum learning rate of the one-cycle schedule")
    t.add_argument("--valid-pct", type=float, default=0.2)
    t.add_argument("--seed", type=int, default=0)
    t.add_argument("--no-flip", action="store_true", help="no horizontal flips (always off for digits)")
    t.add_argument("--workers", type=int, default=0, help="DataLoader worker processes")
    t.add_argument("--path-col", default="path", help="CSV: column with image paths")
    t.add_argument("--label-col", default="label", help="CSV: column with labels")
    t.add_argument("--label-sep", default=None, help="CSV: separator of multiple labels per row")
    t.add_argument("--task", choices=["classification", "segmentation", "keypoints"], default="classification",
                   help="what to learn: a label per image (default), a class per pixel (PATH holds images/ and "
                        "masks/; default data: digits-segmentation), or points (PATH is a CSV; default: discs)")
    t.add_argument("--classes", default=None, help="segmentation: comma-separated class names, mask value order")
    t.add_argument("--point-cols", default=None, help="keypoints CSV: comma-separated x0,y0,x1,y1,... columns")
    t.add_argument("--allow-outside", action="store_true",
                   help="CSV: allow absolute paths and paths outside the table's folder")
    t.add_argument("--out", default="runs/hotstart", help="output folder (default: runs/hotstart)")
    t.add_argument("--no-progress", action="store_true", help="no progress bars")
    return t


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {value}")
    return value


def load_data(args):
    from .. import datasets
    from ..errors import UsageError

    task = getattr(args, "task", "classification")
    if task != "classification":
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


def _make_task(args, blocks, builtin: bool):
    from ..blocks import LabelMulti
    from ..tasks import ImageClassificationMulti, ImageClassificationSingle, ImageKeypointRegression, ImageSegmentation

    kind = getattr(args, "task", "classification")
    size = tuple(args.size) if args.size else ((32, 32) if builtin else (128, 128))
    augment = {"flip": 0.0} if ((builtin and kind != "keypoints") or args.no_flip) else True
    if kind == "segmentation":
        return ImageSegmentation(blocks, size=size, augment=augment)
    if kind == "keypoints":
        return ImageKeypointRegression(blocks, size=size, augment=augment)
    task_cls = ImageClassificationMulti if isinstance(blocks[1], LabelMulti) else ImageClassificationSingle
    return task_cls(blocks, size=size, augment=augment)


def run(args) -> int:
    from ..learner import tasklearner

    data, blocks, name = load_data(args)
    task = _make_task(args, blocks, builtin=args.path is None)
    what = f"{len(task.classes)} classes" if hasattr(task, "classes") else f"{task.n} point(s)"
    print(f"data: {name}, {len(data[0])} samples, {what}; task:")
    task.describe()
    learner = tasklearner(task, data, backbone=args.backbone, pretrained=args.pretrained,
                          batch_size=args.batch_size, valid_pct=args.valid_pct, seed=args.seed,
                          num_workers=args.workers, progress=not args.no_progress)
    lr = args.lr if args.lr is not None else (3e-3 if args.backbone is None else 1e-3)
    learner.fit_one_cycle(args.epochs, lr)
    out = Path(args.out)
    learner.save(out / "model")
    write_history(learner.history, out / "history.csv")
    fig = learner.plot_loss()
    fig.savefig(out / "loss.png", dpi=100)
    final = learner.history[-1]
    summary = ", ".join(f"{k} {v:.4f}" for k, v in final.items() if k not in ("epoch", "time"))
    print(f"done: {summary}\nwrote {out / 'model'}, {out / 'history.csv'}, {out / 'loss.png'}")
    return 0


def write_history(history, path: Path) -> None:
    import io

    from ..atomic import atomic_write_bytes

    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=list(history[0]))
    writer.writeheader()
    writer.writerows(history)
    atomic_write_bytes(path, buf.getvalue().encode())
