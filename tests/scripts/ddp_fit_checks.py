"""Two processes that must never hang (tests/test_learner_ddp.py), on a tiny in-memory set.

Run as ``python ddp_fit_checks.py OUT --devices 2`` (hotstart re-launches it for the second
process); ``--cases`` picks some of the cases (all by default). Each process writes
``OUT/rank<r>.json``: what each case returned or the error it raised; rank 0 also writes the
weights its fit ended with, ``OUT/final.safetensors``. The model has BatchNorm: DDP broadcasts
its buffers in the first forward pass after training, the collective that a rank without
validation batches never reached (issue: a validation split smaller than the processes).

- ``small_valid``: 1 validation sample on 2 processes: `validate` before any fit, a fit of 2
  epochs, then `validate` over 5 samples in batches of 2 (3 batches on rank 0, 2 on rank 1).
- ``batch_size``, ``epochs``, ``checkpoint``, ``resume_error``, ``lr``: the processes disagree
  (a batch size, the epochs, a checkpoint folder one process alone sees, a resume folder missing
  on one process, the peak learning rate): every process must raise, naming what differs.
- ``after``: a fit on which they agree still runs after the refusals.
"""
import argparse
import json
import os

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

from hotstart.learner import Learner
from hotstart.learner.backend import make_backend
from hotstart.metrics import MulticlassAccuracy

CASES = ("small_valid", "batch_size", "epochs", "checkpoint", "resume_error", "lr", "after")


def samples(n: int, seed: int) -> TensorDataset:
    """`n` samples of 6 features and 3 classes, the same in every process."""
    g = torch.Generator().manual_seed(seed)
    return TensorDataset(torch.randn(n, 6, generator=g), torch.randint(0, 3, (n,), generator=g))


def model() -> nn.Module:
    """The same initial weights in every process (and in the test's), the global RNG untouched."""
    with torch.random.fork_rng():
        torch.manual_seed(0)
        return nn.Sequential(nn.Linear(6, 8), nn.BatchNorm1d(8), nn.ReLU(), nn.Linear(8, 3))


TRAIN, VALID, VALID5 = samples(16, 1), samples(1, 2), samples(5, 3)


def learner(backend, batch_size: int = 4, train=True) -> Learner:
    """A learner on `TRAIN` (none when not `train`: the test's one-process reference validates
    only) and `VALID`, in batches of 2 (`batch_size` for training)."""
    train = DataLoader(TRAIN, batch_size=batch_size, shuffle=True, drop_last=True) if train else None
    return Learner(model(), train, DataLoader(VALID, batch_size=2), nn.CrossEntropyLoss(),
                   metrics={"accuracy": MulticlassAccuracy(3)}, backend=backend, seed=0, progress=False)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("out")
    parser.add_argument("--devices", type=int, default=2)
    parser.add_argument("--cases", default=",".join(CASES))
    args = parser.parse_args()
    out = os.path.abspath(args.out)
    torch.set_num_threads(1)
    backend = make_backend(accelerator="cpu", devices=args.devices)
    rank = backend.global_rank
    result = {"rank": rank, "world_size": backend.world_size}

    def attempt(name, fn):
        try:
            result[name] = {"ok": fn()}
        except Exception as e:  # noqa: BLE001 - the test reads which error each process raised
            result[name] = {"error": f"{type(e).__name__}: {e}"}

    cases = args.cases.split(",")
    if "small_valid" in cases:
        def small_valid():
            one = learner(backend)
            before = one.validate()
            one.fit(2, 1e-2)
            five = one.validate(DataLoader(VALID5, batch_size=2))
            if rank == 0:
                from safetensors.torch import save_file

                save_file({k: v.contiguous() for k, v in one.task_model().state_dict().items()},
                          os.path.join(out, "final.safetensors"))
            return {"before": before, "history": one.history, "five": five}
        attempt("small_valid", small_valid)
    if "batch_size" in cases:  # 4 batches of 2 an epoch on one process, 2 of 4 on the other
        attempt("batch_size", lambda: learner(backend, batch_size=4 if rank == 0 else 2).fit(1).history)
    if "epochs" in cases:
        attempt("epochs", lambda: learner(backend).fit(1 if rank == 0 else 2).history)
    shared = os.path.join(out, "ckpt")
    if "checkpoint" in cases or "resume_error" in cases:
        learner(backend).fit(1, checkpoint_dir=shared)  # rank 0 writes it; every process sees it
    if "checkpoint" in cases:  # the other process's folder is its own (not shared), and empty
        folder = shared if rank == 0 else os.path.join(out, f"ckpt-rank{rank}")
        attempt("checkpoint", lambda: learner(backend).fit(1, checkpoint_dir=folder, resume=folder).history)
    if "resume_error" in cases:  # a resume folder that one process does not have
        folder = shared if rank == 0 else os.path.join(out, "missing")
        attempt("resume_error", lambda: learner(backend).fit(1, resume=folder).history)
    if "lr" in cases:
        attempt("lr", lambda: learner(backend).fit_one_cycle(1, 1e-2 if rank == 0 else 2e-2).history)
    if "after" in cases:
        attempt("after", lambda: len(learner(backend).fit(1).history))
    with open(os.path.join(out, f"rank{rank}.json"), "w") as f:
        json.dump(result, f)


if __name__ == "__main__":
    main()
