"""Models: a backbone (timm name, an ``nn.Module``, or our small CNN) plus the task's head.

`TaskModel` keeps the two apart (``model.backbone``, ``model.head``) so that fine-tuning can
freeze the backbone, and compiling can compile the backbone alone: the head's shape depends on
the number of classes, the backbone's does not, so a compile cache warmed with 10 classes serves
a run with 37.
"""
from __future__ import annotations

import torch
import torch.nn as nn


class TaskModel(nn.Module):
    def __init__(self, backbone: nn.Module, head: nn.Module):
        super().__init__()
        self.backbone = backbone
        self.head = head

    def forward(self, x):
        if self.compiled_with is not None and x.shape[0] > 1:
            # a dynamic batch dimension: the cached graphs serve every batch size (train, last valid
            # batch, ...); see hotstart/compile_cache/compile.py for the guards that remain
            torch._dynamo.maybe_mark_dynamic(x, 0)
        return self.head(self.backbone(x))

    compiled_with = None  # set by hotstart.compile_cache.compile_backbone


class SmallCNN(nn.Module):
    """A small conv net for small images: conv-BN-ReLU stages, each halving the size, then pooling.

    Stages stop when the feature map would drop below 4 pixels, so it suits 8x8 up to 128x128.
    ``num_features`` is the width of the pooled output (what the head takes).
    """

    def __init__(self, in_chans: int = 3, size=(32, 32), widths=(32, 64, 128, 256)):
        super().__init__()
        layers, c, s = [], in_chans, min(size)
        for i, w in enumerate(widths):
            stride = 2 if (i > 0 and s >= 8) else 1
            s = s // stride
            layers += [nn.Conv2d(c, w, 3, stride=stride, padding=1, bias=False), nn.BatchNorm2d(w), nn.ReLU(inplace=True),
                       nn.Conv2d(w, w, 3, padding=1, bias=False), nn.BatchNorm2d(w), nn.ReLU(inplace=True)]
            c = w
        self.features = nn.Sequential(*layers)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.num_features = c
        self.config = {"in_chans": in_chans, "size": list(size), "widths": list(widths)}

    def forward(self, x):
        return self.pool(self.features(x)).flatten(1)


SERIES_BACKBONES = ("inceptiontime", "resnet1d")


def series_backbone(name: str, in_chans: int, cfg: dict | None = None) -> nn.Module:
    """InceptionTime or the 1-D ResNet (hotstart/models/), from its name or its saved config."""
    if name == "inceptiontime":
        from ..models.inception_time import InceptionTime

        return InceptionTime.from_config(cfg) if cfg else InceptionTime(in_chans)
    from ..models.resnet1d import ResNet1d

    return ResNet1d.from_config(cfg) if cfg else ResNet1d(in_chans)


def build_backbone(backbone, *, in_chans: int, size, pretrained: bool = False) -> tuple[nn.Module, dict]:
    """(backbone module, its config for saving). `backbone` is None, a timm name, or a module."""
    check_backbone(backbone, pretrained)
    if isinstance(backbone, str) and backbone in SERIES_BACKBONES:  # interim, until hotstart/models' registry
        net = series_backbone(backbone, in_chans)
        return net, dict(net.config)
    if backbone is None:
        net = SmallCNN(in_chans=in_chans, size=size)
        return net, {"kind": "SmallCNN", **net.config}
    if isinstance(backbone, str):
        import timm

        overlay = {}
        if pretrained:
            from .pretrained import pretrained_overlay

            overlay = pretrained_overlay(backbone)  # cached weights, or a fast failure when offline
        net = timm.create_model(backbone, pretrained=pretrained, num_classes=0, in_chans=in_chans,
                                **({"pretrained_cfg_overlay": overlay} if overlay else {}))
        return net, {"kind": "timm", "name": backbone, "in_chans": in_chans}
    if isinstance(backbone, nn.Module):
        return backbone, {"kind": "module", "class": type(backbone).__qualname__}
    raise TypeError(f"backbone must be a timm model name, an nn.Module or None, got {type(backbone).__name__}")


