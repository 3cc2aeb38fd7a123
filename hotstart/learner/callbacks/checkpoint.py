"""`SaveBestModel`: save the model (atomically) whenever a monitored value improves."""
from __future__ import annotations

from pathlib import Path

from .base import Callback
from .monitor import check_mode, improves, monitor_mode, worst


class SaveBestModel(Callback):
    """Save the model with `Learner.save` at the end of each epoch whose `monitor` value is the
    best so far, so the best epoch survives the epochs that overfit after it.

    ``fit_one_cycle(10, callbacks=[SaveBestModel("best", load_best=True)])`` leaves ``best/``
    (``weights.safetensors`` and ``task.json``, written atomically) holding the epoch with the
    lowest validation loss, and the learner holding those weights when the fit ends. Across
    processes only the first one writes. Order 55: after the `Recorder` (-10) has added the epoch's
    row to the history, and before `EarlyStopping` (65), so the epoch that stops a fit is still
    considered.

    Args:
        path (str | os.PathLike): the folder to save into (`load_learner` reads it back).
        monitor: the history key to watch: ``"valid_loss"`` (the default), ``"train_loss"`` or a
            metric's name (``"accuracy"``).
        mode: ``"min"`` or ``"max"``: whether lower or higher is better. None: ``"min"`` when
            `monitor` names a loss, else what the metric declares (``higher_is_better``;
            callbacks/monitor.py), decided when a fit starts; a key that is neither a loss nor a
            metric needs `mode`.
        load_best: load the best epoch's weights into the model when the fit ends (otherwise the
            model keeps the last epoch's weights and only the folder holds the best).

    After a fit, ``best`` is the best value seen (+-inf while no epoch has improved on nothing, as
    when every value was NaN) and ``best_epoch`` its epoch (None if no epoch was saved).
    """

    order = 55  # before EarlyStopping, so the epoch that ends a fit is still considered

    def __init__(self, path, monitor: str = "valid_loss", mode: str | None = None, load_best: bool = False):
        self.path = Path(path)
        self.monitor = monitor
        self.mode_given = check_mode(mode)
        self.mode = mode  # the direction in use: decided when a fit starts (`monitor_mode`)
        self.load_best = load_best
        self.best = None  # the best value so far, over every fit of this callback
        self.best_epoch = None

    def before_fit(self):
        self.mode = monitor_mode(self.learner, self.monitor, self.mode_given, "SaveBestModel")
        if self.best is None:
            self.best = worst(self.mode)

    def after_epoch(self):
        value = self.learner.history[-1][self.monitor]
        if improves(value, self.best, self.mode):
            self.best, self.best_epoch = value, self.learner.history[-1]["epoch"]
            if self.learner.backend.is_global_zero:
                self.learner.save(self.path)

    def after_fit(self):
        if self.load_best and self.best_epoch is not None:
            from ..serialization import load_weights

            load_weights(self.learner, self.path)
