"""`ToDevice` / `ToGPU`: ask for a device (and precision) the fastai / FastAI.jl way.

They are read by `tasklearner` when it builds the learner's backend (Lightning Fabric beyond a
plain CPU run); they do nothing during the loop itself.
"""
from __future__ import annotations

from .base import Callback


class ToDevice(Callback):
    def __init__(self, accelerator: str = "cpu", devices=None, precision=None, strategy=None):
        self.accelerator, self.devices, self.precision, self.strategy = accelerator, devices, precision, strategy

    def __repr__(self):
        return f"{type(self).__name__}({self.accelerator!r})"


class ToGPU(ToDevice):
    """Train on CUDA GPUs through Lightning Fabric (errors clearly when none is available)."""

    def __init__(self, devices=1, precision=None, strategy=None):
        super().__init__("cuda", devices=devices, precision=precision, strategy=strategy)
