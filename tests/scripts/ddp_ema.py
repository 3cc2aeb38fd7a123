"""EMA across processes: the fits that ``ddp_digits.py --ema-dir DIR`` runs after its own
(tests/test_learner_ddp.py reads what they leave in DIR), so the processes are launched once.

On 300 digits at 8x8 (240 to train: 7 global batches of 2 x 16 an epoch, the same samples as a
one-process run with batches of 32), 2 epochs of one-cycle with ``EMA(decay=0.9)``:

- ``straight``: an MLP, uninterrupted. Each rank writes ``ema-rank<r>.safetensors`` (its
  average) and ``model-rank<r>.safetensors`` (its model after the fit); rank 0 saves the
  learner to ``DIR/model``.
- ``crashed`` then ``resumed``: the same fit with ``checkpoint_every=2``, stopped by an
  exception at epoch 1, batch 4, then continued by a fresh learner with ``resume=``; each rank
  writes ``resumed-ema-rank<r>.safetensors`` and ``resumed-model-rank<r>.safetensors``.
- ``bn``: a tiny CNN with BatchNorm, whose running statistics each process updates from its own
  shard (DDP copies rank 0's into the others at the start of each training forward), with
  ``EMA(use_ema=False)`` (no swapped-in validation that would copy them by accident): each rank
  writes ``bn-ema-rank<r>.safetensors`` and ``bn-model-rank<r>.safetensors``.

Each rank writes its histories and the EMA's update count to ``result-rank<r>.json``.
"""
import json
import os

import torch
import torch.nn as nn

from hotstart import ImageClassificationSingle, tasklearner
from hotstart.learner import EMA, Callback


class Crash(RuntimeError):
    """The simulated kill of the `crashed` fit."""


class CrashAt(Callback):
    def __init__(self, epoch, batch):
        self.at = (epoch, batch)

    def after_batch(self):
        if (self.learner.epoch, self.learner.iter) == self.at:
            raise Crash(f"stopped at epoch {self.at[0]}, batch {self.at[1]}")


def mlp(channels):
    with torch.random.fork_rng():
        torch.manual_seed(0)
        return nn.Sequential(nn.Flatten(), nn.Linear(channels * 64, 32), nn.ReLU(), nn.Linear(32, 10))


def bn_cnn(channels):
    with torch.random.fork_rng():
        torch.manual_seed(0)
        return nn.Sequential(nn.Conv2d(channels, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(),
                             nn.AdaptiveAvgPool2d(2), nn.Flatten(), nn.Linear(32, 10))


def small_digits(data):
    return data.subset(list(range(300)))


def ema_case(data, blocks, folder, devices):
    from safetensors.torch import save_file

    os.makedirs(folder, exist_ok=True)
    task = ImageClassificationSingle(blocks, size=(8, 8), augment=False)
    small = small_digits(data)

    def learner(model, *cbs):
        # fp32 on purpose: the test compares with a one-process fit to float32 rounding (a CPU with
        # bf16 units would otherwise train both in bf16-mixed, whose rounding the sum order moves)
        return tasklearner(task, small, model=model, seed=0, batch_size=16, device="cpu", devices=devices,
                           progress=False, callbacks=[EMA(decay=0.9), *cbs], precision="32-true")

    def write(name, ln):
        rank = ln.backend.global_rank
        ema = ln.cb(EMA)
        for what, module in (("ema", ema.module), ("model", ln.task_model())):
            state = {k: v.detach().clone().contiguous() for k, v in module.state_dict().items()}
            save_file(state, os.path.join(folder, f"{name}{what}-rank{rank}.safetensors"))

    straight = learner(mlp(task.channels))
    straight.fit_one_cycle(2, 1e-2)
    write("", straight)
    straight.save(os.path.join(folder, "model"))

    ckpt = os.path.join(folder, "ckpt")
    crashed = learner(mlp(task.channels), CrashAt(1, 4))
    try:
        crashed.fit_one_cycle(2, 1e-2, checkpoint_dir=ckpt, checkpoint_every=2)
        crashed_at = None
    except Crash as e:
        crashed_at = str(e)
    resumed = learner(mlp(task.channels))
    resumed.fit_one_cycle(2, 1e-2, checkpoint_dir=ckpt, resume=ckpt)
    write("resumed-", resumed)

    bn = tasklearner(task, small, model=bn_cnn(task.channels), seed=0, batch_size=16, device="cpu",
                     devices=devices, progress=False, callbacks=[EMA(decay=0.9, use_ema=False)], precision="32-true")
    bn.fit_one_cycle(2, 1e-2)
    write("bn-", bn)
    result = {"rank": straight.backend.global_rank, "history": straight.history, "updates": straight.cb(EMA).updates,
              "crashed": crashed_at, "resumed_history": resumed.history, "bn_history": bn.history}
    with open(os.path.join(folder, f"result-rank{result['rank']}.json"), "w") as f:
        json.dump(result, f)
