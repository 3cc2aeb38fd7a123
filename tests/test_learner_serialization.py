"""save / load_learner: weights.safetensors + task.json, the same predictions, and never pickle."""
import json
import math
import pickle

import pytest
import torch
from conftest import state_equal

import hotstart
from hotstart import ImageClassificationSingle


@pytest.fixture
def trained(make_learner):
    learner = make_learner()
    learner.fit(1, 3e-3)
    return learner


def _forbid_pickle(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("load_learner must not unpickle anything")

    monkeypatch.setattr(pickle, "load", refuse)
    monkeypatch.setattr(pickle, "loads", refuse)
    monkeypatch.setattr(pickle, "Unpickler", refuse)
    monkeypatch.setattr(torch, "load", refuse)


def test_save_and_load_predict_identically(trained, digits_small, tmp_path, monkeypatch):
    folder = trained.save(tmp_path / "model")
    assert sorted(p.name for p in folder.iterdir()) == ["task.json", "weights.safetensors"]

    meta = json.loads((folder / "task.json").read_text())
    assert meta["format"] == "hotstart.learner/1"
    assert meta["task"]["kind"] == "ImageClassificationSingle" and meta["task"]["size"] == [8, 8]

    from safetensors import safe_open

    with safe_open(str(folder / "weights.safetensors"), framework="pt") as f:
        assert set(f.keys()) == set(trained.task_model().state_dict())

    _forbid_pickle(monkeypatch)
    loaded = hotstart.load_learner(folder)
    assert loaded.task == trained.task
    assert state_equal(loaded.task_model().state_dict(), trained.task_model().state_dict())
    assert "train=None" in repr(loaded)

    data, _ = digits_small
    for i in range(6):
        label, probs = trained.predict(data[0][i])
        label2, probs2 = loaded.predict(data[0][i])
        assert label == label2 and label in trained.task.classes
        assert torch.equal(probs, probs2)
        assert probs.shape == (10,) and float(probs.sum()) == pytest.approx(1.0)


def test_loaded_learner_keeps_training(trained, digits_small, tmp_path):
    data, _ = digits_small
    trained.save(tmp_path / "m")
    learner = hotstart.load_learner(tmp_path / "m", data, seed=0, progress=False, batch_size=32)
    assert state_equal(learner.task_model().state_dict(), trained.task_model().state_dict())
    learner.fit(1)
    assert len(learner.history) == 1


def test_timm_backbone_round_trip(digits_small, tmp_path):
    data, blocks = digits_small
    task = ImageClassificationSingle(blocks, size=(16, 16), augment={"flip": 0.0})
    learner = hotstart.tasklearner(task, None, backbone="resnet10t", seed=0, progress=False)
    learner.save(tmp_path / "m")
    loaded = hotstart.load_learner(tmp_path / "m")
    assert type(loaded.task_model().backbone).__name__ == type(learner.task_model().backbone).__name__
    for i in range(3):
        a, b = learner.predict(data[0][i]), loaded.predict(data[0][i])
        assert a[0] == b[0] and torch.equal(a[1], b[1])


def test_save_overwrites_atomically(trained, tmp_path):
    trained.save(tmp_path / "m")
    trained.save(tmp_path / "m")
    assert sorted(p.name for p in (tmp_path / "m").iterdir()) == ["task.json", "weights.safetensors"]


def test_load_folder_without_task_json(tmp_path):
    (tmp_path / "weights.safetensors").write_bytes(b"")
    with pytest.raises(FileNotFoundError, match="task.json"):
        hotstart.load_learner(tmp_path)
    with pytest.raises(FileNotFoundError, match="task.json"):
        hotstart.load_learner(tmp_path / "missing")


def test_load_rejects_bad_task_json(trained, tmp_path):
    trained.save(tmp_path / "m")
    (tmp_path / "m" / "task.json").write_text("{not json")
    with pytest.raises(ValueError, match="not valid JSON"):
        hotstart.load_learner(tmp_path / "m")
    (tmp_path / "m" / "task.json").write_text(json.dumps({"format": "something/else"}))
    with pytest.raises(ValueError, match="format"):
        hotstart.load_learner(tmp_path / "m")


def test_bf16_mixed_trains_saves_and_loads(make_learner, digits_small, tmp_path):
    """Mixed precision on the CPU (torch.autocast in a PlainBackend, learner/mixed_precision.py):
    the same loop, save and load, and the loaded model predicts as the saved one."""
    from hotstart import ToDevice

    data, _ = digits_small
    learner = make_learner(callbacks=[ToDevice("cpu", precision="bf16-mixed")])
    assert "PlainBackend" in repr(learner) and "bf16-mixed" in repr(learner)
    learner.fit(1)
    assert all(math.isfinite(v) for v in learner.validate().values())
    learner.save(tmp_path / "m")
    loaded = hotstart.load_learner(tmp_path / "m", precision="bf16-mixed")  # no data: no loaders to set up
    assert "bf16-mixed" in repr(loaded)
    assert loaded.predict(data[0][0])[0] == learner.predict(data[0][0])[0]


class _Body(torch.nn.Module):
    """A backbone of the user's own (its class is code: load_learner needs it again)."""

    num_features = 16

    def __init__(self, width=16):
        super().__init__()
        self.net = torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(64, width), torch.nn.ReLU())

    def forward(self, x):
        return self.net(x)


