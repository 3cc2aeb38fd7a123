"""The export's self-check: does the runtime that will run the file agree with eager torch?

Every export opens what it wrote with the runtime that runs it (hotstart/runtimes/: onnxruntime
for ``.onnx``, ExecuTorch for ``.pte``, AOTInductor for ``.pt2``, LiteRT for ``.tflite``, IREE for
``.vmfb``), runs a check batch through the runtime's raw `run` step and through the eager model,
and fails when the largest difference exceeds the tolerance, before the file replaces anything at
its destination. One function for every format, so a new runtime is checked the same way.
"""
from __future__ import annotations

import numpy as np

from .report import ExportError

__all__ = ["max_difference", "check_against_torch"]


def max_difference(runtime, model, x) -> float:
    """Largest |runtime.run(x) - model(x)| on the encoded batch `x` (a CPU float32 tensor)."""
    import torch

    got = runtime.run(x.numpy())
    with torch.no_grad():
        want = model(x)
    want = (want[0] if isinstance(want, (list, tuple)) else want).float().numpy()
    if got.shape != want.shape:
        raise ExportError(f"{runtime.source}: the exported model returns shape {got.shape}, torch {want.shape}")
    return float(np.abs(got - want).max())


def check_against_torch(runtime, model, x, *, tolerance: float | None, what: str, path,
                        hint: str = "") -> float:
    """`max_difference`, refused above `tolerance` (None: reported only, as for int8 models, whose
    rounding differs from their torch reference by steps) with an `ExportError` saying that
    nothing was written to `path`."""
    diff = max_difference(runtime, model, x)
    if tolerance is not None and not diff <= tolerance:
        raise ExportError(f"{what} and eager torch differ by up to {diff:.3g} (> tolerance {tolerance:g}) on a check "
                          f"batch; nothing was written to {path}{hint}")
    return diff
