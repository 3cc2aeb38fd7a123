"""A U-Net-style model for dense prediction: an encoder's multi-scale features, decoded back up.

    encoder (backbone)                                  decoder (head)
    x ─> stage 1 ─> stage 2 ─> ... ─> stage k ─┐
            │          │                       up + concat stage k-1 + 2 convs
            │          └──────────────────────> up + concat ...
            └─────────────────────────────────> up + concat stage 1 + 2 convs
    x ─────────────────────────────────────────> up to H x W + concat x + 2 convs -> 1x1 conv -> C maps

The encoder is a timm model created with ``features_only=True`` (its stages' outputs), or the
stages of hotstart's `SmallCNN`. Each decoder step upsamples (bilinear) to the size of the next
shallower feature map, so any encoder strides work and the output always has the input's height
and width. The last step concatenates the input image itself, so a timm encoder whose first
stage already halves the size still predicts sharp edges.

`UNet` is a `TaskModel` (``.backbone`` = encoder, ``.head`` = decoder), so freezing, fine-tuning
and compiling the backbone work as for a classifier. Model kind ``"unet"`` (a task with
``model_kind = "unet"`` selects it): `build_model` returns the model and the JSON config that
`model_from_config` rebuilds it from (``task.json``; no pickle).
"""
from __future__ import annotations

import torch
import torch.nn as nn
import torch.nn.functional as F

from ..errors import UsageError
from .small_cnn import SmallCNN
from .task_model import TaskModel


SEGMENTATION_WIDTHS = (16, 32, 64, 128)


class SmallCNNFeatures(nn.Module):
    """`SmallCNN`'s stages as an encoder: returns every stage's output, shallow to deep."""

    def __init__(self, in_chans: int = 3, size=(32, 32), widths=(32, 64, 128, 256)):
        super().__init__()
        cnn = SmallCNN(in_chans=in_chans, size=size, widths=widths)
        per_stage = len(cnn.features) // len(widths)
        self.stages = nn.ModuleList(nn.Sequential(*list(cnn.features)[i * per_stage:(i + 1) * per_stage])
                                    for i in range(len(widths)))
        self.channels = list(widths)
        self.config = cnn.config

    def forward(self, x):
        feats = []
        for stage in self.stages:
            x = stage(x)
            feats.append(x)
        return feats


def _conv_bn_relu(c_in: int, c_out: int) -> list[nn.Module]:
    return [nn.Conv2d(c_in, c_out, 3, padding=1, bias=False), nn.BatchNorm2d(c_out), nn.ReLU(inplace=True)]


class UpBlock(nn.Module):
    """Upsample to the skip connection's size, concatenate it, two 3x3 conv-BN-ReLU."""

    def __init__(self, c_in: int, c_skip: int, c_out: int):
        super().__init__()
        self.convs = nn.Sequential(*_conv_bn_relu(c_in + c_skip, c_out), *_conv_bn_relu(c_out, c_out))

    def forward(self, x, skip):
        if x.shape[-2:] != skip.shape[-2:]:
            x = F.interpolate(x, size=skip.shape[-2:], mode="bilinear", align_corners=False)
        return self.convs(torch.cat([x, skip], 1))


class UNetDecoder(nn.Module):
    """Decoder for encoder features with `channels` (shallow to deep) to `out_channels` maps."""

    def __init__(self, channels, out_channels: int, in_chans: int):
        super().__init__()
        channels = [int(c) for c in channels]
        c = channels[-1]
        blocks = []
        for skip in reversed(channels[:-1]):
            width = max(16, skip)
            blocks.append(UpBlock(c, skip, width))
            c = width
        self.blocks = nn.ModuleList(blocks)
        width = max(16, c // 2)
        self.final = UpBlock(c, in_chans, width)
        self.classifier = nn.Conv2d(width, out_channels, 1)

    def forward(self, feats, x):
        y = feats[-1]
        for block, skip in zip(self.blocks, reversed(feats[:-1])):
            y = block(y, skip)
        return self.classifier(self.final(y, x))


class UNet(TaskModel):
    """Encoder (``backbone``) + `UNetDecoder` (``head``): (N, C_in, H, W) -> (N, out_channels, H, W)."""

    def forward(self, x):
        if self.compiled_with is not None and x.shape[0] > 1:
            torch._dynamo.maybe_mark_dynamic(x, 0)
        return self.head(self.backbone(x), x)


def build_encoder(backbone, *, in_chans: int, size, pretrained: bool = False):
    """(encoder returning a list of feature maps, its JSON config); None means `SmallCNNFeatures`."""
    if backbone is None:  # half SmallCNN's classifier widths: a dense decoder costs more than a pooled head
        net = SmallCNNFeatures(in_chans=in_chans, size=size, widths=SEGMENTATION_WIDTHS)
        return net, {"kind": "SmallCNN", **net.config}
    if isinstance(backbone, str):
        from .timm_backbone import create_timm

        net = create_timm(backbone, in_chans=in_chans, pretrained=pretrained, features_only=True)
        return net, {"kind": "timm", "name": backbone, "in_chans": in_chans, "features_only": True}
    if isinstance(backbone, nn.Module):
        from .user_module import module_config

        return backbone, module_config(backbone)
    raise UsageError(f"backbone must be a timm model name, an nn.Module or None, got {type(backbone).__name__}")


def encoder_from_config(cfg: dict) -> nn.Module:
    if cfg["kind"] == "SmallCNN":
        return SmallCNNFeatures(in_chans=cfg["in_chans"], size=cfg["size"], widths=cfg["widths"])
    if cfg["kind"] == "timm":
        from .timm_backbone import create_timm

        return create_timm(cfg["name"], in_chans=cfg["in_chans"], features_only=True)
    raise UsageError(f"cannot rebuild an encoder of kind {cfg['kind']!r} ({cfg.get('class')}): its class is your "
                     f"code; pass load_learner(path, model=...) the whole U-Net (as learner.task_model() was), "
                     f"built as for training with your encoder")


def feature_channels(encoder: nn.Module, in_chans: int, size) -> list[int]:
    """Channels of each feature map: from timm's ``feature_info``, ours, or a dry run."""
    info = getattr(encoder, "feature_info", None)
    if info is not None and hasattr(info, "channels"):
        return [int(c) for c in info.channels()]
    if isinstance(getattr(encoder, "channels", None), list):
        return list(encoder.channels)
    was_training = encoder.training
    encoder.eval()
    with torch.no_grad():
        feats = encoder(torch.zeros(1, in_chans, *size))
    encoder.train(was_training)
    if not isinstance(feats, (list, tuple)) or not all(torch.is_tensor(f) and f.ndim == 4 for f in feats):
        raise UsageError("a segmentation backbone must return a list of (N, C, H, W) feature maps "
                         "(a timm name is created with features_only=True)")
    return [int(f.shape[1]) for f in feats]


def build_model(task, *, backbone=None, pretrained: bool = False) -> tuple[UNet, dict]:
    from .builder import input_geometry

    in_chans, size = input_geometry(task)
    encoder, enc_cfg = build_encoder(backbone, in_chans=in_chans, size=size, pretrained=pretrained)
    channels = feature_channels(encoder, in_chans, size)
    model = UNet(encoder, UNetDecoder(channels, task.out_channels, in_chans))
    return model, {"kind": "unet", "backbone": enc_cfg, "encoder_channels": channels,
                   "out_channels": task.out_channels, "in_chans": in_chans}


def model_from_config(config: dict, task=None) -> UNet:
    return UNet(encoder_from_config(config["backbone"]),
                UNetDecoder(config["encoder_channels"], config["out_channels"], config["in_chans"]))
