"""Which precision a fit runs in: bf16 mixed precision by default where it was measured to be
faster and as accurate, fp32 elsewhere, and exactly what was asked for when asked.

The rule (`choose_precision`):

- an explicit precision (``"32-true"``, ``"bf16-mixed"``, ``"16-mixed"``, ...) is used as given;
- ``"auto"``: bf16-mixed where the hardware has bf16 units (`bf16_units`), fp32 elsewhere;
- not given (``None``): ``"auto"`` for tasks whose ``bf16_by_default`` is true (image
  classification, the tasks it was measured on), fp32 for the others (tables, series,
  segmentation, keypoints: not measured; a table's category indices would be cast to bf16 with the
  inputs, exact only up to 256).

Why bf16 by default where the CPU has bf16 units (an AMD EPYC with ``avx512_bf16``, no AMX;
benchmarks/results/HISTORY.md, "Precision and compile on this CPU"):

- speed, on quiet cores (``benchmarks/scripts/precision_cpu.py --size 128 --bs 32 --steps 4
  --rounds 3 --no-compile``): resnet10t at 128x128 56.7 img/s in fp32, 104.5 in bf16-mixed
  (1.84x); resnet18 44.2 and 76.7 (1.74x). At 32x32 (the digits, 3 epochs through hotstart) the fit
  took 10.8 s in fp32 and 10.6 s in bf16: per-batch overheads dominate there, and bf16 neither
  helps nor hurts;
- accuracy (``benchmarks/scripts/precision_accuracy.py --seeds 5 --emulate-bf16``,
  results/precision-accuracy-2026-12-03.json; bf16 rounding emulated on an AVX2 CPU): the digits
  at 32x32, 5 seeds each, fp32 0.9861-0.9944 (mean 0.9916), bf16 0.9861-0.9944 (mean 0.9894); the
  JPEG digits at 64x64, fp32 0.946-0.962 over 3 seeds, bf16 0.950 and 0.960 over the 2 that
  finished: bf16's mean lies within fp32's spread on both. Again at the image tasks' default
  batch of 32 (tasks/image_base.py), with the real bf16 kernels on the AVX-512 BF16 EPYC
  (``precision_accuracy.py --seeds 5 --bs 32``, results/precision-accuracy-2026-12-07-bs32.json):
  the digits, fp32 0.9861-0.9944 (mean 0.9927), bf16 0.9889-0.9944 (mean 0.9922); the JPEG
  digits, fp32 0.984-0.988 (mean 0.9848), bf16 0.982-0.988 (mean 0.9848): within on both. And with
  every default (batch 32, single-label classification's 2e-3 peak after a 10 % warm-up:
  ``precision_accuracy.py --seeds 5 --defaults``, results/precision-accuracy-2026-12-07-defaults.json):
  the digits, fp32 0.9889-0.9916 (mean 0.9905), bf16 0.9861-0.9944 (mean 0.9900); the JPEG digits,
  fp32 0.980-0.990 (mean 0.9868), bf16 0.980-0.988 (mean 0.9856): within on both. Once more with
  the average of the weights that single-label classification now keeps by default (tasklearner's
  ``ema``; results/precision-accuracy-2026-12-07-ema.json, same command): the digits, fp32
  0.9889-0.9916 (mean 0.9900), bf16 0.9861-0.9944 (mean 0.9894); the JPEG digits, fp32 0.986-0.992
  (mean 0.9892), bf16 0.984-0.990 (mean 0.9876): within on both;
- cost at start-up: none. One CPU process runs bf16 through ``torch.autocast``
  (learner/mixed_precision.py), not Lightning Fabric, whose import costs ~3 s of CPU time.

Intel's AMX tiles (``amx_bf16``) run the same bf16 matrix work faster still, so a CPU with either
flag counts; any other CPU stays in fp32, where bf16 would be emulated (slower). A CUDA device
with bf16 in hardware (Ampere and later) gets it too (Fabric's ``bf16-mixed``: no loss scaling,
unlike fp16). Across processes each one reads its own CPU's flags: on machines with different
CPUs, give the precision explicitly.

What bf16 changes: the forward pass computes in bf16 (about 3 significant digits), so a model's
outputs differ from an fp32 run's by that rounding, and two fits differ from fp32 fits. The
weights, gradients and optimizer stay float32, and saved models, checkpoints and every export
are float32. Give ``precision="32-true"`` for today's fp32 numbers (tests that compare bit for bit
do).
"""
from __future__ import annotations

from ..precisions import BF16_MIXED, FP32, check_precision

BF16_CPU_FLAGS = {"amx_bf16": "AMX", "avx512_bf16": "AVX-512 BF16"}
"""/proc/cpuinfo flags of CPUs whose bf16 matrix units pay (AMX tiles; AVX-512 BF16
instructions), with the names the fit's first line gives them."""


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
    return bf16_units("cpu", cpuinfo=cpuinfo)[0]


def bf16_units(accelerator: str, *, cuda_bf16: bool | None = None, cpuinfo: str = "/proc/cpuinfo") -> tuple[bool, str]:
    """(whether `accelerator` ("cpu", "cuda", ...) has bf16 units, what it has, in words for the
    fit's first line). `cuda_bf16` defaults to ``torch.cuda.is_bf16_supported()`` without emulation."""
    if accelerator == "cuda":
        if cuda_bf16 is None:
            import torch

            # bf16 in hardware (Ampere and later), not torch's emulation on older cards (T4, V100)
            cuda_bf16 = bool(torch.cuda.is_available() and torch.cuda.is_bf16_supported(including_emulation=False))
        return cuda_bf16, "the GPU computes in bf16" if cuda_bf16 else "the GPU has no bf16 units"
    if accelerator == "cpu":
        flags = cpu_flags(cpuinfo)
        names = [name for flag, name in BF16_CPU_FLAGS.items() if flag in flags]
        if names:
            return True, f"the CPU has {' and '.join(names)}"
        return False, "the CPU has no bf16 units (AMX or AVX-512 BF16)"
    return False, f"bf16 is not measured on {accelerator}"


def auto_precision(accelerator: str, *, cuda_bf16: bool | None = None, cpuinfo: str = "/proc/cpuinfo") -> str:
    """The precision ``"auto"`` stands for on `accelerator`: ``"bf16-mixed"`` where bf16 units
    exist (`bf16_units`), else ``"32-true"``."""
    return BF16_MIXED if bf16_units(accelerator, cuda_bf16=cuda_bf16, cpuinfo=cpuinfo)[0] else FP32


def choose_precision(requested, *, accelerator: str, bf16_by_default: bool, cuda_bf16: bool | None = None,
                     cpuinfo: str = "/proc/cpuinfo") -> tuple[str, str]:
    """(precision, why) for a fit: the rule of the module docstring. `requested` is the user's
    ``precision=`` (None: not given); `bf16_by_default` the task's ``bf16_by_default``. `why` is
    what the fit's first line says after the precision."""
    name = None if requested is None else check_precision(requested)  # a name Fabric would refuse: refused here
    if name is not None and name != "auto":
        return name, "as asked"
    units, words = bf16_units(accelerator, cuda_bf16=cuda_bf16, cpuinfo=cpuinfo)
    if requested is None and not bf16_by_default:
        return FP32, "bf16 is the default for image classification only; precision='auto' for bf16 where it runs"
    if units:
        return BF16_MIXED, f"{words}; precision='32-true' for fp32"
    return FP32, words
