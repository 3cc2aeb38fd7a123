"""``tasklearner(..., compile="auto")``: compile only when it is warm *and* pays on the device.

Measured on our 2-core CPU machines (benchmarks/README.md): a warm compiled first epoch of the
startup workload (resnet18, 100 images) took ~7 s against ~3 s eager. In the steady state,
on quiet cores (2026-12-02, ``benchmarks/scripts/precision_cpu.py``, resnet10t at 128x128, batch
32), compiled steps ran 1.16-1.20x as fast as eager fp32 after a 34 s cold compile (3 s warm),
and compile + bf16-mixed 1.12-1.18x bf16-mixed alone. ``"auto"`` is decided when the learner is
built, before anyone knows how long the fit will be, and a short fit loses (the first epoch pays
the loading and the recompiles for each new batch size), so on CPU ``"auto"`` stays eager; a long
fit on a warm cache gains ~1.2x with ``compile=True``. On CUDA, compiled training is typically much
faster, so ``"auto"`` compiles there whenever the warmup's manifest says the configuration is warm.
"""
from __future__ import annotations

# device type -> does compiled training beat eager there (see the module docstring)
COMPILE_PAYS = {"cpu": False, "cuda": True}


def should_compile(*, task, backbone, size, batch_size=None, device=None, precision=None, cache_root=None,
                   pays: dict | None = None) -> bool:
    from .manifest import config_key, is_warm

    device_type = getattr(device, "type", None) or str(device or "cpu")
    if not (pays if pays is not None else COMPILE_PAYS).get(device_type, False):
        return False
    in_chans = getattr(task.encoded_blocks()[0], "channels", 3)
    return is_warm(config_key(backbone, in_chans, size, device_type, precision), cache_root)
