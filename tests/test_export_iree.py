"""IREE (.vmfb, llvm-cpu for this CPU, opened through the runtime interface) against torch: SmallCNN
on the digits validation set, timm's
resnet10t at 64x64, and resnet10t at 32x32, where IREE 3.13's compiler fails (the export must then
say so in one paragraph that names the layer).

conftest's `digits_micro` is compiled once (through the CLI); each resnet10t is exported once. An
IREE compile costs ~10 s on 2 cores.
"""
from types import SimpleNamespace

import numpy as np
import pytest
import torch
from exported import export_with_cli, predict_without_torch, validation_set
from needs import need

need("iree.turbine.aot", "install hotstart[iree] (iree-turbine, iree-base-compiler, iree-base-runtime)")
need("iree.runtime", "install hotstart[iree]")


@pytest.fixture(scope="module")
def vmfb(tmp_path_factory, digits_micro):
    path = export_with_cli(digits_micro, tmp_path_factory.mktemp("iree"), "iree", "digits.vmfb")
    return SimpleNamespace(path=path, task=digits_micro.task, **vars(validation_set(digits_micro)))


def test_vmfb_equals_torch_on_every_validation_digit(vmfb):
    from hotstart.runtimes import IreeRuntime, open_file

    m = open_file(vmfb.path)
    assert isinstance(m, IreeRuntime) and m.batch_size is None
    assert m.meta["format"] == "hotstart.iree/1" and m.meta["target_cpu"] == "host"
    assert m.meta["task"] == vmfb.task.to_dict()
    got = m.run(vmfb.x)  # all 359 at once: the batch dimension is dynamic
    assert got.shape == (359, 10)
    assert float(np.abs(got - vmfb.logits).max()) <= 1e-4
    assert (got.argmax(1) == vmfb.logits.argmax(1)).all()
    assert np.abs(m.run(vmfb.x[:1]) - got[:1]).max() <= 1e-5  # and one at a time
    assert IreeRuntime.load(vmfb.path, driver="local-sync").predict(vmfb.images[0])[0] == vmfb.task.classes[
        int(vmfb.logits[0].argmax())]


def test_cli_predict_vmfb_imports_no_torch(vmfb, tmp_path):
    from hotstart.runtimes import open_file

    img = tmp_path / "digit.png"
    vmfb.images[0].resize((40, 40)).save(img)
    out = predict_without_torch(vmfb.path, img)
    label, probs = open_file(vmfb.path).predict(img)
    assert out["label"] == label and out["top"][0][1] == pytest.approx(float(probs.max()), abs=1e-6)


def test_damaged_and_empty_vmfb_files_are_refused_naming_the_file(vmfb, tmp_path, capsys):
    from hotstart.cli import main
    from hotstart.errors import SavedModelError
    from hotstart.runtimes import open_file

    damaged = tmp_path / "damaged.vmfb"
    damaged.write_bytes(vmfb.path.read_bytes()[:4096])
    with pytest.raises(SavedModelError, match=r"damaged.vmfb: IREE cannot load it: .*\(is it a .vmfb written by"):
        open_file(damaged)
    (tmp_path / "empty.vmfb").write_bytes(b"")
    assert main(["predict", str(tmp_path / "empty.vmfb"), str(tmp_path / "x.png")]) == 1
    assert "empty.vmfb: the file is empty (0 bytes)" in capsys.readouterr().err


def resnet10t_learner(digits, size: int):
    """timm's resnet10t on 100 digits at `size`, untrained, with every BatchNorm's statistics and
    affine parameters drawn at random: timm initialises each residual branch's last BatchNorm to
    zero, and a branch that outputs zero would let a wrong residual path agree with torch."""
    from hotstart import ImageClassificationSingle, tasklearner

    data, blocks = digits
    task = ImageClassificationSingle(blocks, size=(size, size), augment={"flip": 0.0})
    with torch.random.fork_rng(devices=[]):  # timm draws its initial weights from the global RNG
        torch.manual_seed(0)
        learner = tasklearner(task, data.subset(list(range(100))), backbone="resnet10t", seed=0, progress=False)
    g = torch.Generator().manual_seed(0)
    with torch.no_grad():
        for m in learner.task_model().modules():
            if isinstance(m, torch.nn.BatchNorm2d):
                m.weight.copy_(torch.rand(m.weight.shape, generator=g) + 0.5)
                m.bias.copy_(torch.randn(m.bias.shape, generator=g) * 0.1)
                m.running_mean.copy_(torch.randn(m.running_mean.shape, generator=g) * 0.1)
                m.running_var.copy_(torch.rand(m.running_var.shape, generator=g) + 0.5)
    return learner


def test_resnet10t_at_64x64_equals_torch(digits, tmp_path):
    from hotstart.runtimes import open_file

    learner = resnet10t_learner(digits, 64)
    report = learner.export(tmp_path / "resnet10t.vmfb")
    assert report.max_abs_diff <= 1e-4
    valid = learner.valid_loader.dataset
    x = torch.stack([learner.task.encode_input(valid.inputs[i]) for i in range(5)])
    with torch.no_grad():
        want = learner.task_model().eval()(x).numpy()
    got = open_file(report.path).run(x.numpy())
    assert float(np.abs(want).max()) > 0.1  # logits that the residual branches move
    assert float(np.abs(got - want).max()) <= 1e-4 and (got.argmax(1) == want.argmax(1)).all()


def test_resnet10t_at_32x32_works_or_fails_in_one_paragraph_naming_the_layer(digits, tmp_path):
    from hotstart.export import ExportError

    learner = resnet10t_learner(digits, 32)
    path = tmp_path / "resnet10t-32.vmfb"
    try:
        report = learner.export(path)
    except ExportError as e:
        message = str(e)
        print(message)
        assert "\n" not in message and len(message) < 900  # one paragraph, no MLIR
        assert not any(s in message for s in ("loc(", "tensor<", "%", "#hal."))
        assert "layer backbone.layer" in message and "32 x 32" in message and "What to try" in message
        assert not path.exists()
    else:  # a newer IREE compiles it: then it must compute what torch computes
        assert report.max_abs_diff <= 1e-4
