"""Checks of a command's paths, columns and output folder that run BEFORE torch is imported.

Importing torch (and timm, torchvision) takes 5 s on an idle laptop and 25-50 s on a busy machine,
so a misspelled path, a misspelled column or a folder that is not a model used to cost that long
before its one-line error. Everything here uses the standard library only (``csv`` for a table's
header row), and each command calls its check first:

    train    PATH exists and is a folder or a .csv/.tsv; the CSV header names the columns given
             (--path-col/--label-col, --target, --continuous/--categorical, --point-cols);
             segmentation's images/ and masks/; --out and --checkpoint-dir are (or can be made)
             folders, not files; --out holds no earlier run unless --overwrite (see `check_out`);
             --resume names an existing folder (see `check_resume`).
    predict  MODEL exists (a model file a runtime is registered for, or a model folder).
    export   MODEL_DIR is a model folder (`model_folder`).

The full readers (datasets.ImageFolders, ImageTable, TableData ...) still check every row and
file afterwards; these checks only move the common mistakes ahead of the slow imports. tests:
tests/test_cli_fail_fast.py runs them in a subprocess and asserts torch was never imported.
"""
from __future__ import annotations

import csv
import difflib
from pathlib import Path

from ..deploy import model_folder
from ..errors import SavedModelError, UsageError
from ..run_folder import RUN_OUTPUTS  # what `train` writes into --out: an earlier run if any is there

TABLE_SUFFIXES = (".csv", ".tsv")


def table_header(path) -> list[str] | None:
    """The header row of a CSV (TSV for ``.tsv``), names stripped; None when it cannot be decoded
    here (then the full reader reports the line and byte)."""
    path = Path(path)
    delimiter = "\t" if path.suffix.lower() == ".tsv" else ","
    try:
        with open(path, newline="", encoding="utf-8-sig") as f:
            header = next(csv.reader(f, delimiter=delimiter), None)
    except UnicodeDecodeError:
        return None
    if not header:
        raise UsageError(f"{path} is empty (no header row)")
    return [h.strip() for h in header]


def check_columns(path, header: list[str], wanted: dict[str, str]) -> None:
    """`wanted`: column -> the option that named it; a `UsageError` naming the option, the column,
    the file and the close matches among its columns."""
    for column, option in wanted.items():
        if column in header:
            continue
        close = difflib.get_close_matches(column, header, n=3, cutoff=0.6)
        hint = f"; did you mean {', '.join(map(repr, close))}?" if close else ""
        raise UsageError(f"{option} {column!r}: {path} has no such column{hint} (its columns: "
                         f"{header[:20]}{' ...' if len(header) > 20 else ''})")


def check_train(args) -> None:
    """`train`'s paths, columns and output folder, before anything heavy is imported."""
    task = getattr(args, "task", None)
    tabular = task == "tabular" or (task is None and getattr(args, "target", None))
    if task == "timeseries":  # PATH: a .ts file, or a built-in set's name (checked by cli/train_timeseries.py)
        path = Path(args.path) if args.path is not None else None
        if path is not None and (path.suffix or len(path.parts) > 1) and not path.is_file():
            raise FileNotFoundError(f"{path}: no such file (--task timeseries takes a .ts file or a built-in set's name)")
    elif args.path is not None:
        _check_data_path(args, Path(args.path), task, tabular)
    check_resume(args)
    check_out(args)


def _check_data_path(args, path: Path, task, tabular) -> None:
    if not path.exists():
        raise FileNotFoundError(f"{path}: no such file or folder")
    if tabular:
        if not path.is_file():
            raise FileNotFoundError(f"{path}: no such file (--task tabular takes a CSV table)")
        if args.target:
            named = {c: f"--{flag}" for flag in ("continuous", "categorical") for c in getattr(args, flag, None) or []}
            _check_table(path, {args.target: "--target", **named})
        return
    if task == "segmentation":
        for sub in ("images", "masks"):
            if not (path / sub).is_dir():
                raise FileNotFoundError(f"{path / sub}: no such folder (--task segmentation takes a folder with "
                                        f"images/ and masks/)")
        return
    if path.is_dir():
        if task != "keypoints" and not any(p.is_dir() for p in path.iterdir()):
            raise UsageError(f"{path}: expected a folder of class folders (one subfolder per class), found no "
                             f"subfolder")
        return
    if path.suffix.lower() not in TABLE_SUFFIXES:
        raise UsageError(f"{path}: expected a folder of class folders or a .csv table")
    if task == "keypoints":
        points = [c for c in (args.point_cols or "").split(",") if c]
        _check_table(path, {args.path_col: "--path-col", **{c: "--point-cols" for c in points}})
    else:
        _check_table(path, {args.path_col: "--path-col", args.label_col: "--label-col"})


