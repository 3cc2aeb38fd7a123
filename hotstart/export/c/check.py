"""The export's self-check: the C (host build) against onnxruntime on the learner's validation images."""
from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np

from ...contract.image_input import LUMINANCE
from . import host


def validation_pixels(learner, meta: dict, limit: int | None = None) -> tuple[np.ndarray, list]:
    """The validation images as the C takes them (N x H x W x C uint8), and their targets.

    Where the model's channels differ from the image's, gray is repeated to RGB (exact) and RGB
    becomes luminance (ITU-R 601-2, rounded to uint8: the C's input is uint8, so close to the
    contract's float luminance but not equal). onnxruntime is then fed these same pixels."""
    from ...contract.image_input import resized_pixels

    ds = learner.valid_loader.dataset
    n = len(ds) if limit is None else min(len(ds), limit)
    pixels = np.stack([resized_pixels(ds.inputs[i], meta) for i in range(n)])
    channels = int(meta["channels"])
    if pixels.shape[-1] != channels:
        if channels == 3:
            pixels = np.repeat(pixels, 3, axis=-1)
        else:
            weights = np.array(LUMINANCE)
            pixels = np.clip(np.round(pixels[..., :3] @ weights), 0, 255).astype(np.uint8)[..., None]
    return pixels, [ds.targets[i] for i in range(n)]


def check_on_validation(learner, cmodel, model_bytes: bytes) -> dict:
    if host.find_cc() is None:
        return {"host check": "skipped: no C compiler (cc) found"}
    if learner.valid_loader is None:
        return {"host check": "skipped: the learner has no validation data"}
    pixels, targets = validation_pixels(learner, cmodel.meta)
    with tempfile.TemporaryDirectory(prefix="hotstart-c-check-") as tmp:
        for name, text in cmodel.sources.items():
            Path(tmp, name).write_text(text)
        result = host.compare(cmodel, model_bytes, pixels, tmp)
    classes = cmodel.meta["classes"]
    correct = sum(classes[int(i)] == t for i, t in zip(result["c_labels"], targets))
    return {"host check (cc) on validation images": result["images"],
            "labels equal onnxruntime's": f"{result['labels_equal']} / {result['images']}",
            "largest logit difference from onnxruntime (int8 steps)": result["max_step"],
            "valid accuracy (C)": round(correct / max(len(targets), 1), 4)}
