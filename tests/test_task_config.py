"""A task's configuration (``get_config``) and the JSON form blocks, encodings and tasks compare in.

- A subclass's own constructor arguments, declared in ``get_config`` (Keras-style), go into
  ``task.json``, count in ``==`` and survive every rebuild (tasklearner's setup, set_size,
  with_stats, loading); one it adds without declaring is refused, never silently reset.
- A tuple parameter compares equal to the list read back from JSON (eq, hash, a resume's task
  check); a parameter JSON cannot hold (numpy) is refused when the task is built, naming it.
"""
import json

import numpy as np
import pytest
import torch
import torch.nn as nn

from hotstart import ImageClassificationSingle, TabularClassificationSingle, load_learner, tasklearner
from hotstart.blocks import Continuous, Image, Label, TimeSeries
from hotstart.encodings import Encoding, OneHot
from hotstart.errors import UsageTypeError
from hotstart.strict_json import NotJSONError
from hotstart.tasks import SupervisedTask, TSRegression
from vector_blocks import Vector, VectorClassification, VectorTensor  # tests/ is on sys.path


class FocalImages(ImageClassificationSingle):
    def __init__(self, blocks, gamma=2.0, **kwargs):
        super().__init__(blocks, **kwargs)
        self.gamma = gamma

    def get_config(self):
        return {**super().get_config(), "gamma": self.gamma}


class FocalRows(TabularClassificationSingle):
    def __init__(self, blocks, preprocessing=None, gamma=2.0):
        super().__init__(blocks, preprocessing)
        self.gamma = gamma

    def get_config(self):
        return {**super().get_config(), "gamma": self.gamma}


class WeightedSeries(TSRegression):
    def __init__(self, blocks, preprocessing=None, weight=1.0, **kwargs):
        super().__init__(blocks, preprocessing, **kwargs)
        self.weight = weight

    def get_config(self):
        return {**super().get_config(), "weight": self.weight}


class Undeclared(ImageClassificationSingle):
    def __init__(self, blocks, gamma=2.0, **kwargs):
        super().__init__(blocks, **kwargs)
        self.gamma = gamma


def _images(task_cls=FocalImages, **kwargs):
    return task_cls((Image(channels=1), Label(list(range(10)))), size=8, augment={"flip": 0.0}, **kwargs)


# --- a subclass's own parameters ---------------------------------------------------------------

def test_a_subclass_parameter_survives_every_rebuild_of_an_image_task(digits_small, tmp_path):
    task = _images(gamma=5.0)
    assert task.to_dict()["gamma"] == 5.0 and task != _images(gamma=2.0) and task == _images(gamma=5.0)
    assert hash(task) == hash(_images(gamma=5.0))
    assert task.with_stats([0.5], [0.25]).gamma == 5.0 and task.with_stats([0.5], [0.25]).stats == ((0.5,), (0.25,))
    assert task.with_label_smoothing(0.1).gamma == 5.0
    assert task.with_config(size=[16, 16]).gamma == 5.0
    learner = tasklearner(task, digits_small[0], seed=0, progress=False)
    learner.set_size((12, 12))
    assert type(learner.task) is FocalImages and learner.task.gamma == 5.0 and learner.task.size == (12, 12)
    learner.save(tmp_path / "m")
    assert json.loads((tmp_path / "m" / "task.json").read_text())["task"]["gamma"] == 5.0
    loaded = load_learner(tmp_path / "m")
    assert type(loaded.task) is FocalImages and loaded.task.gamma == 5.0 and loaded.task == learner.task


def test_a_subclass_parameter_survives_a_table_tasks_setup():
    from hotstart.blocks import TableRow

    row = TableRow(categorical=["c"], continuous=["x"])
    task = FocalRows((row, Label(["a", "b"])), gamma=5.0)
    rows = [{"c": "u", "x": 1.0}, {"c": "v", "x": 2.0}, {"c": "u", "x": 4.0}]
    fitted = task.setup((rows, ["a", "b", "a"]))
    assert not fitted.needs_setup and type(fitted) is FocalRows and fitted.gamma == 5.0
    assert SupervisedTask.from_dict(fitted.to_dict()) == fitted


def test_a_subclass_parameter_survives_a_series_tasks_setup():
    task = WeightedSeries((TimeSeries(1, length=8), Continuous(1)), weight=3.0)
    rng = np.random.default_rng(0)
    fitted = task.setup(([rng.random((1, 8)).astype(np.float32) for _ in range(4)],
                         [np.array([float(i)], dtype=np.float32) for i in range(4)]))
    assert not fitted.needs_setup and fitted.weight == 3.0
    assert SupervisedTask.from_dict(fitted.to_dict()) == fitted and fitted != WeightedSeries(fitted.blocks)


def test_a_subclass_parameter_not_in_get_config_is_refused_not_lost(digits_small):
    task = _images(Undeclared, gamma=5.0)
    with pytest.raises(UsageTypeError, match=r"Undeclared.__init__ takes \['gamma'\], which Undeclared.get_config\(\) "
                                             r"does not return.*\"gamma\": self.gamma"):
        tasklearner(task, digits_small[0], seed=0, progress=False)
    with pytest.raises(UsageTypeError, match="gamma"):
        task.to_dict()
    with pytest.raises(UsageTypeError, match="gamma"):
        task.with_stats(None, None)


def test_a_constructor_that_does_not_take_the_configuration_is_named():
    class FixedSize(ImageClassificationSingle):
        def __init__(self, blocks):
            super().__init__(blocks, size=8)

    with pytest.raises(UsageTypeError, match=r"FixedSize cannot be rebuilt from its configuration .*from_config"):
        FixedSize((Image(channels=1), Label(["a", "b"]))).with_config(size=[16, 16])


