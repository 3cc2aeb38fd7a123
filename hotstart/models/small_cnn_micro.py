"""Model kind ``"smallcnn_micro"``: `SmallCNN` with widths (8, 16, 32), about 20 k parameters.

Sized for a microcontroller (hotstart/export/c/): on 16x16 digits its int8 weights take ~19 KB of
flash and its activations a 4 KB arena, where the default SmallCNN (32-64-128-256, ~1.2 M
parameters) needs 1.2 MB. ``tasklearner(task, data, backbone="smallcnn_micro")``.
"""
from __future__ import annotations

from .small_cnn import SmallCNN

MICRO_WIDTHS = (8, 16, 32)


def build_model(task, *, backbone=None, pretrained: bool = False):
    """SmallCNN(widths=MICRO_WIDTHS) sized for the task's input, plus the task's head; (model, config)."""
    from .builder import input_geometry, with_head

    in_chans, size = input_geometry(task)
    net = SmallCNN(in_chans=in_chans, size=size, widths=MICRO_WIDTHS)
    return with_head(task, net, {"kind": "smallcnn_micro", **net.config})


def model_from_config(config: dict, task):
    from .builder import rebuild_with_head

    return rebuild_with_head(task, config, SmallCNN.from_config(config["backbone"]))
