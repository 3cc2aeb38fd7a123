"""``compile="auto"``: compile when the configuration is warm *and* the fit is long enough to gain.

Decided when a fit starts (the learner calls `compile_decision`), once its number of training
batches is known, not when the learner is built.

The rule on CPU: compile when the warmup has warmed this configuration (the manifest has its
key), its compiled steps were measured faster than eager ones *on this machine*, and the time
they save is more than the time it takes to load the warm artifacts::

    batches * eager_step_s * (1 - 1 / speedup) > load_s          (`compile_pays`)

- ``speedup`` and ``eager_step_s``: measured by the warmup, per configuration, on this machine.
  ``python -m hotstart.warmup`` times a compiled workload's warm training steps (the fastest after
  the first two, which compile and settle) and then the same configuration eager (the fastest
  after the first), and records both per sample (the manifest entry's ``step_s_per_sample``,
  eager, and ``compiled_step_s_per_sample``: warmup/step_times.py). ``speedup`` is their ratio;
  an eager step of batch b is estimated as ``b * step_s_per_sample``. Measured once by the warmup,
  not at the start of each fit, so a fit's decision does not depend on how busy the machine was
  in its first seconds: one manifest, one decision.

  Why measured here rather than a constant: the speed-up depends on the CPU and the model. On a
  2-core AVX-512 (BF16) EPYC, resnet10t at 128x128, batch 32 (benchmarks/results/HISTORY.md,
  "Precision and compile on this CPU"; quiet cores, 2026-12-02) warm compiled steps ran 1.16x and
  1.20x eager fp32's, 1.18x and 1.12x with bf16-mixed. On a 2-core AVX2 EPYC (2026-12-03, shared
  cores under heavy, changing load, so rough), SmallCNN at 128x128, batch 16, fp32 channels_last
  took 0.74-0.85 s a warm compiled step against 1.4-2.9 s eager in quieter minutes, but 3.7-5.6 s
  compiled against 1.7-3.9 s eager in a busier one (no recompiles: one frame, compiled once);
  a rule with a constant 1.12x would have compiled through the latter. On quiet cores (load
  1.8; ``benchmarks/scripts/compile_auto_gain.py --rounds 2 --n 400 --epochs 2``,
  results/compile-auto-gain-2026-12-03.json) the same warmup measured 0.0462 s a sample eager and
  0.0484 s compiled: 0.955x, so every default fit there stays eager (a 2-epoch fit took 41.35 s
  with "auto", 41.71 s eager). A speed-up of 1 or less keeps every fit eager, and so, on CPU, does
  one below `MIN_SPEEDUP` (1.10x: the warmup's reading moves that much); the fit's first line says
  the measured ratio.
  Measured at the workload's batch size (16 for the built-in ones) and applied to a fit at any
  batch size, which it does not fit well: on the AVX2 EPYC (under load) the warmup measured 3.41x
  and 2.27x at batch 16 (eager 0.167 and 0.109 s a sample), yet a 2-batch fit at batch 64 took
  12.8 s compiled against 8.7 s eager (benchmarks/scripts/compile_auto_gain.py, one smoke round):
  eager steps are cheaper per sample at 64, and the first compiled step's load costs more than 3 s
  there. Timing at the fit's default batch (64) would cost the warmup seconds per workload.
- ``load_s`` (`LOAD_S`): loading the warm artifacts took 3 s (fp32) and 1.2 s (bf16) on the AVX-512
  EPYC above; 3 s is used. A cold compile took 34 s (fp32) and 27 s (bf16), which is why a cold
  configuration stays eager: ``python -m hotstart.warmup`` compiles it once, ahead of time.

So with a measured 1.2x, resnet10t at 128x128, batch 32 (~0.5 s an eager step) gains after about
36 batches; a configuration whose eager step is 16x cheaper only after several hundred. A manifest
entry without both step times (a warmup older than this rule, which recorded the compiled step
only) stays eager until the warmup runs again.

On CUDA, compiled training is typically much faster than eager, and nothing here has measured
by how much, so ``"auto"`` compiles there whenever the configuration is warm (as before).
Other devices stay eager.
"""
from __future__ import annotations

LOAD_S = {"cpu": 3.0}
"""Seconds to load a configuration's warm compiled artifacts, by device type (measured: above)."""

