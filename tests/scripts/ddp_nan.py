"""A NaN loss on one rank of 2 (tests/test_learner_ddp.py): every rank must stop, none may hang.

Run as ``python ddp_nan.py --devices 2`` (hotstart re-launches it for the second process). Rank 1's
loss is made NaN, first at a training batch, then (in a second fit) at a validation batch. Each
process prints one ``RESULT {...}`` line with the error message it stopped with in each case.
"""
import argparse

import torch
import torch.nn as nn

torch.set_num_threads(1)
parser = argparse.ArgumentParser()
parser.add_argument("--devices", type=int, default=2)
args = parser.parse_args()

from hotstart import ImageClassificationSingle, datasets, tasklearner  # noqa: E402
from hotstart.learner import Callback  # noqa: E402
from _result_line import emit_result  # noqa: E402  (this folder is sys.path[0] when run as a script)
from hotstart.learner.callbacks.nan_guard import NonFiniteLossError  # noqa: E402


class NanOnRank1(Callback):
    """Rank 1's loss becomes NaN at `batch` of the phase `phase` (runs before the guard)."""
    order = -30

    def __init__(self):
        self.phase, self.batch = None, None

    def after_loss(self):
        learner = self.learner
        phase = "train" if learner.training else "valid"
        if learner.backend.global_rank == 1 and phase == self.phase and learner.iter == self.batch:
            learner.loss = learner.loss * float("nan")


data, blocks = datasets.load("digits")
task = ImageClassificationSingle(blocks, size=(8, 8), augment=False)
with torch.random.fork_rng():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Flatten(), nn.Linear(task.channels * 64, 32), nn.ReLU(), nn.Linear(32, 10))
nan = NanOnRank1()
learner = tasklearner(task, data, model=model, seed=0, batch_size=16, device="cpu", devices=args.devices,
                      progress=False, callbacks=[nan])
errors = {}
for phase, batch in (("train", 3), ("valid", 1)):
    nan.phase, nan.batch = phase, batch
    try:
        learner.fit(1, 1e-3)
        errors[phase] = None
    except NonFiniteLossError as e:
        errors[phase] = str(e)
emit_result({"rank": learner.backend.global_rank, "world_size": learner.backend.world_size, "errors": errors})
