"""Regression metrics: float32 sums instead of counts, added in torchmetrics' order, so they agree
exactly; `Denormalized` shows them in the target's units."""
from __future__ import annotations

import torch

from ..errors import UsageError
from .base import StreamingMetric, count_tensor


class _FloatSums(StreamingMetric):
    """Float32 sums of shape `_state_shape()` and an integer count, ``total`` (a scalar), added out
    of place as torchmetrics does."""

    def _reset_states(self):
        for name in self._states:
            integer = name == "total"
            setattr(self, name, torch.zeros(() if integer else self._state_shape(),
                                            dtype=torch.long if integer else torch.float32, device=self.device))

    def _add(self, counts):
        for name, value in zip(self._states, counts):
            setattr(self, name, getattr(self, name) + value)

    def _check(self, preds, target):
        if preds.shape != target.shape:
            raise UsageError(f"{type(self).__name__}: preds {tuple(preds.shape)} and target {tuple(target.shape)} "
                             "must have the same shape")


class MeanSquaredError(_FloatSums):
    """Mean squared error, or its root with ``squared=False`` (torchmetrics' ``MeanSquaredError``).

    With ``num_outputs=1`` every entry counts alike (inputs are flattened); otherwise ``(N, num_outputs)``
    inputs give one value per output.
    """

    _states = ("sum_squared_error", "total")
    higher_is_better = False  # an error

    def __init__(self, squared: bool = True, num_outputs: int = 1):
        self.squared, self.num_outputs = bool(squared), int(num_outputs)
        super().__init__()

    def _state_shape(self):
        return (self.num_outputs,)

    def _counts(self, preds, target):
        self._check(preds, target)
        if self.num_outputs == 1:
            preds, target = preds.reshape(-1), target.reshape(-1)
        diff = preds - target
        return torch.sum(diff * diff, dim=0), count_tensor(target.shape[0], target.device)

    def _reduce(self, sum_squared_error, total):
        mse = sum_squared_error / total
        out = mse if self.squared else torch.sqrt(mse)
        return out.squeeze() if out.numel() == 1 else out

    def __repr__(self):
        return f"MeanSquaredError(squared={self.squared}, num_outputs={self.num_outputs})"


class R2Score(_FloatSums):
    """Coefficient of determination, averaged uniformly over outputs (torchmetrics' ``R2Score``).

    ``preds`` and ``target``: (N,) or (N, num_outputs). One difference: with fewer than two samples,
    where torchmetrics raises, this returns NaN (a one-row validation set must not stop a fit).
    `num_outputs` fixes the sums' shape, so that processes that saw no batch sum alike.
    """

    _states = ("sum_squared_error", "sum_error", "residual", "total")
    higher_is_better = True

    def __init__(self, num_outputs: int = 1):
        self.num_outputs = int(num_outputs)
        super().__init__()

    def _state_shape(self):
        return (self.num_outputs,)

    def _counts(self, preds, target):
        self._check(preds, target)
        if preds.ndim > 2:
            raise UsageError(f"R2Score: expected 1-D or 2-D preds and target, got {tuple(preds.shape)}")
        outputs = preds.shape[1] if preds.ndim == 2 else 1
        if outputs != self.num_outputs:
            raise UsageError(f"R2Score: preds {tuple(preds.shape)} have {outputs} output(s), "
                             f"expected num_outputs={self.num_outputs}")
        residual = target - preds
        return (torch.sum(target * target, dim=0), torch.sum(target, dim=0), torch.sum(residual * residual, dim=0),
                count_tensor(target.size(0), target.device))

    def _reduce(self, sum_squared_obs, sum_obs, rss, total):
        # torch.where, not masked assignment or `if int(total) < 2`: no host sync (same values)
        mean_obs = sum_obs / total
        tss = sum_squared_obs - sum_obs * mean_obs
        cond_rss = ~torch.isclose(rss, torch.zeros_like(rss), atol=1e-4)  # torchmetrics' near-constant rules
        cond_tss = ~torch.isclose(tss, torch.zeros_like(tss), atol=1e-4)
        cond = cond_rss & cond_tss
        raw = torch.where(cond, 1 - rss / tss, torch.ones_like(rss))
        raw = torch.where(cond_rss & ~cond_tss, torch.zeros_like(raw), raw)
        r2 = torch.mean(raw)
        return torch.where(total < 2, torch.full_like(r2, float("nan")), r2)

    def __repr__(self):
        return f"R2Score(num_outputs={self.num_outputs})"


class Denormalized:
    """A metric that sees predictions and targets in their own units, ``x * std + mean``.

    Regression tasks train on normalized targets; an RMSE in grams means more than one in
    standard deviations. With `output` = i, the metric sees only output i of (N, outputs) inputs
    (one RMSE per target column: grams and millimetres do not average). `read_on_host` sums the
    inner metric's counts across processes.
    """

    def __init__(self, metric, mean, std, output: int | None = None):
        self.metric = metric
        self.mean = [float(m) for m in mean]
        self.std = [float(s) for s in std]
        self.output = None if output is None else int(output)
        self._on_device = None  # ((dtype, device), mean, std) as tensors

    def units(self, x):
        """`x` (normalized predictions or targets) in the target's units (output `output` alone, if set)."""
        if self.output is not None:
            return x[:, self.output] * self.std[self.output] + self.mean[self.output]
        key = (x.dtype, x.device)
        if self._on_device is None or self._on_device[0] != key:  # copied to the device once, not per batch
            self._on_device = (key, torch.tensor(self.mean, dtype=x.dtype, device=x.device),
                               torch.tensor(self.std, dtype=x.dtype, device=x.device))
        _, mean, std = self._on_device
        if x.ndim == 1 and len(self.mean) == 1:
            return x * std[0] + mean[0]
        return x * std + mean

    @property
    def higher_is_better(self) -> bool | None:
        """The wrapped metric's direction (units do not change it)."""
        return getattr(self.metric, "higher_is_better", None)

    def update(self, preds, target):
        self.metric.update(self.units(preds), self.units(target))

    def compute(self):
        return self.metric.compute()

    def reset(self):
        self.metric.reset()

    def to(self, device):
        self.metric = self.metric.to(device)
        return self

    def __call__(self, preds, target):
        return self.metric(self.units(preds), self.units(target))

    def __repr__(self):
        out = "" if self.output is None else f", output={self.output}"
        return f"Denormalized({self.metric!r}, mean={self.mean}, std={self.std}{out})"
