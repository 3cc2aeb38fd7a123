"""bf16 mixed precision in one CPU process, with ``torch.autocast`` alone: no Lightning Fabric.

Why not Fabric: importing ``lightning_fabric`` (which imports torchmetrics and, through it,
transformers and scipy) costs about 3 s of CPU time after torch and timm are imported
(2026-12-03, ``python -c "import torch, timm; <timed> import lightning_fabric"``, 3.02 and 3.03 s
of user + system time, this 2-core AMD EPYC; ``python -X importtime`` shows the same modules).
A default fit on a CPU with bf16 units would pay that at every start, for what amounts to one
context manager and two casts.

What it computes is exactly what Fabric's ``bf16-mixed`` plugin computes (its ``_FabricModule``
and ``MixedPrecision``): floating-point inputs cast to bf16, the forward pass under
``torch.autocast(device, bfloat16)``, floating-point outputs cast back to the default dtype
(float32); the weights, the gradients and the optimizer stay float32, and bf16 needs no loss
scaling. tests/test_learner_mixed_precision.py checks a fit through this module against the same
fit through Fabric, bit for bit.

Only the forward pass changes: ``save``, checkpoints and every export read the float32 weights
of the model inside (``learner.task_model()``), and exports trace that model without autocast, so
they stay float32.
"""
from __future__ import annotations

import torch
import torch.nn as nn


def cast_floats(data, dtype: torch.dtype):
    """`data` with every floating-point tensor in it (through tuples, lists and dicts) cast to
    `dtype`; other values as they are (Fabric's ``_convert_fp_tensor`` applied to a collection)."""
    if torch.is_tensor(data):
        return data.to(dtype) if torch.is_floating_point(data) else data
    if isinstance(data, tuple) and hasattr(data, "_fields"):  # a namedtuple keeps its type
        return type(data)(*(cast_floats(v, dtype) for v in data))
    if isinstance(data, (tuple, list)):
        return type(data)(cast_floats(v, dtype) for v in data)
    if isinstance(data, dict):
        return type(data)((k, cast_floats(v, dtype)) for k, v in data.items())
    return data


class MixedPrecisionModule(nn.Module):
    """`module` run in bf16 mixed precision: inputs to bf16, autocast, outputs to float32.

    The learner's ``model`` when a `PlainBackend` runs bf16-mixed. ``.module`` is the model itself
    (what ``Learner.task_model()`` unwraps, as it unwraps Fabric's and DDP's wrappers), and the state
    dict is the model's own, without a prefix."""

    def __init__(self, module: nn.Module, device_type: str = "cpu", dtype: torch.dtype = torch.bfloat16):
        super().__init__()
        self.module = module
        self.device_type, self.dtype = device_type, dtype

    def autocast(self):
        """The context of a forward pass (and of the loss computed from it)."""
        return torch.autocast(self.device_type, dtype=self.dtype)

    def forward(self, *args, **kwargs):
        args, kwargs = cast_floats((args, kwargs), self.dtype)
        with self.autocast():
            out = self.module(*args, **kwargs)
        return cast_floats(out, torch.get_default_dtype())

    def state_dict(self, *args, **kwargs):
        return self.module.state_dict(*args, **kwargs)

    def load_state_dict(self, state_dict, strict: bool = True, assign: bool = False):
        return self.module.load_state_dict(state_dict, strict=strict, assign=assign)
