"""`NonFiniteGuard`: stop a fit that diverges, and leave a model that still works.

What it checks:
- the loss must be finite (in training and in validation);
- the buffers (BatchNorm's running statistics) must be finite: a diverging fit can overflow
  them while the loss is still finite (in training, BatchNorm normalizes with the batch's own
  statistics), and the model would only fail later, in validation or after it was saved;
- the gradients must be finite, except under fp16 mixed precision: there the gradients are still
  scaled at that point, and an infinite one is what the GradScaler handles, by skipping the step
  and lowering the scale. The guard then stops only when the scaler gives up: its scale has
  fallen below `min_scale` (every step for a long while was skipped).

When it checks: without a device-to-host sync per batch. Each training batch adds its loss's
"is finite" flag to a list kept on the device (no sync); every `check_every` optimizer steps, at
the last step of each epoch's training and before a checkpoint is written, one check reads the
flags, the gradients' and the buffers' finiteness together (one sync), and in validation one
check in `after_validate`. On a GPU a sync per batch stalls the pipeline (the host waits for the
device before it can queue the next batch); nanoGPT syncs once per log interval for the same
reason. ``check_every=1`` checks every batch before its optimizer step, as the guard did before.

When a check fails, the model it leaves works: nan_rollback.py puts it back to the last checked
state (or, if that one does not work either, to the last epoch that validated), names the first
layer whose output or gradient became non-finite, and raises `NonFiniteLossError`.

With several processes, every process decides together: the check is one all-reduce (of the
first bad batch's position, or nothing), at the same steps on every process (every rank runs
the same number of training batches); in validation, whose shards may differ by a batch, once
in `after_validate`. A NaN loss on one rank alone would otherwise stop that rank while the
others wait forever in the next gradient all-reduce.
"""
from __future__ import annotations

import math

import torch

from ...errors import UsageError
from .base import Callback
from .nan_rollback import ModelRollback, NonFiniteLossError

__all__ = ["NonFiniteGuard", "NonFiniteLossError"]


def _finite_norm(tensors, device) -> torch.Tensor:
    """A 0-d bool tensor on `device`: are all `tensors` finite? (one fused pass, no sync)"""
    tensors = [t for t in tensors if t.is_floating_point()]
    if not tensors:
        return torch.ones((), dtype=torch.bool, device=device)
    return torch.isfinite(torch.nn.utils.get_total_norm(tensors, foreach=True)).to(device)


