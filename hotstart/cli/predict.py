"""``python -m hotstart predict MODEL INPUT... [--top-k 3] [--json]``: label and top-k probabilities.

    python -m hotstart predict digits.onnx img1.png img2.png     # never imports torch
    python -m hotstart predict runs/hotstart img1.png             # a saved learner (torch)
    python -m hotstart predict digits.pt2 img1.png --json         # an AOTInductor package (torch)
    python -m hotstart predict digits.pte img1.png                # an ExecuTorch program (its runtime)
    python -m hotstart predict digits.tflite img1.png             # LiteRT (ai-edge-litert; no torch)
    python -m hotstart predict digits.vmfb img1.png               # IREE's runtime (no torch)
    python -m hotstart predict penguins.onnx rows.csv             # a table model: one line per row

MODEL is an .onnx file from ``hotstart export`` (run by hotstart/predictor.py: numpy, pillow and
onnxruntime only), a .pt2 package, a .pte program (ExecuTorch's runtime), or a folder written by
``learner.save``. For an image model,
each INPUT is an image, read and converted as hotstart's Image block does; an unreadable image
gets an error line naming the file, the other images are still predicted, and the exit status
is 1. For a table model (``--task tabular``), each INPUT is a CSV of rows (cli/predict_rows.py).
MODEL and the inputs are checked before torch is imported (cli/preflight.py).
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from ..errors import SavedModelError, UsageError

# the table task kinds (cli/predict_rows.py reads their CSV rows; imported only when used: it needs numpy)
TABLE_KINDS = ("TabularClassificationSingle", "TabularRegression")


def add_parser(sub) -> argparse.ArgumentParser:
    p = sub.add_parser("predict", help="predict images (or a table model's CSV rows) with a saved model, .onnx or .pt2",
                       description="Print each image's (or CSV row's) label and top-k probabilities.")
    p.add_argument("model", help="an .onnx file, a .pt2 package, a .pte program, or a folder written by learner.save")
    p.add_argument("inputs", nargs="+", metavar="INPUT",
                   help="image files; for a table model, CSV files of rows with the model's input columns")
    p.add_argument("--top-k", type=int, default=3, help="how many classes to show (default 3)")
    p.add_argument("--json", action="store_true", help="print one JSON object per image or row")
    return p


def run(args) -> int:
    from .preflight import check_predict, model_folder

    if args.top_k < 1:
        raise UsageError(f"--top-k must be at least 1, got {args.top_k}")
    check_predict(args)  # before torch: a missing file or a folder that is not a model fails at once
    path = Path(args.model)
    if path.suffix.lower() == ".onnx":
        from .. import predictor as P

        model = _load_onnx(P, path)  # no torch on this path
    elif path.suffix.lower() == ".pt2":
        model = _Pt2Model(path)
    elif path.suffix.lower() == ".pte":
        model = _load_pte(path)
    elif path.suffix.lower() in (".tflite", ".vmfb"):
        model = _load_tflite_or_vmfb(path)
    else:
        folder = model_folder(path)
        _check_inputs_fit(_folder_kind(folder), args.inputs)
        model = _LearnerModel(folder)
    kind = model.meta["kind"] if hasattr(model, "meta") else model.kind
    _check_inputs_fit(kind, args.inputs)
    if kind in TABLE_KINDS:
        from .predict_rows import predict_rows

        return predict_rows(_TableModel(model, kind), args.inputs, args.top_k, args.json, out=sys.stdout)
    from ..predictor import predict_paths

    return predict_paths(model, args.inputs, args.top_k, args.json, out=sys.stdout)


def _folder_kind(folder: Path) -> str | None:
    """The task kind in a model folder's task.json (read without torch), or None if unreadable."""
    try:
        return json.loads((folder / "task.json").read_text(encoding="utf-8"))["task"]["kind"]
    except (OSError, ValueError, KeyError, TypeError):
        return None  # load_learner reports what is wrong with it


