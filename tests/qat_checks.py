"""int8 through torchao's PT2E flow: quantization-aware training (learner.quantize) and the int8
.pte, each checked where it runs (ExecuTorch, onnxruntime through predictor.py), opened by the runtimes.

Not collected by the suite itself (the name does not start with ``test_``): tests/test_export_qat.py
runs this file with pytest in a prestart job, so its ~110 s of torch.export, lowering and conversion
run on the second core beside the rest of the suite, and reports each of its tests.
``python -m pytest tests/qat_checks.py`` runs it directly.

A small CNN on 200 digits at 8x8 (conftest's make_learner) keeps it quick; the accuracy study on
all digits is benchmarks/scripts/qat_digits.py. QAT runs once per target scheme: the .pte's QAT
model (XNNPACK's scheme, `qat_pte`) is also the one the .tflite QAT test converts (`retarget`).
"""
import numpy as np
import pytest
import torch

pytest.importorskip("executorch", reason="install hotstart[edge] (executorch, torchao) for .pte and QAT")
pytest.importorskip("torchao", reason="install hotstart[edge] (executorch, torchao) for .pte and QAT")


@pytest.fixture(scope="module")
def trained(digits_small):
    from hotstart import ImageClassificationSingle, tasklearner

    data, blocks = digits_small
    task = ImageClassificationSingle(blocks, size=(8, 8), augment={"flip": 0.0})
    learner = tasklearner(task, data, seed=0, progress=False, batch_size=32)
    learner.fit_one_cycle(3, 3e-3)
    ds = learner.valid_loader.dataset
    return learner, [ds.inputs[i] for i in range(len(ds))], [ds.targets[i] for i in range(len(ds))]


@pytest.fixture(scope="module")
def qat_pte(trained):
    """One epoch of QAT for "pte", and the fp32 weights and accuracy from before it."""
    learner, _, _ = trained
    before = {k: v.clone() for k, v in learner.task_model().state_dict().items()}
    fp32 = learner.validate()["accuracy"]
    return learner.quantize("pte", qat_epochs=1, lr_max=1e-3), before, fp32


def _torch_labels(model, task, images):
    x = torch.stack([task.encode_input(img) for img in images])
    with torch.no_grad():
        return [task.classes[i] for i in model(x).argmax(1).tolist()]


def test_qat_trains_with_the_loop_and_exports_to_pte_and_qdq_onnx(trained, qat_pte, tmp_path):
    import onnx

    from hotstart.runtimes import open_file
    from hotstart.predictor import Predictor

    learner, images, targets = trained
    q, before, fp32 = qat_pte
    assert len(q.history) == 1 and np.isfinite(q.history[0]["train_loss"])  # one epoch of hotstart's loop
    assert all(torch.equal(before[k], v) for k, v in learner.task_model().state_dict().items())  # untouched
    qat = q.validate()["accuracy"]
    assert qat >= fp32 - 0.05, (qat, fp32)
    report = q.export(tmp_path / "qat.pte", batch_size=2)
    pte = open_file(tmp_path / "qat.pte")
    assert "quantization-aware" in pte.meta["quantization"] and pte.batch_size == 2
    fp32_bytes = 4 * sum(p.numel() for p in learner.task_model().parameters())
    assert report.size_bytes < 0.4 * fp32_bytes  # int8 weights
    labels = [pte.predict(img)[0] for img in images]
    # the file computes what the converted int8 torch graph computes (XNNPACK may round a step apart)
    assert np.mean(np.equal(labels, _torch_labels(q.model, learner.task, images))) >= 0.95
    assert np.mean(np.equal(labels, targets)) >= fp32 - 0.05

    qo = learner.quantize("onnx", qat_epochs=1, lr_max=1e-3)
    qo.export(tmp_path / "qat.onnx")
    ops = {n.op_type for n in onnx.load(str(tmp_path / "qat.onnx")).graph.node}
    assert {"QuantizeLinear", "DequantizeLinear"} <= ops  # a QDQ graph
    p = Predictor.load(tmp_path / "qat.onnx")
    plabels = [lab for lab, _ in p.predict_many(images)]
    assert np.mean(np.equal(plabels, _torch_labels(qo.model, learner.task, images))) >= 0.95
    assert p.evaluate(images, targets)["accuracy"] >= fp32 - 0.05
    with pytest.raises(ValueError, match="quantized for 'onnx'"):
        qo.export(tmp_path / "x.pte")
    with pytest.raises(ValueError, match="X86 Inductor's scheme for 'onnx'; 'pte' QAT uses XNNPACK's"):
        qo.retarget("pte")


def test_post_training_int8_pte_is_calibrated_and_close_to_fp32(trained, tmp_path):
    from hotstart.runtimes import open_file

    learner, images, targets = trained
    report = learner.export(tmp_path / "ptq.pte", quantize="int8", calibrate=64)
    pte = open_file(report.path)
    assert "post-training" in pte.meta["quantization"] and "64 training samples" in pte.meta["quantization"]
    fp32 = learner.validate()["accuracy"]
    assert np.mean([pte.predict(img)[0] == t for img, t in zip(images, targets)]) >= fp32 - 0.05
    with pytest.raises(ValueError, match="qat_epochs"):
        learner.quantize("pte", qat_epochs=-1)
    with pytest.raises(ValueError, match="target"):
        learner.quantize("coreml")


def test_qat_model_exports_to_tflite(trained, qat_pte, tmp_path):
    """QAT for LiteRT / TF Lite Micro: XNNPACK's quantizer (export/pt2e.py says why), converted by
    litert-torch to a fully int8 .tflite that computes what the int8 torch graph computes. The model
    is the .pte test's QAT model, retargeted (the same scheme: no second QAT run)."""
    from needs import need

    need("litert_torch", "install hotstart[tflite] (litert-torch, ai-edge-litert, tflite-micro)")
    from hotstart.runtimes import open_file

    learner, images, targets = trained
    pte, _, _ = qat_pte
    q = pte.retarget("tflite")
    assert q.target == "tflite" and q.how == pte.how and q.history == pte.history and q.model is not pte.model
    m = open_file(q.export(tmp_path / "qat.tflite").path)
    assert "quantization-aware" in m.meta["quantization"]
    assert m.meta["input_dtype"] == m.meta["output_dtype"] == "int8"
    labels = [lab for lab, _ in map(m.predict, images)]
    assert np.mean(np.equal(labels, _torch_labels(q.model, learner.task, images))) >= 0.95
    assert np.mean(np.equal(labels, targets)) >= learner.validate()["accuracy"] - 0.05
    with pytest.raises(ValueError, match="quantized for 'tflite'"):
        q.export(tmp_path / "x.onnx")
