"""The inference encoding of a series: standardise, fill missing, pad or crop, mask.

    x = encode_series_input(array, meta)     # checks the shape, then `encode_series` with meta["series"]

``series`` holds what hotstart/encodings/timeseries.py learns from the training split:
``channels``, ``length``, ``normalize`` ("channel": the training channels' ``mean`` and ``std``;
"series": each series by its own; null: as is) and ``mask``. In order:

1. standardise (see above);
2. missing values (NaN) become 0, the training mean after standardisation;
3. pad with zeros at the end, or keep the first `length` steps;
4. with ``mask``, one more channel: 1 where every channel was observed, 0 where padded or missing.

Training's `SeriesPreprocessing` calls `encode_series` in every context (and augments around it in
training): one implementation. A value that cannot be encoded (an infinity, or a number whose
standardised value overflows float32) is an `InputValueError` naming the channel and the step.
"""
from __future__ import annotations

import numpy as np

from .errors import InputValueError

__all__ = ["EPS", "observed_mean_std", "encode_series", "encode_series_input"]

EPS = 1e-8  # added to a series' own std ("series" normalization), as training does
FLOAT32_MAX = float(np.finfo(np.float32).max)


def observed_mean_std(x: np.ndarray, observed: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per-row mean and standard deviation (ddof=0) of the observed values; 0 and 0 for a row with none."""
    count = np.maximum(observed.sum(axis=1), 1)
    filled = np.where(observed, x, 0.0)
    mean = filled.sum(axis=1) / count
    var = (np.where(observed, x - mean[:, None], 0.0) ** 2).sum(axis=1) / count
    return mean, np.sqrt(var)


def encode_series(x: np.ndarray, *, length: int, normalize: str | None, mean=None, std=None,
                  mask: bool = False) -> np.ndarray:
    """One series (channels, n), NaN = missing -> float32 (channels [+1], length)."""
    x = np.asarray(x, dtype=np.float64)
    if np.isinf(x).any():
        c, t = (int(i[0]) for i in np.nonzero(np.isinf(x)))
        raise InputValueError(f"channel {c}, step {t}: {x[c, t]} is not a finite number (an infinity; missing values are NaN)")
    observed = ~np.isnan(x)
    with np.errstate(over="ignore", invalid="ignore"):
        if normalize == "channel":
            x = (x - np.asarray(mean)[:, None]) / np.asarray(std)[:, None]
        elif normalize == "series":
            m, s = observed_mean_std(x, observed)
            if not np.isfinite(s).all():
                c = int(np.argmax(~np.isfinite(s)))
                raise InputValueError(f"channel {c}: its values are too large to standardise (their standard "
                                      f"deviation overflows float64; the largest is {np.nanmax(np.abs(x[c])):.3g})")
            x = (x - m[:, None]) / (s[:, None] + EPS)
        x = np.where(observed, x, 0.0)
    bad = ~(np.abs(x) <= FLOAT32_MAX)
    if bad.any():
        c, t = (int(i[0]) for i in np.nonzero(bad))
        raise InputValueError(f"channel {c}, step {t}: a value this large cannot be encoded: standardised "
                              f"({normalize or 'not normalized'}) it is beyond float32's +-{FLOAT32_MAX:.3g}")
    out = np.zeros((x.shape[0] + int(mask), length), dtype=np.float32)
    n = min(length, x.shape[1])
    out[: x.shape[0], :n] = x[:, :n]
    if mask:
        out[-1, :n] = observed[:, :n].all(axis=0)
    return out


def encode_series_input(x, meta: dict) -> np.ndarray:
    """An array (channels, length), or 1-D for one channel; NaN = missing -> float32 (channels [+1], length)."""
    t = meta["series"]
    a = np.asarray(x, dtype=np.float64)
    a = a[None, :] if a.ndim == 1 else a
    if a.ndim != 2 or a.shape[0] != t["channels"] or a.shape[1] == 0:
        raise InputValueError(f"this model predicts series of {t['channels']} channel(s): give it an array "
                              f"(channels, length), not shape {a.shape}")
    return encode_series(a, length=int(t["length"]), normalize=t["normalize"], mean=t.get("mean"),
                         std=t.get("std"), mask=bool(t["mask"]))
