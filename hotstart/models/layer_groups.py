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
    Otherwise one group; with `need_split`, that is an error naming the model.

    Every parameter must be in a group: the optimizer is built from the groups, so a parameter
    left out would silently never train (`require_covered`)."""
    if hasattr(model, "backbone") and hasattr(model, "head"):
        groups = [*body_stages(model.backbone), model.head]
        require_covered(model, groups, "its backbone and head")
        return groups
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
      timm's and our U-Net's backbones have a ``stages`` *module*, which is callable too); it must
      cover every parameter of the backbone, else a `UsageError` names the ones left out (they
      would never train, nor be frozen). We refuse rather than add a last group for them: a
      parameter missing from the grouping is a mistake in it, and a guessed group's place (and
      so its learning rate) would be arbitrary;
    - a timm model: timm's own coarse grouping (``group_matcher(coarse=True)``: the stem, then
      each stage), when it covers every parameter (else the next case);
    - anything else: the whole backbone, one group.
    Freezing is unchanged by the split: `freeze` freezes every group but the head."""
    method = getattr(backbone, "stage_groups", None)
    if callable(method) and not isinstance(method, nn.Module):
        groups = list(method())
        require_covered(backbone, groups, "its stage_groups()")
        return groups
    matcher = getattr(backbone, "group_matcher", None)
    if callable(matcher):
        from timm.models import group_modules

        groups = [nn.ModuleList([backbone.get_submodule(n) for n in names])
                  for _, names in sorted(group_modules(backbone, matcher(coarse=True)).items())]
        if len(groups) > 1 and not uncovered_parameters(backbone, groups):
            return groups
    return [backbone]


def uncovered_parameters(module: nn.Module, groups: list[nn.Module]) -> list[str]:
    """The names of `module`'s parameters that no group holds (an empty list: the groups cover it).

    The one coverage check for every grouping (a backbone's ``stage_groups()``, timm's, a
    backbone-and-head model's): the optimizer's parameter groups are built from the layer
    groups, so a parameter outside them is never optimized."""
    covered = {id(p) for g in groups for p in g.parameters()}
    return [name for name, p in module.named_parameters() if id(p) not in covered]


def require_covered(module: nn.Module, groups: list[nn.Module], what: str) -> None:
    """Refuse a grouping of `module` (described by `what`) that leaves parameters out: a
    `UsageError` naming the module and the parameters, which would otherwise never train."""
    missing = uncovered_parameters(module, groups)
    if missing:
        from ..errors import UsageError

        shown = ", ".join(missing[:10]) + (f", ... ({len(missing)} in all)" if len(missing) > 10 else "")
        raise UsageError(
            f"{type(module).__name__}: the layer groups from {what} leave out parameter(s) {shown}; "
            f"they would never be trained (the optimizer and freeze/unfreeze act on the groups). "
            f"Return every submodule with parameters from the grouping (a group may be an "
            f"nn.ModuleList of several)")
