"""A block of the user's own, end to end: the encoded block's declared ``shape()`` is what the
backbone is measured on, so a backbone for a vector (no ``num_features`` attribute) gets its head
and trains. Before, the width was measured on a made-up 3 x 64 x 64 image, and tasklearner failed
with "it returned shape (1, 3, 64, 32)"."""
from __future__ import annotations

import torch.nn as nn

from hotstart import tasklearner
from vector_blocks import Vector, VectorClassification, digit_vectors  # tests/ is on sys.path


class MLP(nn.Module):  # no num_features: the learner measures the width on the block's shape
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(64, 48), nn.ReLU(), nn.Linear(48, 32), nn.ReLU())

    def forward(self, x):
        return self.body(x)


def test_a_backbone_for_a_users_vector_block_is_measured_on_its_shape_and_learns_the_digits():
    (xs, ys), label = digit_vectors(600)
    learner = tasklearner(VectorClassification((Vector(64), label)), (xs, ys), backbone=MLP(), seed=0,
                          progress=False)
    assert learner.model.head.in_features == 32
    learner.fit_one_cycle(6, 1e-2)
    assert learner.history[-1]["accuracy"] >= 0.85, learner.history[-1]
