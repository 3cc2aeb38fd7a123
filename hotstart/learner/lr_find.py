"""`lr_find`: Leslie Smith's learning-rate range test, as in fastai.

The learning rate grows exponentially from `start_lr` to `end_lr` over `num_it` training batches
(fewer if the loss diverges). The model's and optimizer's state are kept in memory and restored
afterwards; nothing is written to disk. The suggestion is the "valley": the middle of the longest
stretch where the smoothed loss keeps falling, which is robust to the noise at both ends.
"""
from __future__ import annotations

import copy
import math
from dataclasses import dataclass, field

import torch

from .data import set_epoch
from .rng import derive_seed, seeded_torch_rng


@dataclass
class LRFindResult:
    lrs: list = field(default_factory=list)       # learning rate at each step
    losses: list = field(default_factory=list)    # smoothed training loss at each step
    suggestion: float = math.nan                  # the valley learning rate

    def plot(self, ax=None):
        import matplotlib.pyplot as plt

        if ax is None:
            _, ax = plt.subplots(figsize=(6, 4))
        ax.plot(self.lrs, self.losses)
        ax.set_xscale("log")
        ax.set_xlabel("learning rate")
        ax.set_ylabel("loss (smoothed)")
        if math.isfinite(self.suggestion):
            i = min(range(len(self.lrs)), key=lambda k: abs(math.log(self.lrs[k]) - math.log(self.suggestion)))
            ax.plot([self.suggestion], [self.losses[i]], "ro", label=f"valley {self.suggestion:.2e}")
            ax.legend()
        return ax


def lr_find(learner, start_lr=1e-7, end_lr=10.0, num_it=100, beta=0.98, stop_div=4.0) -> LRFindResult:
    learner._setup()
    model = learner._task_model()
    saved = copy.deepcopy(model.state_dict())
    was_training = model.training
    result = LRFindResult()
    try:
        with seeded_torch_rng(derive_seed(learner.seed, 10_000 + learner._fits)), learner.model_context():
            opt = learner.make_optimizer(start_lr, None)
            model.zero_grad(set_to_none=True)  # no stale gradients from a fit that stopped mid-batch
            model.train()
            avg, best, step = 0.0, math.inf, 0
            epoch = 0
            while step < num_it:
                set_epoch(learner.train_loader, epoch, learner.seed)
                for batch in learner._train_dl:
                    lr = start_lr * (end_lr / start_lr) ** (step / max(1, num_it - 1))
                    for g in opt.param_groups:
                        g["lr"] = lr
                    xb, yb = learner.backend.to_device(batch)
                    with learner.backend.autocast():
                        loss = learner.compute_loss(learner.model(xb), yb)
                    learner.backend.backward(loss)
                    opt.step()
                    opt.zero_grad(set_to_none=True)
                    value = float(loss.detach())
                    step += 1
                    if not math.isfinite(value):
                        break
                    avg = beta * avg + (1 - beta) * value
                    smooth = avg / (1 - beta ** step)
                    result.lrs.append(lr)
                    result.losses.append(smooth)
                    best = min(best, smooth)
                    if smooth > stop_div * best or step >= num_it:
                        break
                else:
                    epoch += 1
                    continue
                break
    finally:
        model.load_state_dict(saved)
        model.train(was_training)
    result.suggestion = valley(result.lrs, result.losses)
    return result


def valley(lrs, losses) -> float:
    """fastai's valley: the longest decreasing run of the loss; 2/3 of the way down it."""
    n = len(losses)
    if n < 3:
        return lrs[0] if lrs else math.nan
    run = [1] * n
    start = list(range(n))
    for i in range(1, n):  # longest strictly decreasing subsequence ending at i
        for j in range(i):
            if losses[i] < losses[j] and run[j] + 1 > run[i]:
                run[i], start[i] = run[j] + 1, start[j]
    end = max(range(n), key=lambda i: run[i])
    lo = start[end]
    idx = lo + int((end - lo) * 2 / 3)
    return float(lrs[idx])
