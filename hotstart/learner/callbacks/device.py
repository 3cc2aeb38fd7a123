"""`ToDevice` / `ToGPU`: ask for a device (and precision) the fastai / FastAI.jl way.

They are read by `tasklearner` when it builds the learner's backend (Lightning Fabric beyond a
plain CPU run); they do nothing during the loop itself.
"""
from __future__ import annotations

from .base import Callback


class ToDevice(Callback):
    """Ask `tasklearner` for a device, precision and processes, fastai's ``ToDevice`` way:
    ``tasklearner(task, data, callbacks=[ToDevice("cuda", devices=2, precision="bf16-mixed")])``
    is ``tasklearner(task, data, device="cuda", devices=2, precision="bf16-mixed")``.

    `tasklearner` reads it when it builds the learner's backend (a plain CPU process, or
    Lightning Fabric), and leaves it out of the learner's callbacks: during the loop it does
    nothing. An argument given to `tasklearner` itself wins over the callback's.

    Args:
        accelerator: ``"cpu"`` (the default), ``"cuda"`` (or ``"gpu"``), ``"auto"`` (a GPU
            when there is one), or any other accelerator name Fabric takes (``"mps"``).
        devices (int | None): how many devices (processes) to train on; more than one
            re-launches the script under DDP (None: one, or what torchrun / SLURM launched).
        precision (str | None): Fabric's name (``"32-true"``, ``"bf16-mixed"``, ``"16-mixed"``,
            ``"auto"``); None: the task's default for the hardware (learner/precision.py).
        strategy (str | None): Fabric's strategy (``"ddp"`` when several devices and None).
    """

    def __init__(self, accelerator: str = "cpu", devices=None, precision=None, strategy=None):
        self.accelerator, self.devices, self.precision, self.strategy = accelerator, devices, precision, strategy

    def __repr__(self):
        return f"{type(self).__name__}({self.accelerator!r})"


class ToGPU(ToDevice):
    """Train on CUDA GPUs through Lightning Fabric (errors clearly when none is available)."""

    def __init__(self, devices=1, precision=None, strategy=None):
        super().__init__("cuda", devices=devices, precision=precision, strategy=strategy)
