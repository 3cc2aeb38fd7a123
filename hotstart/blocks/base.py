"""The `Block` protocol: a pure description of a kind of data.

A block never holds data and never touches ``torch.nn``. It knows how to check a value
(`check` / `validate`), how to make a valid random one (`mock`, drawing only from the
``numpy.random.Generator`` it is given), and how to describe itself as JSON (`to_dict` /
`from_dict`), so a task can be saved and loaded without pickle.
"""
from __future__ import annotations

from typing import Any, ClassVar

import numpy as np


class BlockValueError(ValueError):
    """A value does not fit its block; the message says which block and what is wrong."""


class Block:
    """Base class. Subclasses implement `_problem(value) -> str | None` and `mock(rng)`."""

    kind: ClassVar[str] = "Block"
    # kind name -> class, for JSON round trips. Filled by __init_subclass__ for classes
    # defined in hotstart and by users' subclasses alike; lookups only, no import side effects.
    _kinds: ClassVar[dict[str, type["Block"]]] = {}

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        cls.kind = cls.__name__
        Block._kinds[cls.__name__] = cls

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

    # --- JSON -----------------------------------------------------------------------
    def _params(self) -> dict[str, Any]:
        """Constructor arguments, JSON-compatible."""
        return {}

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, **self._params()}

    @staticmethod
    def from_dict(d: dict[str, Any]) -> "Block":
        d = dict(d)
        kind = d.pop("kind", None)
        cls = Block._kinds.get(kind)
        if cls is None:
            raise ValueError(f"unknown block kind {kind!r}; known: {sorted(Block._kinds)}")
        return cls(**d)

    # --- value semantics ----------------------------------------------------------
    def __eq__(self, other: object) -> bool:
        return type(self) is type(other) and self._params() == other._params()

    def __hash__(self) -> int:
        return hash((self.kind, repr(self._params())))

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={_short(v)}" for k, v in self._params().items())
        return f"{self.kind}({args})"


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
        raise TypeError(
            f"mock() needs a numpy.random.Generator (e.g. numpy.random.default_rng(0)), got {type(rng).__name__}"
        )
    return rng
