"""The runtimes, by the suffix of the file they run: ``open_file("model.pte")``.

===========  =================================  ===================================  =====
suffix       runtimes (the first: the default)  opened by                            torch
===========  =================================  ===================================  =====
``.onnx``    ``onnxruntime``                    `hotstart.predictor.Predictor.load`  no
``.pte``     ``executorch``                     `PteRuntime.load` (pte.py)           yes
``.pt2``     ``aotinductor``                    `Pt2Runtime.load` (pt2.py)           yes
``.tflite``  ``litert``                         `LiteRtRuntime.load` (litert.py)     no
             ``tflite-micro``                   `TflmRuntime.load` (tflm.py)         no
``.vmfb``    ``iree``                           `IreeRuntime.load` (iree.py)         no
===========  =================================  ===================================  =====

``open_file(path, runtime="tflite-micro")`` picks another runtime of the suffix. A runtime for
another format is one file here: a `ContractModel` subclass with a ``load(path)`` classmethod and
a ``run(batch)`` method (the contract encodes and decodes), and one row of `RUNTIMES`. A model
folder is opened by hotstart/deploy.py, which needs the learner (this package sits below the
export, which checks each file it writes by running it here).
"""
from __future__ import annotations

from pathlib import Path
from typing import Callable

from ..contract.model import ContractModel
from ..errors import SavedModelError, UsageError
from ..predictor import Predictor
from .iree import IreeRuntime
from .litert import LiteRtRuntime
from .pt2 import Pt2Runtime
from .pte import PteRuntime
from .tflm import TflmRuntime

__all__ = ["RUNTIMES", "open_file", "suffixes", "runtime_names"]

# suffix -> ({runtime name: opener}, the first one the default; what writes such a file): one row per format
RUNTIMES: dict[str, tuple[dict[str, Callable[..., ContractModel]], str]] = {
    ".onnx": ({"onnxruntime": Predictor.load}, "`hotstart export --format onnx`"),
    ".pte": ({"executorch": PteRuntime.load}, "`hotstart export --format pte`"),
    ".pt2": ({"aotinductor": Pt2Runtime.load}, "`hotstart export --format pt2`"),
    ".tflite": ({"litert": LiteRtRuntime.load, "tflite-micro": TflmRuntime.load}, "`hotstart export --format tflite`"),
    ".vmfb": ({"iree": IreeRuntime.load}, "`hotstart export --format iree`"),
}
"""File suffix -> (runtime name -> opener, the first one the default; the command that writes
such a file): ``hotstart predict model.tflite --runtime tflite-micro`` picks the second opener of
``.tflite``. One row per format."""


def suffixes() -> list[str]:
    """The file suffixes a runtime is registered for."""
    return list(RUNTIMES)


def runtime_names(suffix: str) -> list[str]:
    """The runtimes that open files of `suffix` (``.tflite``), the default first."""
    return list(RUNTIMES[suffix.lower()][0]) if suffix.lower() in RUNTIMES else []


def open_file(path, runtime: str | None = None, **options) -> ContractModel:
    """The model file at `path`, opened by `runtime` (None: the default for its suffix) with the
    runtime's `options` (``threads=1`` for onnxruntime and LiteRT, ``driver="local-sync"`` for IREE,
    ``arena_size=`` for TF Lite Micro: see each runtime's ``load``). A file that is damaged, or not
    written by hotstart's export, is a `SavedModelError` naming it."""
    path = Path(path)
    entry = RUNTIMES.get(path.suffix.lower())
    if entry is None:
        raise UsageError(f"{path}: no runtime for {path.suffix or 'a file without a suffix'!r}; model files are "
                         f"{', '.join(RUNTIMES)} (or a model folder written by learner.save)")
    openers, writer = entry
    if runtime is None:
        runtime = next(iter(openers))
    if runtime not in openers:
        raise UsageError(f"{path}: runtime {runtime!r} does not run {path.suffix} files; these do: "
                         f"{', '.join(openers)}")
    try:
        return openers[runtime](path, **options)
    except SavedModelError:
        raise
    except ValueError as e:  # the contract's MetadataError and the runtimes' own
        message = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        message = message if message.startswith(str(path)) else f"{path}: {message}"
        raise SavedModelError(f"{message} (is it a {path.suffix} written by {writer}?)") from e
