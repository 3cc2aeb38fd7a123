"""Train on digits with whatever process count the launcher gives (tests/test_learner_ddp.py).

Run as ``python ddp_digits.py OUT --devices 2`` (hotstart re-launches it) or, unchanged, under
``torchrun --nproc-per-node 2 ddp_digits.py OUT`` (or ``--nnodes 2``). Each process prints one
``RESULT {...}`` line: its rank, the history, and every file it opened for writing under OUT.
"""
import argparse
import os
import resource
import sys
import time

T_START = time.time()

import torch
import torch.nn as nn

torch.set_num_threads(1)
parser = argparse.ArgumentParser()
parser.add_argument("out")
parser.add_argument("--devices", type=int, default=None)
parser.add_argument("--epochs", type=int, default=3)
parser.add_argument("--batch-size", type=int, default=16)
parser.add_argument("--model", choices=["mlp", "smallcnn"], default="mlp")
parser.add_argument("--size", type=int, default=8)
parser.add_argument("--no-progress", action="store_true")
parser.add_argument("--lr-find", action="store_true", help="run lr_find before the fit; report its curve")
parser.add_argument("--ema-dir", default=None, help="then run ddp_ema.py's fits with EMA, writing into this folder")
parser.add_argument("--metrics-dir", default=None, help="then run ddp_metrics.py's case, writing into this folder")
args = parser.parse_args()
out = os.path.abspath(args.out)
written = []


def audit(event, a):
    if event == "open" and isinstance(a[0], (str, bytes, os.PathLike)) and str(a[0]).startswith(out):
        flags = a[2] if len(a) > 2 and isinstance(a[2], int) else 0
        if (isinstance(a[1], str) and any(c in a[1] for c in "wax+")) or flags & (os.O_WRONLY | os.O_RDWR):
            written.append(os.path.relpath(str(a[0]), out))


sys.addaudithook(audit)

from hotstart import ImageClassificationSingle, datasets, tasklearner  # noqa: E402


def mlp(channels):
    with torch.random.fork_rng():
        torch.manual_seed(0)
        return nn.Sequential(nn.Flatten(), nn.Linear(channels * 64, 64), nn.ReLU(),
                             nn.Linear(64, 10))


from hotstart.learner import Callback  # noqa: E402
from _result_line import emit_result  # noqa: E402  (this folder is sys.path[0] when run as a script)


class Milestones(Callback):
    """Seconds since the process started (time.time() at import of this script) at each epoch end."""

    def before_fit(self):
        self.ready, self.epoch_ends = time.time() - T_START, []

    def after_epoch(self):
        self.epoch_ends.append(time.time() - T_START)


T_IMPORTED = time.time() - T_START
data, blocks = datasets.load("digits")
task = ImageClassificationSingle(blocks, size=(args.size, args.size), augment=False)
model = mlp(task.channels) if args.model == "mlp" else None
milestones = Milestones()
learner = tasklearner(task, data, model=model, seed=0, batch_size=args.batch_size, device="cpu",
                      devices=args.devices, progress=not args.no_progress, callbacks=[milestones])
found = learner.lr_find(num_it=20) if args.lr_find else None  # restores the model: the fit is unchanged
learner.fit_one_cycle(args.epochs, 1e-2, checkpoint_dir=os.path.join(out, "ckpt"))
learner.save(os.path.join(out, "model"))
# seed= left out: every process draws one, and they must agree on it (the split, the init, learner.seed)
unseeded = tasklearner(task, data, model=mlp(task.channels), batch_size=args.batch_size, device="cpu",
                       devices=args.devices, progress=False)
emit_result({"unseeded_seed": unseeded.seed,
             "rank": learner.backend.global_rank, "world_size": learner.backend.world_size,
                              "history": learner.history, "written": sorted(set(written)),
                              "n_valid": len(learner.valid_loader.dataset), "n_train": len(learner.train_loader.dataset),
                              "imported": T_IMPORTED, "ready": milestones.ready, "epoch_ends": milestones.epoch_ends,
                              "iters_per_epoch": learner.n_iter, "batch_size": args.batch_size,
                              "lr_find": None if found is None else {"losses": found.losses, "suggestion": found.suggestion},
                              "maxrss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024})
if args.metrics_dir:  # every metric over batches shared out among the processes (tests/scripts/ddp_metrics.py)
    from ddp_metrics import write_metrics_case

    write_metrics_case(learner.backend, args.metrics_dir)
if args.ema_dir:  # EMA across processes, in the processes launched already (tests/scripts/ddp_ema.py)
    from ddp_ema import ema_case

    ema_case(data, blocks, args.ema_dir, args.devices)
