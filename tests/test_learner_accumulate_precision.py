"""Gradient accumulation and bf16 mixed precision on CPU (issue 14, build 4)."""
import pytest
import torch
import torch.nn as nn

from hotstart import ImageClassificationSingle, tasklearner
from hotstart.learner import Callback


def _mlp(channels, hidden=32, seed=0):
    with torch.random.fork_rng():  # the same initial weights every time, global RNG untouched
        torch.manual_seed(seed)
        return nn.Sequential(nn.Flatten(), nn.Linear(channels * 64, hidden), nn.ReLU(), nn.Linear(hidden, 10))


class StepWeights(Callback):
    order = 100

    def __init__(self):
        self.states, self.lrs = [], []

    def after_step(self):
        self.states.append([p.detach().clone() for p in self.learner.model.parameters()])
        self.lrs.append(self.learner.opt.param_groups[0]["lr"])


def test_accumulate_4_of_16_matches_batches_of_64(digits, small_task):
    data, _ = digits
    train, valid = data.subset(list(range(256))), data.subset(list(range(256, 320)))

    def run(batch_size, accumulate):
        rec = StepWeights()
        learner = tasklearner(small_task, train, validdata=valid, model=_mlp(small_task.channels), seed=0,
                              progress=False, batch_size=batch_size, optimizer="sgd",
                              precision="32-true")  # fp32 on purpose: equal to float32 rounding (bf16 would round apart)
        learner.fit_one_cycle(2, 0.1, accumulate=accumulate, callbacks=[rec])
        return rec, learner

    big, big_learner = run(64, 1)
    acc, acc_learner = run(16, 4)
    assert len(big.states) == len(acc.states) == 8  # 256 / 64 = 4 optimizer steps an epoch, both ways
    assert acc.lrs == pytest.approx(big.lrs, rel=1e-12)  # the schedule counts optimizer steps
    for a, b in zip(acc.states, big.states):
        for pa, pb in zip(a, b):
            torch.testing.assert_close(pa, pb, rtol=0, atol=1e-5)
    assert len(acc_learner.recorder.losses) == 4 * len(big_learner.recorder.losses)  # a loss per batch
    assert acc_learner.history[-1]["train_loss"] == pytest.approx(big_learner.history[-1]["train_loss"], rel=1e-4)


def test_accumulate_steps_at_the_end_of_an_uneven_epoch(make_learner, small_task):
    rec = StepWeights()
    learner = make_learner(batch_size=16, model=_mlp(small_task.channels))  # 160 digits: 10 batches
    learner.fit(1, 1e-3, accumulate=4, callbacks=[rec])
    assert len(rec.states) == 3 and learner.opt_step == 3  # 4 + 4 + 2
    with pytest.raises(ValueError, match="accumulate"):
        learner.fit(1, accumulate=0)


def test_bf16_mixed_on_cpu_trains_digits(digits):
    data, blocks = digits
    task = ImageClassificationSingle(blocks, size=(8, 8), augment=False)

    model = _mlp(task.channels, hidden=128)
    seen = set()  # the loss gets an fp32 output; inside, the layers compute in bf16

    def record(mod, inp, out):  # the task's shape check runs the model on meta tensors first: not those
        if out.device.type != "meta":
            seen.add(out.dtype)

    model[-1].register_forward_hook(record)
    learner = tasklearner(task, data, model=model, seed=0, progress=False, batch_size=32, precision="bf16-mixed")
    assert type(learner.backend).__name__ == "PlainBackend"  # torch.autocast: no Fabric (mixed_precision.py)
    learner.fit_one_cycle(2, 3e-2)
    assert seen == {torch.bfloat16}  # the forward pass ran under bf16 autocast
    assert learner.validate()["accuracy"] >= 0.95
    assert all(p.dtype == torch.float32 for p in learner.model.parameters())  # fp32 master weights
