"""`SeriesPreprocessing`: a series to one float32 tensor (channels, length), statistics from training.

Inference (and validation), in order, all in numpy: the model contract's ``encode_series``
(hotstart/contract/series_input.py), which the predictor and every runtime call too:

1. standardise: ``normalize="channel"`` uses each channel's mean and standard deviation over the
   *training split* (learned by `fit`, saved in ``task.json``); ``"series"`` z-normalises each
   channel of each series by its own statistics (the UCR archive's convention, needing none
   saved); ``None`` leaves the values as they are;
2. missing values (NaN) become 0, the training mean after standardisation;
3. pad or crop to `length`: shorter series get zeros at the end, longer ones keep their first
   `length` steps. `length` is the block's fixed length, or, for a variable one, the longest
   training series (capped by ``max_length``), learned by `fit`;
4. with ``mask=True``, one more channel that is 1 where a step was observed and 0 where it was
   padding or missing, for a model that must tell a real zero from no data. The convolutional
   models here pool over time and do well without it (pads are the mean), so it is off by default.

Training only, each drawn from the encoding's ``numpy.random.Generator`` and off by default:
``scale`` (multiply each channel by ``1 + N(0, scale)``), ``jitter`` (add ``N(0, jitter)`` to every
observed step) and ``shift`` (move the series by up to ``shift * length`` steps either way,
filling with zeros: a random crop with padding). What the literature finds: in Iwana and Uchida's
survey over the UCR archive (PLoS ONE 16(7), 2021, doi:10.1371/journal.pone.0254841), window
slicing / cropping (our `shift`) and warping help most often, and jittering and scaling help on
some sets and hurt on others; for wearable sensor data (Um et al., ICMI 2017,
doi:10.1145/3136755.3136817) jitter and scaling are among the transforms that help. InceptionTime's
published results use no augmentation, hence off by default.

`TargetScaling` normalises regression targets with the training targets' mean and standard
deviation, and decodes predictions back to their units.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from ..blocks import Block, Continuous
from ..blocks.timeseries import SeriesTensor, TimeSeries, as_series
from ..contract.errors import InputValueError
from ..contract.series_input import EPS, encode_series, observed_mean_std
from ..errors import SampleError, UsageError
from .base import Context, Encoding

NORMALIZE = ("channel", "series", None)


class SeriesPreprocessing(Encoding):
    """Standardise, fill, pad / crop (statistics from `fit`); augment in training only."""

    def __init__(self, channels: int, length: int | None = None, *, normalize: str | None = "channel",
                 mean: Sequence[float] | None = None, std: Sequence[float] | None = None, mask: bool = False,
                 max_length: int | None = None, shift: float = 0.0, jitter: float = 0.0, scale: float = 0.0):
        if normalize not in NORMALIZE:
            raise UsageError(f"SeriesPreprocessing(normalize=...) must be one of {NORMALIZE}, got {normalize!r}")
        for name, v in (("shift", shift), ("jitter", jitter), ("scale", scale)):
            if not (isinstance(v, (int, float)) and 0.0 <= v and (name != "shift" or v < 1.0)):
                raise UsageError(f"SeriesPreprocessing({name}=...) must be a number >= 0"
                                 f"{' and < 1' if name == 'shift' else ''}, got {v!r}")
        self.channels = int(channels)
        self.length = None if length is None else int(length)
        self.max_length = None if max_length is None else int(max_length)
        self.normalize = normalize
        self.mean = None if mean is None else [float(v) for v in mean]
        self.std = None if std is None else [float(v) for v in std]
        self.mask = bool(mask)
        self.shift, self.jitter, self.scale = float(shift), float(jitter), float(scale)
        if self.mean is not None and (len(self.mean) != self.channels or len(self.std or []) != self.channels):
            raise UsageError(f"SeriesPreprocessing: mean and std need one value per channel ({self.channels})")

    @property
    def fitted(self) -> bool:
        return self.length is not None and (self.normalize != "channel" or self.mean is not None)

    @property
    def out_channels(self) -> int:
        return self.channels + int(self.mask)

    def fit(self, series: Sequence[Any]) -> "SeriesPreprocessing":
        """A new encoding with the length (if not fixed) and channel statistics of `series`: the training split."""
        if len(series) == 0:
            raise UsageError("SeriesPreprocessing.fit: no series to learn statistics from")
        arrays = [as_series(series[i]) for i in range(len(series))]
        length = self.length or max(a.shape[1] for a in arrays)
        if self.max_length is not None:
            length = min(length, self.max_length)
        mean = std = None
        if self.normalize == "channel":
            flat = np.concatenate(arrays, axis=1)
            observed = ~np.isnan(flat)
            mean, std = observed_mean_std(flat, observed)
            empty = [c for c in range(self.channels) if not observed[c].any()]
            if empty:
                raise UsageError(f"channel(s) {empty} have no values in the training split: nothing to standardise with")
            mean, std = mean.tolist(), (std + EPS).tolist()
        return SeriesPreprocessing(self.channels, length, normalize=self.normalize, mean=mean, std=std, mask=self.mask,
                                   max_length=self.max_length, shift=self.shift, jitter=self.jitter, scale=self.scale)

    # --- the encoding protocol -------------------------------------------------------------
    def applies(self, block: Block) -> bool:
        return isinstance(block, TimeSeries)

    def encoded_block(self, block: Block) -> Block | None:
        if isinstance(block, TimeSeries):
            return SeriesTensor(self.out_channels, self.length)
        return None

    def encode(self, block, value, context=Context.TRAINING, rng=None):
        import torch

        return torch.from_numpy(self.encode_array(as_series(value), context, rng))

    def encode_array(self, x: np.ndarray, context=Context.INFERENCE, rng=None) -> np.ndarray:
        """One series as numpy float32 (the torch-free path; augmentation only in training)."""
        self._require_fitted()
        augment = Context.of(context) is Context.TRAINING and (self.shift or self.jitter or self.scale)
        if augment and rng is None:
            raise UsageError("SeriesPreprocessing: training-time augmentation needs an rng (numpy Generator)")
        if augment and (self.jitter or self.scale):
            x = self._scale_and_jitter(x, rng)
        try:
            out = encode_series(x, length=self.length, normalize=self.normalize, mean=self.mean, std=self.std,
                                mask=self.mask)
        except InputValueError as e:
            raise SampleError(f"the series: {e}") from None
        if augment and self.shift:
            k = int(rng.integers(-round(self.shift * self.length), round(self.shift * self.length) + 1))
            out = np.roll(out, k, axis=1)
            if k > 0:
                out[:, :k] = 0.0
            elif k < 0:
                out[:, k:] = 0.0
        return out

    def _scale_and_jitter(self, x, rng):
        """Scaling and jitter in standardised units: applied to the raw series scaled by the channel std."""
        if self.normalize == "channel":
            mean, std = np.asarray(self.mean)[:, None], np.asarray(self.std)[:, None]
        else:
            m, s = observed_mean_std(x, ~np.isnan(x))
            mean, std = m[:, None], s[:, None] + EPS
        z = (x - mean) / std
        if self.scale:
            z = z * (1.0 + self.scale * rng.standard_normal((x.shape[0], 1)))
        if self.jitter:
            z = z + self.jitter * rng.standard_normal(x.shape)
        return z * std + mean

    def decode(self, block, value, context=Context.INFERENCE):
        """An encoded series back to numpy (channels, length) in standardised units (mask channel dropped)."""
        v = value.detach().cpu().numpy() if hasattr(value, "detach") else np.asarray(value)
        return v[: self.channels].astype(np.float32)

    def _require_fitted(self):
        if not self.fitted:
            raise UsageError("SeriesPreprocessing has no statistics yet: call task.setup(training_data) "
                             "(tasklearner does it on the training split)")

    # --- JSON ------------------------------------------------------------------------------
    def _params(self):
        return {"channels": self.channels, "length": self.length, "normalize": self.normalize, "mean": self.mean,
                "std": self.std, "mask": self.mask, "max_length": self.max_length, "shift": self.shift,
                "jitter": self.jitter, "scale": self.scale}


class TargetScaling(Encoding):
    """Regression targets (`Continuous`) to ``(y - mean) / std`` with training statistics; decoded back."""

    def __init__(self, mean: Sequence[float] | None = None, std: Sequence[float] | None = None):
        self.mean = None if mean is None else [float(v) for v in mean]
        self.std = None if std is None else [float(v) for v in std]

    @property
    def fitted(self) -> bool:
        return self.mean is not None

    def fit(self, targets: Sequence[Any]) -> "TargetScaling":
        y = np.stack([np.asarray(targets[i], dtype=np.float64).reshape(-1) for i in range(len(targets))])
        return TargetScaling(y.mean(0).tolist(), (y.std(0) + EPS).tolist())

    def applies(self, block):
        return isinstance(block, Continuous)

    def encoded_block(self, block):
        return block if isinstance(block, Continuous) else None

    def encode(self, block, value, context=Context.TRAINING, rng=None):
        import torch

        if not self.fitted:
            raise UsageError("TargetScaling has no statistics yet: call task.setup(training_data)")
        y = (np.asarray(value, dtype=np.float64) - self.mean) / self.std
        return torch.from_numpy(y.astype(np.float32))

    def decode(self, block, value, context=Context.INFERENCE):
        v = value.detach().cpu().double().numpy() if hasattr(value, "detach") else np.asarray(value, dtype=np.float64)
        return (v * self.std + self.mean).astype(np.float32)

    def _params(self):
        return {"mean": self.mean, "std": self.std}