def check_backbone(backbone, pretrained: bool = False) -> None:
    """Argument checks that need no data and no download: run them before anything is read."""
    if isinstance(backbone, str) and backbone in SERIES_BACKBONES:
        if pretrained:
            from ..errors import UsageError

            raise UsageError(f"pretrained=True: the {backbone} backbone has no pretrained weights to load")
    elif isinstance(backbone, str):
        from .backbone_names import check_backbone_name

        check_backbone_name(backbone)
    elif pretrained:
        what = "the default small CNN" if backbone is None else f"a {type(backbone).__name__} module"
        from ..errors import UsageError

        raise UsageError(f"pretrained=True needs backbone= a timm model name (e.g. 'resnet18'); "
                         f"{what} has no pretrained weights to load")


def backbone_from_config(cfg: dict) -> nn.Module:
    if cfg["kind"] == "SmallCNN":
        return SmallCNN(in_chans=cfg["in_chans"], size=cfg["size"], widths=cfg["widths"])
    if cfg["kind"] == "TabularModel":
        from .tabular_model import TabularBackbone

        return TabularBackbone.from_config(cfg)
    if cfg["kind"] in SERIES_BACKBONES:
        return series_backbone(cfg["kind"], cfg["in_chans"], cfg)
    if cfg["kind"] == "timm":
        import timm

        return timm.create_model(cfg["name"], pretrained=False, num_classes=0, in_chans=cfg["in_chans"])
    raise ValueError(f"cannot rebuild a backbone of kind {cfg['kind']!r} ({cfg.get('class')}); "
                     f"pass model=... to load_learner")


def num_features(backbone: nn.Module, in_chans: int, size) -> int:
    """Width of the backbone's output, from its attribute or a dry run on one zero image."""
    n = getattr(backbone, "num_features", None)
    if isinstance(n, int) and n > 0:
        return n
    from ..tasks.checks import forward_failure, run_on_meta

    try:  # on meta tensors: no activation memory, and a clear error if the input does not fit
        out, _ = run_on_meta(backbone, (1, in_chans, *size))
    except Exception as e:
        raise forward_failure(e, (1, in_chans, *size), "an input of shape") from e
    if out.ndim != 2:
        raise ValueError(f"the backbone must return (batch, features); it returned shape {tuple(out.shape)}")
    return int(out.shape[1])


def timm_stats(name: str, in_chans: int = 3):
    """Normalization stats (mean, std) from a timm model's pretrained config.

    For a 1-channel input, timm sums the first convolution's RGB weights into one channel; the
    matching stats are the channel averages (so ``--pretrained`` works on grayscale images too).
    """
    import timm

    cfg = timm.get_pretrained_cfg(name)
    if cfg is None:
        return None
    mean, std = tuple(cfg.mean), tuple(cfg.std)
    if in_chans == 1 and len(mean) == 3:
        mean, std = (sum(mean) / 3,), (sum(std) / 3,)
    return mean, std


def set_backbone_trainable(model: TaskModel, trainable: bool) -> None:
    """Freeze or unfreeze the backbone; BatchNorm layers stay trainable (as fastai's train_bn)."""
    set_trainable(model.backbone, trainable)


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

    A `TaskModel` (or any model with ``backbone`` and ``head``): [backbone, head]. Any other model
    whose parameters all live in child modules, two or more of them: [the children before the
    last, the last child] (fastai's default split for a model it cannot split otherwise is one
    group, whose `freeze` does nothing; training the last layer alone is what `fine_tune` means).
    Otherwise one group; with `need_split`, that is an error naming the model."""
    if hasattr(model, "backbone") and hasattr(model, "head"):
        return [model.backbone, model.head]
    children = [c for c in model.children() if any(True for _ in c.parameters())]
    direct = any(True for _ in model.parameters(recurse=False))
    if len(children) >= 2 and not direct:
        return [nn.ModuleList(children[:-1]), children[-1]]
    if need_split:
        raise ValueError(
            f"cannot freeze {type(model).__name__}: freeze / unfreeze / fine_tune train the last layer group "
            f"alone, and this model has {len(children)} child module(s) with parameters"
            f"{' and parameters of its own' if direct else ''}. Build it with backbone=... (hotstart adds the "
            f"task's head), give the model `backbone` and `head` attributes, or use fit / fit_one_cycle")
    return [model]
