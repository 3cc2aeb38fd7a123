"""Series read from files, and one prediction per series: ``hotstart predict SERIES_MODEL x.npy`` and a
bundle's ``python predictor.py model.onnx x.npy`` (so it lives in the contract, which the bundle
carries; numpy only).

A ``.npy`` file (``np.save``) holds

- one series: ``(steps,)``, or ``(channels, steps)`` for a model of several channels;
- several: ``(n, channels, steps)``, or ``(n, steps)`` for a model of one channel (aeon's and
  sktime's layout of a univariate collection).

It is read with ``allow_pickle=False``: a file that holds Python objects is refused, never
unpickled. NaN marks a missing step, as in training. ``hotstart predict`` also reads the ``.ts``
files of the UCR / UEA archives (it passes its reader in `readers`). Each series is printed as
``x.npy[3]: label (top-k)`` (the index only when the file holds several); with ``--json`` one
object per series, ``{"series": file, "index": i, ...}``. A file that cannot be read gets one
error line and the other files are still predicted; the exit status is then 1.
"""
from __future__ import annotations

from pathlib import Path
from typing import Callable, Iterator

import numpy as np

from .errors import InputValueError

__all__ = ["SERIES_SUFFIXES", "read_npy_series", "series_items", "predict_series_files"]

SERIES_SUFFIXES = (".npy",)
"""The series files the contract reads itself (`read_npy_series`); callers may add readers."""


def read_npy_series(path, channels: int) -> list[np.ndarray]:
    """The series in the ``.npy`` file at `path`, each ``(channels, steps)``, for a model of
    `channels` channels (see the module doc for the shapes taken). A file of no series, and a
    2-D ``(steps, 1)`` column for a one-channel model (a series saved transposed, which would
    read as `steps` series of one step), are refused."""
    try:
        a = np.load(path, allow_pickle=False)
    except (ValueError, EOFError) as e:  # object arrays ("allow_pickle=False"), an empty or damaged file
        raise InputValueError(f"{path}: not a .npy file of numbers ({e or 'empty'})") from None
    if not isinstance(a, np.ndarray):  # an .npz archive under a .npy name
        a.close()
        raise InputValueError(f"{path}: an .npz archive, not one array; np.save one array per file")
    if not (np.issubdtype(a.dtype, np.number) or a.dtype == np.bool_) or np.iscomplexobj(a):
        raise InputValueError(f"{path}: holds {a.dtype} values; a series is real numbers (NaN for a missing step)")
    a = a.astype(np.float64)
    if a.ndim == 2 and channels == 1 and a.shape[1] == 1 and a.shape[0] > 1:
        raise InputValueError(f"{path}: shape {a.shape}, a column: one series is (steps,) and several are "
                              f"(n, steps); save the series as a row (a.ravel(), or a.T for several)")
    if a.ndim == 1:
        series = [a[None, :]]
    elif a.ndim == 2:
        series = [a] if channels > 1 or a.shape[0] == 1 else [row[None, :] for row in a]
    elif a.ndim == 3:
        series = list(a)
    else:
        raise InputValueError(f"{path}: shape {a.shape}; a series file holds (steps,), (channels, steps) or "
                              f"(n, channels, steps)")
    if not series or series[0].shape[-1] == 0:
        raise InputValueError(f"{path}: shape {a.shape} holds no series (or series of no steps)")
    return series


def series_items(paths, channels: int, readers: dict[str, Callable] | None = None) -> Iterator[tuple]:
    """``(name, record, series or exception)`` for every series in the files `paths`, as
    `report.print_predictions` takes them. `readers`: {suffix: read(path, channels) -> [series]},
    added to the ``.npy`` reader."""
    readers = {".npy": read_npy_series, **(readers or {})}
    for path in map(str, paths):
        read = readers.get(Path(path).suffix.lower())
        try:
            if read is None:
                raise InputValueError(f"{path}: a series model reads {', '.join(sorted(readers))} files "
                                      f"(np.save of an array (steps,), (channels, steps) or (n, channels, steps)); "
                                      f"from Python, model.predict(array)")
            series = read(path, channels)
        except (OSError, ValueError) as e:
            message = str(e)
            yield path, {"series": path}, type(e)(message if message.startswith(path) else f"{path}: {message}")
            continue
        for i, s in enumerate(series):
            name = path if len(series) == 1 else f"{path}[{i}]"
            yield name, {"series": path, "index": i}, s


def predict_series_files(model, paths, top_k: int = 3, as_json: bool = False, out=None,
                         readers: dict[str, Callable] | None = None) -> int:
    """Print one prediction per series in the files `paths`; 1 if any file or series failed, else 0.
    `model`: a runtime (`ContractModel`) of a series kind."""
    from .report import print_predictions

    channels = int(model.meta["series"]["channels"])
    return print_predictions(model, series_items(paths, channels, readers), top_k, as_json, out)
