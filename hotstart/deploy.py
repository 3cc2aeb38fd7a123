"""`open_model(path)`: any saved model, a folder or an exported file, behind the one runtime interface.

    from hotstart.deploy import open_model
    model = open_model("runs/hotstart/model")     # a folder written by learner.save: eager torch
    model = open_model("digits.onnx")             # or .pte, .pt2, .tflite, .vmfb: the runtime of its suffix
    model = open_model("digits-int8.tflite", runtime="tflite-micro")   # another runtime of the suffix
    label, probs = model.predict("img.png")
    model.meta["classes"], model.run(batch)

Every model opened here is a `ContractModel` (hotstart/contract/model.py): the same metadata,
the same encoding of raw inputs and decoding of outputs (the contract's), whichever runtime runs
the network, so a folder answers as its exports do. Files go to hotstart/runtimes/ (registry.py
lists them by suffix); a folder is loaded with `load_learner`, its network run eagerly, its
metadata the one its export would carry (hotstart/export/metadata.py).

Why this is not in hotstart/runtimes/: opening a folder needs the learner, and the export needs the
runtimes (it checks every file it writes by running it), while ``Learner.export`` imports the
export. Runtimes inside the learner's reach would make a circle; so the file runtimes sit below the
export, and this one function, which also knows folders, above the learner.
"""
from __future__ import annotations

import json
from pathlib import Path

from .contract.kinds import KINDS
from .contract.model import ContractModel
from .contract.schema import decode_metadata
from .errors import SavedModelError, UsageError
from .run_folder import finish_run

__all__ = ["open_model", "open_folder", "model_folder"]


def open_model(path, runtime: str | None = None, **options) -> ContractModel:
    """The saved model at `path`: a folder written by ``learner.save`` (or `hotstart train`'s --out
    folder, which holds it as ``model/``: `model_folder`), or a file a runtime in
    hotstart/runtimes/ opens (.onnx, .pte, .pt2, .tflite, .vmfb; `runtime`: another than the
    suffix's default, and `options` for its ``load``: see runtimes/registry.py's `open_file`). A
    damaged one is a `SavedModelError` naming it."""
    path = Path(path)
    if path.is_dir():
        if runtime not in (None, "torch") or options:
            raise UsageError(f"{path}: a model folder runs in torch (no runtime or options to choose), got "
                             f"runtime={runtime!r}, options {sorted(options)}")
        return open_folder(model_folder(path))
    from .runtimes.registry import open_file

    return open_file(path, runtime, **options)


def model_folder(path) -> Path:
    """MODEL_DIR, or its ``model/`` subfolder (train's --out layout); a `SavedModelError` naming the
    folder when neither holds the ``task.json`` that ``learner.save`` writes."""
    path = Path(path)
    for run in (path, path.parent):  # train's --out, or its model/: a run killed while it replaced its outputs
        finish_run(run)
    if not path.exists():
        raise FileNotFoundError(f"{path}: no such folder")
    if (path / "task.json").is_file():
        return path
    if (path / "model" / "task.json").is_file():
        return path / "model"
    if not path.is_dir():
        raise SavedModelError(f"{path}: not a model folder (expected a folder written by learner.save or "
                              f"`hotstart train`'s --out folder)")
    raise SavedModelError(f"{path}: not a model folder: it has no task.json (nor model/task.json); expected a "
                          f"folder written by learner.save or `hotstart train`'s --out folder")


def open_folder(folder) -> ContractModel:
    """A model folder (``weights.safetensors`` + ``task.json``) as an `EagerRuntime`."""
    folder = Path(folder)
    _refuse_web_export(folder)
    from .export.metadata import task_metadata
    from .learner import load_learner
    from .runtimes.eager import EagerRuntime

    learner = load_learner(folder, progress=False)
    try:
        props = task_metadata(learner.task)
    except UsageError:
        kind = learner.task.to_dict()["kind"]
        raise SavedModelError(f"{folder}: a {kind} model; the runtimes predict {sorted(KINDS)} models (use "
                              f"learner.predict for this one)") from None
    return EagerRuntime(learner.task_model(), decode_metadata(props, str(folder)), str(folder))


def _refuse_web_export(folder: Path) -> None:
    """A web export's folder (index.html, model.onnx, task.json) is not a model folder: say what to pass."""
    from .export.web import FORMAT as WEB_FORMAT

    try:
        page = json.loads((folder / "task.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return  # load_learner reports what is wrong with it
    if isinstance(page, dict) and page.get("format") == WEB_FORMAT:
        raise SavedModelError(f"{folder}: a web page export (index.html, app.js, model.onnx), not a model folder "
                              f"written by learner.save; predict with its model file: "
                              f"hotstart predict {folder / 'model.onnx'} IMAGE...")