def _whole(width=10):
    return torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(64, width))


def test_load_a_backbone_of_your_own_takes_the_backbone_or_the_whole_model(make_learner, digits_small, tmp_path):
    import copy

    learner = make_learner(backbone=_Body())
    learner.fit(1, 3e-3)
    learner.save(tmp_path / "m")
    x = digits_small[0].inputs[0]
    with pytest.raises(hotstart.errors.SavedModelError,
                       match=r"backbone of class _Body .*model=_Body\(\.\.\.\)\), the backbone"):
        hotstart.load_learner(tmp_path / "m")
    for given in (_Body(), copy.deepcopy(learner.task_model())):  # the backbone (the head is added), or the whole
        loaded = hotstart.load_learner(tmp_path / "m", model=given)
        torch.testing.assert_close(loaded.predict(x)[1], learner.predict(x)[1])
    with pytest.raises(hotstart.errors.SavedModelError,
                       match=r"model passed as model= \(_Body\) is not the saved one: .*backbone of class _Body"):
        hotstart.load_learner(tmp_path / "m", model=_Body(width=8))


def test_a_whole_model_of_your_own_is_recorded_as_a_whole_model(make_learner, digits_small, tmp_path):
    learner = make_learner(model=_whole())
    learner.save(tmp_path / "m")
    model_cfg = json.loads((tmp_path / "m" / "task.json").read_text())["model"]
    assert model_cfg == {"kind": "module", "class": "Sequential"}  # not a "backbone": nothing is added to it
    with pytest.raises(hotstart.errors.SavedModelError, match=r"a whole model of your class Sequential"):
        hotstart.load_learner(tmp_path / "m")
    loaded = hotstart.load_learner(tmp_path / "m", model=_whole())
    x = digits_small[0].inputs[0]
    torch.testing.assert_close(loaded.predict(x)[1], learner.predict(x)[1])
    with pytest.raises(hotstart.errors.SavedModelError, match=r"model passed as model= \(Sequential\).*whole model"):
        hotstart.load_learner(tmp_path / "m", model=_whole(width=12))


def test_a_whole_model_saved_in_the_older_format_still_loads(make_learner, tmp_path):
    """Saves before the whole-model format recorded ``{"backbone": {"kind": "module", ...}}``."""
    learner = make_learner(model=_whole())
    learner.save(tmp_path / "m")
    path = tmp_path / "m" / "task.json"
    meta = json.loads(path.read_text())
    meta["model"] = {"backbone": meta["model"]}
    path.write_text(json.dumps(meta))
    with pytest.raises(hotstart.errors.SavedModelError, match=r"a whole model of your class Sequential"):
        hotstart.load_learner(tmp_path / "m")
    hotstart.load_learner(tmp_path / "m", model=_whole())
