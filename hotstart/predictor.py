"""Predict with an exported hotstart model (.onnx) using numpy, pillow and onnxruntime only.

No torch, torchvision, timm or Lightning: an app can take this file and the model contract
(``python -m hotstart export ... --bundle DIR`` copies both: ``predictor.py`` and
``hotstart_contract/``) and run with ``pip install onnxruntime numpy pillow``.

    from predictor import Predictor
    p = Predictor.load("digits.onnx")
    label, probs = p.predict("img.png")              # a path, a PIL image or a numpy array
    results = p.predict_many(paths, batch_size=32)   # [(label, probs), ...]
    p.evaluate(images, labels)                       # {"accuracy": ..., "n": ...}
    python predictor.py digits.onnx img1.png img2.png [--top-k 3] [--json]
    python predictor.py digits.onnx photos/          # a folder: its images, sorted, subfolders too
    python predictor.py penguins.onnx rows.csv      # a table model: one line per CSV row
    python predictor.py gunpoint.onnx series.npy    # a series model: one line per series

Everything the model needs to know about its inputs and outputs is in the .onnx file's metadata
(the keys are described in hotstart/export/onnx.py), read and checked by the contract
(hotstart/contract/schema.py). The preprocessing and decoding are the contract's too, the same
that training's inference encoding and every other runtime use (hotstart/contract/): a model is
only as good as the inputs it is given. `Predictor` is the onnxruntime adapter of the runtime
interface (`ContractModel`); hotstart/runtimes/ has the others (.pte, .pt2, eager torch).
"""
from __future__ import annotations

import sys
from typing import Sequence

import numpy as np

if __package__:  # hotstart.predictor
    from .contract import (SERIES_KINDS, TABLE_KINDS, ContractModel, ImageInputError, InputValueError, MetadataError,
                           cannot_load, check_against_model, image_paths, model_file, predict_paths, predict_rows,
                           predict_series_files, read_metadata)
else:  # a bundle's predictor.py, beside its copy of the contract
    from hotstart_contract import (SERIES_KINDS, TABLE_KINDS, ContractModel, ImageInputError, InputValueError,
                                   MetadataError, cannot_load, check_against_model, image_paths, model_file,
                                   predict_paths, predict_rows, predict_series_files, read_metadata)

# the errors an app catches: a damaged model file, an unreadable image, a row or series the model cannot take
__all__ = ["Predictor", "MetadataError", "ImageInputError", "InputValueError", "main"]


class Predictor(ContractModel):
    """An exported hotstart model (.onnx) run by onnxruntime, with the task's preprocessing and decoding."""

    def __init__(self, session, meta: dict, source: str = "<model>"):
        super().__init__(meta, source)
        self.session = session
        inputs = session.get_inputs()
        chosen = meta.get("input_name") or inputs[0].name
        shape = next((i.shape for i in inputs if i.name == chosen), [])
        check_against_model(meta, [i.name for i in inputs], shape, session.get_outputs()[0].shape, self.source)
        self.input_name = chosen

    @classmethod
    def load(cls, source, *, providers: Sequence[str] | None = None, threads: int | None = None) -> "Predictor":
        """Open `source` (an .onnx written by hotstart's export, or its bytes) with onnxruntime;
        read the task from its metadata, and check it against the graph."""
        import onnxruntime as ort

        if isinstance(source, (bytes, bytearray)):
            where, model = "<onnx bytes>", bytes(source)
        else:
            where = model = model_file(source, "an ONNX model")
        opts = ort.SessionOptions()
        if threads is not None:
            opts.intra_op_num_threads = int(threads)
        try:
            session = ort.InferenceSession(model, opts, providers=list(providers or ["CPUExecutionProvider"]))
        except Exception as e:  # onnxruntime raises its own exception types
            raise cannot_load(where, "onnxruntime", e) from e
        return cls(session, read_metadata(session.get_modelmeta().custom_metadata_map, where), where)

    def run(self, batch: np.ndarray) -> np.ndarray:
        """Encoded inputs (N x ...) -> raw model outputs (logits)."""
        return self.session.run(None, {self.input_name: np.ascontiguousarray(batch, dtype=np.float32)})[0]


def main(argv=None) -> int:
    """The command line of the stand-alone predictor: ``python predictor.py model.onnx img1.png
    img2.png [--top-k 3] [--json]`` prints one line per image (``img1.png: 7 (7 0.981, 1 0.012, 9
    0.004)``, or a JSON object with ``--json``) and returns the exit status: 0 when every image was
    predicted, 1 when the model cannot be loaded or any image failed (its line names it, and the
    other images are still predicted). A folder stands for the image files under it, sorted,
    subfolders included (contract/image_files.py, as ``hotstart predict`` lists it; one without
    images is an error). A table model's inputs are CSV files of rows
    (contract/table_rows.py), a series model's ``.npy`` files (contract/series_files.py), as for
    ``hotstart predict``. `argv`: the arguments (None: ``sys.argv[1:]``)."""
    import argparse

    ap = argparse.ArgumentParser(description="Predict with an exported hotstart model (.onnx): images, a table "
                                             "model's CSV rows, or a series model's .npy files.")
    ap.add_argument("model")
    ap.add_argument("images", nargs="+", metavar="INPUT", help="image files or folders of them (a table model: CSV "
                                                               "files of rows; a series model: .npy files)")
    ap.add_argument("--top-k", type=int, default=3)
    ap.add_argument("--json", action="store_true", help="one JSON object per input (image, row or series)")
    args = ap.parse_args(argv)
    if args.top_k < 1:  # as `hotstart predict` refuses it (a slice [:0] or [:-3] printed nonsense)
        ap.error(f"--top-k must be at least 1, got {args.top_k}")
    try:
        predictor = Predictor.load(args.model)
    except (FileNotFoundError, ValueError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    if predictor.kind in SERIES_KINDS:
        return predict_series_files(predictor, args.images, args.top_k, args.json)
    if predictor.kind in TABLE_KINDS:
        return predict_rows(predictor, args.images, args.top_k, args.json)
    try:
        paths = image_paths(args.images)
    except ValueError as e:  # a folder without images, a broken link: nothing predicted yet
        print(f"error: {e}", file=sys.stderr)
        return 1
    return predict_paths(predictor, paths, args.top_k, args.json)


if __name__ == "__main__":
    sys.exit(main())
