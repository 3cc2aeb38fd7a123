"""`TaskModel`: a backbone plus the task's head, kept apart.

The two stay separate modules (``model.backbone``, ``model.head``) so that fine-tuning can
freeze the backbone, and compiling can compile the backbone alone: the head's shape depends on
the number of classes, the backbone's does not, so a compile cache warmed with 10 classes serves
a run with 37.
"""
from __future__ import annotations

import torch
import torch.nn as nn


class TaskModel(nn.Module):
    def __init__(self, backbone: nn.Module, head: nn.Module):
        super().__init__()
        self.backbone = backbone
        self.head = head

    def forward(self, x):
        if self.compiled_with is not None and x.shape[0] > 1:
            # a dynamic batch dimension: the cached graphs serve every batch size (train, last valid
            # batch, ...); see hotstart/compile_cache/compile.py for the guards that remain
            torch._dynamo.maybe_mark_dynamic(x, 0)
        return self.head(self.backbone(x))

    compiled_with = None  # set by hotstart.compile_cache.compile_backbone
