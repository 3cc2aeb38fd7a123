"""`StreamingMetric`: counts accumulated batch by batch on the device, reduced by `compute`.

The counts are the metric's whole state (``states()``): summing them over processes and reducing
the sums (``compute_from``) gives the metric of the whole dataset, which is how `read_on_host`
computes across processes. So a subclass's states must have a fixed shape, whatever it has seen.
"""
from __future__ import annotations

import torch

from ..errors import UsageError


class StreamingMetric:
    """Integer counts (named in ``_states``) accumulated batch by batch, reduced by ``compute``.

    Inputs that a batch's counts cannot hold (targets outside the classes) set ``invalid``, a
    flag on the metric's device, instead of being read on the host per batch; `compute()` raises
    the metric's error (`_invalid_message`) when it is set.

    Subclasses give ``_states``, and implement ``_counts(preds, target)`` (one batch's counts, in
    ``_states``' order) and ``_reduce(*states)`` (the value), optionally ``_state_shape()``."""

    _states: tuple[str, ...] = ()
    higher_is_better: bool | None = None
    """Whether a higher value is better (torchmetrics' attribute of the same name): what
    `EarlyStopping` and `SaveBestModel` read to know which way is an improvement. Each metric
    says; None: it does not (those callbacks then ask for ``mode=``)."""
    _invalid_message = "the targets hold values this metric cannot count"

    def __init__(self):
        self.device = torch.device("cpu")
        self.reset()

    def reset(self):
        self._reset_states()
        self.invalid = torch.zeros((), dtype=torch.bool, device=self.device)

    def _reset_states(self):
        for name in self._states:
            setattr(self, name, torch.zeros(self._state_shape(), dtype=torch.long, device=self.device))

    def to(self, device):
        self.device = torch.device(device)
        for name in (*self._states, "invalid"):
            setattr(self, name, getattr(self, name).to(self.device))
        return self

    def update(self, preds, target):
        counts, invalid = self._checked_counts(preds, target)
        self._add(counts)
        self.invalid = self.invalid | invalid

    def compute(self) -> torch.Tensor:
        self.raise_if_invalid(self.invalid)
        return self.compute_from(self.states())

    def states(self) -> list[torch.Tensor]:
        """The counts since `reset`, in a fixed order and shape: what processes sum (`read_on_host`)."""
        return [getattr(self, name) for name in self._states]

    def compute_from(self, states) -> torch.Tensor:
        """The value of counts shaped as `states()` gives them (this metric's own, or their sum
        over processes), without reading the `invalid` flag (no host sync)."""
        return self._reduce(*states)

    def raise_if_invalid(self, invalid) -> None:
        """Raise this metric's UsageError if `invalid` (a flag, a tensor: reading it is a sync) is set."""
        if bool(invalid):
            raise UsageError(f"{type(self).__name__}: {self._invalid_message}")

    def __call__(self, preds, target) -> torch.Tensor:
        """Update with this batch and return the batch's own value (as torchmetrics' forward);
        bad targets raise here, at once (the caller reads the value anyway)."""
        counts, invalid = self._checked_counts(preds, target)
        self.raise_if_invalid(invalid)
        self._add(counts)
        return self._reduce(*counts)

    def _checked_counts(self, preds, target):
        """(this batch's counts, a device flag set when they cannot be trusted)."""
        return self._counts(preds, target), torch.zeros((), dtype=torch.bool, device=target.device)

    def _add(self, counts):
        for name, value in zip(self._states, counts):
            getattr(self, name).add_(value)

    # subclasses: state shape, per-batch counts, reduction
    def _state_shape(self):
        return ()

    def _counts(self, preds, target):
        raise NotImplementedError

    def _reduce(self, *counts):
        raise NotImplementedError


def count_tensor(n: int, device) -> torch.Tensor:
    """A count as a tensor on `device`, written by a fill kernel: ``torch.tensor(n, device=cuda)``
    copies from the host and waits for the stream (a sync per batch)."""
    return torch.full((), n, dtype=torch.long, device=device)


def outside_classes(indices: torch.Tensor, num_classes: int) -> torch.Tensor:
    """A device flag: does any index lie outside 0..num_classes-1 (no host read)."""
    return ((indices < 0) | (indices >= num_classes)).any()


def safe_divide(num: torch.Tensor, den: torch.Tensor) -> torch.Tensor:
    """num / den in float32 (as torchmetrics; MPS has no float64), 0 where den is 0 (``zero_division=0``)."""
    num, den = num.float(), den.float()
    return torch.where(den == 0, torch.zeros_like(num), num / den.clamp(min=1))
