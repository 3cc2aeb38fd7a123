"""`task.check(model)` and `learner.summary()`: shapes on meta tensors, before any data is read."""
import pytest
import torch
import torch.nn as nn


class ExplodingInputs:
    """A dataset's inputs whose first access raises: any check that reads data fails loudly."""

    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        raise AssertionError(f"input {i} was read before the model was checked")


@pytest.fixture
def data_never_read(digits_small):
    from hotstart.datasets.containers import Data

    data, _ = digits_small
    return Data(ExplodingInputs(len(data[1])), [data[1][i] for i in range(len(data[1]))])


@pytest.fixture
def task16(digits_small):
    from hotstart import ImageClassificationSingle

    return ImageClassificationSingle(digits_small[1], size=(16, 16), augment=False)


def test_channels_mismatch_is_caught_before_any_data(task16, data_never_read):
    from hotstart import tasklearner
    from hotstart.models import SmallCNN, TaskModel
    from hotstart.tasks.checks import ModelTaskMismatch

    model = TaskModel(SmallCNN(in_chans=3, size=(16, 16)), nn.Linear(256, 10))
    with pytest.raises(ModelTaskMismatch, match=r"takes 3 input channel.*encodes images with 1.*in_chans=1"):
        tasklearner(task16, data_never_read, model=model, progress=False)


def test_head_size_mismatch_is_caught_before_any_data(task16, data_never_read):
    from hotstart import tasklearner
    from hotstart.models import SmallCNN, TaskModel
    from hotstart.tasks.checks import ModelTaskMismatch

    model = TaskModel(SmallCNN(in_chans=1, size=(16, 16)), nn.Linear(256, 7))
    with pytest.raises(ModelTaskMismatch, match=r"outputs \(7,\).*needs \(10,\).*10 classes.*nn.Linear\(num_features, 10\)"):
        tasklearner(task16, data_never_read, model=model, progress=False)


def test_input_too_small_for_the_downsampling_is_caught_before_any_data(task16, data_never_read):
    from hotstart import tasklearner
    from hotstart.tasks.checks import ModelTaskMismatch

    # resnet10t halves 5 times: at 16x16 its last stages would see sub-pixel maps, padded with zeros
    with pytest.raises(ModelTaskMismatch, match=r"16x16 is too small.*downsamples by 32.*size=\(32, 32\)"):
        tasklearner(task16, data_never_read, backbone="resnet10t", progress=False)
    # a layer that cannot run at all on the input: named, with what to change
    backbone = nn.Sequential(nn.Conv2d(1, 8, 5), nn.MaxPool2d(4), nn.Conv2d(8, 8, 5), nn.Flatten())
    with pytest.raises(ModelTaskMismatch, match=r"in layer 2: .*Kernel size.*too small for the backbone"):
        tasklearner(task16, data_never_read, backbone=backbone, progress=False)


def test_a_fitting_model_passes_and_is_left_untouched(task16):
    from hotstart import tasklearner

    learner = tasklearner(task16, None, seed=0, progress=False)
    model = learner.model
    model.train()
    before = {k: v.clone() for k, v in model.state_dict().items()}
    assert task16.check(model) == {"input": (2, 1, 16, 16), "output": (10,)}
    assert model.training  # mode restored
    after = model.state_dict()
    assert all(after[k].device.type == "cpu" and torch.equal(before[k], after[k]) for k in before)


def test_summary_lists_layers_shapes_and_parameters(task16):
    from hotstart import tasklearner

    learner = tasklearner(task16, None, seed=0, progress=False)
    learner.freeze()
    text = learner.summary(file=None)
    model = learner.model
    total = sum(p.numel() for p in model.parameters())
    trainable = sum(p.numel() for p in model.parameters() if p.requires_grad)
    assert f"Total params: {total:,}" in text
    assert f"Trainable params: {trainable:,}" in text
    assert f"Non-trainable params: {total - trainable:,}" in text
    assert "backbone.features.0 (Conv2d)        1 x 32 x 16 x 16  288      False" in text
    assert "head (Linear)" in text and "1 x 10" in text
    assert "Encoded input: ImageTensor(channels=1, size=[16, 16])" in text
    assert "Encoded target:" in text


