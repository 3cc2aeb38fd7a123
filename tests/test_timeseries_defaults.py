"""The series tasks' training defaults: `tasklearner` takes the batch size and `fit_one_cycle` the peak
learning rate from the task when given none (tasks/base.py's hooks), and with them a user's first
fit learns a shipped set to its published accuracy (benchmarks/scripts/timeseries_unshipped.py has
the measurements on four sets hotstart does not ship)."""
from __future__ import annotations

import numpy as np
import pytest

from hotstart import datasets, tasklearner
from hotstart.blocks import Image, Label, TimeSeries
from hotstart.learner.data import TaskDataset, make_loader
from hotstart.tasks import ImageClassificationSingle, TSClassificationSingle, TSRegression


def test_series_tasks_choose_about_eight_steps_per_epoch_and_others_keep_the_learners_defaults():
    task = TSClassificationSingle((TimeSeries(1, 24), Label(["a", "b"])))
    # n // 8, at least 8 (BatchNorm needs a few samples) and at most 64 (the paper's batch)
    assert [task.default_batch_size(n) for n in (10, 36, 100, 200, 512, 5000)] == [8, 8, 12, 25, 64, 64]
    assert TSClassificationSingle.default_lr == TSRegression.default_lr == 1e-3
    image = ImageClassificationSingle((Image(), Label(["a", "b"])), size=(8, 8))
    assert image.default_batch_size(5000) is None  # the learner's own 64 (its rate: tests/test_fit_defaults.py)
    assert TSClassificationSingle.default_pct_start is None  # fastai's 0.25


def test_a_default_fit_takes_batch_and_rate_from_the_task_and_learns_a_shipped_set():
    """ItalyPowerDemand as a user writes it: no batch size, no learning rate, 10 epochs. Seeds 0 and 1
    reached 0.966 / 0.968 on the 1,029 held-out test series (published InceptionTime: 0.965); the
    former defaults (batch 64: one step per epoch on 54 training series) reached 0.640 / 0.620."""
    data, blocks = datasets.load("ItalyPowerDemand")
    learner = tasklearner(TSClassificationSingle(blocks), data, seed=0, progress=False)
    assert learner.train_loader.batch_size == 8 and len(learner.train_loader.dataset) == 54  # 67 minus 20% to validate
    learner.fit_one_cycle(10)
    assert max(learner.recorder.lrs) == pytest.approx(1e-3)  # the one-cycle's peak: the task's default_lr
    test = data.split("test")
    scores = learner.validate(make_loader(TaskDataset(learner.task, test, "validation", 0), batch_size=256,
                                          train=False))
    assert scores["accuracy"] >= 0.94, scores


def test_an_explicit_batch_size_and_rate_still_win():
    data, blocks = datasets.load("ItalyPowerDemand")
    learner = tasklearner(TSClassificationSingle(blocks), data.split("train"), batch_size=16, seed=0, progress=False,
                          backbone="resnet1d")
    assert learner.train_loader.batch_size == 16
    learner.fit_one_cycle(1, 3e-2)
    assert max(learner.recorder.lrs) <= 3e-2 and max(learner.recorder.lrs) > 1e-2
    assert np.isfinite(learner.history[-1]["train_loss"])
