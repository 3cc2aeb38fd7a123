"""An export that fails says so in one paragraph: the layer (module path and type), what in it
failed, what to try. No terminal colour codes, and no partial graph dumped on stderr.

Before: data-dependent control flow printed the partial graph to stderr and the ONNX error carried
ANSI colour codes; an op ExecuTorch cannot run was named as ``aten.median.dim``, not as the layer.
"""
import pytest
import torch
import torch.nn as nn

from hotstart import Image, ImageClassificationSingle, Label, tasklearner
from hotstart.export import ExportError
from hotstart.models import TaskModel


class DataDependent(nn.Module):
    def forward(self, x):
        return x * 2 if x.mean() > 0 else x  # a branch on values: a traced graph cannot hold it


class Median(nn.Module):
    def forward(self, x):
        return x.flatten(1).median(dim=1).values[:, None]  # aten.median.dim: not in ExecuTorch's op set


def _learner(layer, width):
    task = ImageClassificationSingle((Image(1), Label(list(range(3)))), size=(8, 8), augment=False)
    backbone = nn.Sequential(nn.Conv2d(1, width, 3, padding=1), nn.Sequential(nn.ReLU(), layer),
                             nn.AdaptiveAvgPool2d(1), nn.Flatten())
    return tasklearner(task, None, model=TaskModel(backbone, nn.Linear(width, 3)), progress=False)


@pytest.mark.parametrize("suffix", [".pt2", ".pte"])  # .onnx: tests/test_deploy.py
def test_data_dependent_control_flow_is_one_paragraph_naming_the_layer(tmp_path, capfd, suffix):
    if suffix == ".pte":
        pytest.importorskip("executorch", reason="install hotstart[edge] for the .pte export")
    learner = _learner(DataDependent(), 4)
    with pytest.raises(ExportError) as e:
        learner.export(tmp_path / f"x{suffix}")
    text = str(e.value)
    assert "in layer backbone.1.1 (DataDependent" in text, text  # the deepest module, by its path
    assert "data-dependent control flow" in text and "What to try" in text, text
    assert "\n" not in text and "\x1b[" not in text, repr(text)
    err = capfd.readouterr().err
    assert "def forward" not in err and "Unable to find user code" not in err, err
    assert not (tmp_path / f"x{suffix}").exists()


def test_an_op_executorch_cannot_run_is_named_by_its_layer(tmp_path, capfd):
    pytest.importorskip("executorch", reason="install hotstart[edge] for the .pte export")
    learner = _learner(Median(), 1)
    with pytest.raises(ExportError) as e:
        learner.export(tmp_path / "m.pte")
    text = str(e.value)
    assert "in layer backbone.1.1 (Median)" in text and "aten.median.dim" in text, text
    assert "\n" not in text and "\x1b[" not in text and "What to try" in text, repr(text)
    assert not (tmp_path / "m.pte").exists()
