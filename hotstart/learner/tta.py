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

The result holds the probabilities and the task's metrics with and without TTA.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch

from ..errors import UsageError
from .data import TaskDataset, set_epoch
from .rng import derive_seed, seeded_torch_rng


@dataclass
class TTAResult:
    probs: torch.Tensor          # the averaged probabilities (the task's activation of the outputs)
    targets: torch.Tensor        # the encoded targets, in the loader's order
    without: dict                # the task's metrics on the plain predictions
    with_tta: dict               # the same metrics on `probs`

    def __iter__(self):  # probs, targets = learner.tta()
        return iter((self.probs, self.targets))

    def report(self) -> str:
        return ", ".join(f"{k} {self.without[k]:.4f} -> {self.with_tta[k]:.4f} with TTA" for k in self.with_tta)


def _metrics(task, probs, targets) -> dict:
    out = {}
    for name, metric in (task.metrics() if task is not None else {}).items():
        metric.reset()
        metric.update(probs, targets)
        out[name] = float(metric.compute())
    return out


def _run(learner, loader, transform=None, undo=None):
    """Activations and targets over `loader`, optionally through a view and its inverse."""
    act = getattr(learner.task, "activation", lambda o: o)
    preds, targets = [], []
    for batch in loader:
        xb, yb = learner.backend.to_device(batch)
        if transform is not None:
            xb = transform(xb)
        with learner.backend.autocast():
            out = learner.model(xb).float()
        if undo is not None:
            out = undo(out)
        preds.append(act(out).cpu())
        targets.append(yb.cpu())
    return torch.cat(preds), torch.cat(targets)


def tta(learner, n: int = 4, *, loader=None, beta: float = 0.25, verbose: bool = True) -> TTAResult:
    if int(n) < 1:
        raise UsageError(f"tta: n must be at least 1, got {n!r}")
    learner._setup()
    raw = learner.valid_loader if loader is None else loader  # the plain DataLoader (its dataset, batch size)
    loader = learner._valid_dl if loader is None else loader
    task = learner.task
    learner.model.eval()
    with torch.no_grad(), seeded_torch_rng(learner.seed), learner.model_context():
        set_epoch(learner.valid_loader, 0, learner.seed)
        plain, targets = _run(learner, loader)
        views = []
        if hasattr(task, "tta_views"):
            for transform, undo in task.tta_views(n):
                views.append(_run(learner, loader, transform, undo)[0])
        else:
            ds = raw.dataset
            aug = TaskDataset(task, (ds.inputs, ds.targets), "training", derive_seed(learner.seed, 7919))
            aug_loader = torch.utils.data.DataLoader(aug, batch_size=raw.batch_size, shuffle=False)
            for k in range(n):
                aug.epoch = k
                views.append(_run(learner, aug_loader)[0])
    probs = torch.lerp(torch.stack(views).mean(0), plain, beta)
    result = TTAResult(probs, targets, _metrics(task, plain, targets), _metrics(task, probs, targets))
    if verbose:
        print(f"tta (n={n}): {result.report()}")
    return result

