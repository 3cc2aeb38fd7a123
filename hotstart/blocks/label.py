"""`Label` (one class of a fixed set) and `LabelMulti` (any subset of a fixed set)."""
from __future__ import annotations

from typing import Any, Iterable

import numpy as np

from ..errors import UsageError
from .base import Block, require_rng


def _as_classes(classes: Iterable[Any], who: str) -> list:
    classes = list(classes)
    if not classes:
        raise UsageError(f"{who}(classes=...) needs at least one class")
    classes = [c.item() if hasattr(c, "item") else c for c in classes]  # numpy scalars -> JSON-able
    # Repeats are dropped, first occurrence kept, so ``Label(labels)`` works on a column of
    # labels as it does in FastAI.jl; use `Label.from_data` for sorted classes.
    return list(dict.fromkeys(classes))


class Label(Block):
    """One class out of `classes`, e.g. ``Label(["cat", "dog"])``."""

    def __init__(self, classes: Iterable[Any]):
        self.classes = _as_classes(classes, "Label")
        self._index = {c: i for i, c in enumerate(self.classes)}

    @classmethod
    def from_data(cls, values: Iterable[Any]) -> "Label":
        """Learn the classes from data: the sorted distinct values."""
        values = [v.item() if hasattr(v, "item") else v for v in values]
        if not values:
            raise UsageError("Label.from_data: no values to learn classes from (empty dataset?)")
        return cls(sorted(set(values)))

    def _params(self):
        return {"classes": list(self.classes)}

    def check_trainable(self, who: str) -> None:
        """A classifier needs two classes or more: with one, cross-entropy is always 0 and
        accuracy always 1, and torchmetrics refuses ``num_classes=1`` at the first validation,
        a whole epoch later. Tasks call this when they are built."""
        if len(self.classes) < 2:
            raise UsageError(f"{who} needs at least 2 classes, got {len(self.classes)}: {self.classes!r}. "
                             f"A single-class problem is a yes/no question: use Label(['no', 'yes']) "
                             f"(or LabelMulti([name]) for a per-class score)")

    def index(self, value: Any) -> int:
        """Position of `value` in `classes`; `validate` first for a clear error."""
        return self._index[value]

    def _problem(self, value):
        try:
            ok = value in self._index
        except TypeError:
            ok = False
        if not ok:
            return f"label {value!r} is not one of the {len(self.classes)} classes {_preview(self.classes)}"
        return None

    def mock(self, rng: np.random.Generator):
        return self.classes[int(require_rng(rng).integers(len(self.classes)))]


class LabelMulti(Block):
    """Any subset (possibly empty) of `classes`; values are lists, tuples or sets."""

    def __init__(self, classes: Iterable[Any]):
        self.classes = _as_classes(classes, "LabelMulti")
        self._index = {c: i for i, c in enumerate(self.classes)}

    @classmethod
    def from_data(cls, values: Iterable[Iterable[Any]]) -> "LabelMulti":
        values = list(values)
        if not values:
            raise UsageError("LabelMulti.from_data: no values to learn classes from (empty dataset?)")
        return cls(sorted({c for v in values for c in v}))

    def _params(self):
        return {"classes": list(self.classes)}

    def _problem(self, value):
        if isinstance(value, (str, bytes)) or not isinstance(value, (list, tuple, set, frozenset)):
            return f"multi-label value must be a list, tuple or set of classes, got {type(value).__name__} {value!r}"
        bad = [v for v in value if v not in self._index]
        if bad:
            return f"labels {bad!r} are not among the {len(self.classes)} classes {_preview(self.classes)}"
        return None

    def mock(self, rng: np.random.Generator):
        keep = require_rng(rng).random(len(self.classes)) < 0.5
        return [c for c, k in zip(self.classes, keep) if k]


def _preview(classes: list) -> str:
    return repr(classes) if len(classes) <= 10 else repr(classes[:10])[:-1] + ", ...]"
