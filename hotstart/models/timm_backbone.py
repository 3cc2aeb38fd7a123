"""Model kind ``"timm"``: any timm model name as the backbone (pooled features), plus the task's head.

Also the normalization stats of timm's pretrained configs, which replace a task's own when
``pretrained=True`` (the weights were trained on inputs normalized that way).
"""
from __future__ import annotations

from ..gc_pause import import_paused


def build_model(task, *, backbone: str, pretrained: bool = False):
    from .builder import input_geometry, with_head

    in_chans, _ = input_geometry(task)
    return with_head(task, create_timm(backbone, in_chans=in_chans, pretrained=pretrained),
                     {"kind": "timm", "name": backbone, "in_chans": in_chans})


def model_from_config(config: dict, task):
    from .builder import rebuild_with_head

    cfg = config["backbone"]
    return rebuild_with_head(task, config, create_timm(cfg["name"], in_chans=cfg["in_chans"]))


def create_timm(name: str, *, in_chans: int, pretrained: bool = False, **kwargs):
    """``timm.create_model`` without a classifier; pretrained weights from the local cache when there
    (hotstart/models/pretrained.py), or a fast, clear failure when they cannot be downloaded."""
    timm = import_paused("timm")  # hotstart/gc_pause.py: ~0.45 s less with torchvision

    if pretrained:
        from .pretrained import pretrained_overlay

        overlay = pretrained_overlay(name)  # cached weights, or a fast failure when offline
        if overlay:
            kwargs["pretrained_cfg_overlay"] = overlay
    if not kwargs.get("features_only"):
        kwargs["num_classes"] = 0
    return timm.create_model(name, pretrained=pretrained, in_chans=in_chans, **kwargs)


def timm_stats(name: str, in_chans: int = 3):
    """Normalization stats (mean, std) from a timm model's pretrained config.

    For a 1-channel input, timm sums the first convolution's RGB weights into one channel; the
    matching stats are the channel averages (so ``--pretrained`` works on grayscale images too).
    """
    timm = import_paused("timm")

    cfg = timm.get_pretrained_cfg(name)
    if cfg is None:
        return None
    mean, std = tuple(cfg.mean), tuple(cfg.std)
    if in_chans == 1 and len(mean) == 3:
        mean, std = (sum(mean) / 3,), (sum(std) / 3,)
    return mean, std
