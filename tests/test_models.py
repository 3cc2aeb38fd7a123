"""hotstart.models: the registry's contract, run over every registered kind, and the factory's choices.

For each kind: the model built for a task, its config through JSON, and the model rebuilt from
that config must have the same parameters (names and shapes) and, given the same weights, the
same outputs as the original; every registered kind must have a case here.
"""
import json
import subprocess
import sys

import numpy as np
import pytest
import torch
import torch.nn as nn

from hotstart import (Image, ImageClassificationSingle, ImageSegmentation, Label, Mask, TableRow,
                      TabularClassificationSingle)
from hotstart.encodings import Context
from hotstart.errors import UsageError
from hotstart.models import (MODEL_KINDS, create_model, get_model_kind, is_model_kind, kind_of_config,
                             list_model_kinds, model_from_config)
from hotstart.models.factory import choose_kind


def _image_task():
    return ImageClassificationSingle((Image(channels=1), Label(list("abc"))), size=(16, 16))


def _table_task():
    task = TabularClassificationSingle((TableRow(categorical=["color"], continuous=["x"]), Label(["a", "b"])))
    rng = np.random.default_rng(0)
    samples = [task.mock_sample(rng) for _ in range(30)]
    return task.setup(([s[0] for s in samples], [s[1] for s in samples]))


def _series_task():
    from hotstart.blocks import TimeSeries
    from hotstart.tasks import TSClassificationSingle

    task = TSClassificationSingle((TimeSeries(2, length=20), Label(["a", "b"])))
    rng = np.random.default_rng(0)
    samples = [task.mock_sample(rng) for _ in range(8)]
    return task.setup(([s[0] for s in samples], [s[1] for s in samples]))


def _module():
    return nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten())


# kind -> (task, backbone); a new kind adds its case here (test_every_kind_has_a_case)
CASES = {
    "SmallCNN": (_image_task, lambda: None),
    "smallcnn_micro": (_image_task, lambda: "smallcnn_micro"),
    "smallcnn_maxpool": (_image_task, lambda: "smallcnn_maxpool"),
    "timm": (_image_task, lambda: "test_resnet"),
    "module": (_image_task, _module),
    "TabularModel": (_table_task, lambda: None),
    "unet": (lambda: ImageSegmentation((Image(channels=1), Mask(["bg", "fg"])), size=(16, 16)), lambda: None),
    "inceptiontime": (_series_task, lambda: "inceptiontime"),
    "resnet1d": (_series_task, lambda: "resnet1d"),
}


def _batch(task, n=3):
    rng = np.random.default_rng(1)
    xs = [task.encode_sample(task.mock_sample(rng), Context.VALIDATION, rng)[0] for _ in range(n)]
    return torch.stack([torch.as_tensor(x) for x in xs])


def test_every_kind_has_a_case():
    assert set(CASES) == set(list_model_kinds())


@pytest.mark.parametrize("kind", sorted(CASES))
def test_build_json_rebuild_gives_the_same_model(kind):
    task, backbone = CASES[kind][0](), CASES[kind][1]()
    with torch.random.fork_rng():
        torch.manual_seed(0)
        model, config = create_model(task, backbone)
    assert kind_of_config(config) == kind == choose_kind(task, backbone)
    saved = json.loads(json.dumps(config))  # the config is JSON, as task.json holds it
    if kind == "module":  # a user's class is code: load_learner needs it again as model=
        with pytest.raises(UsageError, match=r"pass load_learner\(path, model=Sequential\(\.\.\.\)\)"):
            model_from_config(saved, task)
        return
    rebuilt = model_from_config(saved, task)
    expected = {k: tuple(v.shape) for k, v in model.state_dict().items()}
    assert {k: tuple(v.shape) for k, v in rebuilt.state_dict().items()} == expected
    rebuilt.load_state_dict(model.state_dict())
    model.eval(), rebuilt.eval()
    x = _batch(task)
    with torch.no_grad():
        out = model(x)
        torch.testing.assert_close(rebuilt(x), out, rtol=0, atol=0)
    assert out.shape[0] == 3 and torch.isfinite(out).all()


def test_the_task_decides_before_the_backbone():
    assert choose_kind(_image_task(), None) == "SmallCNN"
    assert choose_kind(_image_task(), "SmallCNN") == "SmallCNN"  # a kind with by_name
    assert choose_kind(_image_task(), "resnet18") == "timm"
    assert choose_kind(_image_task(), _module()) == "module"
    assert choose_kind(_table_task(), None) == "TabularModel"
    with pytest.raises(UsageError, match="backbone must be a timm model name, an nn.Module or None, got int"):
        choose_kind(_image_task(), 3)


def test_the_factory_drops_none_and_refuses_options_a_kind_does_not_take():
    task = _table_task()
    _, config = create_model(task, None, layers=None, ps=None, emb_drop=None)  # None: the kind's defaults
    assert config["backbone"]["layers"] == [200, 100] and config["backbone"]["ps"] == [0.1, 0.1]
    _, config = create_model(task, None, layers=(8,), ps=0.0)
    assert config["backbone"]["layers"] == [8] and config["num_features"] == 8
    with pytest.raises(UsageError, match=r"\['layers'\] apply to TabularModel models only; "
                                         r"ImageClassificationSingle builds a SmallCNN model"):
        create_model(_image_task(), None, layers=(8,))


def test_registry_lookups():
    assert is_model_kind("unet") and not is_model_kind("resnet18") and not is_model_kind(None)
    assert get_model_kind("SmallCNN") is MODEL_KINDS["SmallCNN"]
    with pytest.raises(UsageError, match="no model kind 'nope'; the kinds are SmallCNN, TabularModel"):
        get_model_kind("nope")
    with pytest.raises(TypeError):
        MODEL_KINDS["x"] = MODEL_KINDS["unet"]  # the table is read-only: no registration from elsewhere
    assert kind_of_config({"backbone": {"kind": "timm"}, "num_features": 8}) == "timm"  # the saved format


def test_reading_the_registry_imports_no_torch():
    code = ("import sys, hotstart.models as m; m.list_model_kinds(); m.get_model_kind('timm'); "
            "print(sorted(k for k in ('torch', 'timm') if k in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
