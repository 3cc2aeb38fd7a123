"""Saving and loading: ``weights.safetensors`` + ``task.json`` in a folder, never pickle.

``task.json`` holds the task (blocks, encodings, classes, size, normalization stats) and how to
rebuild the model (backbone config, head input width), so `load_learner` needs no user code and
unpickles nothing. Each file is written to a temporary name in the same folder and renamed into
place, so an interrupted save never leaves a half-written file behind.
"""
from __future__ import annotations

import json
from pathlib import Path

from ..atomic import atomic_write_bytes

FORMAT = "hotstart.learner/1"


def save_learner(learner, path) -> Path:
    from safetensors.torch import save as st_save

    if learner.task is None:
        raise ValueError("save needs the learner's task (build the learner with tasklearner)")
    path = Path(path)
    state = {k: v.detach().cpu().contiguous() for k, v in learner._task_model().state_dict().items()}
    meta = {"format": FORMAT, "task": learner.task.to_dict(), "model": learner.model_config}
    atomic_write_bytes(path / "weights.safetensors", st_save(state, metadata={"format": FORMAT}))
    atomic_write_bytes(path / "task.json", json.dumps(meta, indent=2).encode())
    return path


def read_meta(path) -> dict:
    path = Path(path)
    f = path / "task.json"
    if not f.is_file():
        raise FileNotFoundError(f"{f} not found: is {path} a folder written by Learner.save?")
    try:
        meta = json.loads(f.read_text())
    except json.JSONDecodeError as e:
        raise ValueError(f"{f} is not valid JSON: {e}") from None
    if meta.get("format") != FORMAT:
        raise ValueError(f"{f} has format {meta.get('format')!r}, expected {FORMAT!r}")
    return meta


def load_weights(learner, path) -> None:
    from safetensors.torch import load_file

    f = Path(path) / "weights.safetensors"
    if not f.is_file():
        raise FileNotFoundError(f"{f} not found")
    state = load_file(str(f))
    learner._task_model().load_state_dict(state, strict=True)


def load_learner(path, data=None, *, model=None, **kwargs):
    """Rebuild a learner from a saved folder: the task from JSON, the model from its config.

    With `data`, the learner can keep training (``tasklearner`` arguments go in `kwargs`);
    without, it is ready for `predict`. A model built from your own ``nn.Module`` backbone
    cannot be rebuilt from JSON: pass it as `model=` (the full model, backbone and head).
    """
    from ..tasks import SupervisedTask
    from .models import TaskModel, backbone_from_config
    from .tasklearner import tasklearner

    meta = read_meta(path)
    task = SupervisedTask.from_dict(meta["task"])
    cfg = meta["model"]
    if model is None and cfg.get("kind") == "unet":
        from .unet import unet_from_config

        model = unet_from_config(cfg)
    elif model is None:
        backbone = backbone_from_config(cfg["backbone"])
        model = TaskModel(backbone, task.head(cfg["num_features"]))
    learner = tasklearner(task, data, model=model, _model_config=cfg, **kwargs)
    load_weights(learner, path)
    return learner
