"""One pass of the model over a loader: outputs, activations, targets and per-sample losses."""
from __future__ import annotations

import copy

import torch

from ..errors import UsageTypeError


def per_sample_loss(loss_func, out, y) -> torch.Tensor:
    """The learner's loss for each sample: its own ``reduction="none"``, averaged within a sample.

    A loss without ``reduction``, or one that has it but returns fewer values than samples (its
    forward reduces whatever ``reduction`` says), is a `UsageTypeError` naming the loss: the
    interpretation ranks samples by their losses, and cannot from a single number."""
    name = type(loss_func).__name__
    honour = (f"give {name} a `reduction` attribute that its forward honours: with reduction='none' it must "
              f"return one loss per sample (torch's losses do)")
    fn = copy.copy(loss_func)
    if not hasattr(fn, "reduction"):
        raise UsageTypeError(f"cannot compute per-sample losses with {name}: it has no `reduction`; {honour}")
    fn.reduction = "none"
    loss = fn(out, y)
    if not torch.is_tensor(loss) or loss.ndim == 0 or loss.shape[0] != len(out):
        got = f"shape {tuple(loss.shape)}" if torch.is_tensor(loss) else type(loss).__name__
        raise UsageTypeError(f"cannot compute per-sample losses with {name}: with reduction='none' it returned "
                             f"{got} for a batch of {len(out)}, so its forward ignores `reduction`; {honour}")
    return loss.reshape(len(out), -1).mean(1) if loss.ndim > 1 else loss


def collect(learner, loader=None, keep=lambda probs: probs, on_batch=None):
    """(kept activations, targets, losses) over `loader` (default: the validation set), in order.

    `keep` reduces each batch's activations before they are stored (e.g. a mask's argmax, so a
    segmentation run never holds every class map of the validation set); `on_batch(probs, y)`
    sees the full activations (e.g. to stream a metric).
    """
    def keep_batch(out, xb, yb):
        probs = learner.activation(out)
        if on_batch is not None:
            on_batch(probs, yb)
        return keep(probs), yb, per_sample_loss(learner.loss_func, out, yb).float()

    return learner.run_eval(loader, keep=keep_batch)


def dataset_of(learner, loader=None):
    loader = learner.valid_loader if loader is None else loader
    ds = loader.dataset
    ds.epoch = 0
    return ds
