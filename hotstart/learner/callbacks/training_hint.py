"""`TrainingHint`: after a fit, say so when it learned too little, and what to change.

A new user's first run on their own folder (180 images, resnet10t, 3 epochs at batch 64) made 6
optimizer steps: the training loss fell, the validation accuracy stayed at chance, and nothing
said why. Two signs are cheap to read after the fit, and each gets its own advice:

- few optimizer steps (fewer than `min_steps`, 50 by default: the one-cycle schedule's warm-up
  alone is a quarter of them), unless the validation accuracy is already good (`good`, 0.9):
  more steps may help (`advice`: more epochs, a smaller batch);
- enough steps, and the validation accuracy at chance (within `margin` of 1 / number of classes):
  more of the same will not help, and saying so again would send the user in a circle. A folder
  of 90 pictures of circles, squares and triangles got "more epochs, a smaller batch" at the
  defaults; following it (batch 8, 10 epochs: 90 steps) gave chance again, and the same advice.
  Here the hint says what the fit already had, and points elsewhere (`chance_advice`): the
  labels, the learning rate, pretrained weights, more data.

The advice names what to change; its wording is the caller's, so that the command line can name
its own options (``--epochs`` ...). Only the first process prints, and a fit that was interrupted
or cancelled before its last epoch gets no hint.
"""
from __future__ import annotations

import sys
from typing import NamedTuple

from .base import Callback

DEFAULT_ADVICE = ("train longer (more epochs), use a smaller batch size (more steps per epoch), a smaller model "
                  "(the default small CNN), or start from pretrained weights")
DEFAULT_CHANCE_ADVICE = ("check the labels (do the classes' examples really differ, is each filed under its class?), "
                         "try another learning rate (learner.lr_find() suggests one), check that the inputs are "
                         "normalised, start from pretrained weights (a timm backbone with pretrained=True), "
                         "or give it more examples")

FEW_STEPS = "few_steps"  # more steps may help
AT_CHANCE = "at_chance"  # enough steps: more of the same will not help


class FitHint(NamedTuple):
    """Why a finished fit probably learned too little: `kind` (`FEW_STEPS` or `AT_CHANCE`, which
    decides the advice) and `reason` (one sentence)."""
    kind: str
    reason: str


def fit_hint(steps: int, n_epochs: int, accuracy: float | None, n_classes: int | None, losses: list[float], *,
             min_steps: int = 50, margin: float = 0.1, good: float = 0.9) -> FitHint | None:
    """Why a finished fit probably learned too little, or None. Pure: the callback feeds it what
    the fit recorded (`losses`: the training loss of each batch)."""
    at_chance = accuracy is not None and bool(n_classes) and n_classes > 1 and accuracy <= 1.0 / n_classes + margin
    k = max(1, len(losses) // 10)
    fell = len(losses) >= 2 and sum(losses[-k:]) / k < sum(losses[:k]) / k
    chance = "" if not at_chance else (f"the validation accuracy ({accuracy:.3f}) stayed at chance (1/{n_classes} = "
                                       f"{1.0 / n_classes:.3f})")
    if steps < min_steps and (accuracy is None or accuracy < good):
        reason = f"this fit made only {steps} optimizer step(s) in {n_epochs} epoch(s), too few to learn much"
        return FitHint(FEW_STEPS, reason + (f"; {chance} while the training loss fell" if at_chance and fell else ""))
    if at_chance:
        how = ("while the training loss fell: the model fits its training examples without learning what tells "
               "the classes apart" if fell else "and the training loss did not fall: the model did not learn")
        return FitHint(AT_CHANCE, f"{chance} after {steps} optimizer steps in {n_epochs} epoch(s), {how}. More "
                                  f"epochs or a smaller batch are unlikely to change that")
    return None


class TrainingHint(Callback):
    order = 60  # after Progress (50) has printed the last epoch's row

    def __init__(self, n_classes: int | None = None, *, advice: str = DEFAULT_ADVICE,
                 chance_advice: str = DEFAULT_CHANCE_ADVICE, min_steps: int = 50, metric: str = "accuracy", file=None):
        self.n_classes, self.advice, self.chance_advice = n_classes, advice, chance_advice
        self.min_steps, self.metric, self.file = min_steps, metric, file
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
        hint = fit_hint(ln.total_steps, ln.n_epoch, accuracy if isinstance(accuracy, (int, float)) else None,
                        self.n_classes, ln.recorder.losses[self._losses:], min_steps=self.min_steps)
        if hint is None:
            return
        advice = self.advice if hint.kind == FEW_STEPS else self.chance_advice
        self.message = f"hint: {hint.reason}. To learn more: {advice}."
        if ln.backend.is_global_zero:
            print(self.message, file=self.file or sys.stderr, flush=True)
