"""`EarlyStopping`: stop when a monitored value (a history key) has not improved for `patience` epochs."""
from __future__ import annotations

from .base import Callback, CancelFit
from .monitor import check_mode, improves, monitor_mode, worst


class EarlyStopping(Callback):
    """Stop the fit (`CancelFit`) when `monitor` has not improved for `patience` epochs in a row.

    ``fit_one_cycle(30, callbacks=[EarlyStopping(patience=3)])`` stops after the third epoch in a
    row whose validation loss is not below the best so far; the epochs already trained stay in
    the history, and ``after_fit`` still runs for every callback. Note that a one-cycle schedule
    stopped early never reaches its low final learning rate: with `SaveBestModel`
    (``load_best=True``) the model at least keeps its best epoch. Order 65: after the
    `Recorder` (-10) has added the epoch's row, `SaveBestModel` (55) has saved it and `EMA` (60)
    has swapped the trained weights back in (stopping before that left the average's slot holding
    the trained weights, which then replaced the best epoch that `load_best` had loaded).

    Args:
        monitor: the history key to watch: ``"valid_loss"`` (the default), ``"train_loss"`` or a
            metric's name (``"accuracy"``); a key the history lacks is a `KeyError` listing the
            keys it has, at the first epoch's end.
        patience: how many epochs without improvement to accept before stopping.
        min_delta: how much better than the best a value must be to count as an improvement
            (a noisy validation loss that wobbles by 1e-4 does not reset the count with
            ``min_delta=1e-3``).
        mode: ``"min"`` or ``"max"``: whether lower or higher is better (anything else is a
            `UsageError`). None: ``"min"`` when `monitor` names a loss, else what the metric
            declares (``higher_is_better``: ``"max"`` for accuracy, ``"min"`` for ``rmse`` and
            ``mean_distance``; callbacks/monitor.py), decided when the fit starts; a key that is
            neither a loss nor a metric (one your callback writes) needs `mode`, else the fit
            stops before its first step with a `UsageError`.

    The best value and the count restart at each fit. After a stop, ``stopped_epoch`` is the
    epoch it stopped at (None when the fit ran to its end).
    """

    order = 65  # after SaveBestModel (55) has saved the epoch and EMA (60) has swapped its average out

    def __init__(self, monitor: str = "valid_loss", patience: int = 3, min_delta: float = 0.0, mode: str | None = None):
        self.monitor, self.patience, self.min_delta = monitor, int(patience), float(min_delta)
        self.mode_given = check_mode(mode)
        self.mode = mode  # the direction in use: decided when each fit starts (`monitor_mode`)

    def before_fit(self):
        self.mode = monitor_mode(self.learner, self.monitor, self.mode_given, "EarlyStopping")
        self.best, self.wait = worst(self.mode), 0
        self.stopped_epoch = None

    def after_epoch(self):
        row = self.learner.history[-1]
        if self.monitor not in row:
            raise KeyError(f"EarlyStopping monitors {self.monitor!r}, not in the history keys {sorted(row)}")
        value = row[self.monitor]
        if improves(value, self.best, self.mode, self.min_delta):
            self.best, self.wait = value, 0
            return
        self.wait += 1
        if self.wait >= self.patience:
            self.stopped_epoch = self.learner.epoch
            raise CancelFit(f"{self.monitor} has not improved for {self.patience} epochs")
