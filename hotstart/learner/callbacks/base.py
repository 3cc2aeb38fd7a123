"""`Callback`: do-nothing hooks for every event of the loop, and the exceptions that cancel.

The loop (learner/loop.py) calls, in order::

    before_fit
      before_epoch
        before_train  | before_validate          (phase: learner.training is True / False)
          before_batch, after_pred, after_loss,
          [train only] after_backward, after_step,
          after_batch
        after_train   | after_validate
      after_epoch
    after_fit                                  (always, even when cancelled or interrupted)

A callback sees everything through ``self.learner`` (model, opt, xb, yb, pred, loss, epoch, ...).
It cancels by raising `CancelBatch`, `CancelEpoch` or `CancelFit`. Callbacks run in ascending
`order`; ties keep the order they were added in.
"""
from __future__ import annotations

EVENTS = ("before_fit", "before_epoch", "before_train", "before_validate", "before_batch", "after_pred",
          "after_loss", "after_backward", "after_step", "after_batch", "after_train", "after_validate",
          "after_epoch", "after_fit")


class CancelBatch(Exception):
    """Skip the rest of this batch (e.g. the optimizer step)."""


class CancelEpoch(Exception):
    """Skip the rest of this epoch (both phases)."""


class CancelFit(Exception):
    """Stop fitting now; `after_fit` still runs."""


class Callback:
    order: int = 0
    learner = None

    def __getattr__(self, name):
        # every event is a do-nothing method unless a subclass defines it
        if name in EVENTS:
            return _noop
        raise AttributeError(f"{type(self).__name__!s} has no attribute {name!r}")

    def __repr__(self):
        return f"{type(self).__name__}()"


def _noop(*args, **kwargs):
    return None
