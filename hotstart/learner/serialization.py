"""Saving and loading: ``weights.safetensors`` + ``task.json`` in a folder, never pickle.

``task.json`` holds the task (blocks, encodings, classes, size, normalization stats) and how to
rebuild the model (backbone config, head input width), so `load_learner` (loading.py) needs no
user code and unpickles nothing.

The two files are one unit: `save_learner` writes them into a temporary folder beside the target
and swaps the folders (hotstart/atomic_folder.py), so a reader, or a process killed at any moment
during a save, sees the old model or the new one, never new weights beside an old task.

A model is saved only if it works: parameters and buffers (BatchNorm's running statistics) must
be finite. Anything wrong with a saved folder (damaged JSON, missing keys, wrong types, a
truncated weights file, weights of another model) is a `SavedModelError` naming the file.
"""
from __future__ import annotations

import errno
import json
from pathlib import Path

from ..atomic_folder import read_folder, write_folder
from ..errors import SavedModelError, UsageError
from ..strict_json import dumps

FORMAT = "hotstart.learner/1"
WEIGHTS, TASK = "weights.safetensors", "task.json"


def save_learner(learner, path) -> Path:
    from safetensors.torch import save as st_save

    if learner.task is None:
        raise UsageError("save needs the learner's task (build the learner with tasklearner)")
    path = Path(path)
    state = {k: v.detach().cpu().contiguous() for k, v in learner.task_model().state_dict().items()}
    bad = non_finite(state)
    if bad:
        raise SavedModelError(
            f"not saving to {path}: the model is broken, {_names(bad)} hold NaN or infinite values "
            f"(did training diverge? try a lower learning rate)")
    meta = {"format": FORMAT, "task": learner.task.to_dict(), "model": learner.model_config}
    write_folder(path, {WEIGHTS: st_save(state, metadata={"format": FORMAT}),
                        TASK: dumps(meta, f"not saving to {path}: {TASK}", indent=2).encode()})
    return path


def non_finite(state: dict) -> list[str]:
    """Names of the floating-point tensors in `state` that hold a NaN or an infinity."""
    import torch

    return [k for k, v in state.items() if torch.is_floating_point(v) and not bool(torch.isfinite(v).all())]


def _names(keys: list[str], n: int = 5) -> str:
    return ", ".join(keys[:n]) + (f" and {len(keys) - n} more" if len(keys) > n else "")


# --- reading ----------------------------------------------------------------------------------

def read_saved(path) -> tuple[Path, dict, bytes]:
    """(folder, meta, weights bytes) of one complete save: both files from the same save."""
    path = Path(path)
    try:
        folder, files = read_folder(path, [TASK, WEIGHTS])
    except FileNotFoundError as e:
        raise FileNotFoundError(f"{e}: is {path} a folder written by Learner.save?") from None
    except OSError as e:  # a folder, a FIFO or a device in place of a file: read_folder names it
        if e.errno not in (errno.EISDIR, errno.EINVAL) or not e.filename:
            raise
        raise SavedModelError(f"{e.filename} {e.strerror}: is {path} a folder written by Learner.save?") from None
    return folder, parse_meta(files[TASK], folder / TASK), files[WEIGHTS]


def parse_meta(data: bytes, where) -> dict:
    """The checked top level of a ``task.json``; `where` names the file in errors."""
    try:
        meta = json.loads(data.decode("utf-8"), parse_constant=_not_json)
    except (UnicodeDecodeError, ValueError) as e:  # NaN / Infinity: not JSON, and never a valid statistic
        raise SavedModelError(f"{where} is not valid JSON: {e}") from None
    if not isinstance(meta, dict):
        raise SavedModelError(f"{where} should hold a JSON object, it holds {type(meta).__name__}")
    if meta.get("format") != FORMAT:
        raise SavedModelError(f"{where} has format {meta.get('format')!r}, expected {FORMAT!r}")
    for key in ("task", "model"):
        if not isinstance(meta.get(key), dict):
            what = "is missing" if key not in meta else f"should be a JSON object, not {meta[key]!r}"
            raise SavedModelError(f"{where}: {key!r} {what}")
    return meta


def _not_json(name: str):
    raise SavedModelError(f"{name} is not a JSON number (a statistic that overflowed when it was saved?)")


def read_meta(path) -> dict:
    """The parsed ``task.json`` of the saved folder `path`."""
    return read_saved(path)[1]


def load_state(model, data: bytes, where) -> None:
    """Weights from safetensors bytes into `model`, or a SavedModelError saying what does not fit."""
    from safetensors import SafetensorError
    from safetensors.torch import load

    try:
        state = load(data)
    except SafetensorError as e:
        raise SavedModelError(f"{where} is damaged or not a safetensors file ({len(data)} bytes): {e}") from None
    expected = model.state_dict()
    missing = [k for k in expected if k not in state]
    unexpected = [k for k in state if k not in expected]
    shapes = [f"{k} {tuple(state[k].shape)} != {tuple(v.shape)}" for k, v in expected.items()
              if k in state and state[k].shape != v.shape]
    if missing or unexpected or shapes:
        parts = [f"missing {_names(missing)}" if missing else "",
                 f"unexpected {_names(unexpected)}" if unexpected else "",
                 f"other shapes (file != model): {_names(shapes)}" if shapes else ""]
        raise SavedModelError(f"{where} holds the weights of another model than task.json describes: "
                              + "; ".join(p for p in parts if p))
    model.load_state_dict(state, strict=True)


def load_weights(learner, path) -> None:
    """Load the weights saved in the folder `path` into `learner`'s model."""
    folder, _, data = read_saved(path)
    load_state(learner.task_model(), data, folder / WEIGHTS)
