"""``compile="auto"``: compile when the configuration is warm *and* the fit is long enough to gain.

Decided when a fit starts (the learner calls `compile_decision`), once its number of training
batches is known, not when the learner is built.

The rule on CPU: compile when the warmup has warmed this configuration (the manifest has its
key) and the time the compiled steps save is more than the time it takes to load the warm
artifacts::

    batches * eager_step_s * (1 - 1 / speedup) > load_s          (`compile_pays`)

with, measured on this machine's 2-core AMD EPYC (benchmarks/results/HISTORY.md, "Precision and compile on
this CPU"; quiet cores, 2026-12-02, ``benchmarks/scripts/precision_cpu.py``, resnet10t at 128x128,
batch 32; results/precision-compile-2026-12-02-{warm,cold}.json):

- ``speedup`` (`SPEEDUP`): warm compiled steps ran 1.16x and 1.20x as fast as eager fp32 (68.4
  and 65.3 img/s against 59.1 and 54.3), and 1.18x and 1.12x with bf16-mixed; the lowest, 1.12,
  is used, so that the rule errs towards eager;
- ``load_s`` (`LOAD_S`): loading the warm artifacts took 3 s (fp32) and 1.2 s (bf16); 3 s is
  used. A cold compile took 34 s (fp32) and 27 s (bf16), which is why a cold configuration stays
  eager: ``python -m hotstart.warmup`` compiles it once, ahead of time;
- ``eager_step_s``: from the warmup's own measurement on this machine. The warmup times its warm
  compiled training step and records it per sample (the manifest entry's ``step_s_per_sample``);
  an eager step of batch b is estimated as ``b * step_s_per_sample * speedup``. Estimated, not
  timed at the start of each fit, so that a fit's numbers do not depend on how busy the machine
  was in its first seconds: one manifest, one decision.

So on this CPU resnet10t at 128x128, batch 32 (~0.5 s an eager step) gains after about 50 batches;
the digits at 32x32 (a step 16x cheaper) only after several hundred. A manifest entry without a
step time (an older warmup) stays eager until the warmup runs again.

On CUDA, compiled training is typically much faster than eager, and nothing here has measured
by how much, so ``"auto"`` compiles there whenever the configuration is warm (as before).
Other devices stay eager.
"""
from __future__ import annotations

SPEEDUP = {"cpu": 1.12}
"""A warm compiled training step's speed over an eager one, by device type (measured: above)."""

LOAD_S = {"cpu": 3.0}
"""Seconds to load a configuration's warm compiled artifacts, by device type (measured: above)."""

ALWAYS_WHEN_WARM = ("cuda",)
"""Device types where a warm configuration is always compiled (no length rule: not measured here)."""

def compile_pays(batches: int, eager_step_s: float, speedup: float, load_s: float) -> bool:
    """Whether `batches` steps of `eager_step_s` each, run `speedup` times as fast, save more
    than `load_s`."""
    return batches * eager_step_s * (1.0 - 1.0 / speedup) > load_s


def compile_decision(key: str | None, *, device_type: str, batches: int, batch_size: int, cache_root=None,
                     speedup: dict | None = None, load_s: dict | None = None) -> tuple[bool, str]:
    """(compile?, why) for a fit of `batches` training batches of `batch_size` on `device_type`,
    whose configuration has the manifest key `key` (None: a custom module, never warm).
    `speedup` and `load_s` default to `SPEEDUP` and `LOAD_S`. `why` is what the fit's first
    line says after "compile='auto':"."""
    from .manifest import STEP_FIELD, read_manifest

    if key is None:
        return False, "no compile-cache key names this model (the warmup compiles image backbones)"
    entry = read_manifest(cache_root)["entries"].get(key)
    if entry is None:
        return False, "this configuration is not warm (python -m hotstart.warmup warms the defaults)"
    if device_type in ALWAYS_WHEN_WARM:
        return True, f"warm, and compiled training pays on {device_type}"
    speedups, loads = SPEEDUP if speedup is None else speedup, LOAD_S if load_s is None else load_s
    if device_type not in speedups:
        return False, f"compiled training is not measured to pay on {device_type}"
    per_sample = entry.get(STEP_FIELD)
    if not isinstance(per_sample, (int, float)) or isinstance(per_sample, bool) or not per_sample > 0:
        return False, "warm, but the warmup recorded no step time (run python -m hotstart.warmup again)"
    factor, load = speedups[device_type], loads[device_type]
    eager_step_s = per_sample * batch_size * factor
    saved = batches * eager_step_s * (1.0 - 1.0 / factor)
    if compile_pays(batches, eager_step_s, factor, load):
        return True, f"warm; {batches} steps save ~{saved:.0f} s, more than the ~{load:g} s to load the warm graphs"
    return False, f"{batches} steps would save ~{saved:.1f} s, less than the ~{load:g} s to load the warm graphs"
