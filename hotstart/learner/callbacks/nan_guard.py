"""`NonFiniteGuard`: stop a fit that diverges, and leave a model that still works.

Checked at every training batch, before the optimizer step:
- the loss must be finite (in validation too);
- the buffers (BatchNorm's running statistics) must be finite: a diverging fit can overflow
  them while the loss is still finite (in training, BatchNorm normalizes with the batch's own
  statistics), and the model would only fail later, in validation or after it was saved;
- the gradients must be finite, except under fp16 mixed precision: there the gradients are still
  scaled at that point, and an infinite one is what the GradScaler handles, by skipping the step
  and lowering the scale. The guard then stops only when the scaler gives up: its scale has
  fallen below `min_scale` (every step for a long while was skipped).

When it stops, the model it leaves works (finite outputs in eval mode):
- first the buffers are put back as they were before the batch; if the model then gives finite
  outputs on the last batch that trained well, the failing batch was the problem (bad data)
  and the model is the one from before it;
- otherwise training diverged (weights grown so large that eval-mode outputs overflow, or made
  non-finite by a step): the model is put back to its state at the end of the last epoch that
  validated (or at the start of the fit), which the guard keeps on the CPU (one copy of the
  state per epoch), and the optimizer, whose moments belong to the diverged weights, is dropped
  (the next fit makes a new one).
`Learner.save` refuses a model with non-finite parameters or buffers all the same.

With several processes, every process decides together (one all-reduce of a 0/1 flag): a NaN
loss on one rank alone would otherwise stop that rank while the others wait forever in the next
gradient all-reduce. In training the flag is reduced at every batch (every rank runs the same
number of batches); in validation, whose shards may differ by a batch, once in `after_validate`.
"""
from __future__ import annotations

import math

import torch

from ...errors import HotstartError
from .base import Callback


class NonFiniteLossError(HotstartError, FloatingPointError):
    """The loss, the gradients, the buffers or the weights became NaN or infinite; fitting stopped.

    The message says whether the model was kept as it was before the failing batch."""


def _all_finite(tensors) -> bool:
    tensors = [t for t in tensors if t.is_floating_point()]
    if not tensors:
        return True
    # one fused pass (about 1% of a resnet18 step on CPU for the gradients, less for buffers)
    return bool(torch.isfinite(torch.nn.utils.get_total_norm(tensors, foreach=True)))


