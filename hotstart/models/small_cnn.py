"""`SmallCNN`, hotstart's default backbone (model kind ``"SmallCNN"``), and its build / rebuild."""
from __future__ import annotations

import torch.nn as nn

from ..arguments import check_int, check_size


class SmallCNN(nn.Module):
    """A small conv net for small images: conv-BN-ReLU stages, each halving the size, then pooling.

    Stages stop halving when the feature map would drop below 4 pixels, so it suits 8x8 up to
    128x128. ``num_features`` is the width of the pooled output (what the head takes).

    `downsample` is how a stage halves the size: ``"stride"`` (the default), its first
    convolution's stride of 2, or ``"max"``, 2x2 max pooling before it. From random weights on a
    few dozen pictures, max pooling is what lets a net this small learn shapes at all: on the
    shapes folder, a plain loop's stride-2 net stayed at chance (train 0.40) where the same net
    with max pooling reached 0.92-1.00 (benchmarks/scripts/shapes_plain.py).
    """

    def __init__(self, in_chans: int = 3, size=(32, 32), widths=(32, 64, 128, 256), downsample: str = "stride"):
        super().__init__()
        if downsample not in ("stride", "max"):
            from ..errors import UsageError

            raise UsageError(f'SmallCNN(downsample=) must be "stride" or "max", got {downsample!r}')
        # a saved task.json's backbone comes through here too: [-1, 16] built a net without a word
        in_chans = check_int("SmallCNN(in_chans=)", in_chans, minimum=1)
        size = check_size("SmallCNN(size=)", size)
        widths = [check_int("SmallCNN(widths=)", w, minimum=1) for w in _sequence("SmallCNN(widths=)", widths)]
        layers, c, s = [], in_chans, min(size)
        self.stage_ends = []  # the index in `features` after each stage's last layer
        for i, w in enumerate(widths):
            halve = i > 0 and s >= 8
            s = s // 2 if halve else s
            if halve and downsample == "max":
                layers.append(nn.MaxPool2d(2))
            stride = 2 if halve and downsample == "stride" else 1
            layers += [nn.Conv2d(c, w, 3, stride=stride, padding=1, bias=False), nn.BatchNorm2d(w), nn.ReLU(inplace=True),
                       nn.Conv2d(w, w, 3, padding=1, bias=False), nn.BatchNorm2d(w), nn.ReLU(inplace=True)]
            self.stage_ends.append(len(layers))
            c = w
        self.features = nn.Sequential(*layers)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.num_features = c
        self.config = {"in_chans": in_chans, "size": list(size), "widths": list(widths)}
        if downsample != "stride":  # saved only when not the default, so older configs read the same
            self.config["downsample"] = downsample

    def forward(self, x):
        return self.pool(self.features(x)).flatten(1)

    def stage_groups(self) -> list[nn.Module]:
        """Each width's layers (its max pooling, if any, and conv-BN-ReLU pairs), first to last:
        the layer groups that discriminative learning rates spread over (models/layer_groups.py)."""
        layers = list(self.features)
        starts = [0] + self.stage_ends[:-1]
        return [nn.Sequential(*layers[a:b]) for a, b in zip(starts, self.stage_ends)]

    @classmethod
    def from_config(cls, cfg: dict) -> "SmallCNN":
        """The net a saved config describes (the ``"backbone"`` of ``task.json``'s model)."""
        return cls(in_chans=cfg["in_chans"], size=cfg["size"], widths=cfg["widths"],
                   downsample=cfg.get("downsample", "stride"))


def build_model(task, *, backbone=None, pretrained: bool = False):
    """SmallCNN sized for the task's input, plus the task's head; (model, config)."""
    from .builder import input_geometry, with_head

    in_chans, size = input_geometry(task)
    net = SmallCNN(in_chans=in_chans, size=size)
    return with_head(task, net, {"kind": "SmallCNN", **net.config})


def model_from_config(config: dict, task):
    from .builder import rebuild_with_head

    return rebuild_with_head(task, config, SmallCNN.from_config(config["backbone"]))


def _sequence(name: str, value) -> list:
    """`value` as a list, refused naming `name` unless it is a list or tuple."""
    if not isinstance(value, (list, tuple)):
        from ..errors import UsageTypeError

        raise UsageTypeError(f"{name} must be a list of ints, got {value!r}")
    return list(value)
