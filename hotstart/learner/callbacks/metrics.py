"""`Metrics`: the loss and the metrics over the validation phase, correct across processes.

The metrics are objects with torchmetrics' protocol (update / compute / reset / to). The tasks'
defaults are ``hotstart.metrics`` (streaming counts, no torchmetrics import): at the phase's end
their counts and the loss sum are added over the processes through the backend
(``Backend.sum_tensors``, the identity in one process) and read in one transfer
(`hotstart.metrics.read_on_host`), so one process and many run the same code. A user's
``torchmetrics.Metric`` objects are used as given (their ``compute`` syncs them). Metric objects
are built on first use, not when the learner is built, so a run that never validates builds none.
"""
from __future__ import annotations

import math
from collections.abc import Mapping

import torch

from ...errors import UsageTypeError
from .base import Callback


class Metrics(Callback):
    """The validation loss and metrics of each validation phase, one of the learner's default
    callbacks (`Learner` adds it; you pass its metrics as ``Learner(metrics=...)`` or
    ``tasklearner(metrics=...)``).

    After a validation phase ``valid_loss`` is the mean loss per sample and ``values`` maps each
    metric's name to its value, over every process's shard (NaN for an epoch cancelled before
    its validation). `Learner.validate` returns them (``{"loss": valid_loss, **values}``), and
    the `Recorder` copies ``values`` into the epoch's history row.

    Args:
        metrics (dict | Callable[[], dict] | None): name -> metric object with torchmetrics'
            protocol (``update(pred, target)``, ``compute``, ``reset``, ``to``), or a callable
            returning that dict (a task's ``metrics`` method: the objects are built at the first
            validation, so a learner that never validates builds none). None: no metrics,
            the loss only.
        activation (Callable | None): applied to the model's outputs (logits) before the
            metrics see them (the task's ``activation``: softmax for classification); None: the
            outputs as they are.
    """

    order = -5

    def __init__(self, metrics=None, activation=None):
        check_metrics(metrics)
        self._spec = metrics  # dict name -> metric (torchmetrics protocol), or a callable returning one
        self.activation = activation
        self._metrics = None
        self.values: dict[str, float] = {}
        self.valid_loss = math.nan

    def _build(self):
        if self._metrics is None:
            spec = self._spec() if callable(self._spec) else (self._spec or {})
            self._metrics = {name: m.to(self.learner.device) for name, m in dict(spec).items()}
        return self._metrics

    def names(self) -> list[str]:
        """The metrics' names (their keys in the history)."""
        return list(self._build())

    def higher_is_better(self, name: str) -> bool | None:
        """Whether a higher value of the metric `name` is better: its ``higher_is_better``
        (torchmetrics' attribute; hotstart's metrics declare it too). None when the metric does
        not say, or there is no metric of that name."""
        better = getattr(self._build().get(name), "higher_is_better", None)
        return None if better is None else bool(better)

    def score(self, preds: torch.Tensor, targets: torch.Tensor) -> dict[str, float]:
        """Each metric's value on `preds` (already through `activation`, as the metrics see them
        in a validation phase) and `targets`, outside a fit: `Learner.tta` scores its predictions
        here, so that it reports the learner's metrics (``metrics=``), the ones in its history,
        not the task's defaults. The metric objects are reset first; a validation resets them again."""
        from ...metrics import read_on_host

        metrics = self._build()
        device = self.learner.device
        for m in metrics.values():
            m.reset()
            m.update(preds.to(device), targets.to(device))
        return read_on_host(metrics)[0]

    def before_epoch(self):
        # an epoch cancelled before validation must not report the previous epoch's numbers
        self.values = {name: math.nan for name in self.values}
        self.valid_loss = math.nan

    def before_validate(self):
        for m in self._build().values():
            m.reset()
        device = self.learner.device  # the loss is summed on the device (float64, as float(loss) would be): no sync
        self._loss_sum = torch.zeros((), dtype=torch.float32 if device.type == "mps" else torch.float64, device=device)
        self._n = 0

    def after_loss(self):
        if self.learner.training:
            return
        n = len(self.learner.yb)
        self._loss_sum = self._loss_sum + self.learner.loss.detach().to(self._loss_sum.dtype) * n
        self._n += n
        pred = self.learner.pred.detach().float()
        if self.activation is not None:
            pred = self.activation(pred)
        for m in self._metrics.values():
            m.update(pred, self.learner.yb)

    def after_validate(self):
        # sums and counts over all processes: each validation sample counted once (the shards are
        # disjoint and unpadded, learner/data.py), every process gets the same numbers; the loss
        # sum and every metric's value come to the host in one transfer (one sync a phase)
        from ...metrics import read_on_host

        backend = self.learner.backend
        (n,) = backend.all_reduce_sum(self._n)
        if not n:
            self.values, self.valid_loss = {name: math.nan for name in self._metrics}, math.nan
            return
        self.values, (loss_sum,) = read_on_host(self._metrics, self._loss_sum, sum_over_processes=backend.sum_tensors)
        self.valid_loss = loss_sum / n


METRIC_METHODS = ("update", "compute", "reset", "to")
"""What `Metrics` calls on a metric object (torchmetrics' protocol)."""


def check_metrics(metrics) -> None:
    """Refuse a ``metrics=`` that is not None, a callable, or a dict of metric objects, naming the
    key whose object lacks torchmetrics' methods: a list of names (fastai's habit) or of classes
    would otherwise fail at the first validation, far from the call."""
    example = "e.g. {'accuracy': torchmetrics.Accuracy(task='multiclass', num_classes=10)}"
    if metrics is None or callable(metrics):
        return
    pairs = isinstance(metrics, (list, tuple)) and all(isinstance(p, tuple) and len(p) == 2 for p in metrics)
    if not (isinstance(metrics, Mapping) or pairs):  # (name, metric) pairs are a dict's items: taken
        raise UsageTypeError(f"metrics must be a dict of name -> metric object (torchmetrics' protocol), {example}; "
                             f"got {metrics!r}")
    for name, metric in (metrics.items() if isinstance(metrics, Mapping) else metrics):
        missing = [m for m in METRIC_METHODS if not callable(getattr(metric, m, None))]
        if isinstance(metric, type) or missing:
            raise UsageTypeError(f"metrics[{name!r}] must be a metric object with {', '.join(METRIC_METHODS)} "
                                 f"(torchmetrics' protocol), {example}; got {metric!r}")
