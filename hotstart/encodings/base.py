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
from typing import Any, Sequence

import numpy as np

from ..blocks import Block
from ..errors import UsageError
from ..kinds import Kinded


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
            raise UsageError(f"context must be one of {[c.value for c in cls]}, got {value!r}") from None


class Encoding(Kinded, family="encoding"):
    """Base class with the do-nothing defaults; subclasses override what they change. The JSON round
    trip, equality and hashing come from `Kinded` (hotstart/kinds.py), from `_params()`."""

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

    def encode_batch(self, blocks: Sequence[Block], samples: Sequence[Sequence[Any]], context: Context,
                     rngs: Sequence[np.random.Generator | None]) -> list:
        """`encode_sample` for each of `samples` (each a list of values, one per block) with its
        own rng of `rngs`, in order. An encoding that can work on a whole batch at once overrides
        it (`ProjectiveTransforms`), giving each sample what `encode_sample` gives it."""
        return [self.encode_sample(blocks, values, context, rng) for values, rng in zip(samples, rngs)]

    def __repr__(self):
        args = ", ".join(f"{k}={v!r}" for k, v in self._params().items())
        return f"{type(self).__name__}({args})"
