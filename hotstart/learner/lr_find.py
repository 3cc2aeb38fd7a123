"""`lr_find`: Leslie Smith's learning-rate range test, as in fastai.

The learning rate grows exponentially from `start_lr` to `end_lr` over `num_it` training batches
(fewer if the loss diverges). Each batch goes through the learner's own `train_step` with its
callbacks (a `train_step` or `compute_loss` override, `GradientClip`, ...), with the events of a
fit's training phase: before_fit, before_train, the batch events, after_train, after_fit. There
is no validation and no epoch ends, so no history row is written; the Recorder's per-batch losses
are put back as they were. The model's state is kept in memory and restored afterwards, the
optimizer is a temporary one (the learner's own optimizer and its state are untouched), and
nothing is written to disk. Across processes the loss recorded at each step is the mean over all
ranks, so every rank gets the same curve and the same suggestion.

The suggestion is fastai's "valley": the longest stretch over which the smoothed loss keeps
falling (the longest decreasing subsequence), and the learning rate 2/3 of the way down it,
which is robust to the noise at both ends of the curve.
"""
from __future__ import annotations

import copy
import math
from dataclasses import dataclass, field

from .callbacks.base import Callback, CancelFit
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


class _LRFinder(Callback):
    """Records the smoothed loss after each step; stops after `num_it` steps or when it diverges."""

    order = 100  # after every other callback has seen the batch

    def __init__(self, result, num_it, beta, stop_div):
        self.result, self.num_it, self.beta, self.stop_div = result, num_it, beta, stop_div
        self.avg, self.best, self.step = 0.0, math.inf, 0

    def after_batch(self):
        learner = self.learner
        self.step += 1
        # the mean over all processes: every rank then stops at the same step and suggests the same
        # rate (a rank stopping alone would leave the others waiting in the gradient all-reduce)
        total, n = learner.backend.all_reduce_sum(float(learner.loss.detach()), 1.0)
        value = total / n
        if not math.isfinite(value):
            raise CancelFit("the loss diverged")
        self.avg = self.beta * self.avg + (1 - self.beta) * value
        smooth = self.avg / (1 - self.beta ** self.step)
        self.result.lrs.append(learner.opt.param_groups[-1]["lr"])
        self.result.losses.append(smooth)
        self.best = min(self.best, smooth)
        if smooth > self.stop_div * self.best or self.step >= self.num_it:
            raise CancelFit("lr_find is done")


def lr_find(learner, start_lr=1e-7, end_lr=10.0, num_it=100, beta=0.98, stop_div=4.0) -> LRFindResult:
    from .callbacks.nan_guard import NonFiniteLossError

    learner._setup()
    model = learner.task_model()
    saved = copy.deepcopy(model.state_dict())
    was_training = model.training
    rec = learner.recorder
    saved_rec = list(rec.losses), list(rec.lrs)
    fit_attrs = ("opt", "schedule", "accumulate", "n_epoch", "n_iter", "total_steps", "train_iter", "opt_step",
                 "fit_seed", "epoch", "steps_per_epoch")
    saved_attrs = {k: getattr(learner, k) for k in fit_attrs if hasattr(learner, k)}
    result = LRFindResult()
    finder = _LRFinder(result, num_it, beta, stop_div)
    n = max(1, num_it - 1)
    seed = derive_seed(learner.seed, 10_000 + learner._fits)
    try:
        with seeded_torch_rng(seed, learner.device), learner.model_context(), learner.added_cbs([finder]):
            learner.opt = learner.make_optimizer(start_lr, None)  # a temporary optimizer, not the learner's
            model.zero_grad(set_to_none=True)  # no stale gradients from a fit that stopped mid-batch
            learner.schedule = lambda step, total: (start_lr * (end_lr / start_lr) ** (step / n), None)
            learner.accumulate, learner.n_iter = 1, len(learner._train_dl)
            learner.n_epoch = -(-num_it // learner.n_iter)
            learner.steps_per_epoch, learner.total_steps = learner.n_iter, num_it
            learner.train_iter, learner.opt_step, learner.fit_seed = 0, 0, seed
            try:
                learner.event("before_fit")
                for epoch in range(learner.n_epoch):
                    learner.epoch = epoch
                    learner._run_phase(train=True)
            except (CancelFit, NonFiniteLossError):  # done, or the loss diverged (the guard saw it first)
                pass
            finally:
                learner.event("after_fit")
    finally:
        model.load_state_dict(saved)
        model.zero_grad(set_to_none=True)
        model.train(was_training)
        rec.losses[:], rec.lrs[:] = saved_rec
        for k in fit_attrs:
            if k in saved_attrs:
                setattr(learner, k, saved_attrs[k])
            elif k != "opt":
                learner.__dict__.pop(k, None)
        if "opt" not in saved_attrs:
            learner.opt = None
    result.suggestion = valley(result.lrs, result.losses)
    return result


def valley(lrs, losses) -> float:
    """fastai's valley: the longest decreasing run (subsequence) of the loss; the rate 2/3 of the way down it."""
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
