"""Optimizers by name, with fastai's defaults (AdamW betas (0.9, 0.99), eps 1e-5)."""
from __future__ import annotations

import torch


def make_optimizer(optimizer, param_groups, *, lr: float, wd: float):
    """`optimizer` is "adamw", "adam", "sgd", or a callable ``(param_groups, lr=..., weight_decay=...)``."""
    groups = [{"params": g} for g in param_groups if g]
    if callable(optimizer):
        return optimizer(groups, lr=lr, weight_decay=wd)
    name = str(optimizer).lower()
    if name == "adamw":
        return torch.optim.AdamW(groups, lr=lr, betas=(0.9, 0.99), eps=1e-5, weight_decay=wd)
    if name == "adam":
        return torch.optim.Adam(groups, lr=lr, betas=(0.9, 0.99), eps=1e-5, weight_decay=wd)
    if name == "sgd":
        return torch.optim.SGD(groups, lr=lr, momentum=0.9, weight_decay=wd)
    raise ValueError(f"optimizer must be 'adamw', 'adam', 'sgd' or a callable, got {optimizer!r}")


def as_tuple(lr) -> tuple:
    """A learning rate as a tuple: ``3e-3 -> (3e-3,)``, ``(1e-5, 1e-3) -> (1e-5, 1e-3)``."""
    return tuple(lr) if isinstance(lr, (tuple, list)) else (lr,)


def group_lrs(lr, n_groups: int) -> list[float]:
    """A float for every group, or a (low, high) pair spread geometrically over the groups."""
    lrs = as_tuple(lr)
    if len(lrs) == 1:
        return [float(lrs[0])] * n_groups
    if n_groups == 1:
        return [float(lrs[-1])]
    lo, hi = float(lrs[0]), float(lrs[-1])
    return [lo * (hi / lo) ** (i / (n_groups - 1)) for i in range(n_groups)]
