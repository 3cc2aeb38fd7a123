"""What the non-finite guard (nan_guard.py) leaves when a check fails: a model that works.

`ModelRollback` keeps the states to go back to, and `stop` goes back and raises
`NonFiniteLossError`:

- the model is put back to the state of the last check that passed (a copy of the weights and
  buffers on the model's device, replaced at each passed check; device-to-device copies, no
  sync). If optimizer steps were taken since, their gradients may have been bad, so the
  optimizer, whose moments saw them, is dropped (the next fit makes a new one). With
  ``check_every=1`` nothing stepped since: the failing batch was skipped, the optimizer is kept;
- if that model does not work either (eval-mode outputs not finite on the batch of the last
  passed check), training had diverged before: the model is put back to its state at the end of
  the last epoch that validated (or at the start of the fit), kept on the CPU, and the optimizer
  is dropped.

The error names the first batch whose loss was not finite (or the batch of the check that
failed), and, through `on_non_finite` (the one place to plug in a diagnosis), the first layer
whose output or gradient became non-finite (learner/nonfinite_origin.py). `Learner.save` refuses
a model with non-finite parameters or buffers all the same.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from ...errors import HotstartError
from ..state_copy import copy_state


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


class ModelRollback:
    """The two states a failed check can go back to, for one fit of `learner`."""

    def __init__(self, learner):
        self.learner = learner
        self.snapshot = None  # {state-dict key: copy} of the model at the last passed check, on its device
        self.snapshot_when, self.snapshot_step = None, 0
        self.checked_xb = None  # the batch of the last passed check: what `works` tests on
        self.validated = None  # (state on the CPU, "when") of a model known to have validated

    def remember_validated(self, when: str) -> None:
        """The CPU copy to go back to when the last checked state fails too (into the same
        tensors at every epoch's end: `copy_state`)."""
        state = self.learner.task_model().state_dict()
        into = self.validated[0] if self.validated is not None else None
        self.validated = (copy_state(state, into, device="cpu"), when)

    def take_snapshot(self, when: str, checked_xb) -> None:
        """Copy the weights and buffers on their device, by state-dict key (into the same copies
        after the first time), after a passed check on `checked_xb`. A model whose tensors change
        shape or are replaced between checks (a QAT observer growing from one scale to one per
        channel) gets fresh copies."""
        state = self.learner.task_model().state_dict(keep_vars=True)
        self.snapshot = copy_state(state, self.snapshot)
        self.snapshot_when, self.snapshot_step = when, self.learner.fit_state.opt_step
        self.checked_xb = checked_xb

    def stop(self, what: str, where: str, *, bad_batch=None, validation: bool = False, check_every: int = 1):
        """Put the model back to a state that works, diagnose (`on_non_finite`), and raise
        `NonFiniteLossError` saying what was found, where, and which state the model now holds.
        `bad_batch`: (inputs, targets, index) of the first bad training batch, when kept."""
        learner = self.learner
        restored = not validation and self.snapshot is not None
        stepped = False
        if restored:  # the locator reruns the first bad batch on the last checked state
            stepped = learner.fit_state.opt_step > self.snapshot_step
            # load_state_dict writes into the model's current tensors (and lets modules such as
            # observers adapt their own shapes)
            learner.task_model().load_state_dict(self.snapshot)
        elif not validation and self.validated is not None:  # no check passed yet: the start of the fit
            learner.task_model().load_state_dict(self.validated[0])
        xb, yb, it = bad_batch if (not validation and bad_batch) else (learner.xb, learner.yb, learner.iter)
        extra = on_non_finite(NonFiniteFinding(learner, what, where, xb, yb, it))
        what = f"{what} {where}" + (f"; {extra}" if extra else "")
        if restored and self.works():
            if not stepped:  # the failing batch did not step: the model from before it, the optimizer kept
                raise NonFiniteLossError(f"{what}; fitting stopped and the model keeps its weights and buffers "
                                         f"from before this batch. Check the data, or try a lower learning "
                                         f"rate (lr_find).")
            learner.opt = None  # its moments saw the steps since the last check
            raise NonFiniteLossError(
                f"{what}; fitting stopped (the weights had diverged, or a batch was bad) and the model was put "
                f"back to its state {self.snapshot_when} (the guard's last check, every {check_every} "
                f"steps); the next fit starts with a new optimizer. Check the data, or try a lower learning "
                f"rate (lr_find).")
        # The model itself is broken (outputs not finite even in eval mode): training diverged.
        if self.validated is not None:
            good, when = self.validated
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

    def works(self) -> bool:
        """Does the model, in eval mode, give finite outputs on the batch of the last passed check?

        Not the failing batch: if its data is bad (a NaN pixel), any model fails on it."""
        learner, model = self.learner, self.learner.model
        if self.checked_xb is None:  # no check passed in this fit: the model is the one from the start
            return False
        was_training = model.training
        model.eval()
        try:
            with torch.no_grad(), learner.backend.autocast():
                out = model(self.checked_xb)
        finally:
            model.train(was_training)
        outs = out if isinstance(out, (tuple, list)) else [out]
        return all(bool(torch.isfinite(o).all()) for o in outs if torch.is_tensor(o))
