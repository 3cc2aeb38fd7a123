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
    in_chans, size = input_geometry(task)
    nf = num_features(backbone, in_chans, size)
    return TaskModel(backbone, task.head(nf)), {"backbone": backbone_config, "num_features": nf}


def rebuild_with_head(task, config: dict, backbone: nn.Module) -> TaskModel:
    return TaskModel(backbone, task.head(config["num_features"]))


def num_features(backbone: nn.Module, in_chans: int, size) -> int:
    """Width of the backbone's output, from its attribute or a dry run on one zero image."""
    n = getattr(backbone, "num_features", None)
    if isinstance(n, int) and n > 0:
        return n
    from ..errors import UsageError
    from ..tasks.checks import RunningLayer, forward_failure, run_on_meta

    running = RunningLayer()
    try:  # on meta tensors: no activation memory, and a clear error if the input does not fit
        out, _ = run_on_meta(backbone, (1, in_chans, *size), running=running)
    except Exception as e:
        raise forward_failure(e, (1, in_chans, *size), "an input of shape", layer=running.name) from e
    if out.ndim != 2:
        raise UsageError(f"the backbone must return (batch, features); it returned shape {tuple(out.shape)}")
    return int(out.shape[1])
