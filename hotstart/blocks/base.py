"""The `Block` protocol: a pure description of a kind of data.

A block never holds data and never touches ``torch.nn``. It knows how to check a value
(`check` / `validate`), how to make a valid random one (`mock`, drawing only from the
``numpy.random.Generator`` it is given), and how to describe itself as JSON (`to_dict` /
`from_dict`), so a task can be saved and loaded without pickle.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import HotstartError, UsageTypeError
from ..kinds import Kinded


class BlockValueError(HotstartError, ValueError):
    """A value does not fit its block; the message says which block and what is wrong."""


class Block(Kinded, family="block"):
    """Base class. Subclasses implement `_problem(value) -> str | None` and `mock(rng)`; the JSON
    round trip, equality and hashing come from `Kinded` (hotstart/kinds.py), from `_params()`."""

    # --- checking -----------------------------------------------------------------
    def _problem(self, value: Any) -> str | None:
        """Return a sentence saying why `value` is not valid, or None when it is."""
        raise NotImplementedError

    def check(self, value: Any) -> bool:
        """True when `value` is a valid instance of this block."""
        return self._problem(value) is None

    def validate(self, value: Any, *, where: str | None = None) -> Any:
        """Return `value` if valid, else raise `BlockValueError` naming the problem (and `where`)."""
        problem = self._problem(value)
        if problem is not None:
            prefix = f"{where}: " if where else ""
            raise BlockValueError(f"{prefix}{problem} (block {self!r})")
        return value

    # --- mocking ------------------------------------------------------------------
    def mock(self, rng: np.random.Generator) -> Any:
        """A valid random value, drawn only from `rng`."""
        raise NotImplementedError

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={_short(v)}" for k, v in self._params().items())
        return f"{type(self).__name__}({args})"


def _short(v: Any) -> str:
    if isinstance(v, (list, tuple)) and len(v) > 6:
        head = ", ".join(repr(x) for x in v[:3])
        return f"[{head}, ... {len(v)} items]"
    return repr(v)


def is_tensor(x: Any) -> bool:
    """True for a torch tensor (tv_tensors included), without importing torch to find out."""
    return type(x).__module__.startswith(("torch", "torchvision"))


def require_rng(rng: Any) -> np.random.Generator:
    """Mocks draw only from an explicit generator; refuse anything else (no global RNG)."""
    if not isinstance(rng, np.random.Generator):
        raise UsageTypeError(
            f"mock() needs a numpy.random.Generator (e.g. numpy.random.default_rng(0)), got {type(rng).__name__}"
        )
    return rng
