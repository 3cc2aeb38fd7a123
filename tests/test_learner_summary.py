"""`learner.summary()` (issue 11): per-layer output shapes from a meta pass, parameter counts that
add up to the model's, frozen layers shown as such, and the encoded blocks."""
from __future__ import annotations

import io

import pytest
import torch


def _row(text: str, name: str) -> list[str]:
    line = next(line for line in text.splitlines() if line.startswith(name + " ("))
    return line.split()


def test_summary_shapes_counts_and_frozen_layers(make_learner):
    learner = make_learner()
    model = learner.task_model()
    buf = io.StringIO()
    text = learner.summary(batch_size=4, file=buf)
    assert buf.getvalue() == text
    total = sum(p.numel() for p in model.parameters())
    assert f"Total params: {total:,}" in text
    assert f"Trainable params: {total:,}" in text and "Non-trainable params: 0" in text
    assert "input shape: 4 x 1 x 8 x 8" in text  # digits are 1-channel 8x8
    head = _row(text, "head")
    n_classes = len(learner.task.classes)
    assert f"4 x {n_classes}" in " ".join(head)  # the logits' shape, from the meta forward pass
    assert head[-2] == f"{sum(p.numel() for p in model.head.parameters()):,}" and head[-1] == "True"
    assert "Encoded input:" in text and "Encoded target:" in text

    learner.freeze()  # the backbone is frozen except its BatchNorm layers (fastai's train_bn)
    frozen_text = learner.summary(file=io.StringIO())
    trainable = sum(p.numel() for p in model.parameters() if p.requires_grad)
    assert f"Trainable params: {trainable:,}" in frozen_text
    assert f"Non-trainable params: {total - trainable:,}" in frozen_text and trainable < total
    assert _row(frozen_text, "head")[-1] == "True"


def test_summary_allocates_no_activations_and_leaves_the_model_alone(make_learner):
    learner = make_learner()
    before = {k: v.clone() for k, v in learner.task_model().state_dict().items()}
    learner.summary(batch_size=100_000, file=io.StringIO())  # real activations would need GBs
    after = learner.task_model().state_dict()
    assert all(torch.equal(before[k], after[k]) and after[k].device.type == "cpu" for k in before)


def test_summary_without_a_task_is_a_usage_error(make_learner):
    from hotstart.errors import UsageError

    learner = make_learner()
    learner.task = None
    with pytest.raises(UsageError, match="fixed input shape"):
        learner.summary(file=io.StringIO())
