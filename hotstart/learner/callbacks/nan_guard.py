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

When a check fails, the model it leaves works (finite outputs in eval mode):
- the model is put back to the state of the last check that passed (the guard keeps one copy of
  the weights and buffers on the model's device, replaced at each passed check; device-to-device
  copies, no sync). If optimizer steps were taken since, their gradients may have been bad, so
  the optimizer, whose moments saw them, is dropped (the next fit makes a new one). With
  ``check_every=1`` nothing stepped since: the failing batch was skipped, the optimizer is kept;
- if that model does not work either (eval-mode outputs not finite on the batch of the last
  passed check), training had diverged before: the model is put back to its state at the end of
  the last epoch that validated (or at the start of the fit), which the guard keeps on the CPU,
  and the optimizer is dropped.
The error names the first batch whose loss was not finite (or the batch of the check that
failed). `Learner.save` refuses a model with non-finite parameters or buffers all the same.

With several processes, every process decides together: the check is one all-reduce (of the
first bad batch's position, or nothing), at the same steps on every process (every rank runs
the same number of training batches); in validation, whose shards may differ by a batch, once
in `after_validate`. A NaN loss on one rank alone would otherwise stop that rank while the
others wait forever in the next gradient all-reduce.

`on_non_finite` is called once when a check fails, before the model is put back: the one place to
plug in a diagnosis (e.g. which layer first produced the NaN).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from ...errors import HotstartError, UsageError
from ..state_copy import copy_state
from .base import Callback


class NonFiniteLossError(HotstartError, FloatingPointError):
    """The loss, the gradients, the buffers or the weights became NaN or infinite; fitting stopped.

    The message says which state the model was put back to."""


@dataclass
class NonFiniteFinding:
    """What a failed check found, as `on_non_finite` receives it."""
    learner: object          # the learner, its model still as the failing steps left it
    what: str                # "loss is nan", "gradients are not finite", ...
    where: str               # "at epoch 1, training batch 2"
    batch: object = None     # the input batch of the first bad batch (the check's own, where not kept)
    targets: object = None   # its targets
    index: int | None = None  # its index in the epoch


def on_non_finite(finding: NonFiniteFinding) -> str:
    """Called once when the guard finds a non-finite value, with the model put back to the last
    checked state: where the NaN began (learner/nonfinite_origin.py reruns the first bad training
    batch with hooks), kept as ``learner.nonfinite_origin`` and as a history row; returns the text
    added to the error ("" in validation, or when nothing is found)."""
    learner = finding.learner
    learner.nonfinite_origin = None
    if not learner.training or finding.batch is None:
        return ""
    from ..nonfinite_origin import locate_nonfinite

    try:
        origin = locate_nonfinite(learner.model, finding.batch, finding.targets, learner.compute_loss,
                                  epoch=learner.epoch, batch=finding.index, autocast=learner.backend.autocast)
    except Exception:  # the locator must never hide the error it is explaining
        origin = None
    learner.nonfinite_origin = origin
    if origin is None:
        return ""
    learner.recorder.history.append({"epoch": len(learner.recorder.history), "train_loss": math.nan,
                                     "valid_loss": math.nan, "stopped": "non-finite",
                                     "nonfinite_origin": origin.as_dict()})
    return f"{origin}"


def _finite_norm(tensors, device) -> torch.Tensor:
    """A 0-d bool tensor on `device`: are all `tensors` finite? (one fused pass, no sync)"""
    tensors = [t for t in tensors if t.is_floating_point()]
    if not tensors:
        return torch.ones((), dtype=torch.bool, device=device)
    return torch.isfinite(torch.nn.utils.get_total_norm(tensors, foreach=True)).to(device)


