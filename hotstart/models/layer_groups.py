"""Layer groups and freezing: what `freeze` keeps frozen and what a (low, high) learning-rate pair spreads over."""
from __future__ import annotations

import torch.nn as nn

_NORMS = (nn.BatchNorm1d, nn.BatchNorm2d, nn.BatchNorm3d, nn.LayerNorm, nn.GroupNorm)


def set_trainable(module: nn.Module, trainable: bool) -> None:
    """Freeze or unfreeze `module`; normalization layers stay trainable (as fastai's train_bn)."""
    for m in module.modules():
        is_norm = isinstance(m, _NORMS)
        for p in m.parameters(recurse=False):
            p.requires_grad_(trainable or is_norm)


def layer_groups(model: nn.Module, need_split: bool = False) -> list[nn.Module]:
    """The model's layer groups, first to last: what `freeze` keeps frozen (all but the last) and
    what a (low, high) learning-rate pair spreads over.

    A `TaskModel` (or any model with ``backbone`` and ``head``): [the backbone's stages (see
    `body_stages`), head]. Any other model
    whose parameters all live in child modules, two or more of them: [the children before the
    last, the last child] (fastai's default split for a model it cannot split otherwise is one
    group, whose `freeze` does nothing; training the last layer alone is what `fine_tune` means).
    Otherwise one group; with `need_split`, that is an error naming the model."""
    if hasattr(model, "backbone") and hasattr(model, "head"):
        return [*body_stages(model.backbone), model.head]
    children = [c for c in model.children() if any(True for _ in c.parameters())]
    direct = any(True for _ in model.parameters(recurse=False))
    if len(children) >= 2 and not direct:
        return [nn.ModuleList(children[:-1]), children[-1]]
    if need_split:
        from ..errors import UsageError

        raise UsageError(
            f"cannot freeze {type(model).__name__}: freeze / unfreeze / fine_tune train the last layer group "
            f"alone, and this model has {len(children)} child module(s) with parameters"
            f"{' and parameters of its own' if direct else ''}. Build it with backbone=... (hotstart adds the "
            f"task's head), give the model `backbone` and `head` attributes, or use fit / fit_one_cycle")
    return [model]


def body_stages(backbone: nn.Module) -> list[nn.Module]:
    """The backbone's stages, first to last, as discriminative learning rates spread over them
    (fastai's layer groups: ``lr_max=slice(lo, hi)`` gives the first stage `lo`, the head `hi`).

    - a backbone with a ``stage_groups()`` method (`SmallCNN`): what it returns (not ``stages``:
      timm's and our U-Net's backbones have a ``stages`` *module*, which is callable too);
    - a timm model: timm's own coarse grouping (``group_matcher(coarse=True)``: the stem, then
      each stage), when it covers every parameter;
    - anything else: the whole backbone, one group.
    Freezing is unchanged by the split: `freeze` freezes every group but the head."""
    method = getattr(backbone, "stage_groups", None)
    if callable(method) and not isinstance(method, nn.Module):
        return list(method())
    matcher = getattr(backbone, "group_matcher", None)
    if callable(matcher):
        from timm.models import group_modules

        groups = [nn.ModuleList([backbone.get_submodule(n) for n in names])
                  for _, names in sorted(group_modules(backbone, matcher(coarse=True)).items())]
        covered = {id(p) for g in groups for p in g.parameters()}
        params = list(backbone.parameters())
        if len(groups) > 1 and len(covered) == len(params) and all(id(p) in covered for p in params):
            return groups
    return [backbone]