class NonFiniteGuard(Callback):
    order = -20

    def __init__(self, min_scale: float = 2.0 ** -14):
        # below fp16's smallest normal number the scaler is shrinking gradients that are not
        # finite for another reason than fp16's range: it will never recover
        self.min_scale = float(min_scale)
        self._buffers = None
        self._good = None  # (state on the CPU, "where it is from") of a model known to work
        self._last_xb = None

    def _scaler(self):
        """The backend's enabled GradScaler (fp16 mixed precision), or None."""
        scaler = getattr(self.learner.backend, "grad_scaler", None)
        return scaler if scaler is not None and scaler.is_enabled() else None

    # --- a known-good model to go back to: the start of the fit, then each validated epoch ------
    def _remember(self, what: str):
        state = self.learner.task_model().state_dict()
        self._good = ({k: v.detach().to("cpu", copy=True) for k, v in state.items()}, what)

    def before_fit(self):
        self._remember("at the start of this fit")

    def before_validate(self):
        self._valid_failure = None

    def after_validate(self):
        failure, self._valid_failure = getattr(self, "_valid_failure", None), None
        if self._world_size() > 1 and self._anywhere(failure is not None):
            what, where = failure or (self._elsewhere("loss is not finite"), f"at epoch {self.learner.epoch}, validation")
            self._stop(what, where)
        if self._good is not None:  # during a fit: this epoch validated with finite losses
            self._remember(f"at the end of epoch {self.learner.epoch}, the last one that validated")

    def after_fit(self):
        self._good = self._buffers = self._last_xb = None

    def before_batch(self):
        # The forward pass updates buffers (BatchNorm's running stats) before the loss is known;
        # keep a copy so a bad batch leaves them as they were (a few small tensors per step).
        self._buffers = None
        if self.learner.training:
            self._buffers = [(b, b.detach().clone()) for b in self.learner.model.buffers()]

    # --- several processes: all stop together ------------------------------------------------
    def _world_size(self) -> int:
        return int(getattr(self.learner.backend, "world_size", 1) or 1)

    def _anywhere(self, bad: bool) -> bool:
        """Whether `bad` holds on any process (a collective: every process must call it)."""
        if self._world_size() == 1:
            return bad
        return self.learner.backend.all_reduce_max(1.0 if bad else 0.0) > 0

    def _elsewhere(self, what: str) -> str:
        rank = getattr(self.learner.backend, "global_rank", "?")
        return f"{what} on another process (this is rank {rank}, which stops with it)"

    # --- the checks -------------------------------------------------------------------------
    def after_loss(self):
        loss = float(self.learner.loss.detach())
        bad = not math.isfinite(loss)
        if self._world_size() > 1 and not self.learner.training:
            # validation shards may hold different numbers of batches: decided in after_validate
            if bad and getattr(self, "_valid_failure", None) is None:
                self._valid_failure = (f"loss is {loss}", self._where())
            return
        if self._anywhere(bad):
            self._stop(f"loss is {loss}" if bad else self._elsewhere("loss is not finite"))

    def after_backward(self):
        buffers = [b for b, _ in self._buffers or ()]
        scaler = self._scaler()
        self._scale = scaler.get_scale() if scaler is not None else None
        # scaled gradients (fp16): an infinite one makes the scaler skip the step (see after_step)
        grads = [] if scaler is not None else [p.grad for p in self.learner.model.parameters() if p.grad is not None]
        ok = _all_finite(buffers + grads)  # one check (one device sync) for both
        if self._anywhere(not ok):  # buffers are per process: every process stops if one must
            if ok:
                self._stop(self._elsewhere("buffers or gradients became NaN or infinite"))
            if not _all_finite(buffers):
                self._stop("buffers (e.g. BatchNorm's running statistics) became NaN or infinite")
            self._stop("gradients are not finite")

    def after_step(self):
        scaler = self._scaler()
        if scaler is not None and getattr(self, "_scale", None) is not None:
            scale = scaler.get_scale()
            if scale < self._scale and scale < self.min_scale:
                self._stop(f"the GradScaler gave up: gradients stayed infinite or NaN while its scale fell to "
                           f"{scale:.3g} (below {self.min_scale:.3g})")
        # Weights that the step made non-finite show up as the next batch's non-finite loss (or
        # the validation's), and `_works` then finds the model broken: no extra check per step.
        self._last_xb = self.learner.xb  # a batch the model took without failing: the test in _works

    # --- stopping with a working model ------------------------------------------------------
    def _where(self) -> str:
        learner = self.learner
        phase = "training" if learner.training else "validation"
        return f"at epoch {learner.epoch}, {phase} batch {learner.iter}"

    def _stop(self, what: str, where: str | None = None):
        learner = self.learner
        where = where or self._where()
        origin = self._origin()
        if origin is not None:
            where = f"{where}; {origin}"
        if learner.training and self._buffers:
            with torch.no_grad():
                for buf, saved in self._buffers:
                    buf.copy_(saved)
            if self._works():  # a bad batch, not a broken model: keep the model from before it
                state = "the model keeps its weights and buffers from before this batch"
                raise NonFiniteLossError(f"{what} {where}; fitting stopped and {state}. "
                                         f"Check the data, or try a lower learning rate (lr_find).")
        # The model itself is broken (outputs not finite even in eval mode): training diverged.
        if self._good is not None:
            good, when = self._good
            learner.task_model().load_state_dict(good)
            # the optimizer's state (Adam's moments) belongs to the diverged weights: the next fit
            # starts a new one (fit rebuilds a missing optimizer)
            learner.opt = None
            state = (f"the model was put back to its state {when} (the one after it does not work); "
                     f"the next fit starts with a new optimizer")
        else:
            state = "the model does not work (it cannot be saved): load one saved before"
        raise NonFiniteLossError(f"{what} {where}; training diverged, fitting stopped and {state}. "
                                 f"Try a lower learning rate (lr_find).")

    def _origin(self):
        """Where the NaN began (learner/nonfinite_origin.py: the failing training batch run again
        with hooks, only now), kept as ``learner.nonfinite_origin``; None in validation."""
        learner = self.learner
        if not learner.training or getattr(learner, "xb", None) is None:
            return None
        from ..nonfinite_origin import locate_nonfinite

        try:
            origin = locate_nonfinite(learner.model, learner.xb, learner.yb, learner.compute_loss,
                                      epoch=learner.epoch, batch=learner.iter, autocast=learner.backend.autocast)
        except Exception:  # the locator must never hide the error it is explaining
            origin = None
        learner.nonfinite_origin = origin
        if origin is not None:  # the history says where the fit stopped: a row for the unfinished epoch
            learner.recorder.history.append({"epoch": len(learner.recorder.history), "train_loss": math.nan,
                                             "valid_loss": math.nan, "stopped": "non-finite",
                                             "nonfinite_origin": origin.as_dict()})
        return origin

    def _works(self) -> bool:
        """Does the model, in eval mode, give finite outputs on the last batch that trained well?

        Not the failing batch: if its data is bad (a NaN pixel), any model fails on it."""
        learner, model = self.learner, self.learner.model
        if self._last_xb is None:  # the first batch failed: the model is the one from the start
            return False
        was_training = model.training
        model.eval()
        try:
            with torch.no_grad(), learner.backend.autocast():
                out = model(self._last_xb)
        finally:
            model.train(was_training)
        outs = out if isinstance(out, (tuple, list)) else [out]
        return all(bool(torch.isfinite(o).all()) for o in outs if torch.is_tensor(o))
