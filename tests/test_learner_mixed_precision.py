"""bf16 mixed precision in one CPU process through ``torch.autocast`` (learner/mixed_precision.py):
the same numbers as Lightning Fabric's bf16-mixed plugin, bit for bit, without importing Fabric;
the weights, the saved model and the exports stay float32."""
from __future__ import annotations

import subprocess
import sys

import numpy as np
import torch
from conftest import state_equal


def tiny_cnn():
    """A convolution, batch norm and a linear head: every kind of layer autocast treats differently,
    small enough that bf16 runs fast on CPUs without bf16 units too (torch's fallback kernels)."""
    with torch.random.fork_rng():
        torch.manual_seed(0)
        return torch.nn.Sequential(torch.nn.Conv2d(1, 4, 3, padding=1), torch.nn.BatchNorm2d(4), torch.nn.ReLU(),
                                   torch.nn.Flatten(), torch.nn.Linear(4 * 8 * 8, 10))


def test_a_bf16_fit_through_autocast_equals_the_same_fit_through_fabric(make_learner):
    """One epoch on the digits, bf16-mixed, once on a PlainBackend and once on Fabric's plugin:
    the same losses and the same weights, bit for bit."""
    from hotstart.learner.backend import FabricBackend

    plain, fabric = (make_learner(model=tiny_cnn(), precision="bf16-mixed") for _ in range(2))
    fabric.backend = FabricBackend(accelerator="cpu", precision="bf16-mixed")  # before setup: it runs the fit
    assert type(plain.backend).__name__ == "PlainBackend" and plain.backend.precision == "bf16-mixed"
    for learner in (plain, fabric):
        learner.fit(1, 1e-3)
    assert type(plain.model).__name__ == "MixedPrecisionModule" and type(fabric.model).__name__ == "_FabricModule"
    assert state_equal(plain.task_model().state_dict(), fabric.task_model().state_dict())
    assert [h["train_loss"] for h in plain.history] == [h["train_loss"] for h in fabric.history]
    assert [h["valid_loss"] for h in plain.history] == [h["valid_loss"] for h in fabric.history]
    assert torch.equal(plain.get_preds()[0], fabric.get_preds()[0])


def test_bf16_mixed_does_not_import_fabric():
    """The point of the autocast path: a CPU fit in bf16-mixed costs no Lightning import."""
    code = ("import sys, torch; from hotstart.learner.backend import make_backend; "
            "b = make_backend(accelerator='cpu', precision='bf16-mixed'); "
            "m = b.setup_module(torch.nn.Linear(2, 2)); "
            "assert m(torch.ones(1, 2)).dtype == torch.float32; "
            "print(type(b).__name__, b.precision, 'lightning_fabric' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split() == ["PlainBackend", "bf16-mixed", "False"]


def test_after_a_bf16_fit_the_weights_the_saved_model_and_the_onnx_export_are_fp32(make_learner, tmp_path):
    """bf16 changes the forward pass only: the learner's own outputs are bf16-rounded, while the
    saved weights are the float32 ones and the ONNX file computes what the float32 model computes."""
    import onnxruntime as ort
    from safetensors.torch import load_file

    learner = make_learner(model=tiny_cnn(), precision="bf16-mixed")
    learner.fit(1, 1e-3)
    model = learner.task_model()
    assert all(p.dtype == torch.float32 for p in model.parameters())
    learner.save(tmp_path / "m")
    saved = load_file(tmp_path / "m" / "weights.safetensors")
    assert state_equal(saved, model.state_dict())

    report = learner.export(tmp_path / "m.onnx")
    assert report.max_abs_diff < 1e-4  # the export's own check against the float32 torch model
    x = torch.from_numpy(np.random.default_rng(0).random((5, 1, 8, 8), dtype=np.float32))
    model.eval()
    with torch.no_grad():
        fp32, mixed = model(x), learner.model(x)
    assert mixed.dtype == torch.float32  # cast back, but computed in bf16: not the float32 numbers
    assert float((mixed - fp32).abs().max()) > 1e-4
    session = ort.InferenceSession(str(tmp_path / "m.onnx"), providers=["CPUExecutionProvider"])
    onnx_out = session.run(None, {session.get_inputs()[0].name: x.numpy()})[0]
    np.testing.assert_allclose(onnx_out, fp32.numpy(), rtol=1e-4, atol=1e-5)
