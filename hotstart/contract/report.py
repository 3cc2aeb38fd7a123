"""Printing predictions: one line of text, or one JSON object, per input.

JSON lines are always valid JSON: they are written with ``allow_nan=False``, and a model output
that is not finite never gets that far (contract/outputs.py refuses it, and the input gets an
error line instead).
"""
from __future__ import annotations

import json
import sys
from typing import Any, Iterable, Sequence

import numpy as np

__all__ = ["format_prediction", "top_classes", "json_line", "prediction_text", "print_predictions", "predict_paths"]


def top_classes(probs: np.ndarray, classes: list, top_k: int) -> list[list]:
    """[[label, probability], ...] for the `top_k` most probable classes (the first on a tie)."""
    order = np.argsort(-np.asarray(probs), kind="stable")[:top_k]
    return [[classes[i], float(probs[i])] for i in order]


def format_prediction(name: str, label, probs: np.ndarray, classes: list, top_k: int) -> str:
    """One input's prediction as the line ``predict`` prints: ``"cat.png: cat (cat 0.912, dog 0.071,
    fox 0.017)"``: `name` (what names the input), the decoded `label`, then the `top_k` most
    probable of `classes` with their probabilities `probs` (3 decimals; the first class on a tie,
    as `top_classes`)."""
    tops = ", ".join(f"{c} {p:.3f}" for c, p in top_classes(probs, classes, top_k))
    return f"{name}: {label} ({tops})"


def json_line(record: dict[str, Any]) -> str:
    """`record` as one line of JSON; a ValueError rather than NaN or Infinity, which JSON has not."""
    return json.dumps(record, allow_nan=False)


def prediction_text(name: str, record: dict[str, Any], label, probs, classes: list | None, top_k: int,
                    as_json: bool) -> str:
    """One input's prediction as a line: ``name: label (top-k)``, or a JSON object of `record` (what
    names the input) with ``label`` and ``top``; a regression (`classes` None) gives its values."""
    if classes is None:  # a regression: the values, in the target's units
        values = [float(v) for v in np.asarray(label).reshape(-1)]
        return (json_line({**record, "value": values}) if as_json
                else f"{name}: {', '.join(f'{v:.6g}' for v in values)}")
    if as_json:
        return json_line({**record, "label": label, "top": top_classes(probs, classes, top_k)})
    return format_prediction(name, label, probs, classes, top_k)


def print_predictions(model, items: Iterable[tuple[str, dict, Any]], top_k: int = 3, as_json: bool = False,
                      out=None) -> int:
    """Print the prediction of `model` (a `ContractModel`) for each ``(name, record, input)`` of
    `items` (`record`: what names the input in a JSON line); an input that is an exception already,
    or that cannot be predicted, gets an error line naming it on stderr (and, with `as_json`, a
    JSON object ``{**record, "error": message}`` in its place on `out`, so that a reader of the
    JSON lines gets one object per input, in order); the others are still predicted, and the
    status is 1."""
    out = out or sys.stdout
    status = 0
    for name, record, x in items:
        try:
            if isinstance(x, Exception):
                raise x
            label, probs = model.predict(x)
            text = prediction_text(name, record, label, probs, model.classes, top_k, as_json)
        except (OSError, ValueError, TypeError) as e:  # unreadable, refused by the encoder, an output not finite
            message = str(e)
            message = message if message.startswith(name) else f"{name}: {message}"
            print(f"error: {message}", file=sys.stderr)
            if as_json:
                print(json_line({**record, "error": message}), file=out)
                out.flush()
            status = 1
            continue
        print(text, file=out)
        out.flush()
    return status


def predict_paths(model, paths: Sequence[str], top_k: int = 3, as_json: bool = False, out=None) -> int:
    """`print_predictions` for image files (or other inputs named by a path)."""
    return print_predictions(model, ((str(p), {"image": str(p)}, p) for p in paths), top_k, as_json, out)
