"""The one-cycle schedule as a pure function, as in fastai and FastAI.jl.

Learning rate: linear warm-up from ``lr_max / div`` to ``lr_max`` over the first `pct_start` of
training, then cosine annealing down to ``lr_max / div_final``. Momentum (or Adam's beta1) moves
the other way: ``moms[0] -> moms[1]`` during warm-up, back to ``moms[2]`` while annealing.
"""
from __future__ import annotations

import math


def _cos(start: float, end: float, pct: float) -> float:
    return end + (start - end) / 2 * (1 + math.cos(math.pi * pct))


def one_cycle(pct: float, lr_max: float, div: float = 25.0, div_final: float = 1e5, pct_start: float = 0.25,
              moms=(0.95, 0.85, 0.95)) -> tuple[float, float]:
    """(learning rate, momentum) at `pct` in [0, 1] of the whole fit."""
    pct = min(max(pct, 0.0), 1.0)
    lr_start, lr_end = lr_max / div, lr_max / div_final
    if pct < pct_start:
        p = pct / pct_start
        return lr_start + (lr_max - lr_start) * p, moms[0] + (moms[1] - moms[0]) * p
    p = (pct - pct_start) / (1 - pct_start) if pct_start < 1 else 1.0
    return _cos(lr_max, lr_end, p), _cos(moms[1], moms[2], p)
