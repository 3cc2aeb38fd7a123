"""The warmup's step timings: a compiled workload's warm training step, and the same configuration's
eager step, which ``compile="auto"`` turns into this machine's measured speed-up
(compile_cache/policy.py).

Both are per configuration and per machine because the speed-up is: on a 2-core AVX-512 EPYC a warm
compiled resnet10t step ran 1.12-1.20x eager's, and nothing says another CPU (AVX2 only, another
model, another size) gains at all; a rule that assumed it would compile fits that run slower.
"""
from __future__ import annotations

import time

COMPILED_SKIP = 2
"""Compiled training steps not timed: the first compiles (or loads the warm graphs), and the second
was still slow when measured (SmallCNN 128x128, batch 16, warm cache, 2 shared AVX2 cores under
load, 2026-12-03: the second step 1.01 s and 3.34 s in two runs, the next ones 0.74-0.85 s and
1.90-2.47 s)."""

COMPILED_TIMED = 2
"""Compiled steps timed after those; the fastest is recorded (the least disturbed by other work)."""

EAGER_SKIP = 1
"""Eager steps not timed (the first allocates and initialises the optimizer's state)."""

EAGER_TIMED = 2
"""Eager steps timed after the first; the fastest is recorded."""


def compiled_steps(requested: int) -> int:
    """Training batches a compiled workload runs: what it asked for, and at least enough to time
    `COMPILED_TIMED` warm steps after the `COMPILED_SKIP` slow ones."""
    return max(int(requested), COMPILED_SKIP + COMPILED_TIMED)


def step_clock(skip: int):
    """A callback recording each training batch's wall time; its ``warm_step_s`` is the fastest
    after the first `skip` batches (None when none was timed)."""
    from ..learner.callbacks import Callback

    class StepClock(Callback):
        def __init__(self):
            self.times, self.t0 = [], 0.0

        def before_batch(self):
            self.t0 = time.perf_counter()

        def after_batch(self):
            if self.learner.training:
                self.times.append(time.perf_counter() - self.t0)

        @property
        def warm_step_s(self):
            return min(self.times[skip:]) if len(self.times) > skip else None

    return StepClock()


def stop_after(batches: int):
    """A callback that ends the fit (`CancelFit`, before any validation) after `batches` training
    batches."""
    from ..learner.callbacks import Callback, CancelFit

    class StopAfter(Callback):
        def __init__(self):
            self.seen = 0

        def after_batch(self):
            if self.learner.training:
                self.seen += 1
                if self.seen >= batches:
                    raise CancelFit(f"{batches} eager steps timed")

    return StopAfter()


def eager_step_s(build_learner) -> float | None:
    """The fastest of `EAGER_TIMED` eager training steps (after `EAGER_SKIP` untimed ones) of the
    learner ``build_learner(callbacks)`` returns, fitted for one epoch and stopped after those
    batches; None when the fit ended sooner (too little data, the warmup's budget)."""
    clock = step_clock(EAGER_SKIP)
    learner = build_learner([clock, stop_after(EAGER_SKIP + EAGER_TIMED)])
    learner.fit_one_cycle(1, 1e-3)
    return clock.warm_step_s
