"""JSON that other programs can read: no ``NaN`` / ``Infinity``, and an error that says where one was.

Python's ``json.dumps`` writes ``NaN`` and ``Infinity`` by default. They are not JSON: browsers'
``JSON.parse``, onnxruntime-web pages and most other languages refuse the file. hotstart writes
task facts (task.json beside a saved model, the ONNX metadata, the web page's task.json) with
`dumps`, which refuses a non-finite number and names its place (``preprocessing.std.x``), so a
bad statistic is found when it is written, not when someone else's program reads it.
"""
from __future__ import annotations

import json
import math
from typing import Any

from .errors import HotstartError

__all__ = ["dumps", "NotJSONError", "first_non_finite", "json_form"]


class NotJSONError(HotstartError, ValueError):
    """A value that JSON cannot hold (NaN, an infinity; a numpy scalar, a set, an object:
    `json_form`) was about to be written or compared; the message names it."""


_SCALARS = (str, int, float, bool, type(None))


def json_form(value: Any, where: str, owner: str = "") -> Any:
    """`value` as JSON reads it back: tuples as lists, dicts and lists copied, scalars kept.

    A value JSON cannot hold (a ``numpy.float32``, an array, a set, any other object) or a dict
    key that is not a string is a `NotJSONError` naming `where` (the parameter's dotted place,
    ``"offsets"`` or ``"mean.0"``) and `owner` (who holds it: ``"the encoding ToVectorNP"``), so a
    parameter that cannot be saved is found when the task is built, not at ``learner.save`` after
    training. NaN and infinities pass here (they are floats); `dumps` refuses them when written."""
    if isinstance(value, _SCALARS):
        return value
    if isinstance(value, (list, tuple)):
        return [json_form(v, f"{where}.{i}", owner) for i, v in enumerate(value)]
    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            if not isinstance(k, str):
                raise NotJSONError(f"{_place(where, owner)} has the key {k!r} ({type(k).__name__}): JSON object "
                                   f"keys are strings")
            out[k] = json_form(v, f"{where}.{k}" if where else k, owner)
        return out
    kind = type(value)
    name = kind.__qualname__ if kind.__module__ == "builtins" else f"{kind.__module__}.{kind.__qualname__}"
    hint = ("; convert it with float(x) / int(x) / x.tolist()" if kind.__module__.split(".")[0] in ("numpy", "torch")
            else "")
    raise NotJSONError(f"{_place(where, owner)} is {value!r} of type {name}, which JSON cannot hold (task.json and "
                       f"checkpoints store str, int, float, bool, None, lists and dicts of them){hint}")


def _place(where: str, owner: str) -> str:
    place = f"parameter {where!r}" if where else "the value"
    return f"{place} of {owner}" if owner else place


def first_non_finite(obj: Any, where: str = "") -> tuple[str, float] | None:
    """(dotted path, value) of the first NaN / infinity inside dicts, lists and tuples, or None."""
    if isinstance(obj, float):
        return None if math.isfinite(obj) else (where or "the value", obj)
    if isinstance(obj, dict):
        items = obj.items()
    elif isinstance(obj, (list, tuple)):
        items = enumerate(obj)
    else:
        return None
    for k, v in items:
        found = first_non_finite(v, f"{where}.{k}" if where else str(k))
        if found:
            return found
    return None


def dumps(obj: Any, what: str, **kwargs) -> str:
    """``json.dumps(obj, allow_nan=False, **kwargs)``, with a `NotJSONError` naming `what` and the key."""
    found = first_non_finite(obj)
    if found:
        raise NotJSONError(f"{what}: {found[0]} is {found[1]}, which JSON cannot hold (NaN and infinities "
                           f"are not JSON); nothing was written")
    return json.dumps(obj, allow_nan=False, **kwargs)