MIN_SPEEDUP = {"cpu": 1.10}
"""The least measured speed-up that counts as one, by device type: a reading below it is within what
the warmup's timing of a configuration moves on the CPUs measured. The same configuration (SmallCNN,
RGB 128x128, bf16) read 1.09x at 08:45 and 0.99x at 09:58 on 2026-12-07, while a careful alternating
measurement of the default image model's step (benchmarks/scripts/compile_step_ab.py, 4 rounds of
fresh processes) found compiled steps at 0.88-0.92x eager's speed that day (benchmarks/README.md,
the compile section): compiling on a reading of 1.05x would make such a fit slower, and pay the
load on top."""

ALWAYS_WHEN_WARM = ("cuda",)
"""Device types where a warm configuration is always compiled (no length rule: not measured here)."""


def compile_pays(batches: int, eager_step_s: float, speedup: float, load_s: float) -> bool:
    """Whether `batches` steps of `eager_step_s` each, run `speedup` times as fast, save more
    than `load_s`."""
    return batches * eager_step_s * (1.0 - 1.0 / speedup) > load_s


def compile_decision(key: str | None, *, device_type: str, batches: int, batch_size: int, cache_root=None,
                     load_s: dict | None = None) -> tuple[bool, str]:
    """(compile?, why) for a fit of `batches` training batches of `batch_size` on `device_type`,
    whose configuration has the manifest key `key` (None: a custom module, never warm), from the
    eager and compiled step times the warmup measured for it on this machine. A configuration whose
    recorded compiled files are missing or changed (artifacts.py ``integrity``, the quick check: a
    file unchanged in size and mtime since the warmup recorded it is not hashed) is not warm. `load_s` defaults
    to `LOAD_S`. `why` is what the fit's first line says after "compile='auto':"."""
    from .artifacts import DAMAGED, integrity
    from .manifest import COMPILED_STEP_FIELD, STEP_FIELD, read_manifest_timed

    if key is None:
        return False, "no compile-cache key names this model (the warmup compiles image backbones)"
    data, written = read_manifest_timed(cache_root)
    entry = data["entries"].get(key)
    if entry is None:
        return False, "this configuration is not warm (python -m hotstart.warmup warms the defaults)"
    state, why = integrity(cache_root, entry, trusted_before=written)
    if state == DAMAGED:  # its graphs would fail to load, or a damaged kernel would fail the fit
        return False, f"this configuration's compile cache is damaged: {why}; python -m hotstart.warmup repairs it"
    if device_type in ALWAYS_WHEN_WARM:
        return True, f"warm, and compiled training pays on {device_type}"
    loads = LOAD_S if load_s is None else load_s
    if device_type not in loads:
        return False, f"compiled training is not measured to pay on {device_type}"
    eager, compiled = entry.get(STEP_FIELD), entry.get(COMPILED_STEP_FIELD)
    if not (_positive(eager) and _positive(compiled)):
        return False, ("warm, but the warmup recorded no eager and compiled step times to measure the speed-up "
                       "(run python -m hotstart.warmup again)")
    speedup, load = eager / compiled, loads[device_type]
    if not speedup > 1.0:
        return False, f"compiled steps measured {speedup:.2f}x eager's speed here: eager"
    least = MIN_SPEEDUP.get(device_type, 1.0)
    if speedup < least:
        return False, (f"compiled steps measured {speedup:.2f}x eager's speed here, within the warmup's timing "
                       f"noise (below {least:.2f}x): eager")
    eager_step_s = eager * batch_size
    steps = f"{batches} step{'' if batches == 1 else 's'}"
    saved = batches * eager_step_s * (1.0 - 1.0 / speedup)
    if compile_pays(batches, eager_step_s, speedup, load):
        return True, (f"warm, compiled steps measured {speedup:.2f}x eager's speed here; {steps} save "
                      f"~{saved:.0f} s, more than the ~{load:g} s to load the warm graphs")
    return False, (f"compiled steps measured {speedup:.2f}x eager's speed here, but {steps} would save "
                   f"~{saved:.1f} s, less than the ~{load:g} s to load the warm graphs")


def _positive(value) -> bool:
    """A finite positive number from JSON (not a bool)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool) and 0 < value < float("inf")
