"""`TableRow`: one row of a table, as named categorical and continuous columns.

A row is a mapping ``{column: value}`` (a dict; a pandas Series works too). Real tables have
holes, so a value may be *missing*: ``None``, a float NaN, or pandas' ``NA`` / ``NaT``.
Categorical values are compared as text (``2007``, ``2007.0`` and ``"2007"`` are the same
category, see `category_key`), so a model trained from a CSV predicts the same on a DataFrame
or a dict. Continuous values are numbers (or missing); infinities are not allowed.

`TableTensor` is the encoded row (see ``encodings/tabular.py``): one float32 vector holding
category indices first, then normalized continuous values.
"""
from __future__ import annotations

from typing import Any, Iterable

import numpy as np

from ..contract.errors import InputValueError
from ..contract.table_input import as_row as contract_as_row
from ..contract.table_input import category_key as contract_category_key
from ..contract.table_input import is_missing, row_problem  # is_missing: re-exported for the readers
from ..errors import UsageError, UsageTypeError
from .base import Block, is_tensor, require_rng


def category_key(value: Any) -> str | None:
    """The text a categorical value is known by: None when missing; integral numbers without
    a fraction (``2007.0`` -> ``"2007"``); booleans as ``"True"`` / ``"False"``; text as is.
    The model contract's rule (hotstart/contract/table_input.py), raising hotstart's error type."""
    try:
        return contract_category_key(value)
    except TypeError as e:
        raise UsageTypeError(str(e)) from None


def as_row(value: Any) -> Any:
    """A dict keyed by column names as text (as training reads them), from a dict, a one-row pandas
    DataFrame or a Series; anything else unchanged (the contract's `as_row`)."""
    try:
        return contract_as_row(value)
    except InputValueError as e:
        raise UsageError(str(e)) from None


class TableRow(Block):
    """One row: ``TableRow(categorical=["island", "sex"], continuous=["bill_length_mm"])``."""

    def __init__(self, categorical: Iterable[str] = (), continuous: Iterable[str] = ()):
        self.categorical = _names(categorical, "categorical")
        self.continuous = _names(continuous, "continuous")
        both = sorted(set(self.categorical) & set(self.continuous))
        if both:
            raise UsageError(f"TableRow: column(s) {both} are listed as both categorical and continuous")
        if not self.categorical and not self.continuous:
            raise UsageError("TableRow needs at least one categorical or continuous column")

    @property
    def columns(self) -> list[str]:
        return self.categorical + self.continuous

    def _params(self):
        return {"categorical": list(self.categorical), "continuous": list(self.continuous)}

    def _problem(self, value):
        return row_problem(value, self.categorical, self.continuous)  # the contract's rules for a row

    def mock(self, rng: np.random.Generator):
        """A row with, now and then, a missing value (10%) and an unseen category (5%)."""
        rng = require_rng(rng)
        row: dict[str, Any] = {}
        for c in self.categorical:
            u = rng.random()
            row[c] = None if u < 0.1 else (f"{c}-new{int(rng.integers(1 << 30))}" if u < 0.15
                                           else f"{c}-{int(rng.integers(4))}")
        for c in self.continuous:
            v = float(rng.standard_normal())
            row[c] = float("nan") if rng.random() < 0.1 else v
        return row


class TableTensor(Block):
    """An encoded row: a float32 vector ``[category indices..., continuous values...]``.

    `cardinalities` has one entry per categorical column (missing-value indicator columns
    included): how many indices it may hold. None (with `n_cont` None) means "not known yet":
    the encoding has not learned its statistics.
    """

    def __init__(self, cardinalities: Iterable[int] | None = None, n_cont: int | None = None):
        self.cardinalities = None if cardinalities is None else [int(c) for c in cardinalities]
        self.n_cont = None if n_cont is None else int(n_cont)

    def _params(self):
        return {"cardinalities": self.cardinalities, "n_cont": self.n_cont}

    @property
    def known(self) -> bool:
        return self.cardinalities is not None and self.n_cont is not None

    def shape(self):
        return (len(self.cardinalities) + self.n_cont,) if self.known else (0,)

    def _problem(self, value):
        if not is_tensor(value) or value.ndim != 1 or not value.is_floating_point():
            return f"expected a 1-D float tensor, got {getattr(value, 'shape', type(value).__name__)}"
        if self.known:
            if tuple(value.shape) != self.shape():
                return f"expected shape {self.shape()}, got {tuple(value.shape)}"
            idx = value[: len(self.cardinalities)]
            if any(not (0 <= float(i) < c and float(i).is_integer()) for i, c in zip(idx, self.cardinalities)):
                return f"category indices {idx.tolist()} do not fit cardinalities {self.cardinalities}"
        return None

    def mock(self, rng):
        import torch

        rng = require_rng(rng)
        if not self.known:
            raise UsageError("TableTensor.mock: the cardinalities are not known yet (set up the task first)")
        idx = [float(rng.integers(c)) for c in self.cardinalities]
        return torch.tensor(idx + rng.standard_normal(self.n_cont).tolist(), dtype=torch.float32)


def _names(columns: Iterable[str], what: str) -> list[str]:
    if isinstance(columns, str):
        columns = [columns]
    names = list(columns)
    bad = [c for c in names if not isinstance(c, str) or not c]
    if bad:
        raise UsageTypeError(f"TableRow({what}=...) takes column names (non-empty text), got {bad!r}")
    if len(set(names)) != len(names):
        raise UsageError(f"TableRow({what}=...) lists a column twice: {names}")
    return names
