"""Series tasks: a class per series (`TSClassificationSingle`) or numbers per series (`TSRegression`).

    data, blocks = datasets.load("GunPoint")                 # (TimeSeries(1, length=150), Label(["1", "2"]))
    task = TSClassificationSingle(blocks)
    learner = tasklearner(task, data, backbone="inceptiontime")   # sets the task up on the training split
    learner.fit_one_cycle(40, lr_max=3e-3)
    label, probs = learner.predict(series)                   # an array (channels, length), or 1-D if univariate

As for tables, the encoding (`SeriesPreprocessing`) has statistics that must come from the training
split alone: the channels' means and standard deviations and, for variable lengths, the length to
pad to. A new task has none (``task.needs_setup``); ``task.setup(train)`` returns the same task with
them, and ``tasklearner`` calls it after splitting. They are part of ``to_dict()``, so of a saved
model's ``task.json``. A regression task also learns its targets' mean and standard deviation
(`TargetScaling`): the model fits normalised targets, `predict` and the metrics speak in the
targets' units.

The default backbone is ``"inceptiontime"`` (hotstart/models/inception_time.py); ``"resnet1d"`` and
any ``nn.Module`` taking (batch, channels, length) and returning (batch, features) work too.
"""
from __future__ import annotations

import io
from typing import Any, Sequence

import numpy as np

from ..blocks import Block, Continuous, Label
from ..blocks.timeseries import TimeSeries
from ..encodings import Context, Encoding, OneHot
from ..encodings.timeseries import SeriesPreprocessing, TargetScaling
from ..errors import UsageError, UsageTypeError
from .base import SupervisedTask
from .classification import SingleLabelOutputs


class _SeriesTask(SupervisedTask):
    target_kind: type = Label
    default_backbone = "inceptiontime"  # tasklearner's backbone when none is given

    def __init__(self, blocks: Sequence[Block], preprocessing: SeriesPreprocessing | None = None, *,
                 normalize: str | None = "channel", mask: bool = False, shift: float = 0.0, jitter: float = 0.0,
                 scale: float = 0.0, target_scaling: TargetScaling | None = None):
        blocks = tuple(blocks)
        name = type(self).__name__
        if len(blocks) != 2 or not isinstance(blocks[0], TimeSeries) or type(blocks[1]) is not self.target_kind:
            target = "Label(classes)" if self.target_kind is Label else "Continuous(n)"
            raise UsageTypeError(f"{name} needs blocks=(TimeSeries(channels, length=...), {target}), got {blocks!r}")
        series = blocks[0]
        prep = preprocessing or SeriesPreprocessing(series.channels, series.length, normalize=normalize, mask=mask,
                                                    max_length=series.max_length, shift=shift, jitter=jitter,
                                                    scale=scale)
        if prep.channels != series.channels or (series.length is not None and prep.length != series.length):
            raise UsageError(f"{name}: the preprocessing's {prep.channels} channel(s) / length {prep.length} differ "
                             f"from the block's {series!r}")
        if self.target_kind is Label:
            targets = [OneHot()]
        else:
            targets = [target_scaling or TargetScaling()]
        super().__init__(blocks, [prep, *targets])

    @property
    def preprocessing(self) -> SeriesPreprocessing:
        return self.encodings[0]

    @property
    def needs_setup(self) -> bool:
        """True until the statistics are learned (`setup`); ``tasklearner`` checks this."""
        return not self.preprocessing.fitted or not getattr(self.encodings[1], "fitted", True)

    def setup(self, data) -> "_SeriesTask":
        """The same task with statistics learned from `data` = ``(series, targets)``: the training split only."""
        series, targets = data[0], data[1]
        if len(series) == 0:
            raise UsageError(f"{type(self).__name__}.setup: the training split has no series")
        block = self.input_block
        original = getattr(series, "indices", None)  # a Subset of the user's series: name their own index
        for i in range(len(series)):
            block.validate(series[i], where=f"series {original[i]}" if original is not None else f"training series {i}")
        scaling = self.encodings[1].fit(targets) if self.target_kind is Continuous else None
        return type(self)(self.blocks, self.preprocessing.fit(series), target_scaling=scaling)

    def head(self, num_features: int):
        import torch.nn as nn

        return nn.Linear(num_features, self._n_outputs())

    def _n_outputs(self) -> int:
        raise NotImplementedError

    # --- JSON --------------------------------------------------------------------------------
    def to_dict(self) -> dict:
        d = {"kind": self.kind, "blocks": [b.to_dict() for b in self.blocks],
             "preprocessing": self.preprocessing.to_dict()}
        if self.target_kind is Continuous:
            d["target_scaling"] = self.encodings[1].to_dict()
        return d

    @classmethod
    def _from_params(cls, d):
        scaling = Encoding.from_dict(d["target_scaling"]) if "target_scaling" in d else None
        return cls([Block.from_dict(b) for b in d["blocks"]], Encoding.from_dict(d["preprocessing"]),
                   target_scaling=scaling)

    def describe(self, *, file=None) -> str:
        """As for every task; a task not set up yet is described as set up on 16 mock series."""
        if not self.needs_setup:
            return super().describe(file=file)
        rng = np.random.default_rng(0)
        mocks = [self.mock_sample(rng) for _ in range(16)]
        shown = self.setup(([m[0] for m in mocks], [m[1] for m in mocks]))
        text = shown.describe(file=io.StringIO())
        note = "  (not set up yet: statistics above come from 16 mock series; tasklearner sets up on the training split)\n"
        print(text + note, end="", file=file)
        return text + note

    def __repr__(self):
        state = "not set up" if self.needs_setup else "set up"
        return f"{type(self).__name__}({self.input_block!r} -> {self.target_block!r}, {state})"


class TSClassificationSingle(SingleLabelOutputs, _SeriesTask):
    """``(TimeSeries(...), Label(classes))``: cross-entropy loss, accuracy, softmax probabilities."""

    target_kind = Label

    @property
    def classes(self) -> list:
        return list(self.target_block.classes)

    def _n_outputs(self):
        return len(self.classes)


class TSRegression(_SeriesTask):
    """``(TimeSeries(...), Continuous(n))``: MSE on normalised targets; `rmse` (in the targets' units) and `r2`."""

    target_kind = Continuous

    def _n_outputs(self):
        return self.target_block.n

    def output_shape(self) -> tuple[int, ...]:
        return (self.target_block.n,)

    def loss_fn(self):
        import torch.nn as nn

        return nn.MSELoss()

    def metrics(self) -> dict:
        from ..metrics import Denormalized, MeanSquaredError, R2Score

        scaling = self.encodings[1]
        if not scaling.fitted:
            raise UsageError("TSRegression.metrics: the task is not set up (no target statistics)")
        n = self.target_block.n
        if n == 1:
            return {"rmse": Denormalized(MeanSquaredError(squared=False), scaling.mean, scaling.std), "r2": R2Score()}
        rmses = {f"rmse_{i}": Denormalized(MeanSquaredError(squared=False), scaling.mean, scaling.std, output=i)
                 for i in range(n)}
        return {**rmses, "r2": R2Score()}

    def decode_output(self, output):
        """Outputs of one series -> (values in the targets' units as numpy float32 (n,), the same as a tensor)."""
        import torch

        values = self.decode_target(output.detach().float().cpu())
        return values, torch.from_numpy(values)
