"""`TabularPreprocessing`: a table row to one float32 vector, with statistics of the training split.

What it does is fastai's ``[Categorify, FillMissing, Normalize]`` (and FastAI.jl's
``TabularPreprocessing``), in one encoding whose statistics are plain JSON:

- categorify: each categorical column gets a vocabulary, the sorted categories seen in
  training; index 0 (``"#na#"``) is reserved for a missing or never-seen category;
- fill missing: a missing continuous value becomes the training median, and each continuous
  column that had missing values in training gets an indicator column ``<name>_na``, a
  categorical column with the vocabulary ``["#na#", "False", "True"]`` (as fastai);
- normalize: continuous columns with the training mean and standard deviation (of the filled
  column, ``ddof=0``, plus 1e-7, as fastai);
- regression targets (`Continuous` blocks) are normalized with the training targets' mean and
  standard deviation, and decoded back to their units.

The statistics come from `fit` (``task.setup(train)``, which ``tasklearner`` calls on the
training split once it has split the data): nothing from the validation rows leaks into them.
They are part of the task's JSON, so a loaded model encodes a new row exactly as in training.

The encoded row is ``[category indices (categorical, then indicators)..., normalized continuous...]``
as float32 (one tensor, so batching, devices and export need nothing special), made by the model
contract's `TableEncoder` (hotstart/contract/table_input.py): the predictor and every runtime
encode a row with that same code. Category indices
are exact in float32 up to 2**24; under ``precision="16-true"`` / ``"bf16-true"`` (which cast inputs)
the model refuses vocabularies whose indices half precision cannot hold.
"""
from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np

from ..blocks import Block, Continuous
from ..blocks.table import TableRow, TableTensor, as_row, category_key, is_missing
from ..contract.errors import InputValueError
from ..contract.table_input import NA, TableEncoder
from ..errors import SampleError, UsageError
from .base import Context, Encoding

EPS = 1e-7


def finite_mean_std(values: np.ndarray, what: str) -> tuple[float, float]:
    """(mean, std + EPS) of finite float64 `values`, finite whatever their size.

    Plain ``values.std()`` squares the values, so one value of 1e308 made the std infinite, every
    encoded value of the column 0, and ``Infinity`` (not JSON) landed in task.json and the ONNX
    metadata. When the plain result overflows, it is computed again on the values divided by their
    largest magnitude, then scaled back (the plain result is kept otherwise: same numbers as before).
    """
    values = np.asarray(values, dtype=np.float64)
    if not np.isfinite(values).all():
        raise UsageError(f"{what} holds non-finite values; a mean and std need finite numbers")
    with np.errstate(over="ignore", invalid="ignore"):
        mean, std = float(values.mean()), float(values.std())
    if not (math.isfinite(mean) and math.isfinite(std)):
        scale = float(np.abs(values).max())
        unit = values / scale
        mean, std = float(unit.mean()) * scale, float(unit.std()) * scale
    std += EPS
    if not (math.isfinite(mean) and math.isfinite(std)):  # cannot happen for finite values; never write it
        raise UsageError(f"{what}: its mean / std ({mean}, {std}) are not finite numbers")
    return mean, std


def _check_statistics(prep) -> None:
    """Statistics given (e.g. read from a task.json) must be finite, with positive stds: an infinite
    or zero std silently encodes a whole column to 0 (or NaN)."""
    for c in prep.continuous:
        for name in ("median", "mean", "std"):
            v = getattr(prep, name)[c]
            if not math.isfinite(v) or (name == "std" and v <= 0):
                raise UsageError(f"TabularPreprocessing: the {name} of column {c!r} is {v}; it must be a finite "
                                 f"number{' above 0' if name == 'std' else ''}")
    for name in ("target_mean", "target_std"):
        for j, v in enumerate(getattr(prep, name) or []):
            if not math.isfinite(v) or (name == "target_std" and v <= 0):
                raise UsageError(f"TabularPreprocessing: {name}[{j}] is {v}; it must be a finite number"
                                 f"{' above 0' if name == 'target_std' else ''}")


