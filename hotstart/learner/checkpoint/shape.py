"""`check_shape`: a checkpoint's ``state.json`` and ``checksums.json`` hold what reading them expects.

A file that parses as JSON may still hold something else: a list, ``null``, a key missing, a
string where a number belongs (edited by hand, written by another tool, overwritten with its
checksum updated). Reading such a file failed later with a bare ``AttributeError`` or ``KeyError``
that named neither the file nor the key, and the checkpoint before it was not tried. Each is now a
`SavedModelError` naming the file and the key, which `load_last` treats as it treats a damaged file:
named in a warning, and the checkpoint before it used.
"""
from __future__ import annotations

from ...errors import SavedModelError

_INT = "an integer"
_FIT = ("n_epoch", "n_iter", "accumulate", "fit_seed", "fit_index", "train_iter", "opt_step", "skip_batches",
        "total_steps")


def check_checksums(recorded, name: str) -> dict:
    """`recorded` (checksums.json, named `name`) is an object of file name -> SHA-256 string."""
    if not isinstance(recorded, dict) or not all(isinstance(v, str) for v in recorded.values()):
        raise SavedModelError(f"{name} holds {_kind(recorded)}, not an object of file name -> SHA-256")
    return recorded


def check_shape(state, name: str = "state.json") -> dict:
    """`state` (the parsed ``state.json``) has every key reading and resuming use, of its type."""
    if not isinstance(state, dict):
        raise SavedModelError(f"{name} holds {_kind(state)}, not an object")
    _need(state, "fit", dict, name)
    for key in _FIT:
        if key != "total_steps" or key in state["fit"]:  # /2 checkpoints may lack it
            _need(state["fit"], key, int, name, f"fit.{key}")
    _need(state, "next_epoch", int, name)
    if state.get("seed") is not None:
        _need(state, "seed", int, name)
    if state.get("run") is not None:
        _need(state, "run", str, name)
    for key, kind in (("fits", list), ("callbacks", list), ("task", dict)):
        if state.get(key) is not None:
            _need(state, key, kind, name)
    _need(state, "optimizer", dict, name)
    _need(state["optimizer"], "scalars", dict, name, "optimizer.scalars")
    _need(state["optimizer"], "param_groups", list, name, "optimizer.param_groups")
    _need(state, "recorder", dict, name)
    for key in ("history", "losses", "lrs"):
        _need(state["recorder"], key, list, name, f"recorder.{key}")
    return state


def _need(obj: dict, key: str, kind: type, name: str, where: str | None = None) -> None:
    where = where or key
    if key not in obj:
        raise SavedModelError(f"{name} has no {where!r}")
    value = obj[key]
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        what = _INT if kind is int else {dict: "an object", list: "a list", str: "a string"}[kind]
        raise SavedModelError(f"{name}: {where!r} is {_kind(value)}, not {what}")


def _kind(value) -> str:
    return "null" if value is None else f"{type(value).__name__} {value!r}"[:60]
