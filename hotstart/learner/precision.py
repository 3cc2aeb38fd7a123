"""``precision="auto"``: bf16 mixed precision where the hardware has bf16 units, fp32 elsewhere.

What was measured (benchmarks/README.md, "Precision and compile on this CPU"): on this machine's
AMD EPYC cores, which have ``avx512_bf16`` (and ``avx512_vnni``) but no AMX tiles, two threads,
nothing else running, one process with the configurations alternating
(``benchmarks/scripts/precision_cpu.py --size 128 --bs 32 --steps 4 --rounds 3 --no-compile``):

    resnet10t at 128x128: fp32 56.7 img/s, bf16-mixed 104.5 img/s (1.84x)
    resnet18  at 128x128: fp32 44.2 img/s, bf16-mixed  76.7 img/s (1.74x)

Accuracy, through hotstart itself (``benchmarks/scripts/precision_digits.py --seeds 3 --epochs 3``:
the built-in digits, resnet10t at 32x32, 3 epochs, seeds 0-2): validation accuracy 0.9833 in fp32
(0.9861, 0.9805, 0.9833) and 0.9824 with ``"auto"`` = bf16-mixed (0.9889, 0.9721, 0.9861), at the
same speed there (10.8 s against 10.6 s a fit: at 32x32 the per-batch overheads dominate, and
the gain is on larger images). Intel's AMX tiles (``amx_bf16``) run the same bf16
matrix work faster still, so a CPU with either flag gets bf16-mixed; any other CPU stays in fp32,
where bf16 would be emulated. A CUDA device that supports bf16 gets it too (Fabric's
``bf16-mixed``: no loss scaling needed, unlike fp16).

Why it is a choice and not the default (``precision=None`` is fp32, as in Lightning and fastai):
mixed precision changes the numbers. Predictions made under it differ from an fp32 model's (and
from the ONNX / ``.pt2`` exports, which run in fp32) by bf16's rounding, about 3 significant
digits; a user comparing against a reference asks for it knowingly. ``"auto"`` is that request.
It runs through Lightning Fabric's precision plugin (learner/backend.py), like any other
precision, so it also costs the ~1 s of importing Fabric at start-up. Across processes each one
reads its own CPU's flags: on machines with different CPUs, give the precision explicitly.
"""
from __future__ import annotations

BF16_CPU_FLAGS = ("amx_bf16", "avx512_bf16")
"""/proc/cpuinfo flags of CPUs whose bf16 matrix units pay (AMX tiles; AVX-512 BF16 instructions)."""


def cpu_flags(cpuinfo: str = "/proc/cpuinfo") -> frozenset[str]:
    """The CPU's feature flags as Linux reports them (x86 "flags", Arm "Features"); empty where
    the file does not exist (macOS, Windows) or cannot be read."""
    try:
        with open(cpuinfo, encoding="utf-8", errors="replace") as f:
            text = f.read()
    except OSError:
        return frozenset()
    flags = set()
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        if sep and key.strip() in ("flags", "Features"):
            flags.update(value.split())
    return frozenset(flags)


def cpu_has_bf16_units(cpuinfo: str = "/proc/cpuinfo") -> bool:
    """Whether this CPU has AMX or AVX-512 BF16 units (`BF16_CPU_FLAGS`)."""
    return any(flag in cpu_flags(cpuinfo) for flag in BF16_CPU_FLAGS)


def auto_precision(accelerator: str, *, cuda_bf16: bool | None = None, cpuinfo: str = "/proc/cpuinfo") -> str:
    """The precision ``"auto"`` stands for on `accelerator` ("cpu" or "cuda"): ``"bf16-mixed"``
    where bf16 units exist, else ``"32-true"``. `cuda_bf16` defaults to
    ``torch.cuda.is_bf16_supported()``."""
    if accelerator == "cuda":
        if cuda_bf16 is None:
            import torch

            # bf16 in hardware (Ampere and later), not torch's emulation on older cards (T4, V100)
            cuda_bf16 = bool(torch.cuda.is_available() and torch.cuda.is_bf16_supported(including_emulation=False))
        return "bf16-mixed" if cuda_bf16 else "32-true"
    if accelerator == "cpu":
        return "bf16-mixed" if cpu_has_bf16_units(cpuinfo) else "32-true"
    return "32-true"
