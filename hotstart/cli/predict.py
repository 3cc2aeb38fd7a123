"""``python -m hotstart predict MODEL INPUT... [--top-k 3] [--json]``: label and top-k probabilities.

    python -m hotstart predict digits.onnx img1.png img2.png     # onnxruntime; never imports torch
    python -m hotstart predict runs/hotstart img1.png             # a saved learner (torch)
    python -m hotstart predict digits.pt2 img1.png --json         # an AOTInductor package (torch)
    python -m hotstart predict digits.pte img1.png                # an ExecuTorch program (its runtime)
    python -m hotstart predict digits.tflite img1.png             # LiteRT (ai-edge-litert; no torch)
    python -m hotstart predict digits-int8.tflite img1.png --runtime tflite-micro   # TF Lite Micro's kernels
    python -m hotstart predict digits.vmfb img1.png               # IREE's runtime (no torch)
    python -m hotstart predict penguins.onnx rows.csv             # a table model: one line per row
    python -m hotstart predict gunpoint.onnx series.npy test.ts   # a series model: one line per series

MODEL is a folder written by ``learner.save`` (or ``train``'s --out folder), or a file from
``hotstart export``: ``.onnx`` (hotstart/predictor.py: numpy, pillow and onnxruntime only),
``.pte`` (ExecuTorch), ``.pt2`` (AOTInductor), ``.tflite`` (LiteRT; no torch) or ``.vmfb`` (IREE's
runtime; no torch): hotstart/runtimes/registry.py lists them. Every one is opened behind the same runtime
interface (hotstart/deploy.py: the model contract encodes and decodes, the runtime runs the
network), so every format answers alike. For an image model, each INPUT is an image, read and
converted as hotstart's Image block does; an unreadable image gets an error line naming the
file, the other images are still predicted, and the exit status is 1. For a table model, each
INPUT is a CSV of rows (contract/table_rows.py); for a series model, a ``.npy`` file of one series or
of several, or a ``.ts`` file of the UCR / UEA archives (contract/series_files.py). With ``--json``, every line is valid JSON. MODEL and
the inputs are checked before torch is imported (cli/preflight.py). A folder given as an image model's
INPUT stands for the image files under it (recursively, sorted, as a dataset folder is listed:
datasets/walk.py); one that holds none is refused before anything is predicted.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from ..errors import UsageError

MODEL_FILES = (".onnx (onnxruntime), .pte (ExecuTorch), .pt2 (AOTInductor), .tflite (LiteRT) or .vmfb (IREE)")


def add_parser(sub) -> argparse.ArgumentParser:
    p = sub.add_parser("predict", help="predict images (a table model's CSV rows, a series model's .npy / .ts "
                                       "files) with a saved model: a model folder, .onnx, .pte, .pt2, .tflite or .vmfb",
                       description="Print each image's (CSV row's, series') label and top-k probabilities, with a "
                                   f"model folder (learner.save, train's --out) or an exported {MODEL_FILES} file.")
    p.add_argument("model", help=f"a folder written by learner.save (or train's --out folder), or an exported "
                                 f"{MODEL_FILES} file")
    p.add_argument("inputs", nargs="+", metavar="INPUT",
                   help="image files or folders of them; for a table model, CSV files of rows with the model's "
                        "input columns; for a series model, .npy files (np.save of (steps,), (channels, steps), "
                        "(n, steps) or (n, channels, steps)) or .ts files")
    p.add_argument("--top-k", type=int, default=3, help="how many classes to show (default 3)")
    p.add_argument("--json", action="store_true", help="print one JSON object per image, row or series, in order; "
                                                          "one that failed has an \"error\" (valid JSON always)")
    p.add_argument("--runtime", default=None, metavar="NAME",
                   help="another runtime than the default for MODEL's suffix: tflite-micro for a .tflite (TF Lite "
                        "Micro's kernels; default litert)")
    p.add_argument("--no-server", action="store_true",  # taken off the command line by serve/client.py's hand_off
                   help="run in this process even when a `hotstart serve` is running (or set HOTSTART_SERVER=0)")
    return p


def run(args) -> int:
    from ..deploy import model_folder
    from .preflight import check_predict

    if args.top_k < 1:
        raise UsageError(f"--top-k must be at least 1, got {args.top_k}")
    check_predict(args)  # before torch: a missing file or a folder that is not a model fails at once
    path = Path(args.model)
    if path.is_dir():
        path = model_folder(path)
        _check_inputs_fit(_folder_kind(path), args.inputs)  # before the learner (and torch) is loaded
    from ..deploy import open_model

    from ..contract.kinds import SERIES_KINDS, TABLE_KINDS

    model = open_model(path, args.runtime)
    _check_inputs_fit(model.kind, args.inputs)
    if model.kind in TABLE_KINDS:
        from ..contract.table_rows import predict_rows

        return predict_rows(model, args.inputs, args.top_k, args.json, out=sys.stdout)
    if model.kind in SERIES_KINDS:
        from ..contract.series_files import predict_series_files

        return predict_series_files(model, args.inputs, args.top_k, args.json, out=sys.stdout,
                                    readers={".ts": read_ts_series})
    from ..contract.report import predict_paths

    return predict_paths(model, image_inputs(args.inputs), args.top_k, args.json, out=sys.stdout)


def read_ts_series(path, channels: int) -> list:
    """The series of a ``.ts`` file (datasets/ts_format.py; its labels, if any, are ignored)."""
    from ..datasets.ts_format import read_ts

    return read_ts(path).series


def image_inputs(inputs) -> list[str]:
    """`inputs` with each folder replaced by the image files under it (contract/image_files.py, the
    walker of the dataset folders and of a bundle's predictor.py too); a folder without images, or
    with a broken link, is a `UsageError` naming it. Files are kept as given: a missing or
    unreadable one gets its own error line when it is predicted."""
    from ..contract.image_files import image_paths

    try:
        return image_paths(inputs)
    except ValueError as e:  # InputValueError, ImageInputError: the contract's plain ValueErrors
        raise UsageError(str(e)) from None


def _folder_kind(folder: Path) -> str | None:
    """The task kind in a model folder's task.json (read without torch), or None if unreadable."""
    try:
        return json.loads((folder / "task.json").read_text(encoding="utf-8"))["task"]["kind"]
    except (OSError, ValueError, KeyError, TypeError):
        return None  # load_learner reports what is wrong with it


def _check_inputs_fit(kind, inputs) -> None:
    """A table model takes CSV files; an image model takes images (a CSV there is a likely mix-up);
    a series model's files are checked as they are read (contract/series_files.py)."""
    from ..contract.kinds import SERIES_KINDS, TABLE_KINDS

    if kind in SERIES_KINDS:
        return

    tables = [i for i in inputs if Path(i).suffix.lower() in (".csv", ".tsv")]
    if kind in TABLE_KINDS and len(tables) != len(inputs):
        other = next(i for i in inputs if i not in tables)
        raise UsageError(f"{other}: a {kind} model predicts table rows: give it CSV files of rows")
    if kind is not None and kind not in TABLE_KINDS and tables:
        raise UsageError(f"{tables[0]}: a {kind} model predicts images; a CSV of rows is for a table model "
                         f"(trained with --task tabular)")
