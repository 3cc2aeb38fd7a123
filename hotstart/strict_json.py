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

__all__ = ["dumps", "NotJSONError", "first_non_finite"]


class NotJSONError(HotstartError, ValueError):
    """A value that JSON cannot hold (NaN, an infinity) was about to be written; the message names it."""


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
