"""`ContractModel`: the one interface of every runtime: metadata, and raw inputs to decoded outputs.

    model.meta                       # the checked metadata (kind, classes, size, table, ...)
    model.predict("cat.jpg")         # (label, probabilities), or (values, values) for a regression
    model.predict_many(inputs, 32)   # raw inputs -> decoded outputs, 32 at a time
    model.run(batch)                 # encoded float32 inputs (N x ...) -> raw outputs: the parity step

An adapter for a runtime (onnxruntime in hotstart/predictor.py; ExecuTorch, AOTInductor, LiteRT,
TF Lite Micro, IREE and eager torch in hotstart/runtimes/) subclasses it and implements `run`
only: the encoding of inputs and the decoding of outputs are the contract's, the same for every
runtime, so a model answers the same whichever runtime runs it. ``batch_size`` is None for a model
that takes any batch size, else the one it takes per call (a ``.pte``, a ``.tflite``); `run` takes
any number of inputs either way.
"""
from __future__ import annotations

import abc
import os
from typing import Any, Sequence

import numpy as np

from .errors import MetadataError
from .kinds import KINDS, check_metadata
from .table_input import is_dataframe

__all__ = ["ContractModel", "model_file", "model_bytes", "cannot_load", "rows_of"]


def model_file(path, what: str) -> str:
    """`path` (as text) once it is a file with something in it; else `FileNotFoundError`, or a
    `MetadataError` for an empty file (which a runtime would misreport: "an old IR version")."""
    path = os.fspath(path)
    if not os.path.isfile(path):
        raise FileNotFoundError(f"{path}: no such {what}")
    if os.path.getsize(path) == 0:
        raise MetadataError(f"{path}: the file is empty (0 bytes), not {what}")
    return path


def model_bytes(source, what: str, short: str) -> tuple[str, bytes]:
    """(a name for messages, the bytes) of `source`: a model file's path (checked by `model_file`),
    or the bytes themselves (an export checks a file before writing it), named ``<SHORT bytes>``."""
    if isinstance(source, (bytes, bytearray)):
        return f"<{short} bytes>", bytes(source)
    where = model_file(source, what)
    with open(where, "rb") as f:
        return where, f.read()


def cannot_load(where: str, runtime: str, error: BaseException) -> MetadataError:
    """A `MetadataError`: `runtime` could not load `where`, with the first line of its `error`."""
    first = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
    return MetadataError(f"{where}: {runtime} cannot load it: {first}")


class ContractModel(abc.ABC):
    """A saved model behind the contract; subclasses implement `run`."""

    batch_size: int | None = None

    def __init__(self, meta: dict[str, Any], source: str = "<model>"):
        check_metadata(meta, source)
        self.meta, self.source = meta, str(source)
        self.kind = meta["kind"]
        self._kind = KINDS[self.kind]
        self._encode = self._kind.encoder(meta)

    @property
    def classes(self) -> list | None:
        """The labels, in output order (None for a regression)."""
        return self.meta.get("classes")

    # --- the three steps -----------------------------------------------------------------
    def preprocess(self, x) -> np.ndarray:
        """One raw input (an image path, PIL image or array; a row; a series) -> the model's encoded input."""
        return self._encode(x)

    @abc.abstractmethod
    def run(self, batch: np.ndarray) -> np.ndarray:
        """Encoded inputs (N x ...) float32 -> raw model outputs (N x ...), as numpy."""

    def decode(self, output: np.ndarray) -> tuple[Any, np.ndarray]:
        """One sample's raw output -> (label(s) or values, probabilities or values); a ValueError
        when the output is not finite (no answer to give)."""
        return self._kind.decode(np.asarray(output), self.meta)

    # --- the API ---------------------------------------------------------------------------
    def predict(self, x) -> tuple[Any, np.ndarray]:
        """The decoded answer for one raw input."""
        return self.decode(self.run(self.preprocess(x)[None])[0])

    def predict_many(self, inputs: Sequence, batch_size: int = 32) -> list[tuple[Any, np.ndarray]]:
        """`predict` over many raw inputs, `batch_size` at a time (an unreadable input raises, naming it).
        A pandas DataFrame is taken as its rows (iterating one gives its column names)."""
        if int(batch_size) < 1:
            raise ValueError(f"batch_size must be at least 1, got {batch_size!r}")
        inputs = rows_of(inputs)
        results = []
        for start in range(0, len(inputs), batch_size):
            batch = np.stack([self.preprocess(x) for x in inputs[start:start + batch_size]])
            results += [self.decode(out) for out in self.run(batch)]
        return results

    def evaluate(self, inputs: Sequence, targets: Sequence, batch_size: int = 32) -> dict[str, float]:
        """Predict a labelled set: {"accuracy": ..., "n": ...}, computed as hotstart's metric is."""
        inputs = rows_of(inputs)
        if len(inputs) != len(targets):
            raise ValueError(f"evaluate: {len(inputs)} inputs but {len(targets)} targets")
        preds = self.predict_many(inputs, batch_size)
        return {"accuracy": self._kind.accuracy(preds, list(targets), self.meta), "n": len(preds)}

    def __repr__(self):
        outputs = f"classes={len(self.classes)}" if self.classes is not None else f"outputs={self.meta.get('outputs')}"
        return f"{type(self).__name__}({self.source!r}, kind={self.kind}, {outputs})"


def rows_of(inputs):
    """A pandas DataFrame (`is_dataframe`: pandas is not imported here) as its rows,
    ``[{column: value}, ...]``; anything else as it is."""
    if is_dataframe(inputs):
        return inputs.to_dict("records")
    return inputs
