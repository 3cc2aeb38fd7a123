"""What an export returns (`ExportReport`, printable) and raises (`ExportError`)."""
from __future__ import annotations

import dataclasses
from pathlib import Path

from ..errors import HotstartError

__all__ = ["ExportError", "ExportReport"]


class ExportError(HotstartError, RuntimeError):
    """A model that could not be exported, or whose export does not compute what torch computes."""


@dataclasses.dataclass
class ExportReport:
    """What an export returns: the file it wrote, and how far the exported model's outputs are
    from the torch model's. Printed (notebooks/deploy.ipynb, the digits classifier)::

        wrote <tmp>/digits.onnx (onnx, 4.73 MB); largest difference from torch on a check batch: 9.54e-07
        wrote <tmp>/digits-int8.onnx (onnx-int8, 1.22 MB); largest difference from torch on a check batch: 2.60e-02

    Every export runs its file in the file's own runtime (onnxruntime, ExecuTorch, ...) on a check
    batch and compares the outputs with torch's before the file replaces anything: above the
    tolerance it is an `ExportError` and nothing is written. int8 models are not held to a
    tolerance (their rounding differs from torch by whole quantization steps, as the 2.6e-2
    above): their difference is reported only.

    Attributes:
        path: where the model was written.
        format: what was written: ``"onnx"``, ``"onnx-int8"``, ``"pte"``, ``"pte-int8"``,
            ``"pt2"``, ``"tflite"``, ``"tflite-int8"``, ``"iree"``, ``"c"``.
        size_bytes: the written file's size, in bytes.
        max_abs_diff: the largest absolute difference between the exported model's outputs
            (logits) and torch's over the check batch; NaN where nothing was run (a C export
            without its int8 check).
        extra: more lines for the report, name -> value (the int8 calibration, a static batch
            size, the target CPU, ...).
    """

    path: Path
    format: str
    size_bytes: int
    max_abs_diff: float  # largest |onnxruntime - torch| over the check batch (logits)
    extra: dict = dataclasses.field(default_factory=dict)  # e.g. the int8 report

    def __str__(self):
        lines = [f"wrote {self.path} ({self.format}, {self.size_bytes / 1e6:.2f} MB); "
                 f"largest difference from torch on a check batch: {self.max_abs_diff:.2e}"]
        lines += [f"  {k}: {v}" for k, v in self.extra.items()]
        return "\n".join(lines)