def _check_inputs_fit(kind, inputs) -> None:
    """A table model takes CSV files; an image model takes images (a CSV there is a likely mix-up)."""
    tables = [i for i in inputs if Path(i).suffix.lower() in (".csv", ".tsv")]
    if kind in TABLE_KINDS and len(tables) != len(inputs):
        other = next(i for i in inputs if i not in tables)
        raise UsageError(f"{other}: a {kind} model predicts table rows: give it CSV files of rows")
    if kind is not None and kind not in TABLE_KINDS and tables:
        raise UsageError(f"{tables[0]}: a {kind} model predicts images; a CSV of rows is for a table model "
                         f"(trained with --task tabular)")


def _load_onnx(P, path: Path):
    """`Predictor.load`, with a damaged or non-hotstart .onnx as a `SavedModelError` naming the file
    (the predictor stays free of hotstart's imports, so it raises plain ValueErrors)."""
    try:
        return P.Predictor.load(path)
    except ValueError as e:
        msg = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        msg = msg if msg.startswith(str(path)) else f"{path}: {msg}"
        raise SavedModelError(f"{msg} (is it an .onnx written by `python -m hotstart export`?)") from e


class _TableModel:
    """Any of the three model kinds behind `predict_rows`'s interface: predict(row dict),
    ``table`` (the input columns) and ``classes`` (None for a regression)."""

    def __init__(self, model, kind: str):
        self.model, self.kind = model, kind
        if isinstance(model, _LearnerModel):
            prep = model.learner.task.preprocessing.to_dict()
            self.table = {k: prep[k] for k in ("categorical", "continuous", "vocab")}
        else:
            self.table = model.meta["table"]
        self.classes = None if kind == "TabularRegression" else list(model.classes)

    def predict(self, row):
        return self.model.predict(row)


def _load_pte(path: Path):
    """export/pte.py's `PteModel`, with a damaged or non-hotstart .pte as a `SavedModelError`."""
    from ..export.pte import PteModel

    try:
        return PteModel(path)
    except ValueError as e:
        raise SavedModelError(f"{e} (is it a .pte written by `python -m hotstart export --format pte`?)") from e


def _load_tflite_or_vmfb(path: Path):
    """export/tflite_run.py's `TFLiteModel` (LiteRT) or export/iree_run.py's `IreeModel`: no torch."""
    if path.suffix.lower() == ".tflite":
        from ..export.tflite_run import TFLiteModel as Model
    else:
        from ..export.iree_run import IreeModel as Model
    from ..predictor import MetadataError

    try:
        return Model(path)
    except MetadataError as e:  # a plain ValueError in the torch-free predictor: one line here
        raise SavedModelError(str(e)) from e


class _LearnerModel:
    """A saved learner behind the predictor's `predict` / `classes` interface."""

    def __init__(self, folder):
        from ..learner import load_learner

        self.learner = load_learner(folder, progress=False)
        self.kind = self.learner.task.to_dict()["kind"]
        self.classes = list(self.learner.task.classes or [])

    def predict(self, item):
        if self.kind in TABLE_KINDS:
            label, probs = self.learner.predict(item)
        else:
            from ..predictor import load_image

            label, probs = self.learner.predict(load_image(item))  # read as the predictor reads: same errors
        return label, (probs.numpy() if hasattr(probs, "numpy") else probs)


class _Pt2Model:
    """A .pt2 package (from ``hotstart export --format pt2``) with the predictor's numpy preprocessing."""

    def __init__(self, path):
        from ..export.pt2 import load_pt2
        from ..predictor import KINDS

        from ..predictor import MetadataError

        try:
            self.model, self.meta = load_pt2(path)
        except MetadataError as e:  # a plain ValueError in the torch-free predictor: one line here
            raise SavedModelError(str(e)) from e
        self.kind = KINDS[self.meta["kind"]]
        self.classes = self.meta.get("classes")

    def predict(self, item):
        import torch

        x = torch.from_numpy(self.kind.encode(item, self.meta)[None])
        with torch.no_grad():
            out = self.model(x)
        out = out[0] if isinstance(out, (list, tuple)) else out
        return self.kind.decode(out[0].float().numpy(), self.meta)
