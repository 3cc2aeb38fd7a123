"""The one-cycle schedule as a pure function, as in fastai and ``torch.optim.lr_scheduler.OneCycleLR``.

Learning rate: cosine warm-up from ``lr_max / div`` to ``lr_max`` over the first `pct_start` of
training, then cosine annealing down to ``lr_max / div_final``. Momentum (or Adam's beta1) moves
the other way: ``moms[0] -> moms[1]`` during warm-up, back to ``moms[2]`` while annealing.

The schedule is indexed by optimizer step, exactly as ``OneCycleLR`` indexes it: step 0 is the
first step, warm-up ends at step ``pct_start * total - 1`` and the last step, ``total - 1``,
reaches the final rate exactly. ``one_cycle_at(step, total, lr_max, div, div_final, pct_start)``
equals ``OneCycleLR(max_lr=lr_max, total_steps=total, div_factor=div,
final_div_factor=div_final / div, pct_start=pct_start, base_momentum=moms[1],
max_momentum=moms[0])`` at every step (tests/test_learner_schedule.py checks it to 1e-9).
(fastai's ``div_final`` divides `lr_max`, OneCycleLR's ``final_div_factor`` the initial rate.)

A schedule, for ``Learner.fit(schedule=...)``, is any callable ``schedule(step, total) -> (lr,
momentum or None)`` of the optimizer step and the fit's number of optimizer steps.
"""
from __future__ import annotations

import math


def _cos(start: float, end: float, pct: float) -> float:
    # the same floating-point operations as OneCycleLR's _annealing_cos
    return end + (start - end) / 2.0 * (math.cos(math.pi * pct) + 1)


def one_cycle_at(step: int, total: int, lr_max: float, div: float = 25.0, div_final: float = 1e5,
                 pct_start: float = 0.25, moms=(0.95, 0.85, 0.95)) -> tuple[float, float]:
    """(learning rate, momentum) at optimizer step `step` (0-based) of `total` steps."""
    total = max(int(total), 1)
    step = min(max(int(step), 0), total - 1)
    lr_start, lr_end = lr_max / div, lr_max / div_final
    warm_end = float(pct_start * total) - 1  # OneCycleLR's end_step of the first phase
    if step <= warm_end:
        p = step / warm_end if warm_end > 0 else 1.0
        return _cos(lr_start, lr_max, p), _cos(moms[0], moms[1], p)
    span = (total - 1) - warm_end
    p = (step - warm_end) / span if span > 0 else 1.0
    return _cos(lr_max, lr_end, p), _cos(moms[1], moms[2], p)

