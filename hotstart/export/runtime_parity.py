"""`max_difference`: does a runtime compute what eager torch computes, on the same encoded batch?

Any runtime adapter with ``run(encoded batch) -> float32 outputs`` (tflite_run.py's LiteRT and TF
Lite Micro models, iree_run.py's IREE model) is checked against the torch module it came from.
"""
from __future__ import annotations

import numpy as np

from .onnx import ExportError


def max_difference(runtime, model, x) -> float:
    """Largest |runtime.run(x) - model(x)| over the batch `x` (a float32 tensor)."""
    import torch

    got = runtime.run(x.numpy())
    with torch.no_grad():
        want = model(x).float().numpy()
    if got.shape != want.shape:
        raise ExportError(f"the exported model returns shape {got.shape}, torch {want.shape}")
    return float(np.abs(got - want).max())
