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
    """A backbone and the task's head, as two modules: ``model(x)`` is ``head(backbone(x))``.

    `tasklearner` builds one for a backbone and a head (models/builder.py's `with_head`):
    ``backbone`` a timm model, hotstart's small CNN or your module; ``head`` the task's, sized to the
    backbone's number of features (a Linear to the classes, ...). Kept
    apart so that `Learner.freeze` trains the head alone, the layer groups give the backbone a
    lower learning rate than the head, and the compile cache compiles the backbone alone: its
    shapes do not depend on the number of classes, so a cache warmed with 10 classes serves a run
    with 37.

    Args:
        backbone: the feature extractor.
        head: maps the backbone's features to the task's outputs.
    """

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
