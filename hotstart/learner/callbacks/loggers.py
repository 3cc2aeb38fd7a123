"""`LogTo`: the training loss, the learning rate and every epoch's history to Lightning's loggers.

Lightning's loggers (``lightning_fabric.loggers.CSVLogger``, ``TensorBoardLogger``, or any
``lightning_fabric.loggers.Logger``) do the writing; this callback only decides what goes where
and when. It is opt-in because importing ``lightning_fabric`` costs about a second of start-up,
which a fit that logs nothing should not pay:

    >>> learner.fit_one_cycle(5, callbacks=[LogTo("csv", root_dir="runs")])
    >>> learner.fit_one_cycle(5, callbacks=[LogTo(TensorBoardLogger("runs"), every=1)])

Steps count training iterations (across fits, for a ``LogTo`` given to ``tasklearner``), so the
per-step losses and the epoch rows share one axis. Only the first process writes (Lightning's
loggers are rank-zero only themselves).
"""
from __future__ import annotations

import math
import sys

from ...errors import UsageError
from .base import Callback

_BY_NAME = {"csv": "CSVLogger", "tensorboard": "TensorBoardLogger"}


def _tensorboard_installed() -> bool:
    from importlib.util import find_spec

    return find_spec("tensorboard") is not None or find_spec("tensorboardX") is not None


class LogTo(Callback):
    """Log the training loss and learning rate every `every` batches, and each epoch's history
    row (losses, metrics, time), to Lightning's loggers (the module docstring has examples).

    Args:
        *loggers (str | lightning_fabric.loggers.Logger): ``"csv"`` (Lightning's ``CSVLogger``),
            ``"tensorboard"`` (``TensorBoardLogger``; needs the tensorboard package, checked
            here), or logger objects, used as given. At least one; an unknown name is a
            `UsageError` naming the known ones.
        root_dir: the folder the named loggers write under (``logs/hotstart/version_0/...``).
        name: the run's name, the folder inside `root_dir`.
        every: log ``train_loss_step`` and ``lr`` every `every` training batches (10: a 1,000
            batch epoch writes 100 points; each reads the Recorder's losses from the device, a
            sync a GPU should not do at every batch).

    The named loggers are built (and ``lightning_fabric`` imported, about a second) at the first
    fit, not here. Non-finite values are left out of what is logged.
    """

    order = 10  # after the Recorder (-10) and Metrics (-5) have filled the epoch's row

    def __init__(self, *loggers, root_dir: str = "logs", name: str = "hotstart", every: int = 10):
        if not loggers:
            raise UsageError("LogTo needs at least one logger: 'csv', 'tensorboard' or a Lightning logger")
        for lg in loggers:
            if isinstance(lg, str) and lg not in _BY_NAME:
                raise UsageError(f"LogTo: unknown logger {lg!r}; use one of {sorted(_BY_NAME)} or a logger object")
        if "tensorboard" in loggers and not _tensorboard_installed():
            raise ModuleNotFoundError("LogTo('tensorboard') needs the tensorboard package: pip install tensorboard")
        if int(every) < 1:
            raise UsageError(f"LogTo: every must be >= 1, got {every!r}")
        self._specs, self.root_dir, self.name, self.every = loggers, root_dir, name, int(every)
        self.loggers: list = []
        self._steps_before = 0  # training iterations of earlier fits: one step axis across fits

    def _build(self):
        if not self.loggers:
            import lightning_fabric.loggers as lfl

            self.loggers = [getattr(lfl, _BY_NAME[s])(root_dir=self.root_dir, name=self.name)
                            if isinstance(s, str) else s for s in self._specs]

    def _log(self, metrics: dict):
        if not self.learner.backend.is_global_zero:
            return
        clean = {k: float(v) for k, v in metrics.items()
                 if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(float(v))}
        for lg in self.loggers:
            lg.log_metrics(clean, step=self._steps_before + self.learner.train_iter)

    def before_fit(self):
        self._build()
        if self.learner.backend.is_global_zero:
            hp = {"n_epoch": self.learner.n_epoch, "optimizer": str(self.learner.optimizer),
                  "seed": self.learner.fit_seed, "iters_per_epoch": self.learner.n_iter}
            for lg in self.loggers:
                try:
                    lg.log_hyperparams(hp)
                except NotImplementedError:  # lightning_fabric's CSVLogger takes no hyperparameters
                    pass

    def after_batch(self):
        learner, recorder = self.learner, self.learner.recorder
        if learner.training and (learner.train_iter + 1) % self.every == 0 and recorder.losses:
            # the Recorder has read this batch's loss and lr already
            self._log({"train_loss_step": recorder.losses[-1], "lr": recorder.lrs[-1]})

    def after_epoch(self):
        history = self.learner.history
        if history:
            self._log(history[-1])
            for lg in self.loggers:
                lg.save()

    def after_fit(self):
        # after_fit also runs when the fit ends with an error (the learner calls it in `finally`)
        self._steps_before += self.learner.train_iter
        error = sys.exc_info()[1]
        status = "success" if error is None else "interrupted" if isinstance(error, KeyboardInterrupt) else "failed"
        if self.learner.backend.is_global_zero:
            for lg in self.loggers:
                lg.finalize(status)
