"""The `Encoding` protocol: how a block becomes tensors, and back.

An encoding maps (block, value) to (encoded block, encoded value) and may depend on the
`Context`: augmentation happens only in training, validation and inference see a deterministic
pipeline. Randomness comes only from the ``numpy.random.Generator`` passed to `encode`.

    encode(block, value, context, rng=None) -> value      one value of one block
    decode(block, value, context) -> value                encoded value back to the block's kind
    encoded_block(block) -> Block | None                  None: this encoding leaves `block` alone
    encode_sample(blocks, values, context, rng) -> values the whole sample; override to act
                                                          jointly (see ProjectiveTransforms)
"""
from __future__ import annotations

import enum
from typing import Any, ClassVar, Sequence

import numpy as np

from ..blocks import Block
from ..kinds import KindRegistry, freeze


class Context(str, enum.Enum):
    """Why a sample is encoded; decides, e.g., whether to augment."""

    TRAINING = "training"
    VALIDATION = "validation"
    INFERENCE = "inference"

    @classmethod
    def of(cls, value: "Context | str") -> "Context":
        try:
            return cls(value)
        except ValueError:
            raise ValueError(f"context must be one of {[c.value for c in cls]}, got {value!r}") from None


class Encoding:
    """Base class with the do-nothing defaults; subclasses override what they change."""

    # The name in JSON: the short name for hotstart's own encodings, module.qualname for others
    # (see hotstart/kinds.py); every subclass registers itself when it is defined.
    kind: ClassVar[str] = "Encoding"
    _kinds: ClassVar[KindRegistry] = KindRegistry("encoding")

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        cls.kind = Encoding._kinds.register(cls)

    def encoded_block(self, block: Block) -> Block | None:
        return None

    def applies(self, block: Block) -> bool:
        """Does this encoding change `block`? (Cheap; subclasses override with isinstance checks.)"""
        return self.encoded_block(block) is not None

    def encode(self, block: Block, value: Any, context: Context, rng: np.random.Generator | None = None) -> Any:
        return value

    def decode(self, block: Block, value: Any, context: Context = Context.INFERENCE) -> Any:
        """`block` is the *encoded* block (what `encoded_block` returned)."""
        return value

    def encode_sample(self, blocks: Sequence[Block], values: Sequence[Any], context: Context,
                      rng: np.random.Generator | None = None) -> list:
        return [self.encode(b, v, context, rng) if self.applies(b) else v for b, v in zip(blocks, values)]

    # JSON round trip --------------------------------------------------------------
    def _params(self) -> dict:
        return {}

    def to_dict(self) -> dict:
        return {"kind": self.kind, **self._params()}

    @staticmethod
    def from_dict(d: dict) -> "Encoding":
        """The encoding a `to_dict` result describes (`UnknownKindError` for an unknown kind)."""
        if not isinstance(d, dict):
            raise TypeError(f"an encoding is described by a dict (JSON object), got {d!r}")
        d = dict(d)
        return Encoding._kinds.resolve(d.pop("kind", None))(**d)

    def __repr__(self):
        args = ", ".join(f"{k}={v!r}" for k, v in self._params().items())
        return f"{type(self).__name__}({args})"

    def __eq__(self, other):
        return type(self) is type(other) and self._params() == other._params()

    def __hash__(self):
        return hash((type(self), freeze(self._params())))  # equal encodings hash equal
