"""Model kind ``"smallcnn_maxpool"``: `SmallCNN` that halves by 2x2 max pooling, widths 16-32-64-128.

What ``hotstart train`` chooses for a small folder of pictures (cli/small_folder.py), trained from
random weights. On the shapes folder (circles, squares, triangles in random colours: 72 training
JPEGs at 48x48), a plain loop's stride-2 nets stayed at chance, while a max-pooling net learned
it (benchmarks/scripts/shapes_plain.py). Three stages (16-32-64, down to 12x12) learned it on
some seeds and not others through ``hotstart train`` (1,500 steps: 0.94, 0.28 and 0.44 on one
folder); a fourth stage, down to 6x6, sees a whole shape at once and learned it on every run
tried (0.94-1.00 in twelve runs over four folders; cli/small_folder.py).
``tasklearner(task, data, backbone="smallcnn_maxpool")``.
"""
from __future__ import annotations

from .small_cnn import SmallCNN

MAXPOOL_WIDTHS = (16, 32, 64, 128)


def build_model(task, *, backbone=None, pretrained: bool = False):
    """SmallCNN(widths=MAXPOOL_WIDTHS, downsample="max") sized for the task's input, plus the
    task's head; (model, config)."""
    from .builder import input_geometry, with_head

    in_chans, size = input_geometry(task)
    net = SmallCNN(in_chans=in_chans, size=size, widths=MAXPOOL_WIDTHS, downsample="max")
    return with_head(task, net, {"kind": "smallcnn_maxpool", **net.config})


def model_from_config(config: dict, task):
    from .builder import rebuild_with_head

    return rebuild_with_head(task, config, SmallCNN.from_config(config["backbone"]))
