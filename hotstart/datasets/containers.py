"""Data containers: indexable, sized, and lazy where it matters (as in FastAI.jl / MLUtils).

Data is a pair ``(inputs, targets)`` of equal-length containers. A container is anything with
``len`` and ``[i]``: a list, a numpy array, or one of these:

- `Samples(n, getter)`: item ``i`` is ``getter(i)``, computed when read (no I/O before that);
- `mapobs(f, container)`: item ``i`` is ``f(container[i])``; they compose;
- `Subset(container, indices)`: a view of some items;
- `SampleField(dataset, k)`: field ``k`` of a map-style dataset's samples (what `as_data` makes of
  a torch-style dataset); reading it reads the whole sample.

`Data` is the pair itself (a tuple, so ``inputs, targets = data`` works) that may also carry
named splits, e.g. ``{"train": [...], "valid": [...]}`` from a folder layout.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Callable, Sequence

import numpy as np

from ..arguments import is_int
from ..errors import UsageError, UsageTypeError
from .errors import DatasetError


class LazyContainer:
    """What every container here shares: ``c[i]`` for an index (negative counts from the end),
    ``c[a:b:k]`` for a lazy `Subset` view (as a list slices), iteration. A subclass provides
    ``__len__`` and `item` (an index already checked to be in range)."""

    def item(self, i: int):
        raise NotImplementedError

    def __getitem__(self, i):
        if isinstance(i, slice):
            return Subset(self, range(*i.indices(len(self))))
        return self.item(_check_index(i, len(self)))

    def __iter__(self):
        return (self.item(i) for i in range(len(self)))


class Samples(LazyContainer):
    """A lazy container of `n` items: ``samples[i] == getter(i)``, computed on access."""

    def __init__(self, n: int, getter: Callable[[int], Any]):
        self.n = int(n)
        self.getter = getter

    def __len__(self):
        return self.n

    def item(self, i):
        return self.getter(i)

    def __repr__(self):
        return f"Samples(n={self.n}, getter={getattr(self.getter, '__name__', self.getter)!r})"


class mapobs(LazyContainer):  # noqa: N801 - the FastAI.jl / MLUtils name, used like a function
    """Lazily apply `f` to every item of `container`: ``mapobs(f, c)[i] == f(c[i])``."""

    def __init__(self, f: Callable[[Any], Any], container: Sequence):
        self.f = f
        self.container = container

    def __len__(self):
        return len(self.container)

    def item(self, i):
        return self.f(self.container[i])

    def __repr__(self):
        return f"mapobs({getattr(self.f, '__name__', self.f)!r}, <{len(self)} items>)"


class Subset(LazyContainer):
    """The items of `container` at `indices`, in that order, without copying them."""

    def __init__(self, container: Sequence, indices: Sequence[int]):
        self.container = container
        self.indices = [int(i) for i in indices]

    def __len__(self):
        return len(self.indices)

    def item(self, i):
        return self.container[self.indices[i]]

    def __repr__(self):
        return f"Subset(<{len(self)} of {len(self.container)} items>)"


class SampleField(LazyContainer):
    """Field `k` of each sample of a map-style dataset: ``SampleField(ds, 1)[i] == ds[i][1]``.

    A map-style dataset hands out whole samples only, so reading one field reads (and decodes)
    the whole sample: `reads_whole_samples` says so, and checks that only want targets skip it.
    """

    reads_whole_samples = True

    def __init__(self, dataset, k: int):
        self.dataset = dataset
        self.k = int(k)

    def __len__(self):
        return len(self.dataset)

    def item(self, i):
        return self.dataset[i][self.k]

    def __repr__(self):
        return f"SampleField({type(self.dataset).__name__}, {self.k})"


def reads_whole_samples(container) -> bool:
    """True when reading an item of `container` reads a whole sample (`SampleField`, or a
    `Subset` / `mapobs` of one), so that reading every item costs as much as an epoch."""
    while isinstance(container, (Subset, mapobs)):
        container = container.container
    return bool(getattr(container, "reads_whole_samples", False))


class Data(tuple):
    """``(inputs, targets)``, checked to have equal lengths, with optional named `splits`."""

    def __new__(cls, inputs: Sequence, targets: Sequence, splits: dict[str, Sequence[int]] | None = None):
        if len(inputs) != len(targets):
            raise DatasetError(f"inputs and targets differ in length: {len(inputs)} != {len(targets)}")
        self = super().__new__(cls, (inputs, targets))
        self.splits = {k: [int(i) for i in v] for k, v in (splits or {}).items()}
        n = len(inputs)
        for name, idx in self.splits.items():
            bad = next((i for i in idx if not 0 <= i < n), None)
            if bad is not None:
                raise DatasetError(f"split {name!r} holds index {bad}, outside 0..{n - 1} ({n} samples)")
        return self

    @property
    def inputs(self):
        return self[0]

    @property
    def targets(self):
        return self[1]

    def subset(self, indices: Sequence[int]) -> "Data":
        return Data(Subset(self[0], indices), Subset(self[1], indices))

    def split(self, name: str) -> "Data":
        if name not in self.splits:
            raise KeyError(f"no split named {name!r}; this data has {sorted(self.splits) or 'no splits'}")
        return self.subset(self.splits[name])

    def __repr__(self):
        extra = f", splits={ {k: len(v) for k, v in self.splits.items()} }" if self.splits else ""
        return f"Data(<{len(self[0])} samples>{extra})"


def as_data(data) -> Data:
    """Accept a `Data`, an ``(inputs, targets)`` pair, or a map-style dataset of (x, y) samples.

    A map-style dataset becomes two `SampleField`s. Its targets cannot be read without reading
    (and decoding) whole samples, so `tasklearner` does not check them all before training, as it
    does for an ``(inputs, targets)`` pair; each is checked when its sample is encoded, and a bad
    one is reported with the sample's index. Pass ``(inputs, targets)`` to have them checked first.
    """
    if isinstance(data, Data):
        return data
    if isinstance(data, tuple) and len(data) == 2 and hasattr(data[0], "__len__") and hasattr(data[1], "__len__") \
            and hasattr(data[0], "__getitem__"):
        return Data(data[0], data[1])
    if isinstance(data, Mapping):  # a dict has __len__ and __getitem__, but its items are not samples
        raise UsageTypeError(f"data must be an (inputs, targets) pair or a map-style dataset of samples, got a "
                             f"{type(data).__name__} with keys {list(data)[:5]}; for a validation split pass "
                             f"validdata= (or valid_pct=)")
    if hasattr(data, "__len__") and hasattr(data, "__getitem__"):  # map-style dataset of samples
        return Data(SampleField(data, 0), SampleField(data, 1))
    raise UsageTypeError(f"data must be an (inputs, targets) pair or a map-style dataset of samples, "
                         f"got {type(data).__name__}")


def split_random(n: int, valid_pct: float = 0.2, seed: int | None = 0) -> tuple[list[int], list[int]]:
    """Shuffle ``range(n)`` with a private generator and cut it: (train indices, valid indices)."""
    if not 0.0 < valid_pct < 1.0:
        raise UsageError(f"valid_pct must be between 0 and 1 (exclusive), got {valid_pct!r}")
    if n < 2:
        raise DatasetError(f"cannot split {n} sample(s) into training and validation sets")
    order = np.random.default_rng(seed).permutation(n)
    n_valid = min(max(1, int(round(n * valid_pct))), n - 1)
    return sorted(order[n_valid:].tolist()), sorted(order[:n_valid].tolist())


HELD_OUT_SPLITS = ("test",)
"""Splits that are never trained or validated on (`split_train_valid` leaves them out)."""


def split_train_valid(data: Data, valid_pct: float = 0.2, seed: int | None = 0,
                      validdata: Data | None = None) -> tuple[Data, Data]:
    """(training data, validation data) for a fit, by the data's named splits when it has them.

    - Training uses the "train" split; without one, every sample outside the other named splits.
    - Validation uses `validdata` when given, else the "valid" split, else a random `valid_pct`
      of the *training* samples (`split_random`, seeded).
    - Held-out splits (`HELD_OUT_SPLITS`: "test") are in neither: evaluate on
      ``data.split("test")`` yourself, once, at the end.
    """
    splits = getattr(data, "splits", {}) or {}
    n = len(data[0])
    _refuse_overlap(splits)
    if "train" in splits:
        pool = list(splits["train"])
    else:
        named = {i for name, idx in splits.items() for i in idx}
        pool = [i for i in range(n) if i not in named]
    whole = not splits  # no named splits: train on `data` itself, as before splits existed
    if validdata is not None:
        return (data if whole else data.subset(pool)), validdata
    if "valid" in splits:
        return data.subset(pool), data.split("valid")
    if not pool:
        raise DatasetError(f"no samples to train on: every sample is in a held-out split {sorted(splits)}")
    train_pos, valid_pos = split_random(len(pool), valid_pct, seed)
    return data.subset([pool[p] for p in train_pos]), data.subset([pool[p] for p in valid_pos])


def _refuse_overlap(splits: dict) -> None:
    """A sample in training and in validation or test makes the scores lie: refuse it."""
    named = [k for k in ("train", "valid", *HELD_OUT_SPLITS) if k in splits]
    for a_i, a in enumerate(named):
        for b in named[a_i + 1:]:
            shared = set(splits[a]) & set(splits[b])
            if shared:
                raise DatasetError(f"splits {a!r} and {b!r} share {len(shared)} sample(s), e.g. index "
                                 f"{min(shared)}; a sample belongs to one split")


def source_index(container, i: int) -> int:
    """The index in the underlying dataset of item `i` of `container`, through `Subset` views.

    Error messages name a sample by this index, so that "sample 17" is the 18th file of the
    folder or table, whatever split or subset it was read through.
    """
    i = int(i)
    while isinstance(container, Subset):
        i = container.indices[_check_index(i, len(container))]
        container = container.container
    return i


def _check_index(i, n):
    if not is_int(i):
        raise TypeError(f"container index must be an integer or a slice, got {type(i).__name__}")
    i = int(i)
    if i < 0:
        i += n
    if not 0 <= i < n:
        raise IndexError(f"index {i} out of range for a container of {n} items")
    return i
