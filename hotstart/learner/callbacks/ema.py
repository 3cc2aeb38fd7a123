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
average alone.

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

import torch

from ...errors import UsageError
from .base import Callback


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

    ``module`` is the averaged model (None before the first fit); ``updates`` the number of
    optimizer steps averaged so far.
    """

    # after GradientClip (10) and SaveBestModel (55): the averaged weights stay in the model from
    # `before_validate` to the end of `after_epoch`, so SaveBestModel saves the weights it judged
    order = 60

    def __init__(self, decay: float = 0.999, *, use_ema: bool = True, warmup: bool = False):
        if not 0.0 <= float(decay) < 1.0:
            raise UsageError(f"EMA(decay=) must be in [0, 1), got {decay!r}")
        self.decay, self.use_ema, self.warmup = float(decay), bool(use_ema), bool(warmup)
        self.ema = None      # timm's ModelEmaV3, made from the model at the first fit
        self.updates = 0     # optimizer steps averaged so far (timm's `step`)
        self._swapped = False
        self._fitting = False  # validation outside a fit (validate, get_preds) uses the model as it is

    def _make(self):
        from timm.utils import ModelEmaV3

        if self.ema is None:
            self.ema = ModelEmaV3(self.learner.task_model(), decay=self.decay, use_warmup=self.warmup)
        return self.ema

    @property
    def module(self):
        """The averaged model (None before the first fit)."""
        return None if self.ema is None else self.ema.module

    def _train_only(self) -> bool:
        fs = self.learner.fit_state
        return fs is not None and fs.train_only

    def before_fit(self):
        self._make()
        self._fitting = True

    def after_step(self):
        if self._train_only():
            return
        self.ema.update(self.learner.task_model(), step=self.updates)
        self.updates += 1
        # rank 0's averaged floating buffers (BatchNorm's statistics) into every process's average
        # (one message per dtype; nothing in one process)
        with torch.no_grad():
            self.learner.backend.broadcast_([b for b in self.ema.module.buffers() if b.is_floating_point()], src=0)

    def before_validate(self):
        if self._fitting and self.use_ema and self.ema is not None and self.updates and not self._swapped:
            self._swap()

    def after_epoch(self):
        if self._swapped:  # training (and the epoch's checkpoint) go on with the trained weights
            self._swap()

    def after_fit(self):
        from .checkpoint import SaveBestModel

        self._fitting = False
        if self._swapped:  # the fit stopped inside an epoch's end
            self._swap()
        best = self.learner.cb(SaveBestModel)
        if best is not None and best.load_best and best.best_epoch is not None:
            return  # SaveBestModel(load_best=True) has loaded the best epoch's averaged weights
        if self.use_ema and self.ema is not None and self.updates and not self._train_only():
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
        """(tensors, JSON) to store in a checkpoint: the averaged state dict and the update count."""
        self._make()
        tensors = {k: v.detach().cpu().contiguous().clone() for k, v in self.ema.module.state_dict().items()}
        return tensors, {"updates": self.updates, "decay": self.decay}

    def load_checkpoint_state(self, tensors: dict, meta: dict) -> None:
        self._make()
        self.ema.module.load_state_dict(tensors, strict=True)
        self.updates = int(meta["updates"])
