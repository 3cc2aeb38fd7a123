"""InceptionTime (Ismail Fawaz et al., 2020): the backbone for series classification and regression.

H. Ismail Fawaz, B. Lucas, G. Forestier, C. Pelletier, D. F. Schmidt, J. Weber, G. I. Webb,
L. Idoumghar, P.-A. Muller, F. Petitjean, "InceptionTime: Finding AlexNet for time series
classification", Data Mining and Knowledge Discovery 34, 2020, doi:10.1007/s10618-020-00710-y;
reference code github.com/hfawaz/InceptionTime (Keras), which this follows layer for layer:

- an Inception module: a bottleneck (1x1 convolution to 32 channels, only when its input has more
  than one channel), three convolutions of 32 filters with kernels 40, 20 and 10 ("same" padding,
  no bias), and a max-pool (3, stride 1) followed by a 1x1 convolution of 32 filters, beside them;
  the four concatenated (128 channels), BatchNorm, ReLU;
- `depth` = 6 modules; every 3 modules a residual connection (1x1 convolution + BatchNorm on the
  shortcut, added, ReLU);
- global average pooling over time: ``num_features`` = 4 * `nf` = 128 features for the task's head.

The paper's network is an ensemble of five such models with different random initialisations;
this is one of them (train five seeds and average their probabilities for the ensemble).
Model kind ``"inceptiontime"`` (``backbone="inceptiontime"``).
"""
from __future__ import annotations

import torch
import torch.nn as nn

KERNELS = (40, 20, 10)


def same_conv1d(c_in: int, c_out: int, k: int, *, bias: bool) -> nn.Sequential:
    """A convolution with Keras's "same" padding written out (left (k-1)//2, right k//2): torch's
    ``padding="same"`` does the same but warns, and copies the input, on every call for even kernels."""
    return nn.Sequential(nn.ConstantPad1d(((k - 1) // 2, k // 2), 0.0), nn.Conv1d(c_in, c_out, k, bias=bias))


class InceptionModule(nn.Module):
    def __init__(self, c_in: int, nf: int = 32, bottleneck: int = 32, kernels=KERNELS):
        super().__init__()
        use_bottleneck = c_in > 1 and bottleneck > 0  # as the reference: no bottleneck on a univariate input
        self.bottleneck = nn.Conv1d(c_in, bottleneck, 1, bias=False) if use_bottleneck else nn.Identity()
        c = bottleneck if use_bottleneck else c_in
        self.convs = nn.ModuleList(same_conv1d(c, nf, k, bias=False) for k in kernels)
        self.pool = nn.MaxPool1d(3, stride=1, padding=1)
        self.pool_conv = nn.Conv1d(c_in, nf, 1, bias=False)
        self.bn = nn.BatchNorm1d(nf * (len(kernels) + 1))
        self.act = nn.ReLU()

    def forward(self, x):
        z = self.bottleneck(x)
        out = torch.cat([conv(z) for conv in self.convs] + [self.pool_conv(self.pool(x))], dim=1)
        return self.act(self.bn(out))


class Shortcut(nn.Module):
    """The residual path: 1x1 convolution + BatchNorm from the block's input, added, then ReLU."""

    def __init__(self, c_in: int, c_out: int):
        super().__init__()
        self.conv = nn.Conv1d(c_in, c_out, 1, bias=False)
        self.bn = nn.BatchNorm1d(c_out)
        self.act = nn.ReLU()

    def forward(self, x, res):
        return self.act(x + self.bn(self.conv(res)))


class InceptionTime(nn.Module):
    """(batch, channels, length) -> (batch, 4 * nf) features; any length (global average pooling)."""

    def __init__(self, in_chans: int = 1, nf: int = 32, depth: int = 6, bottleneck: int = 32, residual: bool = True):
        super().__init__()
        width = nf * (len(KERNELS) + 1)
        self.modules_ = nn.ModuleList(InceptionModule(in_chans if d == 0 else width, nf, bottleneck)
                                      for d in range(depth))
        self.shortcuts = nn.ModuleList(Shortcut(in_chans if d == 2 else width, width)
                                       for d in range(depth) if residual and d % 3 == 2)
        self.residual = residual
        self.num_features = width
        self.config = {"kind": "inceptiontime", "in_chans": int(in_chans), "nf": int(nf), "depth": int(depth),
                       "bottleneck": int(bottleneck), "residual": bool(residual)}

    def forward(self, x):
        res, k = x, 0
        for d, module in enumerate(self.modules_):
            x = module(x)
            if self.residual and d % 3 == 2:
                x = self.shortcuts[k](x, res)
                res, k = x, k + 1
        return x.mean(dim=-1)

    @classmethod
    def from_config(cls, cfg: dict) -> "InceptionTime":
        return cls(cfg["in_chans"], nf=cfg["nf"], depth=cfg["depth"], bottleneck=cfg["bottleneck"],
                   residual=cfg["residual"])


def series_channels(task) -> int:
    """Channels of a series task's encoded input (the mask channel included)."""
    return int(task.encoded_blocks()[0].channels)


def build_model(task, *, backbone=None, pretrained: bool = False):
    """InceptionTime for the task's encoded series, plus the task's head; (model, config)."""
    from ..errors import UsageError
    from .builder import with_head

    if pretrained:
        raise UsageError("pretrained=True: the inceptiontime backbone has no pretrained weights to load")
    net = InceptionTime(series_channels(task))
    return with_head(task, net, dict(net.config))


def model_from_config(config: dict, task):
    from .builder import rebuild_with_head

    return rebuild_with_head(task, config, InceptionTime.from_config(config["backbone"]))
