"""`train`'s arguments: the parser of ``hotstart train`` (building it imports nothing heavy)."""
from __future__ import annotations

import argparse

COMPILE = {"auto": "auto", "on": True, "off": False}  # --compile's choices -> tasklearner's compile=
DEFAULT_BATCH = 64  # the learner's batch when neither --batch-size nor the task gives one (the hint's fallback)


def batch_size_or_default(args) -> int:
    """--batch-size, or `DEFAULT_BATCH` when none was given: what the end-of-fit hint quotes when
    the learner has no loader to ask. Training leaves a missing --batch-size to the task's default
    (pictures 32 below 4,096, tasks/image_base.py; series about 8 steps an epoch,
    tasks/timeseries.py; tables 64)."""
    return args.batch_size if args.batch_size is not None else DEFAULT_BATCH


def add_parser(sub) -> argparse.ArgumentParser:
    t = sub.add_parser("train", help="train a model (images, tables, series, masks, points) and save it",
                       description="Train a model and save it into --out. PATH is a folder of class folders or a "
                                   "CSV of image paths (default: the built-in digits); --task tabular takes a CSV "
                                   "table, --task timeseries a .ts file, --task segmentation a folder with images/ "
                                   "and masks/, --task keypoints a CSV of points.")
    t.add_argument("path", nargs="?", default=None, help="folder of class folders, or a CSV table; default: digits")
    t.add_argument("--backbone", default=None, help="a timm model name (e.g. resnet18) or one of hotstart's: SmallCNN, smallcnn_micro, "
                        "smallcnn_maxpool; for series inceptiontime, resnet1d; default: chosen for the data")
    t.add_argument("--pretrained", action="store_true", help="start from the backbone's pretrained weights")
    t.add_argument("--epochs", type=positive_int, default=5)
    t.add_argument("--size", type=positive_int, nargs=2, metavar=("H", "W"), default=None,
                   help="input size; default 32 32 for digits, else the pictures' median shorter side, at most 128")
    t.add_argument("--batch-size", type=positive_int, default=None,
                   help=f"samples a batch; default: the task's (pictures 32 below 4,096 training images, else "
                        f"{DEFAULT_BATCH}; series about 8 steps an epoch, 8 to 64; tables {DEFAULT_BATCH})")
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
    t.add_argument("--task", choices=["image", "classification", "tabular", "segmentation", "keypoints", "timeseries"], default=None,
                   help="image / classification (default): a label per image; tabular: predict a CSV column from the "
                        "others (see --target); segmentation: a class per pixel (PATH holds images/ and masks/, "
                        "with --classes; default data: digits-segmentation); keypoints: points (PATH is a CSV with "
                        "--point-cols; default data: discs); timeseries: a class or a number per series (PATH is a .ts "
                        "file or a built-in set's name; default: GunPoint; --backbone inceptiontime or resnet1d)")
    t.add_argument("--classes", default=None, help="segmentation: comma-separated class names, mask value order")
    t.add_argument("--point-cols", default=None, help="keypoints CSV: comma-separated x0,y0,x1,y1,... columns")
    t.add_argument("--target", default=None,
                   help="tabular: the column to predict (implies --task tabular); without PATH, the built-in penguins")
    t.add_argument("--continuous", type=column_list, default=None, metavar="COL,COL",
                   help="tabular: input columns to read as numbers (a text cell in one is then an error naming it)")
    t.add_argument("--categorical", type=column_list, default=None, metavar="COL,COL",
                   help="tabular: input columns to read as categories; the columns named in neither are inferred")
    t.add_argument("--out", default="runs/hotstart",
                   help="output folder (default: runs/hotstart); one that holds an earlier run is refused, so "
                        "that no model is replaced silently and commands naming the folder keep meaning it: "
                        "pass another folder, or --overwrite")
    t.add_argument("--overwrite", action="store_true", help="replace the earlier run in --out")
    t.add_argument("--compile", choices=list(COMPILE), default="auto",
                   help="torch.compile the backbone: auto (default) compiles only where it pays and the "
                        "compile cache is warm (python -m hotstart.warmup), i.e. on CUDA, never on CPU; "
                        "on / off force it")
    t.add_argument("--no-progress", action="store_true",
                   help="no progress bars (the epoch table is still printed); bars are off anyway "
                        "when the output is not a terminal")
    t.add_argument("--quiet", "-q", action="store_true",
                   help="no progress bars, no epoch table, no task description: only the final summary")
    t.add_argument("--devices", type=positive_int, default=None,
                   help="processes (one per GPU, or CPU processes) for data parallel training; under torchrun or "
                        "SLURM the launcher's count is used")
    t.add_argument("--strategy", default=None, help="Lightning Fabric strategy (default: ddp with --devices > 1)")
    t.add_argument("--accumulate", type=positive_int, default=1, help="batches per optimizer step")
    t.add_argument("--checkpoint-dir", default=None, help="write a checkpoint here at the end of every epoch")
    t.add_argument("--checkpoint-every", type=positive_int, default=None,
                   help="also write a checkpoint every N optimizer steps")
    t.add_argument("--resume", default=None, metavar="DIR",
                   help="continue from the last complete checkpoint in DIR, an existing folder (and keep "
                        "checkpointing there); with --checkpoint-dir DIR too, DIR may not exist yet (a first run)")
    t.add_argument("--no-server", action="store_true",
                   help="run in this process even when a `hotstart serve` is running (or set HOTSTART_SERVER=0)")
    return t


def positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {value}")
    return value


def column_list(text: str) -> list[str]:
    """``a,b`` -> ["a", "b"] (names stripped, empty ones dropped)."""
    names = [c.strip() for c in text.split(",") if c.strip()]
    if not names:
        raise argparse.ArgumentTypeError(f"expected comma-separated column names, got {text!r}")
    return names
