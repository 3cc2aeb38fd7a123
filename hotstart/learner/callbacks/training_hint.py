"""`TrainingHint`: after a fit, say so when it was too short to learn, and what to change.

A new user's first run on their own folder (180 images, resnet10t, 3 epochs at batch 64) made 6
optimizer steps: the training loss fell, the validation accuracy stayed at chance, and nothing
said why. Two signs are cheap to read after the fit, and each gets one line:

- few optimizer steps (fewer than `min_steps`, 50 by default: the one-cycle schedule's warm-up
  alone is a quarter of them), unless the validation accuracy is already good (`good`, 0.9);
- validation accuracy at chance (within `margin` of 1 / number of classes) while the training
  loss fell (its last tenth of batches below its first tenth).

The advice names what to change; its wording is the caller's (`advice`), so that the command
line can name its own options (``--epochs`` ...). Only the first process prints, and a fit that
was interrupted or cancelled before its last epoch gets no hint.
"""
from __future__ import annotations

import sys

from .base import Callback

DEFAULT_ADVICE = ("train longer (more epochs), use a smaller batch size (more steps per epoch), a smaller model "
                  "(the default small CNN), or start from pretrained weights")


def fit_hint(steps: int, n_epochs: int, accuracy: float | None, n_classes: int | None, losses: list[float], *,
             min_steps: int = 50, margin: float = 0.1, good: float = 0.9) -> str | None:
    """The reason a finished fit probably learned too little (one sentence), or None. Pure: the
    callback feeds it what the fit recorded."""
    reasons = []
    if steps < min_steps and (accuracy is None or accuracy < good):
        reasons.append(f"this fit made only {steps} optimizer step(s) in {n_epochs} epoch(s), too few to learn much")
    if accuracy is not None and n_classes and n_classes > 1 and accuracy <= 1.0 / n_classes + margin:
        k = max(1, len(losses) // 10)
        if len(losses) >= 2 and sum(losses[-k:]) / k < sum(losses[:k]) / k:
            reasons.append(f"the validation accuracy ({accuracy:.3f}) stayed at chance (1/{n_classes} = "
                           f"{1.0 / n_classes:.3f}) while the training loss fell")
    return "; ".join(reasons) if reasons else None


class TrainingHint(Callback):
    order = 60  # after Progress (50) has printed the last epoch's row

    def __init__(self, n_classes: int | None = None, *, advice: str = DEFAULT_ADVICE, min_steps: int = 50,
                 metric: str = "accuracy", file=None):
        self.n_classes, self.advice, self.min_steps, self.metric, self.file = n_classes, advice, min_steps, metric, file
        self.message: str | None = None  # the last hint given (None: none)

    def before_fit(self):
        self._rows, self._losses = len(self.learner.history), len(self.learner.recorder.losses)
        self.message = None

    def after_fit(self):
        ln = self.learner
        rows = ln.history[self._rows:]
        if len(rows) < ln.n_epoch:  # interrupted or cancelled: not a finished fit
            return
        accuracy = rows[-1].get(self.metric) if rows else None
        reason = fit_hint(ln.total_steps, ln.n_epoch, accuracy if isinstance(accuracy, (int, float)) else None,
                          self.n_classes, ln.recorder.losses[self._losses:], min_steps=self.min_steps)
        if reason is None:
            return
        self.message = f"hint: {reason}. To learn more: {self.advice}."
        if ln.backend.is_global_zero:
            print(self.message, file=self.file or sys.stderr, flush=True)
