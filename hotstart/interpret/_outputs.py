"""One pass of the model over a loader: outputs, activations, targets and per-sample losses."""
from __future__ import annotations

import copy

import torch

from ..errors import UsageTypeError


def per_sample_loss(loss_func, out, y) -> torch.Tensor:
    """The learner's loss for each sample: its own ``reduction="none"``, averaged within a sample."""
    fn = copy.copy(loss_func)
    if not hasattr(fn, "reduction"):
        raise UsageTypeError(f"cannot compute per-sample losses with {type(loss_func).__name__}: it has no `reduction`")
    fn.reduction = "none"
    loss = fn(out, y)
    return loss.reshape(len(out), -1).mean(1) if loss.ndim > 1 else loss


def collect(learner, loader=None, keep=lambda probs: probs, on_batch=None):
    """(kept activations, targets, losses) over `loader` (default: the validation set), in order.

    `keep` reduces each batch's activations before they are stored (e.g. a mask's argmax, so a
    segmentation run never holds every class map of the validation set); `on_batch(probs, y)`
    sees the full activations (e.g. to stream a metric).
    """
    from ..learner.data import set_epoch
    from ..learner.rng import seeded_torch_rng

    learner._setup()
    loader = learner._valid_dl if loader is None else loader
    act = getattr(learner.task, "activation", lambda o: o)
    kept, targets, losses = [], [], []
    learner.model.eval()
    with torch.no_grad(), seeded_torch_rng(learner.seed), learner.model_context():
        set_epoch(learner.valid_loader, 0, learner.seed)
        for batch in loader:
            xb, yb = learner.backend.to_device(batch)
            with learner.backend.autocast():
                out = learner.model(xb).float()
            probs = act(out)
            if on_batch is not None:
                on_batch(probs, yb)
            kept.append(keep(probs).cpu())
            targets.append(yb.cpu())
            losses.append(per_sample_loss(learner.loss_func, out, yb).float().cpu())
    return torch.cat(kept), torch.cat(targets), torch.cat(losses)


def dataset_of(learner, loader=None):
    loader = learner.valid_loader if loader is None else loader
    ds = loader.dataset
    ds.epoch = 0
    return ds
