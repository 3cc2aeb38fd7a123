"""``tasklearner(..., compile="auto")``: compile only when it is warm *and* pays on the device.

Measured on our 2-core CPU machines (benchmarks/README.md): compiled resnet18 training steps
were no faster than eager ones, and a warm compiled first epoch took ~7 s against ~3 s eager,
so on CPU compiling never pays back even a warm cache's seconds of loading; ``"auto"`` stays eager there. On CUDA, compiled training is typically much
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
