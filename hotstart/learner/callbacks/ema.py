"""`EMA`: an exponential moving average of the weights, on timm's ``ModelEmaV3``.

``callbacks=[EMA(decay=0.999)]`` keeps, next to the trained model, a copy whose every floating
tensor of the state dict (parameters and BatchNorm statistics) follows
``ema = decay * ema + (1 - decay) * model`` after each optimizer step — timm's update, called as
timm's own training script calls it (``update(model, step=updates)``: the first update copies the
model). With `use_ema` (the default):

- each epoch's validation runs on the averaged weights (swapped in for the validation phase and
  the epoch's end, where `SaveBestModel` saves them, and swapped back before the epoch's
  checkpoint and the next epoch's training, so training itself is unchanged);
- when the fit ends, the model holds the averaged weights, so `validate`, `predict`, `save` and
  `export` use them, and the next fit starts from them (fastai/fastxtend's ``replace_weights``);
  after ``SaveBestModel(load_best=True)`` the model keeps the best epoch's averaged weights.

``use_ema=False`` only keeps the average (``ema.module``), for you to use or save.

Checkpoints (``fit(checkpoint_dir=)``) store the average and its update count
(`checkpoint_state` / `load_checkpoint_state`, read by learner/checkpoint/), so a resumed fit
averages on exactly as an uninterrupted one. lr_find's sweep (a train-only fit) leaves the
average alone. A fit that diverges (`NonFiniteGuard`'s error) leaves the model where the guard
put it back, and the average starts again from there at the next fit.

``tasklearner`` adds one by default for single-label image classification (``ema=``, the task's
``default_ema``); a second one for one fit is refused.

Across processes every rank updates its own average after its optimizer step. The gradients are
all-reduced before the step, so the weights are identical on every rank, but BatchNorm's running
statistics are not: each process updates them from its own shard, and DDP copies the first
process's into the others only at the start of the next training forward. So after each update
the average's floating buffers are broadcast from rank 0 (one message per dtype; the average of
rank 0's statistics, which DDP treats as the model's): every rank then holds the same average,
bit for bit, at every step (tests/test_learner_ddp.py, tests/scripts/ddp_ema.py). Without it a
rank's average drifts from rank 0's with ``use_ema=False``, and with `use_ema` it was put right
only by accident, by DDP's buffer copy during the swapped-in validation.
"""
from __future__ import annotations

import sys

import torch

from ...errors import UsageError
from .base import Callback


DEFAULT_MIN_STEPS = 100
"""The shortest fit, in optimizer steps, that a default average (`tasklearner`'s ``ema=None``)
averages: the average trails the weights by a share of the fit that shrinks as the fit grows
(about ``k ** (2/3)`` of its k steps), so a very short fit ends on weights worse than its last.
Measured 2026-12-07 (2-core EPYC, the small CNN on the digits at 8x8, final validation accuracy,
seeds 0-2): 36 steps of 16 at lr 1e-2, 0.562, 0.667, 0.500 averaged against 0.729, 0.708, 0.667;
at the default rate 0.938, 0.792, 0.812 against 0.958, 0.917, 0.875; 72 and 75 steps were even
(0.969-0.990 and 0.960-0.980 either way); at 225 steps (resnet10t, 32x32) the average reached the
accuracy an epoch sooner (tasks/classification.py)."""


