"""Test-time augmentation: predict on several augmented views of each sample and average, as
fastai's ``Learner.tta`` does: ``probs = lerp(mean over views, plain prediction, beta)``, i.e.
with ``beta=0.25`` three quarters the views' mean and one quarter the un-augmented prediction.

Where the views come from depends on the task:

- a task whose prediction does not move with the image (a label): each view is the validation
  set encoded again in the *training* context, with the task's own random augmentation, drawn
  from a generator derived from the learner's seed (view k always sees the same augmentation);
- a task whose prediction lives on the image grid (a mask, keypoints) says how to undo a view:
  ``task.tta_views(n)`` gives pairs (apply to the encoded batch, undo on the output), e.g. a shift
  by one pixel and the output shifted back, so the views' predictions line up before averaging.

The result holds the probabilities and the learner's metrics (those of its history: its
``metrics=``, by default the task's) with and without TTA.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch

from ..errors import UsageError
from .data import TaskDataset
from .rng import derive_seed


@dataclass
class TTAResult:
    probs: torch.Tensor          # the averaged probabilities (the task's activation of the outputs)
    targets: torch.Tensor        # the encoded targets, in the loader's order
    without: dict                # the learner's metrics on the plain predictions
    with_tta: dict               # the same metrics on `probs`

    def __iter__(self):  # probs, targets = learner.tta()
        return iter((self.probs, self.targets))

    def report(self) -> str:
        return ", ".join(f"{k} {self.without[k]:.4f} -> {self.with_tta[k]:.4f} with TTA" for k in self.with_tta)


def _metrics(learner, probs, targets) -> dict:
    """The learner's metrics (its ``metrics=``, those of its history) on `probs`: the `Metrics`
    callback's objects, scored by `Metrics.score`."""
    from .callbacks.metrics import Metrics

    metrics = learner.cb(Metrics)
    return {} if metrics is None else metrics.score(probs, targets)


def _probs(learner, loader, transform=None, undo=None, epoch: int = 0):
    """(activations, targets) over `loader` through `Learner.run_eval`, optionally through a view
    of each batch (`transform`) and its inverse on the outputs (`undo`)."""
    undo = undo or (lambda out: out)
    return learner.run_eval(loader, transform=transform, epoch=epoch,
                            keep=lambda out, xb, yb: (learner.activation(undo(out)), yb))


def tta(learner, n: int = 4, *, loader=None, beta: float = 0.25, verbose: bool = True) -> TTAResult:
    if int(n) < 1:
        raise UsageError(f"tta: n must be at least 1, got {n!r}")
    task = learner.task
    plain, targets = _probs(learner, loader)  # default: the learner's (set-up) validation loader
    views, undoable = [], task.tta_views(n)
    if undoable is not None:
        for transform, undo in undoable:
            views.append(_probs(learner, loader, transform, undo)[0])
    else:
        raw = learner.valid_loader if loader is None else loader  # the plain DataLoader (its dataset, batch size)
        ds = raw.dataset
        decoded = ds.decoded if isinstance(ds, TaskDataset) else None  # the images in memory, if kept
        aug = TaskDataset(task, (ds.inputs, ds.targets), "training", derive_seed(learner.seed, 7919), decoded=decoded)
        aug_loader = torch.utils.data.DataLoader(aug, batch_size=raw.batch_size, shuffle=False)
        for k in range(n):
            views.append(_probs(learner, aug_loader, epoch=k)[0])  # view k: augmentation epoch k
    probs = torch.lerp(torch.stack(views).mean(0), plain, beta)
    result = TTAResult(probs, targets, _metrics(learner, plain, targets), _metrics(learner, probs, targets))
    if verbose:
        print(f"tta (n={n}): {result.report()}")
    return result

