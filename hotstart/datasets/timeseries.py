"""`TimeSeriesData`: a ``.ts`` file, a numpy array or a DataFrame -> ``(Data(series, targets), (TimeSeries, Label | Continuous))``.

    data, blocks = TimeSeriesData("GunPoint_TRAIN.ts", test="GunPoint_TEST.ts")   # the archive's split
    data, blocks = TimeSeriesData(x, y)              # x: (N, channels, length) or (N, length); y: N labels
    data, blocks = TimeSeriesData([a0, a1, ...], y)  # arrays (channels, length_i): unequal lengths
    data, blocks = TimeSeriesData(df, target="label")   # a DataFrame, one series per row, one step per column

Series are float64 arrays ``(channels, length)`` (NaN = missing). Targets are class labels (text),
giving ``Label(classes)``, or numbers, giving ``Continuous(1)`` (a regression), as the ``.ts`` header
says (``@classLabel`` / ``@targetLabel``) or, for arrays, as ``regression=`` says (default: float
targets that are not all whole numbers are a regression). With `test`, the Data has the splits
``{"train": ..., "test": ...}``; ``test`` is held out, as the folder recipes hold out ``test/``:
``tasklearner`` neither trains nor validates on it.

Bad data is refused here, naming where, rather than later without a word or with numpy's words:
a missing target (None, NaN) names its series or DataFrame row, as `TableData` does
(``dropna_target=True`` drops those series); class labels of one value only are no classifier; a
cell that is not a number names its series (or row) and step (or column): see `series_cells`.

The block is ``TimeSeries(channels, length=L)`` when every series has length L, else
``TimeSeries(channels)`` (variable; the task pads to the longest training series).
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Callable, NamedTuple, Sequence

import numpy as np

from ..blocks import Continuous, Label
from ..blocks.table import is_missing
from ..blocks.timeseries import TimeSeries
from .containers import Data
from .errors import DatasetError
from .frames import is_dataframe, row_namer
from .series_cells import LIST_HINT, bad_cell_error, float_cells, series_place
from .ts_format import read_ts

__all__ = ["TimeSeriesData", "load_series_set"]


def TimeSeriesData(source, targets: Sequence | None = None, *, test=None, test_targets: Sequence | None = None,  # noqa: N802
                   target: str | None = None, regression: bool | None = None, classes: Sequence[str] | None = None,
                   dropna_target: bool = False):
    """Series and targets -> ``(Data, (TimeSeries, Label | Continuous))``; see the module doc.

    A series whose target is missing (None, NaN) is an error naming it, as for `TableData`: it
    would otherwise become a class "None" or "nan". ``dropna_target=True`` drops those series."""
    series, labels, header_classes, is_reg, where, named = _read(source, targets, target, regression, dropna_target)
    verb = "holds"
    splits = None
    if test is not None:
        t_series, t_labels, t_classes, t_reg, t_where, t_named = _read(test, test_targets, target, is_reg,
                                                                       dropna_target, argument="test_targets=")
        if t_reg != is_reg:
            raise DatasetError(f"{t_where} has {'regression targets' if t_reg else 'class labels'}, "
                               f"but {where} has {'regression targets' if is_reg else 'class labels'}")
        if t_series[0].shape[0] != series[0].shape[0]:
            raise DatasetError(f"{t_where} has {t_series[0].shape[0]} channel(s), {where} has {series[0].shape[0]}")
        splits = {"train": list(range(len(series))), "test": list(range(len(series), len(series) + len(t_series)))}
        series, labels = series + t_series, labels + t_labels
        header_classes = header_classes or t_classes
        named, verb = (named, verb) if t_named == named else (f"{named} and {t_named}", "hold")
    channels = {s.shape[0] for s in series}
    if len(channels) != 1:
        raise DatasetError(f"{where}: series with different numbers of channels {sorted(channels)}")
    lengths = {s.shape[1] for s in series}
    block = TimeSeries(channels.pop(), lengths.pop() if len(lengths) == 1 else None)
    if is_reg:
        target_block = Continuous(1)
        targets_out = [np.asarray([v], dtype=np.float32) for v in labels]
    else:
        found = sorted({str(v) for v in labels})
        order = list(classes) if classes is not None else list(header_classes or found)
        if len(order) < 2:  # the task would refuse it too (one class), without naming the data; classes=
            # (or a .ts header) naming more keeps a one-class subset, an evaluation set of one class
            raise DatasetError(f"TimeSeriesData: {named} {verb} one value only ({found[0]!r}, in all {len(labels)} "
                               f"series): a classifier needs two classes or more; pass series of other classes "
                               f"too, classes=[...] naming them all, or regression=True for numbers")
        unknown = [c for c in found if c not in order]
        if unknown:
            raise DatasetError(f"{where}: label(s) {unknown} are not among the classes {order}")
        target_block = Label(order)
        targets_out = [str(v) for v in labels]
    return Data(series, targets_out, splits), (block, target_block)


def load_series_set(name: str, **kw):
    """A built-in set (see hotstart/datasets/timeseries_builtin.py) with its archive train / test split."""
    from .timeseries_builtin import series_files

    train, test = series_files(name)
    return TimeSeriesData(train, test=test, **kw)


def _read(source, targets, target, regression, dropna_target, argument="targets="):
    """(series list, labels list, header classes or None, is regression, a name for errors, the
    targets' name for errors: `argument`, the DataFrame's target column, or the .ts file)."""
    if isinstance(source, (str, os.PathLike)):
        path = Path(source)
        if targets is not None:
            raise DatasetError(f"TimeSeriesData({path}): a .ts file carries its own labels; targets= does not apply")
        f = read_ts(path)  # it refuses a missing label or target, naming the line
        if f.labels is None and f.targets is None:
            raise DatasetError(f"{path}: the file has no labels or targets (@classLabel false, no @targetLabel true)")
        if f.targets is not None:
            return f.series, [float(v) for v in f.targets], None, True, str(path), str(path)
        return f.series, list(f.labels), f.class_labels, False, str(path), str(path)
    if is_dataframe(source):
        if target is None or target not in source.columns:
            raise DatasetError(f"TimeSeriesData(DataFrame): target= must name a column; columns: {list(source.columns)}")
        steps = [c for c in source.columns if c != target]
        row_name = row_namer(source)
        try:
            values = source[steps].to_numpy(dtype=np.float64, na_value=np.nan)
        except (TypeError, ValueError) as e:  # only now the slow search for the cell
            raise bad_cell_error(source[steps].to_numpy(dtype=object, na_value=None), "the DataFrame",
                                 lambda p: f"{row_name(p[0])}, column {steps[p[1]]!r}", e) from None
        return _from_arrays(list(values[:, None, :]), source[target].tolist(), regression, f"DataFrame column {target!r}",
                            f"target column {target!r} of the DataFrame",
                            _MissingTargets(row_name, "rows", dropna_target))
    if targets is None:
        raise DatasetError("TimeSeriesData(array): pass the targets too, TimeSeriesData(series, targets)")
    if isinstance(source, np.ndarray):
        if source.dtype == object and source.ndim == 1:  # what np.array(ragged list, dtype=object) makes
            raise DatasetError(f"TimeSeriesData: got a numpy object array of {len(source)} series: {LIST_HINT}")
        if source.ndim not in (2, 3):
            raise DatasetError(f"TimeSeriesData: an array of series must be (N, length) or (N, channels, length), "
                               f"got shape {source.shape}")
        values = float_cells(source, "the array", series_place)
        arrays = list(values[:, None, :] if values.ndim == 2 else values)
    else:
        arrays = []
        for i, s in enumerate(source):
            a = float_cells(s, "the list of series", series_place, prefix=(i,))
            a = a[None, :] if a.ndim == 1 else a
            if a.ndim != 2:
                raise DatasetError(f"TimeSeriesData: series {i} must be (channels, length), got shape {a.shape}")
            arrays.append(a)
    return _from_arrays(arrays, list(targets), regression, "the arrays", argument,
                        _MissingTargets(lambda i: f"series {i}", "series", dropna_target))


class _MissingTargets(NamedTuple):
    """How to report, or drop, series whose target is missing: `row_name` names one (``series 3``,
    a DataFrame's ``row 3 (index 12)``), `noun` is what ``drop those ...`` drops."""
    row_name: Callable[[int], str]
    noun: str
    drop: bool


def _from_arrays(arrays, labels: list[Any], regression, where, named, missing: _MissingTargets):
    if len(arrays) != len(labels):
        raise DatasetError(f"TimeSeriesData: {len(arrays)} series but {len(labels)} targets")
    if not arrays:
        raise DatasetError("TimeSeriesData: no series")
    gone = [i for i, v in enumerate(labels) if is_missing(v)]
    if gone and not missing.drop:  # as TableData: else a class "None" or "nan", or a NaN regression target
        raise DatasetError(f"TimeSeriesData: {named} has {len(gone)} missing value(s), first in "
                           f"{missing.row_name(gone[0])}; drop those {missing.noun} (dropna_target=True) or fill them")
    kept = [i for i, v in enumerate(labels) if not is_missing(v)]  # positions in the source, for errors
    if not kept:
        raise DatasetError(f"TimeSeriesData: {named} has no values at all (every target is missing)")
    if gone:
        arrays, labels = [arrays[i] for i in kept], [labels[i] for i in kept]
    if regression is None:
        numeric = all(isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, bool) for v in labels)
        regression = numeric and not all(float(v).is_integer() for v in labels)
    if regression:
        try:
            labels = [float(v) for v in labels]
        except (TypeError, ValueError) as e:
            raise DatasetError(f"TimeSeriesData: regression targets of {where} must be numbers ({e})") from None
        bad = next((i for i, v in enumerate(labels) if not np.isfinite(v)), None)
        if bad is not None:  # training would fail on it later, without saying which series
            raise DatasetError(f"TimeSeriesData: regression target {kept[bad]} of {where} is {labels[bad]!r}, not a finite "
                               f"number: a series without a target cannot be trained on")
    else:
        labels = [str(int(v)) if isinstance(v, (float, np.floating)) and float(v).is_integer() else str(v) for v in labels]
    return arrays, labels, None, bool(regression), where, named
