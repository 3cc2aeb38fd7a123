"""The runtimes, by the suffix of the file they run: ``open_file("model.pte")``.

=========  ==========================================  =================================
suffix     opened by                                   runs with
=========  ==========================================  =================================
``.onnx``  `hotstart.predictor.Predictor.load`          onnxruntime (no torch)
``.pte``   `PteRuntime.load` (pte.py)                   ExecuTorch's Python runtime
``.pt2``   `Pt2Runtime.load` (pt2.py)                   AOTInductor (torch)
=========  ==========================================  =================================

A runtime for another format (TF Lite's ``.tflite``, IREE's ``.vmfb``) is one file here: a
`ContractModel` subclass with a ``load(path)`` classmethod and a ``run(batch)`` method (the
contract encodes and decodes), and one row of `RUNTIMES`. A model folder is opened by
hotstart/deploy.py, which needs the learner (this package sits below the export, which checks
each file it writes by running it here).
"""
from __future__ import annotations

from pathlib import Path
from typing import Callable

from ..contract.model import ContractModel
from ..errors import SavedModelError, UsageError
from ..predictor import Predictor
from .pt2 import Pt2Runtime
from .pte import PteRuntime

__all__ = ["RUNTIMES", "open_file", "suffixes"]

# suffix -> (opener, what writes such a file): one row per format
RUNTIMES: dict[str, tuple[Callable[..., ContractModel], str]] = {
    ".onnx": (Predictor.load, "`hotstart export --format onnx`"),
    ".pte": (PteRuntime.load, "`hotstart export --format pte`"),
    ".pt2": (Pt2Runtime.load, "`hotstart export --format pt2`"),
}


def suffixes() -> list[str]:
    """The file suffixes a runtime is registered for."""
    return list(RUNTIMES)


def open_file(path) -> ContractModel:
    """The model file at `path`, opened by the runtime of its suffix. A file that is damaged, or
    not written by hotstart's export, is a `SavedModelError` naming it."""
    path = Path(path)
    entry = RUNTIMES.get(path.suffix.lower())
    if entry is None:
        raise UsageError(f"{path}: no runtime for {path.suffix or 'a file without a suffix'!r}; model files are "
                         f"{', '.join(RUNTIMES)} (or a model folder written by learner.save)")
    opener, writer = entry
    try:
        return opener(path)
    except SavedModelError:
        raise
    except ValueError as e:  # the contract's MetadataError and the runtimes' own
        message = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        message = message if message.startswith(str(path)) else f"{path}: {message}"
        raise SavedModelError(f"{message} (is it a {path.suffix} written by {writer}?)") from e
