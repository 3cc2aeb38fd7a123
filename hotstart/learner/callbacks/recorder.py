"""`Recorder`: the history, one dict per epoch (epoch, train_loss, valid_loss, metrics, time).

No device-to-host sync per batch: each batch's loss is kept as a tensor on its device, and the
epoch's running sums are device tensors too (in float64, the same arithmetic as Python floats, so
the numbers are bit for bit those of ``float(loss)``). They are read once per epoch, at its end
(or when ``losses`` / ``running_sums()`` is asked for, e.g. by a checkpoint).
"""
from __future__ import annotations

import math
import time

import torch

from .base import Callback


class Recorder(Callback):
    """The fit's history: one row per epoch, and every training batch's loss and learning rate.
    One of the learner's default callbacks, as ``learner.recorder``; ``learner.history`` is its
    ``history``.

    - ``history``: one dict per epoch, across fits: ``epoch`` (counted across fits), ``train_loss``
      and ``valid_loss`` (mean loss per sample over every process), each metric of `Metrics`,
      and ``time`` (seconds, the slowest process's).
    - ``losses``: every training batch's loss, as floats (`Learner.plot_loss` draws them).
    - ``lrs``: the last parameter group's (the head's) learning rate at each training batch.

    No device-to-host sync per batch: the losses stay on the device until the epoch ends (the
    module docstring says why the numbers are still those of ``float(loss)``, bit for bit).
    """

    order = -10  # first in, so everything after can read the running losses

    def __init__(self):
        self.history: list[dict] = []
        self._losses: list[float] = []  # every training batch's loss, across fits (for plot_loss)
        self._pending: list[torch.Tensor] = []  # the losses not yet read from the device
        self.lrs: list[float] = []
        self.before_epoch()  # so `validate()` before any fit finds running sums to add to

    @property
    def losses(self) -> list[float]:
        """Every training batch's loss, across fits, as floats (read from the device when asked)."""
        self.read_losses()
        return self._losses

    def read_losses(self) -> None:
        """Read the losses still on the device into `losses` (one sync for all of them)."""
        if self._pending:
            self._losses.extend(torch.stack([p.float() for p in self._pending]).tolist())
            self._pending.clear()

    def before_epoch(self):
        self._t0 = time.perf_counter()
        self._sum = {True: 0.0, False: 0.0}  # floats, or float64 device tensors once a batch added to them
        self._n = {True: 0, False: 0}

    def after_loss(self):
        n = len(self.learner.yb)
        loss = self.learner.loss.detach()
        self._sum[self.learner.training] = self._sum[self.learner.training] + _wide(loss) * n
        self._n[self.learner.training] += n
        if self.learner.training:
            self._pending.append(loss)
            self.lrs.append(self.learner.opt.param_groups[-1]["lr"])

    def running_sums(self) -> dict:
        """This epoch's running loss sums and sample counts so far, as JSON ({"sum": [train, valid],
        "n": [train, valid]}): what a checkpoint taken in the middle of an epoch must carry."""
        return {"sum": [float(self._sum[True]), float(self._sum[False])], "n": [self._n[True], self._n[False]]}

    def set_running_sums(self, sums: dict) -> None:
        """Continue an epoch from `running_sums()` (a resumed checkpoint)."""
        self._sum = {True: float(sums["sum"][0]), False: float(sums["sum"][1])}
        self._n = {True: int(sums["n"][0]), False: int(sums["n"][1])}

    def phase_loss(self, training: bool) -> float:
        """The phase's mean loss per sample, over all processes (sums and counts are added up
        across processes, so every process gets the same number)."""
        total, n = self.learner.backend.all_reduce_sum(float(self._sum[training]), self._n[training])
        return total / n if n else math.nan

    def _read_epoch(self) -> None:
        """This epoch's two loss sums and its per-batch losses to the host in one read (one sync,
        not three). float64 holds every float32 / bf16 / fp16 loss exactly: the same numbers."""
        on_device = [k for k in (True, False) if torch.is_tensor(self._sum[k])]
        parts = [self._sum[k].reshape(1) for k in on_device] + [_wide(p).reshape(1) for p in self._pending]
        if not parts:
            return
        host = torch.cat(parts).tolist()
        for i, k in enumerate(on_device):
            self._sum[k] = host[i]
        self._losses.extend(host[len(on_device):])
        self._pending.clear()

    def after_epoch(self):
        from .metrics import Metrics

        self._read_epoch()
        metrics = self.learner.cb(Metrics)
        row = {"epoch": len(self.history), "train_loss": self.phase_loss(True), "valid_loss": self.phase_loss(False)}
        row.update(metrics.values if metrics is not None else {})
        row["time"] = self.learner.backend.all_reduce_max(time.perf_counter() - self._t0)  # one history on all ranks
        self.history.append(row)
        self.read_losses()  # this epoch's losses from the device now (one sync), not at some later moment

    def after_fit(self):
        self.read_losses()


def _wide(loss: torch.Tensor) -> torch.Tensor:
    """`loss` in float64 where the device has it (MPS has no float64: float32 there)."""
    return loss.double() if loss.device.type != "mps" else loss.float()