class NonFiniteGuard(Callback):
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
        self._snapshot = None  # {state-dict key: copy} of the model at the last passed check
        self._snapshot_when, self._snapshot_step = None, 0
        self._good = None  # (state on the CPU, "when") of a model known to have validated
        self._checked_xb = None  # the batch of the last passed check: what `_works` tests on
        self._scale = None

    def _scaler(self):
        """The backend's enabled GradScaler (fp16 mixed precision), or None."""
        scaler = self.learner.backend.grad_scaler
        return scaler if scaler is not None and scaler.is_enabled() else None

    # --- the states to go back to ------------------------------------------------------------
    def _remember(self, when: str):
        """The CPU copy to go back to when the last checked state fails too (into the same
        tensors at every epoch's end: `copy_state`)."""
        state = self.learner.task_model().state_dict()
        into = self._good[0] if self._good is not None else None
        self._good = (copy_state(state, into, device="cpu"), when)

    def _take_snapshot(self, when: str):
        """Copy the weights and buffers on their device, by state-dict key (into the same copies
        after the first time). A model whose tensors change shape or are replaced between checks
        (a QAT observer growing from one scale to one per channel) gets fresh copies."""
        state = self.learner.task_model().state_dict(keep_vars=True)
        self._snapshot = copy_state(state, self._snapshot)
        self._snapshot_when, self._snapshot_step = when, self.learner.fit_state.opt_step

    def _restore_snapshot(self):
        """Put the copies back through `load_state_dict`, which writes into the model's current
        tensors (and lets modules such as observers adapt their own shapes)."""
        self.learner.task_model().load_state_dict(self._snapshot)

    # --- events --------------------------------------------------------------------------------
    def before_fit(self):
        self._reset()
        # One copy before the first batch, not two: until a check passes, the last checked state
        # is this one, and `_stop` goes back to it (the on-device snapshot starts at that check).
        # Profiled: the second copy was most of hotstart's own time between "ready" and the first
        # batch (benchmarks/README.md, "Where the time to first epoch goes").
        self._remember("at the start of this fit")
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
        self._take_snapshot(self._when())
        self._checked_xb = self.learner.xb

    def after_validate(self):
        if self._flags or self._world_size() > 1:
            self._check_validation()
        if self._good is not None:  # during a fit: this epoch validated, remember it
            self._remember(f"at the end of epoch {self.learner.epoch}, the last one that validated")

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
        learner = self.learner
        restored = not validation and self._snapshot is not None
        if restored:  # the locator reruns the first bad batch on the last checked state
            stepped = learner.fit_state.opt_step > self._snapshot_step
            self._restore_snapshot()
        elif not validation and self._good is not None:  # no check passed yet: the start of the fit
            learner.task_model().load_state_dict(self._good[0])
        xb, yb, it = self._bad_batch if (not validation and self._bad_batch) else (learner.xb, learner.yb, learner.iter)
        extra = on_non_finite(NonFiniteFinding(learner, what, where, xb, yb, it))
        what = f"{what} {where}" + (f"; {extra}" if extra else "")
        if restored:
            if self._works():
                if not stepped:  # the failing batch did not step: the model from before it, the optimizer kept
                    raise NonFiniteLossError(f"{what}; fitting stopped and the model keeps its weights and buffers "
                                             f"from before this batch. Check the data, or try a lower learning "
                                             f"rate (lr_find).")
                learner.opt = None  # its moments saw the steps since the last check
                raise NonFiniteLossError(
                    f"{what}; fitting stopped (the weights had diverged, or a batch was bad) and the model was put "
                    f"back to its state {self._snapshot_when} (the guard's last check, every {self.check_every} "
                    f"steps); the next fit starts with a new optimizer. Check the data, or try a lower learning "
                    f"rate (lr_find).")
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
        raise NonFiniteLossError(f"{what}; training diverged, fitting stopped and {state}. "
                                 f"Try a lower learning rate (lr_find).")

    def _works(self) -> bool:
        """Does the model, in eval mode, give finite outputs on the batch of the last passed check?

        Not the failing batch: if its data is bad (a NaN pixel), any model fails on it."""
        learner, model = self.learner, self.learner.model
        if self._checked_xb is None:  # no check passed in this fit: the model is the one from the start
            return False
        was_training = model.training
        model.eval()
        try:
            with torch.no_grad(), learner.backend.autocast():
                out = model(self._checked_xb)
        finally:
            model.train(was_training)
        outs = out if isinstance(out, (tuple, list)) else [out]
        return all(bool(torch.isfinite(o).all()) for o in outs if torch.is_tensor(o))