class TabularPreprocessing(Encoding):
    """Categorify, fill missing, normalize (statistics from `fit`); normalize regression targets."""

    def __init__(self, categorical: Sequence[str] = (), continuous: Sequence[str] = (), *,
                 vocab: dict | None = None, na_columns: Sequence[str] | None = None, median: dict | None = None,
                 mean: dict | None = None, std: dict | None = None, target_mean: Sequence[float] | None = None,
                 target_std: Sequence[float] | None = None):
        self.categorical = list(categorical)
        self.continuous = list(continuous)
        self.vocab = None if vocab is None else {c: [str(v) for v in vocab[c]] for c in self.categorical}
        self.na_columns = None if na_columns is None else list(na_columns)
        self.median = None if median is None else {c: float(median[c]) for c in self.continuous}
        self.mean = None if mean is None else {c: float(mean[c]) for c in self.continuous}
        self.std = None if std is None else {c: float(std[c]) for c in self.continuous}
        self.target_mean = None if target_mean is None else [float(v) for v in target_mean]
        self.target_std = None if target_std is None else [float(v) for v in target_std]
        if self.fitted:
            bad = [c for c in self.na_columns if c not in self.continuous]
            if bad:
                raise UsageError(f"TabularPreprocessing: na_columns {bad} are not continuous columns")
            _check_statistics(self)
            self._encoder = TableEncoder(self._params())  # the contract's: one row encoding everywhere

    @property
    def fitted(self) -> bool:
        return None not in (self.vocab, self.na_columns, self.median, self.mean, self.std)

    # --- learning the statistics ---------------------------------------------------------
    def fit(self, rows: Sequence[Any], targets: Sequence[Any] | None = None) -> "TabularPreprocessing":
        """A new encoding with statistics learned from `rows` (and regression `targets`): the training split."""
        n = len(rows)
        if n == 0:
            raise UsageError("TabularPreprocessing.fit: no rows to learn statistics from")
        vocab, median, mean, std, na_columns = {}, {}, {}, {}, []
        cats = {c: set() for c in self.categorical}
        conts = {c: np.empty(n, dtype=np.float64) for c in self.continuous}
        for i in range(n):
            row = as_row(rows[i])  # keys as text, as encoding reads them
            for c in self.categorical:
                key = category_key(row[c])
                if key is not None:
                    cats[c].add(key)
            for c in self.continuous:
                v = row[c]
                conts[c][i] = math.nan if is_missing(v) else float(v)
        for c in self.categorical:
            vocab[c] = [NA] + sorted(cats[c] - {NA})
        for c in self.continuous:
            col = conts[c]
            missing = np.isnan(col)
            if missing.all():
                raise UsageError(f"column {c!r} has no values in the training split ({n} rows): "
                                 "nothing to learn a median, mean or std from")
            median[c] = float(np.median(col[~missing]))
            if missing.any():
                na_columns.append(c)
            mean[c], std[c] = finite_mean_std(np.where(missing, median[c], col), f"column {c!r}")
        target_mean = target_std = None
        if targets is not None:
            y = np.stack([np.asarray(t, dtype=np.float64).reshape(-1) for t in targets])
            stats = [finite_mean_std(y[:, j], f"target {j}" if y.shape[1] > 1 else "the target")
                     for j in range(y.shape[1])]
            target_mean, target_std = [m for m, _ in stats], [s for _, s in stats]
        return TabularPreprocessing(self.categorical, self.continuous, vocab=vocab, na_columns=na_columns,
                                    median=median, mean=mean, std=std, target_mean=target_mean,
                                    target_std=target_std)

    # --- the encoding protocol -------------------------------------------------------------
    def applies(self, block: Block) -> bool:
        return isinstance(block, TableRow) or (isinstance(block, Continuous) and self.target_mean is not None)

    def cardinalities(self) -> list[int]:
        return [len(self.vocab[c]) for c in self.categorical] + [3] * len(self.na_columns)

    def encoded_block(self, block: Block) -> Block | None:
        if isinstance(block, TableRow):
            if not self.fitted:
                return TableTensor()
            return TableTensor(self.cardinalities(), len(self.continuous))
        if isinstance(block, Continuous) and self.target_mean is not None:
            return block
        return None

    def encode(self, block, value, context=Context.TRAINING, rng=None):
        import torch

        self._require_fitted()
        if isinstance(block, Continuous):
            y = (np.asarray(value, dtype=np.float64) - self.target_mean) / self.target_std
            return torch.from_numpy(y.astype(np.float32))
        return torch.from_numpy(self.encode_rows([value])[0])

    def encode_rows(self, rows: Sequence[Any]) -> np.ndarray:
        """Many rows at once, as a float32 array (N, n_cat + n_na + n_cont), by the contract's
        `TableEncoder` (a value it cannot take is a `SampleError` naming the column)."""
        self._require_fitted()
        try:
            return self._encoder.encode_rows(rows)
        except InputValueError as e:
            raise SampleError(str(e)) from None

    def decode(self, block, value, context=Context.INFERENCE):
        """A normalized target back to its units (numpy float32), or an encoded row back to a dict
        (a category index -> its text, ``None`` for index 0; a filled value -> ``None``)."""
        self._require_fitted()
        v = value.detach().cpu().double().numpy() if hasattr(value, "detach") else np.asarray(value, dtype=np.float64)
        if isinstance(block, Continuous):
            return (v * self.target_std + self.target_mean).astype(np.float32)
        n_cat, n_na = len(self.categorical), len(self.na_columns)
        row: dict[str, Any] = {}
        for j, c in enumerate(self.categorical):
            i = int(round(v[j]))
            row[c] = self.vocab[c][i] if 0 < i < len(self.vocab[c]) else None
        was_missing = {c: round(v[n_cat + k]) == 2 for k, c in enumerate(self.na_columns)}
        for j, c in enumerate(self.continuous):
            row[c] = None if was_missing.get(c) else float(v[n_cat + n_na + j] * self.std[c] + self.mean[c])
        return row

    def _require_fitted(self):
        if not self.fitted:
            raise UsageError("TabularPreprocessing has no statistics yet: call task.setup(training_data) "
                             "(tasklearner does it on the training split)")

    # --- JSON ------------------------------------------------------------------------------
    def _params(self):
        d = {"categorical": list(self.categorical), "continuous": list(self.continuous)}
        if self.fitted:
            d.update(vocab={c: list(v) for c, v in self.vocab.items()}, na_columns=list(self.na_columns),
                     median=dict(self.median), mean=dict(self.mean), std=dict(self.std))
        if self.target_mean is not None:
            d.update(target_mean=list(self.target_mean), target_std=list(self.target_std))
        return d

    def __repr__(self):
        state = "fitted" if self.fitted else "not fitted"
        return (f"TabularPreprocessing(categorical={self.categorical!r}, continuous={self.continuous!r}, {state}"
                + (", normalizes targets)" if self.target_mean is not None else ")"))
