"""`SmallCNN`, hotstart's default backbone (model kind ``"SmallCNN"``), and its build / rebuild."""
from __future__ import annotations

import torch.nn as nn


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

    def stage_groups(self) -> list[nn.Module]:
        """Each width's conv-BN-ReLU pairs, first to last: the layer groups that discriminative
        learning rates spread over (models/layer_groups.py)."""
        layers = list(self.features)
        per_stage = len(layers) // len(self.config["widths"])
        return [nn.Sequential(*layers[i:i + per_stage]) for i in range(0, len(layers), per_stage)]


def build_model(task, *, backbone=None, pretrained: bool = False):
    """SmallCNN sized for the task's input, plus the task's head; (model, config)."""
    from .builder import input_geometry, with_head

    in_chans, size = input_geometry(task)
    net = SmallCNN(in_chans=in_chans, size=size)
    return with_head(task, net, {"kind": "SmallCNN", **net.config})


def model_from_config(config: dict, task):
    from .builder import rebuild_with_head

    cfg = config["backbone"]
    return rebuild_with_head(task, config, SmallCNN(in_chans=cfg["in_chans"], size=cfg["size"], widths=cfg["widths"]))
