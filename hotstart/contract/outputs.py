"""Decoding a model's outputs: labels, masks, points and regression values.

Each decoder takes one sample's raw output (numpy) and the metadata, and returns
``(answer, probabilities or values)``: a label and the softmax probabilities (single label); the
labels at or above ``threshold`` and the sigmoid probabilities (multi label); values in the
target's units, ``output * target_std + target_mean`` (regression); a mask of class indices
(segmentation); points in pixels (keypoints). Training's tasks and encodings call the mask and
point functions too.

An output that is not finite (NaN or infinite) has no answer: `check_finite` refuses it, so that
no label is picked from NaN and no NaN reaches a JSON line.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

__all__ = ["softmax", "sigmoid", "check_finite", "decode_single", "decode_multi", "decode_regression",
           "decode_mask", "points_to_unit", "points_from_unit", "accuracy_single", "accuracy_multi", "no_accuracy",
           "unknown_target"]


def softmax(z: np.ndarray, axis: int = -1) -> np.ndarray:
    z = z.astype(np.float32)
    e = np.exp(z - z.max(axis, keepdims=True))
    return e / e.sum(axis, keepdims=True)


def sigmoid(z: np.ndarray) -> np.ndarray:
    return (1.0 / (1.0 + np.exp(-z.astype(np.float32)))).astype(np.float32)


def check_finite(output: np.ndarray) -> None:
    """A ValueError when `output` holds NaN or an infinity."""
    output = np.asarray(output)
    if not np.isfinite(output).all():
        raise ValueError(f"the model's outputs are not finite numbers (NaN or infinite): "
                         f"{np.count_nonzero(~np.isfinite(output))} of {output.size}")


def decode_single(logits: np.ndarray, meta: dict):
    check_finite(logits)
    probs = softmax(logits)
    return meta["classes"][int(probs.argmax())], probs


def decode_multi(logits: np.ndarray, meta: dict):
    check_finite(logits)
    probs = sigmoid(logits)
    t = float(meta.get("threshold", 0.5))
    return [c for c, p in zip(meta["classes"], probs.tolist()) if p >= t], probs


def decode_regression(output: np.ndarray, meta: dict):
    """One row's outputs -> (values in the target's units, the same values)."""
    check_finite(output)
    values = (output.astype(np.float64) * np.asarray(meta["target_std"]) + np.asarray(meta["target_mean"]))
    values = values.astype(np.float32)
    check_finite(values)
    return values, values


def decode_mask(probs: np.ndarray) -> np.ndarray:
    """Class probabilities (C, H, W) -> H x W uint8 class indices (the first class on a tie)."""
    return np.asarray(probs).argmax(0).astype(np.uint8)


def points_to_unit(points: np.ndarray, size: Sequence[int]) -> np.ndarray:
    """(n, 2) pixel coordinates (x, y) in an image of `size` (H, W), pixel centres at integers ->
    coordinates in [-1, 1] (the image's edges at -1 and +1): ``(x + 0.5) / W * 2 - 1``."""
    h, w = size
    scale = np.array([w, h], dtype=np.float32)
    return ((np.asarray(points, dtype=np.float32).reshape(-1, 2) + 0.5) / scale * 2 - 1).astype(np.float32)


def points_from_unit(values: np.ndarray, size: Sequence[int]) -> np.ndarray:
    """The inverse of `points_to_unit`: (2n,) or (n, 2) coordinates in [-1, 1] -> (n, 2) float32 pixels."""
    h, w = size
    scale = np.array([w, h], dtype=np.float32)
    return ((np.asarray(values, dtype=np.float32).reshape(-1, 2) + 1) / 2 * scale - 0.5).astype(np.float32)


def unknown_target(targets, classes: list, multi: bool = False) -> None:
    """Refuse a target that is none of the model's `classes` (a typo, or "7" for the class 7): it
    could never be predicted, so it was silently counted as a miss."""
    known = set(classes)
    for i, t in enumerate(targets):
        for label in (t if multi else [t]):
            if label not in known:
                raise ValueError(f"evaluate: target {label!r} (position {i}) is not one of the model's classes "
                                 f"{classes[:20]}{' ...' if len(classes) > 20 else ''}")


def accuracy_single(preds, targets, meta) -> float:
    unknown_target(targets, meta["classes"])
    return float(np.mean([label == t for (label, _), t in zip(preds, targets)])) if preds else float("nan")


def accuracy_multi(preds, targets, meta) -> float:
    """Fraction of (sample, class) entries right, as hotstart's MultilabelAccuracy."""
    if not preds:
        return float("nan")
    unknown_target(targets, meta["classes"], multi=True)
    right = sum(sum((c in set(label)) == (c in set(t)) for c in meta["classes"]) for (label, _), t in zip(preds, targets))
    return right / (len(preds) * len(meta["classes"]))


def no_accuracy(preds, targets, meta) -> float:
    raise ValueError("evaluate() computes accuracy, which a regression model has none of: compare "
                     "predict_many's values with the targets (RMSE, R2) instead")