def test_summary_is_returned_once_and_shown_as_itself(task16, capsys):
    """It was printed and returned as a plain str: a notebook cell showed it twice, the second
    time as one escaped line. Now it is returned (repr is the text itself, as fastai's
    PrettyString) and written only to a `file` that is given."""
    import io

    from hotstart import tasklearner

    learner = tasklearner(task16, None, seed=0, progress=False)
    text = learner.summary()
    assert capsys.readouterr().out == "" and repr(text) == str(text) and "Total params:" in text
    out = io.StringIO()
    assert learner.summary(file=out) == text and out.getvalue() == text


def test_summary_of_resnet50_at_224_runs_on_meta(digits_small):
    from hotstart import ImageClassificationSingle, tasklearner

    task = ImageClassificationSingle(digits_small[1], size=(224, 224), augment=False)
    learner = tasklearner(task, None, backbone="resnet50", seed=0, progress=False)
    from torch.overrides import TorchFunctionMode

    calls = []

    class Spy(TorchFunctionMode):  # sees every torch call, and so every activation made while summarizing
        def __torch_function__(self, func, types, args=(), kwargs=None):
            out = func(*args, **(kwargs or {}))
            if isinstance(out, torch.Tensor) and out.dim() == 4:
                calls.append(out.device.type)
            return out

    with Spy():
        text = learner.summary(file=None)
    assert calls and set(calls) == {"meta"}
    assert "backbone.layer4.2 (Bottleneck)               1 x 2048 x 7 x 7" in text
    assert f"Total params: {sum(p.numel() for p in learner.model.parameters()):,}" in text


class DataDependent(nn.Module):
    """A valid model whose forward cannot run on meta tensors (`.item()` on an activation)."""

    def __init__(self, outputs):
        super().__init__()
        self.body = nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.BatchNorm2d(4), nn.AdaptiveAvgPool2d(1),
                                  nn.Flatten(), nn.Linear(4, outputs))

    def forward(self, x):
        if x.abs().max().item() > 1e6:
            x = x.clamp(-1e6, 1e6)
        return self.body(x)


def test_a_model_that_cannot_run_on_meta_is_checked_by_one_real_forward(task16, data_never_read):
    from hotstart import tasklearner
    from hotstart.tasks.checks import ModelTaskMismatch

    model = DataDependent(10).train()
    before = {k: v.clone() for k, v in model.state_dict().items()}
    learner = tasklearner(task16, None, model=model, seed=0, progress=False)
    assert learner.model is model
    assert task16.check(model) == {"input": (2, 1, 16, 16), "output": (10,)}
    assert model.training and all(m.training for m in model.modules())  # mode restored
    after = model.state_dict()  # eval mode + no_grad: BatchNorm's running stats untouched
    assert all(torch.equal(before[k], after[k]) for k in before)
    assert not any(m._forward_pre_hooks for m in model.modules())  # layer-naming hooks removed
    # a real shape mismatch is still caught by that forward pass, before any data is read
    with pytest.raises(ModelTaskMismatch, match=r"outputs \(7,\).*needs \(10,\)"):
        tasklearner(task16, data_never_read, model=DataDependent(7), progress=False)
    wrong_channels = DataDependent(10)
    wrong_channels.body[0] = nn.Linear(8, 4)  # no conv first: only the forward pass can tell
    with pytest.raises(ModelTaskMismatch, match=r"fails on .*\(2, 1, 16, 16\) in layer body.0"):
        task16.check(wrong_channels)


def test_tasklearner_leaves_the_environment_and_warnings_filters_as_they_were():
    """The model check runs BatchNorm on meta tensors, which imports ``torch._dynamo`` (setting
    ``TORCHINDUCTOR_CACHE_DIR``, and through sympy a warnings filter): a fresh interpreter, where
    that import happens inside `tasklearner`, must see neither."""
    import subprocess
    import sys

    code = """
import os, sys, warnings
from hotstart import ImageClassificationSingle, datasets, tasklearner
data, blocks = datasets.load("digits")
task = ImageClassificationSingle(blocks, size=(8, 8), augment={"flip": 0.0})
environ, filters = dict(os.environ), list(warnings.filters)
assert "torch._dynamo" not in sys.modules
tasklearner(task, data.subset(list(range(40))), seed=0, progress=False)
assert "torch._dynamo" in sys.modules  # else this test no longer tests the import it is about
print(sorted(set(os.environ.items()) ^ set(environ.items())), [f for f in warnings.filters if f not in filters])
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip().splitlines()[-1] == "[] []"