class EMA(Callback):
    """An exponential moving average of the weights (timm's ``ModelEmaV3``), validated on and
    kept when the fit ends: ``callbacks=[EMA(decay=0.999)]`` (the module docstring says when the
    weights are swapped, and how checkpoints and several processes keep it exact).

    Args:
        decay: in [0, 1) (else a `UsageError`); each optimizer step moves the average
            ``1 - decay`` of the way to the model: 0.999 averages over roughly the last 1,000
            steps, so it suits fits of several thousand steps; a fit of 200 steps wants ~0.99.
        use_ema: validate on the average during the fit and leave it in the model at the end
            (the default); False only keeps it in ``ema.module`` for you.
        warmup: timm's warmup of the decay: an update after k earlier ones uses
            ``1 - k ** (-2/3)``, capped at `decay` (0.78 after 10 updates, 0.95 after 100, 0.99
            after 1,000), so the average is not held for thousands of steps near the weights it
            started from.
        warmup_power: the exponent of that warm-up (timm's ``warmup_power``, 2/3).
        min_steps: a fit of fewer optimizer steps is not averaged (nor validated on the average,
            nor left with it); 0 averages every fit. `tasklearner`'s default average uses
            `DEFAULT_MIN_STEPS`.
        said_as: where the average comes from ("ImageClassificationSingle's default", "as
            asked"), to say on each fit's first line whether it averages (learner/choices.py);
            None says nothing (an `EMA` of your own among the callbacks).

    ``module`` is the averaged model (None before the first fit that averages); ``updates`` the
    number of optimizer steps averaged so far.
    """

    # after GradientClip (10) and SaveBestModel (55): the averaged weights stay in the model from
    # `before_validate` to the end of `after_epoch`, so SaveBestModel saves the weights it judged
    order = 60

    def __init__(self, decay: float = 0.999, *, use_ema: bool = True, warmup: bool = False,
                 warmup_power: float = 2 / 3, min_steps: int = 0, said_as: str | None = None):
        if not 0.0 <= float(decay) < 1.0:
            raise UsageError(f"EMA(decay=) must be in [0, 1), got {decay!r}")
        if not float(warmup_power) > 0.0:
            raise UsageError(f"EMA(warmup_power=) must be positive, got {warmup_power!r}")
        if int(min_steps) < 0:
            raise UsageError(f"EMA(min_steps=) must be 0 or more, got {min_steps!r}")
        self.decay, self.use_ema, self.warmup = float(decay), bool(use_ema), bool(warmup)
        self.warmup_power, self.min_steps, self.said_as = float(warmup_power), int(min_steps), said_as
        self.ema = None      # timm's ModelEmaV3, made from the model at the first fit
        self.updates = 0     # optimizer steps averaged so far (timm's `step`)
        self._swapped = False
        # whether the current fit averages: not lr_find's sweep, not a fit shorter than `min_steps`,
        # never outside a fit (validate and get_preds use the model as it is)
        self._averaging = False

    def _make(self):
        from timm.utils import ModelEmaV3

        if self.ema is None:
            self.ema = ModelEmaV3(self.learner.task_model(), decay=self.decay, use_warmup=self.warmup,
                                  warmup_power=self.warmup_power)
        return self.ema

    @property
    def module(self):
        """The averaged model (None before the first fit that averages)."""
        return None if self.ema is None else self.ema.module

    def before_fit(self):
        others = [c for c in self.learner.cbs if isinstance(c, EMA) and c is not self]
        if others:  # e.g. fit(callbacks=[EMA()]) on a learner that averages by default
            raise UsageError("two EMA callbacks would fight over the model's weights: give the learner one "
                             "(tasklearner(ema=False) turns off the task's default average)")
        fs = self.learner.fit_state
        self._averaging = not fs.train_only and fs.total_steps >= self.min_steps
        if self._averaging:  # the copy of the model is made by the first fit that averages
            self._make()
        if self.said_as is not None and fs.train_only:  # lr_find's sweep: no average, and no word of the last fit's
            self.learner.choices.pop("ema", None)
        elif self.said_as is not None:
            self._say(fs.total_steps)

    def _say(self, steps: int) -> None:
        """This fit's entry of the choices line (learner/choices.py), for an average made by default."""
        from ..choices import Choice

        if self._averaging:
            why = (f"{self.said_as}: validated on and kept, an average of the weights with timm's warm-up of the "
                   "decay; ema=False to turn off")
            self.learner.choices["ema"] = Choice(f"{self.decay:g}", why)
        else:
            self.learner.choices["ema"] = Choice("off", f"{self.said_as} averages fits of {self.min_steps} steps "
                                                        f"or more, this one has {steps}; ema=True to average it")

    def after_step(self):
        if not self._averaging:
            return
        self.ema.update(self.learner.task_model(), step=self.updates)
        self.updates += 1
        # rank 0's averaged floating buffers (BatchNorm's statistics) into every process's average
        # (one message per dtype; nothing in one process)
        with torch.no_grad():
            self.learner.backend.broadcast_([b for b in self.ema.module.buffers() if b.is_floating_point()], src=0)

    def before_validate(self):
        if self._averaging and self.use_ema and self.ema is not None and self.updates and not self._swapped:
            self._swap()

    def after_epoch(self):
        if self._swapped:  # training (and the epoch's checkpoint) go on with the trained weights
            self._swap()

    def after_fit(self):
        from .checkpoint import SaveBestModel
        from .nan_rollback import NonFiniteLossError

        averaged, self._averaging = self._averaging, False
        best = self.learner.cb(SaveBestModel)
        best_loaded = best is not None and best.load_best and best.best_epoch is not None
        if self._swapped:  # the fit stopped inside an epoch's end (a callback before this one cancelled it)
            if best_loaded:  # SaveBestModel (55) has loaded the best epoch over the average: keep it,
                self.ema.module.load_state_dict(self.learner.task_model().state_dict())  # and average on from it
                self._swapped = False
            else:
                self._swap()
        # after_fit runs in the loop's `finally`: a fit that diverged is ending with the guard's
        # error. The guard has put the model back to a state that works, and the average has taken
        # in the steps since (non-finite, or on the way there): the model keeps the guard's state,
        # and the average starts again from it at the next fit.
        if isinstance(sys.exc_info()[1], NonFiniteLossError):
            self.ema, self.updates = None, 0
            return
        if best_loaded:
            return  # SaveBestModel(load_best=True) has loaded the best epoch's averaged weights
        if averaged and self.use_ema and self.ema is not None and self.updates:
            self.learner.task_model().load_state_dict(self.ema.module.state_dict())

    @torch.no_grad()
    def _swap(self):
        """Exchange the model's and the average's tensors in place (twice is the identity)."""
        model = self.learner.task_model().state_dict()
        for k, avg in self.ema.module.state_dict().items():
            here = model[k]
            tmp = here.clone()
            here.copy_(avg)
            avg.copy_(tmp)
        self._swapped = not self._swapped

    # --- checkpoints (learner/checkpoint/) ----------------------------------------------------
    def checkpoint_state(self) -> tuple[dict, dict]:
        """(tensors, JSON) to store in a checkpoint: the averaged state dict and the update count.
        Before any fit has averaged, the average would be a copy of the model (what timm's
        ModelEmaV3 starts from), so the model's own tensors are stored, without making the copy
        (nor importing timm: 0.7 s in a checkpoint's first write, where a fit is short)."""
        source = self.learner.task_model() if self.ema is None else self.ema.module
        tensors = {k: v.detach().cpu().contiguous().clone() for k, v in source.state_dict().items()}
        return tensors, {"updates": self.updates, "decay": self.decay}

    def load_checkpoint_state(self, tensors: dict, meta: dict) -> None:
        self._make()
        self.ema.module.load_state_dict(tensors, strict=True)
        self.updates = int(meta["updates"])
