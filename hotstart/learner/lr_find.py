"""`lr_find`: Leslie Smith's learning-rate range test, as in fastai: ``fit`` plus a callback.

``learner.lr_find()`` is ``learner.fit(n, callbacks=[LRFinder(...)])``: the learning rate grows
exponentially from `start_lr` to `end_lr` over `num_it` training batches (fewer if the loss
diverges), through the learner's own `train_step` and callbacks (a `train_step` or
`compute_loss` override, `GradientClip`, ...). The sweep trains only: it sets its `FitState`
``train_only``, so there is no validation and no epoch end (no history row, no epoch table, no
`SaveBestModel`). `LRFinder` snapshots the model, the optimizer's state and the Recorder's
per-batch losses in `before_fit` and puts them back in `after_fit`, which runs even when the
sweep is cancelled or fails; nothing is written to disk. The sweep does not count as a fit: the
learner's fit state is put back too, so the next fit gets the seed it would have had anyway.
Across processes the loss recorded at each step is the mean over all ranks, so every rank gets
the same curve and the same suggestion.

The suggestion is fastai's "valley" (`valley`): the longest stretch over which the smoothed loss
keeps falling (the longest decreasing subsequence), and the learning rate 2/3 of the way down
it, which is robust to the noise at both ends of the curve.
"""
from __future__ import annotations

import copy
import math
from dataclasses import dataclass, field

from .callbacks.base import Callback, CancelFit


@dataclass
class LRFindResult:
    """What `Learner.lr_find` returns: the sweep's curve and its suggested learning rate.

    ``learner.fit_one_cycle(5, learner.lr_find().suggestion)`` trains at the suggestion;
    ``result.plot()`` draws the curve (log-scale rates) with the suggestion marked, to judge it.

    Attributes:
        lrs: the learning rate of each step of the sweep (the last parameter group's: the head's),
            growing exponentially from ``start_lr``.
        losses: the training loss after each step, smoothed (an exponential moving average with
            fastai's beta 0.98, bias-corrected), one per rate.
        suggestion: fastai's "valley": the rate 2/3 of the way down the longest stretch over
            which the smoothed loss keeps falling; NaN when the sweep recorded no step.
    """

    lrs: list = field(default_factory=list)       # learning rate at each step
    losses: list = field(default_factory=list)    # smoothed training loss at each step
    suggestion: float = math.nan                  # the valley learning rate

    def __str__(self) -> str:
        """One line: the suggestion and the sweep it came from (what ``lr_find`` writes after the
        sweep, so a log shows it too, not only a notebook's plot)."""
        if not self.lrs:
            return "lr_find: no step recorded, no suggestion"
        return (f"lr_find: suggestion {self.suggestion:.1e} (the valley), from {len(self.lrs)} steps at "
                f"{self.lrs[0]:.0e} to {self.lrs[-1]:.1e}, smoothed loss {self.losses[0]:.3f} at the start, "
                f"{min(self.losses):.3f} at its lowest")

    def plot(self, ax=None):
        """The smoothed loss against the learning rate (log scale), the suggestion marked as a red
        dot; into the matplotlib axis `ax` (None: a new 6x4 inch figure). Returns the axis."""
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


class LRFinder(Callback):
    """The sweep of `lr_find`: an exponential schedule, the smoothed loss after each step, and the
    model, optimizer and Recorder put back as they were when the fit ends.

    It stops (`CancelFit`) after `num_it` steps, or when the smoothed loss exceeds `stop_div`
    times its best so far or is not finite."""

    order = 100  # after every other callback has seen the batch
    sweep = True  # the fit is a sweep (FitState.train_only), known before any callback's before_fit

    def __init__(self, start_lr=1e-7, end_lr=10.0, num_it=100, beta=0.98, stop_div=4.0):
        self.start_lr, self.end_lr, self.num_it = float(start_lr), float(end_lr), int(num_it)
        self.beta, self.stop_div = beta, stop_div
        self.result = LRFindResult()

    def schedule(self, step: int, total: int):
        """The learning rate of optimizer step `step`: `start_lr` at 0, `end_lr` at `num_it - 1`."""
        n = max(1, self.num_it - 1)
        return self.start_lr * (self.end_lr / self.start_lr) ** (step / n), None

    def before_fit(self):
        learner = self.learner
        model = learner.task_model()
        self._model = copy.deepcopy(model.state_dict())
        self._training = model.training
        self._opt = learner.opt
        self._opt_state = copy.deepcopy(learner.opt.state_dict())
        self._n_losses = len(learner.recorder.losses)
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

    def after_fit(self):
        learner = self.learner
        model = learner.task_model()
        model.load_state_dict(self._model)
        model.zero_grad(set_to_none=True)
        model.train(self._training)
        learner.opt = self._opt  # NonFiniteGuard drops a diverged fit's optimizer: not this one's
        learner.opt.load_state_dict(self._opt_state)
        rec = learner.recorder
        del rec.losses[self._n_losses:], rec.lrs[self._n_losses:]
        self.result.suggestion = valley(self.result.lrs, self.result.losses)


def lr_find(learner, start_lr=1e-7, end_lr=10.0, num_it=100, beta=0.98, stop_div=4.0) -> LRFindResult:
    """Run the sweep (see the module's docstring) and return its curve and suggestion."""
    from .callbacks.nan_guard import NonFiniteLossError

    finder = LRFinder(start_lr, end_lr, num_it, beta, stop_div)
    before, had_optimizer = learner.fit_state, learner.opt is not None
    n_batches = len(learner.train_loader) if learner.train_loader is not None else 1
    try:
        learner.fit(-(-int(num_it) // max(1, n_batches)), start_lr, schedule=finder.schedule, callbacks=[finder])
    except NonFiniteLossError:  # the loss diverged and the guard saw it first: the sweep is over
        pass
    finally:
        learner.fit_state = before  # the sweep is not a fit: the next one is numbered (and seeded) as without it
        if not had_optimizer:
            learner.opt = None  # the optimizer made for the sweep is not kept
    return finder.result


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
