"""Series tasks: a class per series (`TSClassificationSingle`) or numbers per series (`TSRegression`).

    data, blocks = datasets.load("GunPoint")                 # (TimeSeries(1, length=150), Label(["1", "2"]))
    task = TSClassificationSingle(blocks)
    learner = tasklearner(task, data)        # InceptionTime, a batch for the data's size; sets the task up
    learner.fit_one_cycle(40)                # the task's learning rate (1e-3)
    label, probs = learner.predict(series)                   # an array (channels, length), or 1-D if univariate

As for tables, the encoding (`SeriesPreprocessing`) has statistics that must come from the training
split alone: the channels' means and standard deviations and, for variable lengths, the length to
pad to. A new task has none (``task.needs_setup``); ``task.setup(train)`` returns the same task with
them, and ``tasklearner`` calls it after splitting. They are part of ``to_dict()``, so of a saved
model's ``task.json``. A regression task also learns its targets' mean and standard deviation
(`TargetScaling`): the model fits normalised targets, `predict` and the metrics speak in the
targets' units.

The default backbone is ``"inceptiontime"`` (hotstart/models/inception_time.py); ``"resnet1d"`` and
any ``nn.Module`` taking (batch, channels, length) and returning (batch, features) work too. Given
no batch size and no learning rate, `tasklearner` and `fit_one_cycle` take the task's
(`default_batch_size`, `default_lr`): measured on UCR sets hotstart does not ship, in
benchmarks/scripts/timeseries_unshipped.py (results: benchmarks/results/timeseries-unshipped-*.json,
the table in benchmarks/README.md).
"""
from __future__ import annotations

from typing import Any, Sequence

from ..blocks import Block, Continuous, Label
from ..blocks.timeseries import TimeSeries
from ..encodings import Context, Encoding, OneHot
from ..encodings.timeseries import SeriesPreprocessing, TargetScaling
from ..errors import UsageError
from .classification import SingleLabelOutputs
from .config import build
from .regression import RegressionOutputs
from .training_statistics import TrainingStatisticsTask


class _SeriesTask(TrainingStatisticsTask):
    target_kind: type = Label
    describe_mocks, sample_name, sample_noun = 16, "series", "series"
    default_backbone = "inceptiontime"  # tasklearner's backbone when none is given
    default_lr = 1e-3  # fit_one_cycle's peak rate when none is given: see `default_batch_size`

    def default_batch_size(self, n_train: int) -> int:
        """About 8 optimiser steps per epoch: ``n_train // 8``, at least 8 and at most 64.

        The archives' training splits are small (36 to a few hundred series): the paper's batch of
        64 is one step per epoch there, affordable over its 1,500 epochs, not over the tens a CPU
        allows. On two UCR sets hotstart does not ship (ArrowHead, PickupGestureWiimoteZ, 3 seeds,
        40 epochs at lr 1e-3), batches of 8 instead of 64 lifted the test accuracy by 15-20 points;
        benchmarks/scripts/timeseries_unshipped.py has the table."""
        return max(8, min(64, int(n_train) // 8))

    def __init__(self, blocks: Sequence[Block], preprocessing: SeriesPreprocessing | None = None, *,
                 normalize: str | None = "channel", mask: bool = False, shift: float = 0.0, jitter: float = 0.0,
                 scale: float = 0.0, target_scaling: TargetScaling | None = None):
        blocks = self.check_blocks(blocks, TimeSeries, "TimeSeries(channels, length=...)")
        name = type(self).__name__
        series = blocks[0]
        prep = preprocessing or SeriesPreprocessing(series.channels, series.length, normalize=normalize, mask=mask,
                                                    max_length=series.max_length, shift=shift, jitter=jitter,
                                                    scale=scale)
        if prep.channels != series.channels or (series.length is not None and prep.length != series.length):
            raise UsageError(f"{name}: the preprocessing's {prep.channels} channel(s) / length {prep.length} differ "
                             f"from the block's {series!r}")
        if self.target_kind is Label:
            blocks[1].check_trainable(name)  # one class: refused now, as for tables and images
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
        self.check_training_inputs(series)
        scaling = {"target_scaling": self.encodings[1].fit(targets).to_dict()} if self.target_kind is Continuous else {}
        return self.with_config(preprocessing=self.preprocessing.fit(series).to_dict(), **scaling)

    # --- JSON --------------------------------------------------------------------------------
    def get_config(self) -> dict:
        """The preprocessing and, for regression, the target scaling, with their statistics once set
        up (``normalize``, ``mask``, ``shift``, ... live in the preprocessing)."""
        config = {"preprocessing": self.preprocessing.to_dict()}
        if self.target_kind is Continuous:
            config["target_scaling"] = self.encodings[1].to_dict()
        return config

    @classmethod
    def from_config(cls, blocks, config):
        config = dict(config)
        scaling = config.pop("target_scaling", None)
        config["target_scaling"] = None if scaling is None else Encoding.from_dict(scaling)
        return build(cls, [blocks, Encoding.from_dict(config.pop("preprocessing"))], config)


class TSClassificationSingle(SingleLabelOutputs, _SeriesTask):
    """``(TimeSeries(...), Label(classes))``: cross-entropy loss, accuracy, softmax probabilities."""

    target_kind = Label

    @property
    def classes(self) -> list:
        return list(self.target_block.classes)


class TSRegression(RegressionOutputs, _SeriesTask):
    """``(TimeSeries(...), Continuous(n))``: MSE on normalised targets; `rmse` (in the targets' units) and `r2`
    (regression.py)."""

    target_kind = Continuous

    def target_statistics(self):
        scaling = self.encodings[1]
        return (scaling.mean, scaling.std) if scaling.fitted else None
