"""The ONNX exports in other runtimes: tract (Rust; embedded Linux) and OpenCV's DNN module.

The digits model (small CNN) and a timm resnet10t, fp32 and int8, each run at a concrete batch
size in tract (which failed on the symbolic ``batch`` in intermediate shapes before onnx.py
stripped them) and in OpenCV, against onnxruntime. OpenCV 5's new engine cannot read
onnxruntime's int8 files (a Conv bias from DequantizeLinear of an int32 initializer: see the
docs/howto/small-devices.md), so int8 runs in its classic engine.
"""
import numpy as np
import pytest
import torch

tract = pytest.importorskip("tract", reason="install hotstart[runtimes] (tract) for the tract parity test")
cv2 = pytest.importorskip("cv2", reason="install hotstart[runtimes] (opencv-python-headless) for OpenCV parity")


@pytest.fixture(scope="module")
def exports(tmp_path_factory, digits_small):
    from hotstart import ImageClassificationSingle, tasklearner

    data, blocks = digits_small
    root = tmp_path_factory.mktemp("runtimes")
    files = {}
    for backbone in (None, "resnet10t"):
        size = (16, 16) if backbone is None else (32, 32)  # resnet10t downsamples by 32
        task = ImageClassificationSingle(blocks, size=size, augment={"flip": 0.0})
        learner = tasklearner(task, data, backbone=backbone, seed=0, progress=False, batch_size=32)
        if backbone is None:
            learner.fit(1, 3e-3)
        name = backbone or "digits"
        files[f"{name} fp32"] = learner.export(root / f"{name}.onnx").path
        files[f"{name} int8"] = learner.export(root / f"{name}-int8.onnx", quantize="int8", calibrate=32,
                                               measure=False).path
        ds = learner.valid_loader.dataset
        files[f"{name} x"] = torch.stack([task.encode_input(ds.inputs[i]) for i in range(8)]).numpy()
    return files


def _onnxruntime(path, x):
    import onnxruntime as ort

    return ort.InferenceSession(str(path), providers=["CPUExecutionProvider"]).run(None, {"input": x})[0]


def _tract(path, x):
    model = tract.onnx().load(str(path))
    model.set_input_fact(0, ",".join(map(str, x.shape)) + ",f32")  # a concrete batch size
    return model.into_model().into_runnable().run([x])[0].to_numpy()


def _opencv(path, x, engine):
    net = cv2.dnn.readNetFromONNX(str(path), engine=engine)
    net.setInput(x)
    return net.forward()


@pytest.mark.parametrize("name", ["digits fp32", "digits int8", "resnet10t fp32", "resnet10t int8"])
def test_tract_and_opencv_agree_with_onnxruntime(exports, name):
    files = exports
    x = files[name.split()[0] + " x"]
    want = _onnxruntime(files[name], x)
    engines = [cv2.dnn.ENGINE_CLASSIC] + ([cv2.dnn.ENGINE_NEW] if name.endswith("fp32") else [])
    outputs = {"tract": _tract(files[name], x), **{f"opencv {e}": _opencv(files[name], x, e) for e in engines}}
    # fp32: the same numbers; int8: the same labels, logits within a few quantization steps
    tol = 1e-4 if name.endswith("fp32") else 0.05 * float(np.abs(want).max())
    for runtime, got in outputs.items():
        assert got.shape == want.shape, runtime
        assert float(np.abs(got - want).max()) <= tol, (runtime, float(np.abs(got - want).max()))
        assert np.mean(got.argmax(1) == want.argmax(1)) >= (1.0 if name.endswith("fp32") else 0.85), runtime
