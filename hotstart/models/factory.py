"""The thin factory: which kind builds the model for a task, with which options (timm's ``_factory.py``).

`create_model` drops the options left at ``None`` (so a CLI can pass every flag and a kind's own
defaults still apply), refuses the options the chosen kind does not take, and calls the kind's
``build_model``. `model_from_config` is the way back from ``task.json``.

Which kind, in order:

1. the task's ``model_kind``, when it declares one (``ImageSegmentation``: ``"unet"``; the table
   tasks: ``"TabularModel"``): the task's output decides the model's shape;
2. else the backbone: ``None`` -> ``"SmallCNN"``; a registered kind's name with ``by_name``
   (``backbone="SmallCNN"``) -> that kind; any other string -> ``"timm"``; an ``nn.Module`` -> ``"module"``.
"""
from __future__ import annotations

from ..errors import UsageError
from .registry import MODEL_KINDS, get_model_kind, is_model_kind, kind_of_config


def choose_kind(task, backbone) -> str:
    """The name of the kind that builds `task`'s model around `backbone` (see the module docstring)."""
    if task.model_kind:  # declared on every task (tasks/base.py)
        return task.model_kind
    if backbone is None:
        return "SmallCNN"
    if isinstance(backbone, str):
        return backbone if is_model_kind(backbone) and get_model_kind(backbone).by_name else "timm"
    import torch.nn as nn

    if isinstance(backbone, nn.Module):
        return "module"
    raise UsageError(f"backbone must be a timm model name, an nn.Module or None, got {type(backbone).__name__}")


def create_model(task, backbone=None, *, pretrained: bool = False, **options):
    """(model, config) for `task`: the chosen kind's ``build_model`` with the options not ``None``.

    Call `check_backbone` first, before any data is read: a misspelled name should cost nothing."""
    options = {k: v for k, v in options.items() if v is not None}
    kind = get_model_kind(choose_kind(task, backbone))
    unknown = sorted(set(options) - set(kind.options))
    if unknown:
        takers = [k.name for k in MODEL_KINDS.values() if set(unknown) <= set(k.options)]
        raise UsageError(f"{unknown} apply to {' / '.join(takers) or 'no'} models only; "
                         f"{type(task).__name__} builds a {kind.name} model, which takes backbone=")
    return kind.builder()(task, backbone=backbone, pretrained=pretrained, **options)


def model_from_config(config: dict, task):
    """The model that `config` (``task.json``'s ``"model"``) describes, with untrained weights."""
    return get_model_kind(kind_of_config(config)).rebuilder()(config, task)


def check_backbone(backbone, pretrained: bool = False) -> None:
    """Argument checks that need no data and no download: run them before anything is read."""
    if isinstance(backbone, str) and not (is_model_kind(backbone) and get_model_kind(backbone).by_name):
        from .registry import MODEL_KINDS
        from .timm_names import check_backbone_name

        check_backbone_name(backbone, own=tuple(k.name for k in MODEL_KINDS.values() if k.by_name))
    elif pretrained:
        what = ("the default small CNN" if backbone is None or backbone == "SmallCNN"
                else f"a {backbone} backbone" if isinstance(backbone, str) else f"a {type(backbone).__name__} module")
        raise UsageError(f"pretrained=True needs backbone= a timm model name (e.g. 'resnet18'); "
                         f"{what} has no pretrained weights to load")
