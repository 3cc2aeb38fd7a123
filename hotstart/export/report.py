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