def test_the_json_of_hotstarts_own_tasks_is_unchanged():
    """Saved task.json files of earlier versions keep loading, and new ones have the same keys."""
    task = ImageClassificationSingle((Image(channels=1), Label(["a", "b"])), size=8)
    assert list(task.to_dict()) == ["kind", "blocks", "size", "augment", "mean", "std"]
    old = {"kind": "ImageClassificationSingle", "blocks": [b.to_dict() for b in task.blocks], "size": [8, 8],
           "augment": True, "mean": list(task.stats[0]), "std": list(task.stats[1]), "label_smoothing": 0.1}
    assert SupervisedTask.from_dict(old) == task.with_label_smoothing(0.1)
    from hotstart.blocks import TableRow

    rows = FocalRows((TableRow(categorical=["c"], continuous=[]), Label(["a", "b"])))
    legacy = {**rows.to_dict(), "kind": "FocalRows"}  # bare name, as tables wrote a user's class
    del legacy["gamma"]  # written before the parameter was declared: the constructor's default
    assert SupervisedTask.from_dict(legacy) == rows


# --- the JSON form: tuples, numpy -------------------------------------------------------------

class Shift(Encoding):
    def __init__(self, scale=16.0, offsets=(0.0, 0.0)):
        self.scale, self.offsets = scale, offsets

    def _params(self):
        return {"scale": self.scale, "offsets": self.offsets}  # a tuple: read back from JSON as a list

    def encoded_block(self, block):
        return VectorTensor(block.n) if isinstance(block, Vector) else None

    def encode(self, block, value, context, rng=None):
        return torch.as_tensor(value, dtype=torch.float32) / self.scale + self.offsets[0]

    def decode(self, block, value, context=None):
        return ((value - self.offsets[0]) * self.scale).numpy()


def _vector_task(encoding):
    return VectorClassification((Vector(64), Label(list(range(10)))), [encoding, OneHot()])


def test_a_tuple_parameter_equals_the_list_read_back_in_eq_and_hash():
    enc = Shift(16.0, (0.0, 1.0))
    back = Encoding.from_dict(json.loads(json.dumps(enc.to_dict())))
    assert back.offsets == [0.0, 1.0] and back == enc and hash(back) == hash(enc)
    task = _vector_task(enc)
    loaded = SupervisedTask.from_dict(json.loads(json.dumps(task.to_dict())))
    assert loaded == task and hash(loaded) == hash(task)


@pytest.mark.parametrize("value, shown", [(np.float32(16.0), "numpy.float32"), (np.array([16.0]), "numpy.ndarray")])
def test_a_parameter_json_cannot_hold_is_refused_when_the_task_is_built(value, shown):
    with pytest.raises(NotJSONError, match=rf"parameter 'scale' of the encoding Shift is .* of type {shown}, which "
                                           r"JSON cannot hold.*float\(x\)"):
        _vector_task(Shift(value))
    with pytest.raises(NotJSONError, match=r"parameter 'offsets.1' of the encoding Shift"):
        Shift(16.0, (0.0, np.float32(1.0))).to_dict()


def test_a_resume_accepts_the_task_with_a_tuple_parameter(digits_small, tmp_path):
    from hotstart.learner import Callback

    class CtrlC(Callback):
        def after_batch(self):
            if self.learner.training and self.learner.epoch == 1:
                raise KeyboardInterrupt

    data, _ = digits_small
    xs = [np.asarray(data.inputs[i], dtype=np.float32).reshape(-1) for i in range(100)]
    ys = [data.targets[i] for i in range(100)]

    def learner():
        with torch.random.fork_rng():
            torch.manual_seed(0)
            backbone = nn.Sequential(nn.Linear(64, 32), nn.ReLU())
        backbone.num_features = 32
        return tasklearner(_vector_task(Shift(16.0, (0.0, 1.0))), (xs, ys), backbone=backbone, seed=0,
                           progress=False, batch_size=16)

    with pytest.raises(KeyboardInterrupt):
        learner().fit(2, 1e-3, checkpoint_dir=tmp_path, callbacks=[CtrlC()])
    resumed = learner()
    resumed.fit(2, 1e-3, resume=tmp_path)  # the task check compared [0.0, 1.0] with (0.0, 1.0): refused
    assert len(resumed.history) == 2


class OwnJSON(ImageClassificationSingle):
    """A subclass that carries its parameter the older way (its own ``to_dict`` and ``_from_params``)."""

    def __init__(self, blocks, gamma=2.0, **kwargs):
        super().__init__(blocks, **kwargs)
        self.gamma = gamma

    def to_dict(self):
        return {**super().to_dict(), "gamma": self.gamma}

    @classmethod
    def _from_params(cls, d):
        d = dict(d)
        gamma = d.pop("gamma", 2.0)
        task = super()._from_params(d)
        task.gamma = gamma
        return task


def test_comparing_tasks_never_raises_even_with_an_undeclared_parameter():
    a, b = _images(Undeclared, gamma=5.0), _images(Undeclared, gamma=5.0)
    assert a == b and hash(a) == hash(b) and a in {b}
    with pytest.raises(UsageTypeError, match="gamma"):  # writing its JSON still refuses to lose it
        a.to_dict()


def test_a_subclass_with_its_own_to_dict_keeps_its_parameter_through_rebuilds_and_equality():
    task = _images(OwnJSON, gamma=5.0)
    assert task.to_dict()["gamma"] == 5.0
    assert task != _images(OwnJSON, gamma=2.0)
    assert task.with_stats([0.1], [0.2]).gamma == 5.0
    assert task.with_config(size=[16, 16]).gamma == 5.0
    assert SupervisedTask.from_dict(json.loads(json.dumps(task.to_dict()))) == task
