"""The heavy work that every backbone + head kind shares (timm's ``_builder.py`` in spirit).

A backbone kind builds only its backbone; `with_head` measures the backbone's output width and
adds the task's head, and writes the config that `rebuild_with_head` reads back.
"""
from __future__ import annotations

import torch.nn as nn

from .task_model import TaskModel


def input_geometry(task) -> tuple[int, tuple[int, int]]:
    """(channels, (height, width)) of the task's encoded input; 3 channels at 64x64 when it has none.
    A series (`SeriesTensor`) has ``(length,)`` in place of (height, width)."""
    encoded_input = task.encoded_blocks()[0]
    size = getattr(encoded_input, "size", None)
    if size is None and getattr(encoded_input, "length", None):
        size = (encoded_input.length,)
    return getattr(encoded_input, "channels", 3), tuple(size or (64, 64))


def with_head(task, backbone: nn.Module, backbone_config: dict) -> tuple[TaskModel, dict]:
    """``TaskModel(backbone, task.head(width))`` and its config: the backbone's config + the width."""
    nf = num_features(backbone, sample_shape(task))
    return TaskModel(backbone, task.head(nf)), {"backbone": backbone_config, "num_features": nf}


def rebuild_with_head(task, config: dict, backbone: nn.Module) -> TaskModel:
    return TaskModel(backbone, task.head(config["num_features"]))


def sample_shape(task) -> tuple[int, ...]:
    """One encoded input's shape without the batch, to dry-run a backbone on: what the task's encoded
    input block declares (its ``shape()``: an image's (C, H, W), a series' (C, L), a vector of a
    block of your own), else `input_geometry`'s guess (3 x 64 x 64 for an image of any size).

    Why the block's own shape first: a backbone for a block of your own (a 64-vector, say) cannot
    run on a made-up image, and the error it gave then named a shape the user never had."""
    from ..tasks.checks import input_shape

    declared = input_shape(task)
    if declared is not None:
        return declared
    in_chans, size = input_geometry(task)
    return (in_chans, *size)


def num_features(backbone: nn.Module, shape: tuple[int, ...]) -> int:
    """Width of the backbone's output, from its attribute or a dry run on one zero input of `shape`
    (without the batch: `sample_shape`)."""
    n = getattr(backbone, "num_features", None)
    if isinstance(n, int) and n > 0:
        return n
    from ..errors import UsageError
    from ..tasks.checks import RunningLayer, forward_failure, run_on_meta

    running = RunningLayer()
    try:  # on meta tensors: no activation memory, and a clear error if the input does not fit
        out, _ = run_on_meta(backbone, (1, *shape), running=running)
    except Exception as e:
        raise forward_failure(e, (1, *shape), "an input of shape", layer=running.name) from e
    if out.ndim != 2:
        raise UsageError(f"the backbone must return (batch, features); on an input of shape {(1, *shape)} it "
                         f"returned shape {tuple(out.shape)}")
    return int(out.shape[1])
