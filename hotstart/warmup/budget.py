"""The warmup's ``--budget``: which workload still fits in what is left of it.

A fit can only be stopped between batches, and a compiled workload's first batch *is* its compile:
20-40 s on CPU that nothing interrupts. Checked only between batches, a budget of 8 s ran 29.5 s
(the first batch compiled, then the deadline was seen). So a workload starts only if its expected
duration fits in what is left (`expected_seconds`):

- a compiled workload: its last run's duration, from the manifest entry it recorded (when that
  entry is for this torch version and device and its compiled files are intact), else a cold
  compile's cost, `COLD_COMPILE_S`;
- an eager workload: no estimate; it starts while any budget is left, and its batches are short
  (the built-in ones run in a few seconds), so the check between batches bounds it.

The bound is therefore as good as the estimates: a run can overrun its budget by one batch of the
workload it stops, or by a compile whose estimate was too low (a slower machine, a larger model).
"""
from __future__ import annotations

COLD_COMPILE_S = {"cpu": 27.0, "cuda": 27.0}
"""Seconds a compiled workload takes cold, by device, when no earlier run of it was recorded: the
least measured on CPU (resnet10t 128x128 compiled cold in 27 s with bf16, 34 s fp32, on a 2-core
AVX-512 EPYC, compile_cache/policy.py; the test suite's tiny 32x32 CNN workload took 32 s on 2
shared AVX2 cores). CUDA's is not measured here; the CPU figure stands in for it."""


def expected_seconds(workload, root=None) -> tuple[float | None, str]:
    """``(seconds, why)`` the `workload` is expected to take on the cache `root`; seconds is None for
    an eager workload (nothing to estimate from: it is bounded between its short batches)."""
    if not workload.compile:
        return None, "an eager workload"
    import torch

    from ..compile_cache.artifacts import DAMAGED, integrity
    from ..compile_cache.manifest import read_manifest

    for entry in read_manifest(root)["entries"].values():
        if (entry["workload"] == workload.name and entry["device"] == workload.device
                and entry["torch"] == torch.__version__ and integrity(root, entry)[0] != DAMAGED):
            return float(entry["seconds"]), f"its last run took {entry['seconds']:.0f} s"
    cold = COLD_COMPILE_S.get(workload.device, max(COLD_COMPILE_S.values()))
    return cold, f"no intact run of it recorded: a cold compile, ~{cold:.0f} s on {workload.device}"


def over_budget(workload, root, left: float) -> str | None:
    """Why `workload` should not start with `left` seconds of the budget remaining, or None if it fits."""
    seconds, why = expected_seconds(workload, root)
    if seconds is not None and seconds > left:
        return f"expected ~{seconds:.0f} s ({why}), only {max(left, 0.0):.0f} s of the budget left"
    return None
