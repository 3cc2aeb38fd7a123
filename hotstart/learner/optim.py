"""Optimizers by name, with fastai's defaults (AdamW betas (0.9, 0.99), eps 1e-5).

Adam and AdamW use torch's *fused* kernels where the parameters allow it (floating point, on
CPU or CUDA). SGD keeps torch's default: its fused kernel refuses sparse gradients (an
``nn.Embedding(sparse=True)``), which only show up at the first step, long after construction. On CPU, torch's default for-loop AdamW step is a large share of a small model's
training step: resnet10t (4.9 M parameters) on 2 cores, 18 ms of a 92 ms step at batch 32,
against 4 ms fused. Fused and for-loop steps compute the same update (they differ only in
floating-point rounding); a given configuration always uses the same kernel, so runs stay
reproducible bit for bit. Parameters the fused kernels do not take fall back to torch's default.
"""
from __future__ import annotations

import math

import torch

from ..arguments import is_number, scalar
from ..errors import UsageError, UsageTypeError

_FUSED_DEVICES = ("cpu", "cuda")


def make_optimizer(optimizer, param_groups, *, lr: float, wd: float):
    """`optimizer` is "adamw", "adam", "sgd", or a callable ``(param_groups, lr=..., weight_decay=...)``."""
    groups = [{"params": g} for g in param_groups if g]
    if callable(optimizer):
        return optimizer(groups, lr=lr, weight_decay=wd)
    name = str(optimizer).lower()
    if name == "adamw":
        kind, options = torch.optim.AdamW, dict(betas=(0.9, 0.99), eps=1e-5)
    elif name == "adam":
        kind, options = torch.optim.Adam, dict(betas=(0.9, 0.99), eps=1e-5)
    elif name == "sgd":
        return torch.optim.SGD(groups, lr=lr, weight_decay=wd, momentum=0.9)
    else:
        raise UsageError(f"optimizer must be 'adamw', 'adam', 'sgd' or a callable, got {optimizer!r}")
    if _fused_ok(groups):  # Adam/AdamW refuse sparse gradients fused or not: nothing lost
        try:
            return kind(groups, lr=lr, weight_decay=wd, fused=True, **options)
        except (RuntimeError, ValueError):  # a dtype/device mix this torch's fused kernels refuse
            pass
    return kind(groups, lr=lr, weight_decay=wd, **options)


def _fused_ok(groups) -> bool:
    params = [p for g in groups for p in g["params"]]
    return bool(params) and all(p.is_floating_point() and p.device.type in _FUSED_DEVICES for p in params)


def check_lr(name: str, lr):
    """Refuse, naming `name`, a learning rate the optimizer would refuse later or deep inside torch:
    each of `as_tuple`'s rates must be a finite number, not negative (a 0-d tensor or array is a
    number), a slice needs its stop, a sequence at least one rate. Returns `lr` unchanged."""
    if isinstance(lr, slice) and lr.stop is None:
        raise UsageError(f"{name}: a learning-rate slice needs a stop, e.g. slice(1e-5, 1e-3); got {lr!r}")
    rates = as_tuple(lr)
    if not rates:
        raise UsageError(f"{name} must hold at least one rate, got {lr!r}")
    for rate in rates:
        if not is_number(rate):
            raise UsageTypeError(f"{name} must be a number, a sequence of numbers or a slice of them, got {lr!r}")
        if not (math.isfinite(float(scalar(rate))) and float(scalar(rate)) >= 0):
            raise UsageError(f"{name} must be finite and not negative, got {lr!r}")
    return lr


def as_tuple(lr) -> tuple:
    """A learning rate as a tuple: ``3e-3 -> (3e-3,)``, ``(1e-5, 1e-3) -> (1e-5, 1e-3)``,
    ``slice(1e-5, 1e-3) -> (1e-5, 1e-3)``, ``slice(1e-3) -> (1e-3,)`` (the head's rate last)."""
    if isinstance(lr, slice):
        return (lr.stop,) if lr.start is None else (lr.start, lr.stop)
    return tuple(lr) if isinstance(lr, (tuple, list)) else (lr,)


def even_mults(start: float, stop: float, n: int) -> list[float]:
    """`n` rates from `start` to `stop`, each a constant factor above the one before (fastai's
    ``even_mults``, the same floating-point operations)."""
    if n == 1:
        return [stop]
    step = (stop / start) ** (1 / (n - 1))
    return [start * (step ** i) for i in range(n)]


def set_hyper(opt, lr, mom: float | None = None) -> None:
    """Set the learning rate(s) (`group_lrs` rules) and momentum / beta1 on every parameter group
    of `opt`: Adam's ``betas[0]``, SGD's ``momentum``; a group with neither keeps no momentum."""
    lrs = group_lrs(lr, len(opt.param_groups))
    for g, lr_g in zip(opt.param_groups, lrs):
        g["lr"] = lr_g
        if mom is not None:
            if "betas" in g:
                g["betas"] = (mom, g["betas"][1])
            elif "momentum" in g:
                g["momentum"] = mom


def group_lrs(lr, n_groups: int) -> list[float]:
    """One learning rate per parameter group (the model's layer groups: body stages, then head),
    by fastai's rules (``Learner.lr_range``):

    - a number: the same rate for every group;
    - ``slice(lo, hi)`` or a pair ``(lo, hi)``: geometric from lo (first group) to hi (the head);
    - ``slice(hi)``: ``hi / 10`` for every group but the head, which gets `hi`;
    - a sequence of one rate per group: those rates."""
    if isinstance(lr, slice):
        if lr.stop is None:
            raise UsageError(f"a learning-rate slice needs a stop (the head's rate), got {lr!r}")
        if lr.start is None:
            return [float(lr.stop) / 10] * (n_groups - 1) + [float(lr.stop)]
        return even_mults(float(lr.start), float(lr.stop), n_groups)
    lrs = as_tuple(lr)
    if len(lrs) == 1:
        return [float(lrs[0])] * n_groups
    if len(lrs) == n_groups:
        return [float(v) for v in lrs]
    if len(lrs) == 2:
        return even_mults(float(lrs[0]), float(lrs[1]), n_groups)
    raise UsageError(f"lr has {len(lrs)} rates but the model has {n_groups} parameter groups: give one rate, "
                     f"a (low, high) pair or slice(low, high), or one rate per group")
