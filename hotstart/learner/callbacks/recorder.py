"""`Recorder`: the history, one dict per epoch (epoch, train_loss, valid_loss, metrics, time)."""
from __future__ import annotations

import math
import time

from .base import Callback


class Recorder(Callback):
    order = -10  # first in, so everything after can read the running losses

    def __init__(self):
        self.history: list[dict] = []
        self.losses: list[float] = []  # every training batch's loss, across fits (for plot_loss)
        self.lrs: list[float] = []
        self.before_epoch()  # so `validate()` before any fit finds running sums to add to

    def before_epoch(self):
        self._t0 = time.perf_counter()
        self._sum = {True: 0.0, False: 0.0}
        self._n = {True: 0, False: 0}

    def after_loss(self):
        n = len(self.learner.yb)
        loss = float(self.learner.loss.detach())
        self._sum[self.learner.training] += loss * n
        self._n[self.learner.training] += n
        if self.learner.training:
            self.losses.append(loss)
            self.lrs.append(self.learner.opt.param_groups[-1]["lr"])

    def running_sums(self) -> dict:
        """This epoch's running loss sums and sample counts so far, as JSON ({"sum": [train, valid],
        "n": [train, valid]}): what a checkpoint taken in the middle of an epoch must carry."""
        return {"sum": [self._sum[True], self._sum[False]], "n": [self._n[True], self._n[False]]}

    def set_running_sums(self, sums: dict) -> None:
        """Continue an epoch from `running_sums()` (a resumed checkpoint)."""
        self._sum = {True: float(sums["sum"][0]), False: float(sums["sum"][1])}
        self._n = {True: int(sums["n"][0]), False: int(sums["n"][1])}

    def phase_loss(self, training: bool) -> float:
        """The phase's mean loss per sample, over all processes (sums and counts are added up
        across processes, so every process gets the same number)."""
        total, n = self.learner.backend.all_reduce_sum(self._sum[training], self._n[training])
        return total / n if n else math.nan

    def after_epoch(self):
        from .metrics import Metrics

        metrics = self.learner.cb(Metrics)
        row = {"epoch": len(self.history), "train_loss": self.phase_loss(True), "valid_loss": self.phase_loss(False)}
        row.update(metrics.values if metrics is not None else {})
        row["time"] = self.learner.backend.all_reduce_max(time.perf_counter() - self._t0)  # one history on all ranks
        self.history.append(row)