class NonFiniteGuard(Callback):
    """Stop a fit whose loss, gradients or buffers stop being finite, and leave the model as it was
    at the last check that passed: one of the learner's default callbacks (the module docstring
    says what is checked, when, and why without a sync per batch).

    The error, a `NonFiniteLossError`, says where it happened (epoch and batch), what was not
    finite, the first layer whose output or gradient became non-finite, and which state the
    model was put back to, so the learner can still validate, predict and save.

    Args:
        check_every: check every `check_every` optimizer steps (and at each epoch's last step,
            and before a checkpoint is written): one device-to-host sync per check instead of one
            per batch. 1 checks every step before it is taken; 25 (the default) reads 25 batches'
            flags in one sync, and a failed check goes back at most 25 steps (to the epoch that
            last validated, or the fit's start, if that state does not work either).
        min_scale: under fp16 mixed precision, the GradScaler's scale below which it has given
            up (its skipped steps will not recover). The default, 2**-14 (6.1e-5), is fp16's
            smallest normal number.
    """

    order = -20

    def __init__(self, check_every: int = 25, min_scale: float = 2.0 ** -14):
        if int(check_every) < 1:
            raise UsageError(f"check_every must be at least 1, got {check_every!r}")
        self.check_every = int(check_every)
        # below fp16's smallest normal number the scaler is shrinking gradients that are not
        # finite for another reason than fp16's range: it will never recover
        self.min_scale = float(min_scale)
        self._reset()

    def _reset(self):
        self._flags, self._losses, self._places = [], [], []  # per batch since the last check
        self._batches, self._bad_batch = [], None
        self._rollback = None  # the states to go back to (nan_rollback.py), made at `before_fit`
        self._scale = None

    def _scaler(self):
        """The backend's enabled GradScaler (fp16 mixed precision), or None."""
        scaler = self.learner.backend.grad_scaler
        return scaler if scaler is not None and scaler.is_enabled() else None

    # --- events --------------------------------------------------------------------------------
    def before_fit(self):
        self._reset()
        # One copy before the first batch, not two: until a check passes, the last checked state
        # is this one, and `_stop` goes back to it (the on-device snapshot starts at that check).
        # Profiled: the second copy was most of hotstart's own time between "ready" and the first
        # batch (benchmarks/results/HISTORY.md, "Where the time to first epoch goes").
        self._rollback = ModelRollback(self.learner)
        self._rollback.remember_validated("at the start of this fit")
        scaler = self._scaler()
        self._scale = scaler.get_scale() if scaler is not None else None

    def before_train(self):
        self._flags, self._losses, self._places, self._batches = [], [], [], []

    def before_validate(self):
        self._flags, self._losses, self._places = [], [], []

    def after_loss(self):
        learner = self.learner
        loss = learner.loss.detach()
        self._flags.append(torch.isfinite(loss).all())  # a device op: no sync
        self._losses.append(loss)
        self._places.append(learner.iter)
        if learner.training:  # references (no copy) until the next check: the locator reruns the first bad one
            self._batches.append((learner.xb, learner.yb))

    def after_backward(self):
        learner, fs = self.learner, self.learner.fit_state
        last = learner.iter + 1 >= fs.n_iter
        if (fs.opt_step + 1) % self.check_every and not last:
            return
        self.check()

    def after_step(self):
        if self._flags:  # no check before this step (it is not a check step)
            return
        self._rollback.take_snapshot(self._when(), self.learner.xb)

    def after_validate(self):
        if self._flags or self._world_size() > 1:
            self._check_validation()
        if self._rollback is not None:  # during a fit: this epoch validated, remember it
            self._rollback.remember_validated(f"at the end of epoch {self.learner.epoch}, the last one that validated")

    def after_fit(self):
        self._reset()

    # --- several processes: all stop together ------------------------------------------------
    def _world_size(self) -> int:
        return int(self.learner.backend.world_size or 1)

    def _elsewhere(self, what: str) -> str:
        return f"{what} on another process (this is rank {self.learner.backend.global_rank}, which stops with it)"

    def _first_bad_everywhere(self, first_bad: int | None) -> int | None:
        """The earliest bad position over all processes (a collective: every process calls it)."""
        if self._world_size() == 1:
            return first_bad
        got = self.learner.backend.all_reduce_max(-math.inf if first_bad is None else -float(first_bad))
        return None if got == -math.inf else int(-got)

    # --- the checks -------------------------------------------------------------------------
    def check(self):
        """Check the training batches since the last check, and this step's gradients and buffers
        (one sync; across processes one all-reduce); stop and restore if anything is not finite.
        Called at check steps, and by the checkpointer before it writes."""
        learner = self.learner
        if not learner.training or not self._flags:
            return
        flags, losses, places, batches = self._flags, self._losses, self._places, self._batches
        self._flags, self._losses, self._places, self._batches = [], [], [], []
        scaler = self._scaler()
        # scaled gradients (fp16): an infinite one makes the scaler skip the step (the scale tells)
        grads = [] if scaler is not None else [p.grad for p in learner.model.parameters() if p.grad is not None]
        ok = [*flags, _finite_norm(grads, learner.device), _finite_norm(list(learner.model.buffers()), learner.device)]
        *losses_ok, grads_ok, buffers_ok = torch.stack(ok).tolist()  # the one sync of this check
        bad = [i for i, good in enumerate(losses_ok) if not good]
        first = bad[0] if bad else None if grads_ok and buffers_ok else len(flags) - 1
        gave_up = None
        if scaler is not None:
            scale = scaler.get_scale()
            if scale < self.min_scale and (self._scale is None or scale < self._scale):
                gave_up, first = scale, len(flags) - 1 if first is None else first
            self._scale = scale
        first = self._first_bad_everywhere(first)
        if first is None:
            return  # after_step takes the snapshot, once the step is done
        i = min(first, len(places) - 1)
        where = f"at epoch {learner.epoch}, training batch {places[i]}"
        self._bad_batch = (*batches[i], places[i]) if i < len(batches) else None
        if bad and bad[0] == first:
            what = f"loss is {float(losses[first])}"
        elif first == len(flags) - 1 and gave_up is not None:
            what = (f"the GradScaler gave up: gradients stayed infinite or NaN while its scale fell to "
                    f"{gave_up:.3g} (below {self.min_scale:.3g})")
        elif first == len(flags) - 1 and not buffers_ok:
            what = "buffers (e.g. BatchNorm's running statistics) became NaN or infinite"
        elif first == len(flags) - 1 and not grads_ok:
            what = "gradients are not finite"
        else:
            what = self._elsewhere("loss is not finite" if first < len(flags) - 1
                                   else "the loss, gradients or buffers are not finite")
        self._stop(what, where)

    def _check_validation(self):
        flags, losses, places = self._flags, self._losses, self._places
        self._flags, self._losses, self._places = [], [], []
        bad = [i for i, ok in enumerate(torch.stack(flags).tolist()) if not ok] if flags else []
        first = self._first_bad_everywhere(places[bad[0]] if bad else None)
        if first is None:
            return
        where = f"at epoch {self.learner.epoch}, validation batch {first}"
        what = f"loss is {float(losses[bad[0]])}" if bad and places[bad[0]] == first else self._elsewhere(
            "loss is not finite")
        self._stop(what, where, validation=True)

    # --- stopping with a working model ------------------------------------------------------
    def _when(self) -> str:
        learner, fs = self.learner, self.learner.fit_state
        if learner.iter + 1 >= fs.n_iter:
            return f"at the end of epoch {learner.epoch}"
        return f"after optimizer step {fs.opt_step} (epoch {learner.epoch}, training batch {learner.iter})"

    def _stop(self, what: str, where: str, validation: bool = False):
        """Put the model back to a state that works and raise (nan_rollback.py); outside a fit
        (`validate`), where nothing was kept to go back to, only raise."""
        rollback = self._rollback or ModelRollback(self.learner)
        rollback.stop(what, where, bad_batch=self._bad_batch, validation=validation, check_every=self.check_every)
