"""``python -m hotstart predict MODEL IMAGE... [--top-k 3] [--json]``: label and top-k probabilities.

    python -m hotstart predict digits.onnx img1.png img2.png     # never imports torch
    python -m hotstart predict runs/hotstart img1.png             # a saved learner (torch)
    python -m hotstart predict digits.pt2 img1.png --json         # an AOTInductor package (torch)
    python -m hotstart predict digits.pte img1.png                # an ExecuTorch program (its runtime)

MODEL is an .onnx file from ``hotstart export`` (run by hotstart/predictor.py: numpy, pillow and
onnxruntime only), a .pt2 package, a .pte program (ExecuTorch's runtime), or a folder written by ``learner.save``. Every image is read and
converted as hotstart's Image block does. An unreadable image gets an error line naming the file;
the other images are still predicted, and the exit status is 1.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..errors import SavedModelError, UsageError


def add_parser(sub) -> argparse.ArgumentParser:
    p = sub.add_parser("predict", help="predict images with a saved model, an .onnx or a .pt2 file",
                       description="Print each image's label and top-k probabilities.")
    p.add_argument("model", help="an .onnx file, a .pt2 package, a .pte program, or a folder written by learner.save")
    p.add_argument("images", nargs="+", help="image files")
    p.add_argument("--top-k", type=int, default=3, help="how many classes to show (default 3)")
    p.add_argument("--json", action="store_true", help="print one JSON object per image")
    return p


def run(args) -> int:
    from .. import predictor as P

    if args.top_k < 1:
        raise UsageError(f"--top-k must be at least 1, got {args.top_k}")
    path = Path(args.model)
    if path.suffix.lower() == ".onnx":
        model = _load_onnx(P, path)  # no torch on this path
    elif path.suffix.lower() == ".pt2":
        model = _Pt2Model(path)
    elif path.suffix.lower() == ".pte":
        model = _load_pte(path)
    else:
        model = _LearnerModel(path)
    return P.predict_paths(model, args.images, args.top_k, args.json, out=sys.stdout)


def _load_onnx(P, path: Path):
    """`Predictor.load`, with a damaged or non-hotstart .onnx as a `SavedModelError` naming the file
    (the predictor stays free of hotstart's imports, so it raises plain ValueErrors)."""
    try:
        return P.Predictor.load(path)
    except ValueError as e:
        msg = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        msg = msg if msg.startswith(str(path)) else f"{path}: {msg}"
        raise SavedModelError(f"{msg} (is it an .onnx written by `python -m hotstart export`?)") from e


def _load_pte(path: Path):
    """export/pte.py's `PteModel`, with a damaged or non-hotstart .pte as a `SavedModelError`."""
    from ..export.pte import PteModel

    try:
        return PteModel(path)
    except ValueError as e:
        raise SavedModelError(f"{e} (is it a .pte written by `python -m hotstart export --format pte`?)") from e


class _LearnerModel:
    """A saved learner behind the predictor's `predict` / `classes` interface."""

    def __init__(self, path):
        from ..learner import load_learner
        from .export import model_folder

        self.learner = load_learner(model_folder(path), progress=False)
        self.classes = list(self.learner.task.classes)

    def predict(self, image):
        from ..predictor import load_image

        label, probs = self.learner.predict(load_image(image))  # read as the predictor reads: same errors
        return label, probs.numpy()


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
        self.classes = self.meta["classes"]

    def predict(self, image):
        import torch

        x = torch.from_numpy(self.kind.encode(image, self.meta)[None])
        with torch.no_grad():
            out = self.model(x)
        out = out[0] if isinstance(out, (list, tuple)) else out
        return self.kind.decode(out[0].float().numpy(), self.meta)
