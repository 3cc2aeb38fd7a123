"""``python -m hotstart train [PATH] ...``: train a model on a folder, a table or built-in data.

    python -m hotstart train                          # the built-in digits, small CNN, 32x32
    python -m hotstart train photos/ --backbone resnet18 --size 128 128 --epochs 5 --out runs/photos
    python -m hotstart train table.csv --path-col file --label-col tags --label-sep " "
    python -m hotstart train table.csv --task tabular --target price    # a table's own columns
    python -m hotstart train --task segmentation     # digits-segmentation; or PATH with images/ masks/ --classes
    python -m hotstart train --task keypoints        # discs; or a CSV with --path-col --point-cols x0,y0
    python -m hotstart train --devices 2 --checkpoint-dir runs/ckpt   # 2 processes (DDP), checkpoints
    python -m hotstart train --devices 2 --resume runs/ckpt           # continue after a kill

PATH is a folder of class folders (optionally split into train/ and valid/) or a CSV table.
The run writes to --out: the model (weights.safetensors + task.json), history.csv and loss.png.
"""
from __future__ import annotations

import argparse
import csv
from pathlib import Path


def add_parser(sub) -> argparse.ArgumentParser:
    t = sub.add_parser("train", help="train an image classifier and save it",
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
    t.add_argument("--allow-outside", action="store_true",
                   help="CSV: allow absolute paths and paths outside the table's folder")
    t.add_argument("--task", choices=["image", "classification", "tabular", "segmentation", "keypoints"], default=None,
                   help="image / classification (default): a label per image; tabular: predict a CSV column from the "
                        "others (see --target); segmentation: a class per pixel (PATH holds images/ and masks/, "
                        "with --classes; default data: digits-segmentation); keypoints: points (PATH is a CSV with "
                        "--point-cols; default data: discs)")
    t.add_argument("--classes", default=None, help="segmentation: comma-separated class names, mask value order")
    t.add_argument("--point-cols", default=None, help="keypoints CSV: comma-separated x0,y0,x1,y1,... columns")
    t.add_argument("--target", default=None,
                   help="tabular: the column to predict (implies --task tabular); without PATH, the built-in penguins")
    t.add_argument("--out", default="runs/hotstart", help="output folder (default: runs/hotstart)")
    t.add_argument("--no-progress", action="store_true", help="no progress bars")
    t.add_argument("--devices", type=_positive_int, default=None,
                   help="processes (one per GPU, or CPU processes) for data parallel training; under torchrun or "
                        "SLURM the launcher's count is used")
    t.add_argument("--strategy", default=None, help="Lightning Fabric strategy (default: ddp with --devices > 1)")
    t.add_argument("--accumulate", type=_positive_int, default=1, help="batches per optimizer step")
    t.add_argument("--checkpoint-dir", default=None, help="write a checkpoint here at the end of every epoch")
    t.add_argument("--checkpoint-every", type=_positive_int, default=None,
                   help="also write a checkpoint every N optimizer steps")
    t.add_argument("--resume", default=None, metavar="DIR",
                   help="continue from the last complete checkpoint in DIR (and keep checkpointing there)")
    return t


def _first_process() -> bool:
    """Before the learner exists: is this the first process (rank 0, or the only one)?"""
    import os

    return all(os.environ.get(k, "0") == "0" for k in ("RANK", "LOCAL_RANK", "SLURM_PROCID"))


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


def _make_task(args, blocks, builtin: bool):
    from ..blocks import LabelMulti
    from ..tasks import ImageClassificationMulti, ImageClassificationSingle, ImageKeypointRegression, ImageSegmentation

    kind = getattr(args, "task", None) or "classification"
    size = tuple(args.size) if args.size else ((32, 32) if builtin else (128, 128))
    augment = {"flip": 0.0} if ((builtin and kind != "keypoints") or args.no_flip) else True
    if kind == "segmentation":
        return ImageSegmentation(blocks, size=size, augment=augment)
    if kind == "keypoints":
        return ImageKeypointRegression(blocks, size=size, augment=augment)
    task_cls = ImageClassificationMulti if isinstance(blocks[1], LabelMulti) else ImageClassificationSingle
    return task_cls(blocks, size=size, augment=augment)


def run(args) -> int:
    if getattr(args, "task", None) == "tabular" or (getattr(args, "task", None) is None and getattr(args, "target", None)):
        from .train_tabular import run_tabular

        return run_tabular(args)
    from ..learner import tasklearner

    data, blocks, name = load_data(args)
    task = _make_task(args, blocks, builtin=args.path is None)
    if _first_process():
        what = f"{len(task.classes)} classes" if hasattr(task, "classes") else f"{task.n} point(s)"
        print(f"data: {name}, {len(data[0])} samples, {what}; task:")
        task.describe()
    learner = tasklearner(task, data, backbone=args.backbone, pretrained=args.pretrained,
                          batch_size=args.batch_size, valid_pct=args.valid_pct, seed=args.seed,
                          num_workers=args.workers, progress=not args.no_progress,
                          devices=getattr(args, "devices", None), strategy=getattr(args, "strategy", None))
    lr = args.lr if args.lr is not None else (3e-3 if args.backbone is None else 1e-3)
    resume = getattr(args, "resume", None)
    learner.fit_one_cycle(args.epochs, lr, accumulate=getattr(args, "accumulate", 1),
                          checkpoint_dir=getattr(args, "checkpoint_dir", None) or resume,
                          checkpoint_every=getattr(args, "checkpoint_every", None), resume=resume)
    out = Path(args.out)
    learner.save(out / "model")  # the first process writes, the others wait
    if not learner.backend.is_global_zero:
        return 0
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
