"""The 1-D ResNet of Wang, Yan and Oates (2017), a strong baseline for series classification.

Z. Wang, W. Yan, T. Oates, "Time series classification from scratch with deep neural networks: a
strong baseline", IJCNN 2017, doi:10.1109/IJCNN.2017.7966039; as implemented in the review of
Ismail Fawaz et al. (DMKD 2019, github.com/hfawaz/dl-4-tsc, ``classifiers/resnet.py``), which
this follows layer for layer:

- three residual blocks of 64, 128 and 128 filters; in each, three convolutions with kernels 8,
  5 and 3 ("same" padding, with bias), each followed by BatchNorm, the first two by ReLU;
- the shortcut: a 1x1 convolution + BatchNorm where the width changes, BatchNorm alone where it
  does not (the third block); added to the block's output, then ReLU;
- global average pooling over time: ``num_features`` = 128.

Model kind ``"resnet1d"`` (``backbone="resnet1d"``).
"""
from __future__ import annotations

import torch.nn as nn

from .inception_time import same_conv1d, series_channels

KERNELS = (8, 5, 3)
WIDTHS = (64, 128, 128)


class ResidualBlock1d(nn.Module):
    def __init__(self, c_in: int, c_out: int, kernels=KERNELS):
        super().__init__()
        layers, c = [], c_in
        for i, k in enumerate(kernels):
            layers += [same_conv1d(c, c_out, k, bias=True), nn.BatchNorm1d(c_out)]
            if i < len(kernels) - 1:
                layers.append(nn.ReLU())
            c = c_out
        self.body = nn.Sequential(*layers)
        self.shortcut = nn.Sequential(*([nn.Conv1d(c_in, c_out, 1)] if c_in != c_out else []), nn.BatchNorm1d(c_out))
        self.act = nn.ReLU()

    def forward(self, x):
        return self.act(self.body(x) + self.shortcut(x))


class ResNet1d(nn.Module):
    """(batch, channels, length) -> (batch, widths[-1]) features; any length."""

    def __init__(self, in_chans: int = 1, widths=WIDTHS):
        super().__init__()
        widths = [int(w) for w in widths]
        self.blocks = nn.Sequential(*(ResidualBlock1d(c, w) for c, w in zip([in_chans] + widths[:-1], widths)))
        self.num_features = widths[-1]
        self.config = {"kind": "resnet1d", "in_chans": int(in_chans), "widths": widths}

    def forward(self, x):
        return self.blocks(x).mean(dim=-1)

    @classmethod
    def from_config(cls, cfg: dict) -> "ResNet1d":
        return cls(cfg["in_chans"], widths=cfg["widths"])


def build_model(task, *, backbone=None, pretrained: bool = False):
    """ResNet1d for the task's encoded series, plus the task's head; (model, config)."""
    from ..errors import UsageError
    from .builder import with_head

    if pretrained:
        raise UsageError("pretrained=True: the resnet1d backbone has no pretrained weights to load")
    net = ResNet1d(series_channels(task))
    return with_head(task, net, dict(net.config))


def model_from_config(config: dict, task):
    from .builder import rebuild_with_head

    return rebuild_with_head(task, config, ResNet1d.from_config(config["backbone"]))
