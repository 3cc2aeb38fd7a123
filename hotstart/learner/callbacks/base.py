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
    """The base of every callback: a do-nothing method for each event of the loop, so a subclass
    defines only the events it reacts to, and sees the loop through ``self.learner``.

    ``order`` (default 0) places it among the learner's callbacks, which run in ascending order,
    ties in the order they were added. The defaults are placed around 0 so that yours can read
    their numbers: `NonFiniteGuard` -20, `Recorder` -10, `Metrics` -5, `Progress` 50; so at
    ``order`` 0 an ``after_epoch`` finds the epoch's row in ``self.learner.history`` already.
    ``learner`` is set when the callback is added (``Learner(callbacks=...)``, ``fit(callbacks=...)``
    or `Learner.add_cb`).

    A callback that stops a fit once the validation loss is low enough::

        class StopBelow(Callback):
            def __init__(self, loss: float):
                self.loss = loss

            def after_epoch(self):
                if self.learner.history[-1]["valid_loss"] < self.loss:
                    raise CancelFit(f"valid_loss below {self.loss}")

        learner.fit_one_cycle(20, callbacks=[StopBelow(0.05)])

    An attribute that is neither an event nor defined is an `AttributeError` naming the callback,
    so a misspelled event name in a subclass is simply never called: spell them as in `EVENTS`.
    """

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
