"""What a checkpoint folder holds and how it is named: shared by writing (write.py) and reading (read.py).

A checkpoint is a folder ``DIR/ckpt-<fit>-<batches trained>-<epoch done>`` of four files:

- ``model.safetensors``: the model's state dict;
- ``optimizer.safetensors``: every tensor of the optimizer's state (``state.<param>.<name>``),
  the learner's private torch RNG states (``rng.cpu``, ``rng.cuda``) and checkpointed callbacks'
  tensors (``callback.<i>.<key>``);
- ``state.json``: everything else (see write.py);
- ``checksums.json``: the SHA-256 of each of the three, so that bytes changed on disk after
  the write (a bad sector, a stray write, a copy cut short) are named when the checkpoint is read,
  and not loaded as NaN weights that validation would then blame on divergence.
"""
from __future__ import annotations

import hashlib
import os
import re
import shutil
from pathlib import Path

import torch

FORMAT = "hotstart.checkpoint/3"  # /3: checksums.json; /2 (no checksums) is still read
"""The ``format`` a checkpoint's ``state.json`` carries: ``/3`` has ``checksums.json``; ``/2``
checkpoints (no checksums) are still read."""
READABLE_FORMATS = (FORMAT, "hotstart.checkpoint/2")
FILES = ("model.safetensors", "optimizer.safetensors", "state.json")
CHECKSUMS = "checksums.json"
_NAME = re.compile(r"^ckpt-(\d+)-(\d+)-([01])$")


def checkpoint_name(fit_index: int, train_iter: int, epoch_done: bool) -> str:
    return f"ckpt-{fit_index:03d}-{train_iter:09d}-{int(epoch_done)}"


def checkpoint_index(path) -> int:
    """The fit index in a checkpoint's name (``ckpt-<fit>-...``)."""
    return int(_NAME.match(Path(path).name).group(1))


def is_checkpoint_name(name: str) -> bool:
    """Whether `name` is a checkpoint's folder name (``ckpt-<fit>-<batches>-<epoch done>``)."""
    return _NAME.match(name) is not None


def checkpoints(folder) -> list[Path]:
    """The complete checkpoints in `folder`, oldest first."""
    folder = Path(folder)
    if not folder.is_dir():
        return []
    found = [(tuple(int(g) for g in m.groups()), p) for p in folder.iterdir() if (m := _NAME.match(p.name))]
    return [p for _, p in sorted(found)]


def remove_checkpoint(path: Path) -> None:
    """Rename away, then delete: a half-deleted checkpoint never keeps a ``ckpt-*`` name."""
    trash = path.with_name(f".trash-{path.name}-{os.getpid()}")
    try:
        os.replace(path, trash)
    except FileNotFoundError:
        return
    if trash.is_dir() and not trash.is_symlink():
        shutil.rmtree(trash, ignore_errors=True)
    else:  # a file or link with a checkpoint's name (not one we wrote): rmtree cannot remove it, and the
        trash.unlink(missing_ok=True)  # next rename onto its trash name then failed mid-fit


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def checkpointed_callbacks(learner) -> list:
    """The learner's callbacks whose state goes into checkpoints (a ``checkpoint_state()`` method), in order."""
    return [cb for cb in learner.cbs if callable(getattr(type(cb), "checkpoint_state", None))]


# --- the optimizer's state, without pickle ---------------------------------------------------

def flatten_optimizer(sd: dict) -> tuple[dict, dict]:
    """An optimizer's state dict -> (tensors for safetensors, the rest as JSON)."""
    tensors, scalars = {}, {}
    for idx, st in sd["state"].items():
        for name, v in st.items():
            if torch.is_tensor(v):
                tensors[f"state.{idx}.{name}"] = v.detach().cpu().contiguous()
            else:
                scalars.setdefault(str(idx), {})[name] = v
    groups = []
    for g in sd["param_groups"]:
        g = dict(g)
        tuples = sorted(k for k, v in g.items() if isinstance(v, tuple))
        for k in tuples:
            g[k] = list(g[k])
        g["__tuples__"] = tuples
        groups.append(g)
    return tensors, {"scalars": scalars, "param_groups": groups}


def unflatten_optimizer(tensors: dict, meta: dict) -> dict:
    """`flatten_optimizer`'s two parts -> the optimizer's state dict."""
    state: dict = {}
    for key, v in tensors.items():
        if key.startswith("state."):
            _, idx, name = key.split(".", 2)
            state.setdefault(int(idx), {})[name] = v
    for idx, st in meta["scalars"].items():
        state.setdefault(int(idx), {}).update(st)
    groups = []
    for g in meta["param_groups"]:
        g = dict(g)
        for k in g.pop("__tuples__", []):
            g[k] = tuple(g[k])
        groups.append(g)
    return {"state": state, "param_groups": groups}
