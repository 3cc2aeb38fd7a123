"""`TimeSeries`: one series of one or many channels, of a fixed length or a variable one.

A value is a 2-D array ``(channels, length)`` of real numbers (numpy, or anything
``numpy.asarray`` takes); NaN marks a missing value, as ``?`` does in the archives' ``.ts`` files.
A univariate series may also be given as a 1-D array of its values. Infinities are refused.

- ``TimeSeries(1, length=150)``: one channel, always 150 steps (GunPoint);
- ``TimeSeries(12, max_length=29)``: twelve channels, any length up to 29 (JapaneseVowels);
- ``TimeSeries(6)``: six channels, any length.

`SeriesTensor` is the encoded series (see ``encodings/timeseries.py``): float32 ``(channels,
length)``, every series padded or cropped to one length, plus a mask channel when asked for.
"""
from __future__ import annotations

import numpy as np

from ..errors import UsageError
from .base import Block, is_tensor, require_rng


def as_series(value) -> np.ndarray:
    """A value as a float64 array (channels, length): 1-D (a univariate series) gets its channel axis."""
    if is_tensor(value):
        value = value.detach().cpu().numpy()
    a = np.asarray(value, dtype=np.float64)
    return a[None, :] if a.ndim == 1 else a


class TimeSeries(Block):
    """``TimeSeries(channels, length=None, *, max_length=None)``; `length` fixes it, `max_length` caps it."""

    def __init__(self, channels: int = 1, length: int | None = None, *, max_length: int | None = None):
        self.channels = _positive(channels, "channels")
        self.length = None if length is None else _positive(length, "length")
        self.max_length = None if max_length is None else _positive(max_length, "max_length")
        if self.length is not None and self.max_length is not None:
            raise UsageError("TimeSeries: give length= (a fixed length) or max_length= (a variable one), not both")

    def _params(self):
        return {"channels": self.channels, "length": self.length, "max_length": self.max_length}

    def _problem(self, value):
        if isinstance(value, (str, bytes, dict)):
            return f"a series must be an array (channels, length), got {type(value).__name__}"
        try:
            a = as_series(value)
        except (TypeError, ValueError) as e:
            return f"a series must be an array of numbers (channels, length): {e}"
        if a.ndim != 2:
            return f"a series must be 2-D (channels, length), got shape {a.shape}"
        if a.shape[0] != self.channels:
            return f"expected {self.channels} channel(s), got {a.shape[0]} (shape {a.shape})"
        n = a.shape[1]
        if n == 0:
            return "the series is empty (length 0)"
        if self.length is not None and n != self.length:
            return f"expected length {self.length}, got {n}"
        if self.max_length is not None and n > self.max_length:
            return f"length {n} exceeds max_length {self.max_length}"
        if np.isinf(a).any():
            return "the series holds an infinity (missing values are NaN)"
        if np.isnan(a).all():
            return "every value of the series is missing (NaN)"
        return None

    def mock(self, rng: np.random.Generator) -> np.ndarray:
        """A random walk per channel; variable lengths are drawn in [2, max_length or 64]."""
        rng = require_rng(rng)
        n = self.length or int(rng.integers(2, (self.max_length or 64) + 1))
        return np.cumsum(rng.standard_normal((self.channels, n)), axis=1)


class SeriesTensor(Block):
    """An encoded series: float32 tensor ``(channels, length)``; `length` None until it is known."""

    def __init__(self, channels: int = 1, length: int | None = None):
        self.channels = _positive(channels, "channels")
        self.length = None if length is None else _positive(length, "length")

    def _params(self):
        return {"channels": self.channels, "length": self.length}

    def shape(self):
        """(channels, length); length 0 while it is not known (as `TableTensor`)."""
        return (self.channels, self.length or 0)

    def _problem(self, value):
        if not is_tensor(value) or value.ndim != 2 or not value.is_floating_point():
            return f"expected a 2-D float tensor (channels, length), got {getattr(value, 'shape', type(value).__name__)}"
        if value.shape[0] != self.channels or (self.length is not None and value.shape[1] != self.length):
            return f"expected shape ({self.channels}, {self.length}), got {tuple(value.shape)}"
        return None

    def mock(self, rng):
        import torch

        rng = require_rng(rng)
        if self.length is None:
            raise UsageError("SeriesTensor.mock: the length is not known yet (set up the task first)")
        return torch.from_numpy(rng.standard_normal((self.channels, self.length)).astype(np.float32))


def _positive(n, name: str) -> int:
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise UsageError(f"TimeSeries: {name}= must be a positive whole number, got {n!r}")
    return int(n)