def _check_table(path: Path, wanted: dict[str, str]) -> None:
    header = table_header(path)
    if header is not None:
        check_columns(path, header, wanted)


def check_folder_to_write(path, option: str) -> None:
    """`path` (given as `option`) is a folder, or can be made one: neither it nor a folder above
    it is a file. Found after training, such an --out lost the model."""
    path = Path(path)
    for above in [path, *path.parents]:
        if above.exists():
            if not above.is_dir():
                what = "is a file" if above == path else f"lies below {above}, which is a file"
                raise UsageError(f"{option} {path} {what}, not a folder: give a folder to write into")
            return


def check_resume(args) -> None:
    """--resume DIR names an existing folder: a misspelled one must not start a fresh run (which
    then replaced the model in --out, since --resume lets the run write there). ``--resume DIR
    --checkpoint-dir DIR`` means "continue if a run left checkpoints in DIR": DIR may not exist yet.
    A --checkpoint-dir that holds an earlier run's checkpoints, without --resume, is refused here, as
    the fit would refuse it (learner/checkpoint/write.py), before the data is read."""
    resume = getattr(args, "resume", None)
    checkpoint_dir = getattr(args, "checkpoint_dir", None)
    if checkpoint_dir is not None:
        check_folder_to_write(checkpoint_dir, "--checkpoint-dir")
    if resume is None:
        if checkpoint_dir is not None and holds_checkpoint(checkpoint_dir):  # the fit would refuse it, later
            raise UsageError(f"--checkpoint-dir {checkpoint_dir} holds checkpoints of an earlier run: add --resume "
                             f"{checkpoint_dir} to continue it, or give this run a new --checkpoint-dir")
        return
    path = Path(resume)
    if path.is_dir():
        return
    if path.exists():
        raise UsageError(f"--resume {path} is a file, not a folder: give the --checkpoint-dir of the run to continue")
    if checkpoint_dir is not None and Path(checkpoint_dir).resolve() == path.resolve():
        return
    raise UsageError(f"--resume {path}: no such folder; give the --checkpoint-dir of the run to continue (with "
                     f"--checkpoint-dir {path} as well, a first run starts fresh when {path} does not exist yet)")


def holds_checkpoint(folder) -> bool:
    """Whether `folder` holds a complete checkpoint (a ``ckpt-*`` folder: learner/checkpoint/layout.py's
    names, matched here without importing the learner, which imports torch)."""
    folder = Path(folder)
    return folder.is_dir() and any(p.name.startswith("ckpt-") and p.is_dir() for p in folder.iterdir())


def check_out(args) -> None:
    """--out is a folder to write into; never overwrite an earlier run silently: refuse an --out
    that holds one (its model/, history.csv or loss.png) unless --overwrite, or --resume from a
    folder that holds a checkpoint (which continues the run that wrote it).

    Refusing rather than numbering the runs (runs/hotstart-1, -2 ... as Lightning does) keeps every
    command that names the folder (``hotstart export runs/hotstart``, scripts, the README) pointing
    at the model it means: with numbering, they would silently use an older run."""
    check_folder_to_write(args.out, "--out")
    resume = getattr(args, "resume", None)
    if getattr(args, "overwrite", False) or (resume is not None and holds_checkpoint(resume)):
        return
    out = Path(args.out)
    found = [name for name in RUN_OUTPUTS if (out / name).exists()]
    if found:
        raise UsageError(f"--out {out} already holds an earlier run ({', '.join(found)}); pass --overwrite to "
                         f"replace it, or another folder, e.g. --out {_free_name(out)}")


def _free_name(out: Path) -> Path:
    """``out-2``, ``out-3`` ...: the first that holds no run."""
    n = 2
    while any((out.with_name(f"{out.name}-{n}") / name).exists() for name in RUN_OUTPUTS):
        n += 1
    return out.with_name(f"{out.name}-{n}")


def check_predict(args) -> None:
    """`predict`'s MODEL exists; a folder MODEL is a model folder; a file MODEL has a suffix a runtime
    is registered for (hotstart/runtimes/registry.py: torch-free to import)."""
    from ..runtimes.registry import suffixes

    model = Path(args.model)
    files = f"a model file ({', '.join(suffixes())})"
    if not model.exists():
        raise FileNotFoundError(f"{model}: no such file or folder (expected {files}, or a model folder)")
    if model.is_dir():
        model_folder(model)
    elif model.suffix.lower() not in suffixes():
        raise UsageError(f"{model}: expected {files}, or a folder written by learner.save")
    # the inputs are not checked here: a missing image is an error line of its own, and the others are predicted
