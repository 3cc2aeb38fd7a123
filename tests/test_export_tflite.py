"""LiteRT (.tflite, fp32 and int8) and TF Lite Micro, checked against torch and onnxruntime's int8,
each opened through the runtime interface (hotstart.runtimes.open_file: LiteRT by default,
``runtime="tflite-micro"`` for TF Lite Micro).

conftest's `digits_micro` (SmallCNN 8-16-32 at 16x16, trained once per session) is converted once
per module in fp32 (through the CLI) and once in int8 (calibrated on 256 training images); every
test reads those two files. A litert-torch conversion costs ~10 s on 2 cores (and its import ~7 s).
QAT to .tflite is tested in test_export_qat.py, on its smaller model (a QAT epoch on all digits
takes a minute), by converting the model its .pte QAT test trained.
"""
from types import SimpleNamespace

import numpy as np
import pytest
from exported import export_with_cli, predict_without_torch, validation_set
from needs import need

need("litert_torch", "install hotstart[tflite] (litert-torch, ai-edge-litert, tflite-micro)")
need("ai_edge_litert", "install hotstart[tflite]")


@pytest.fixture(scope="module")
def tflite(tmp_path_factory, digits_micro):
    root = tmp_path_factory.mktemp("tflite")
    fp32 = export_with_cli(digits_micro, root, "tflite", "digits.tflite")
    int8_report = digits_micro.export(root / "digits-int8.tflite", quantize="int8")
    return SimpleNamespace(fp32=fp32, int8=int8_report.path, int8_report=int8_report, classes=digits_micro.task.classes,
                           task=digits_micro.task, **vars(validation_set(digits_micro)))


def accuracy(labels, classes, targets) -> float:
    return float(np.mean([classes[i] == t for i, t in zip(labels, targets)]))


def test_fp32_tflite_equals_torch_on_every_validation_digit(tflite):
    from hotstart.runtimes import LiteRtRuntime, open_file

    m = open_file(tflite.fp32)
    assert isinstance(m, LiteRtRuntime) and m.batch_size == 1
    assert m.meta["format"] == "hotstart.tflite/1" and m.meta["layout"] == "NHWC"
    assert m.meta["input_dtype"] == m.meta["output_dtype"] == "float32" and "quantization" not in m.meta
    assert m.meta["task"] == tflite.task.to_dict() and m.meta["size"] == [16, 16]
    assert list(m.input["shape"]) == [1, 16, 16, 1]  # channels last: the graph has no transposes
    got = m.run(tflite.x)  # all 359, one call each: the file takes one sample
    assert got.shape == (359, 10)
    assert float(np.abs(got - tflite.logits).max()) <= 1e-4
    assert (got.argmax(1) == tflite.logits.argmax(1)).all()
    label, probs = m.predict(tflite.images[0])
    assert label == tflite.classes[int(tflite.logits[0].argmax())] and probs.shape == (10,)
    assert [lab for lab, _ in m.predict_many(tflite.images[:40], 16)] == [
        tflite.classes[i] for i in tflite.logits[:40].argmax(1)]


def test_int8_tflite_agrees_with_onnxruntime_int8_and_is_within_a_point_of_fp32(tflite, digits_micro_int8):
    from hotstart.runtimes import open_file

    q = open_file(tflite.int8)
    assert q.meta["input_dtype"] == q.meta["output_dtype"] == "int8"
    assert "post-training" in q.meta["quantization"] and "256 training samples" in q.meta["quantization"]
    scale, zero = q.input["quantization"]  # the metadata holds the input tensor's own scale, and the
    assert q.meta["input_scale"] == pytest.approx(scale, rel=1e-6) and q.meta["input_zero_point"] == zero
    assert isinstance(q.meta["input_scale"], float) and isinstance(q.meta["output_zero_point"], int)  # the schema's JSON
    assert tflite.int8_report.size_bytes < 0.4 * tflite.fp32.stat().st_size  # int8 weights
    labels = q.run(tflite.x).argmax(1)  # runtime quantizes: run() takes the float encoded batch
    ort = open_file(digits_micro_int8).run(tflite.x).argmax(1)
    agree = float(np.mean(labels == ort))
    fp32 = accuracy(tflite.logits.argmax(1), tflite.classes, tflite.targets)
    int8 = accuracy(labels, tflite.classes, tflite.targets)
    print(f"int8 .tflite: labels = onnxruntime int8's on {agree:.4f}; accuracy {int8:.4f} (fp32 {fp32:.4f})")
    assert agree >= 0.98
    assert abs(int8 - fp32) <= 0.01


def test_tflite_micro_runs_the_int8_file_with_litert_labels(tflite):
    from hotstart.deploy import open_model
    from hotstart.runtimes import TflmRuntime, open_file

    need("tflite_micro", "install hotstart[tflite] (tflite-micro)")
    micro = open_model(tflite.int8, runtime="tflite-micro")
    litert = open_file(tflite.int8)
    assert isinstance(micro, TflmRuntime) and micro.meta == litert.meta
    got, want = micro.run(tflite.x), litert.run(tflite.x)
    steps = np.abs(got - want) / micro.meta["output_scale"]
    top2 = np.sort(want, axis=1)[:, -2:]
    clear = (top2[:, 1] - top2[:, 0]) > 2 * np.abs(got - want).max()  # no one-step difference can flip these
    same = got.argmax(1) == want.argmax(1)
    arena = micro.arena_bytes()
    print(f"TF Lite Micro: labels = LiteRT's on {same.sum()} / {len(same)}, logits within {steps.max():.0f} step(s); "
          f"arena {arena}")
    assert same[clear].all() and same.mean() >= 0.99
    assert steps.max() <= 1.01  # the two runtimes' int8 kernels round a step apart at most
    # the recording allocator's report: activations (head) + interpreter structures (tail), and the
    # 8 x 16 x 16 int8 output of the first convolution must fit in the head
    assert arena["head"] + arena["tail"] == arena["total"] and 8 * 16 * 16 <= arena["head"] < arena["total"] < 65536


def test_cli_predict_tflite_imports_no_torch(tflite, tmp_path):
    from hotstart.runtimes import open_file

    img = tmp_path / "digit.png"
    tflite.images[0].resize((40, 40)).save(img)  # larger than the model: exercises the resize
    out = predict_without_torch(tflite.int8, img)
    label, probs = open_file(tflite.int8).predict(img)
    assert out["label"] == label and out["top"][0][1] == pytest.approx(float(probs.max()), abs=1e-6)
    micro = predict_without_torch(tflite.int8, img, "--runtime", "tflite-micro")
    assert micro["label"] == label


def test_foreign_and_damaged_tflite_files_are_refused(tflite, tmp_path, capsys):
    from ai_edge_litert.tools import flatbuffer_utils

    from hotstart.cli import main
    from hotstart.contract import MetadataError
    from hotstart.errors import SavedModelError, UsageError
    from hotstart.runtimes import LiteRtRuntime, open_file, tflite_file

    data = tflite.int8.read_bytes()
    tree = flatbuffer_utils.read_model_from_bytearray(bytearray(data))
    tree.metadata = [m for m in tree.metadata if m.name not in (b"hotstart", "hotstart")]
    foreign = tmp_path / "foreign.tflite"
    foreign.write_bytes(bytes(flatbuffer_utils.convert_object_to_bytearray(tree)))
    with pytest.raises(SavedModelError, match="not a .tflite written by hotstart's export"):
        open_file(foreign)
    assert main(["predict", str(foreign), str(tmp_path / "x.png")]) == 1
    assert "foreign.tflite: not a .tflite written by hotstart" in capsys.readouterr().err

    props = tflite_file.read_props(data)
    wrong = tflite_file.embed_metadata(data, {**props, "input_scale": "0.5"})
    with pytest.raises(MetadataError, match="'input_scale'.*differ from the model's input quantization"):
        LiteRtRuntime.load(wrong)
    # the contract's schema checks the file's own keys, key by key
    for key, value, problem in (("input_scale", "-0.5", "positive finite number"),
                                ("output_zero_point", "300", r"\[-128, 127\]"),
                                ("layout", "NCHW", '"NHWC"'), ("batch_size", "0", "positive integer"),
                                ("input_dtype", "uint8", '"float32" or "int8"')):
        with pytest.raises(MetadataError, match=f"metadata key '{key}' must be .*{problem}"):
            LiteRtRuntime.load(tflite_file.embed_metadata(data, {**props, key: value}))
    without = {k: v for k, v in props.items() if k != "output_scale"}
    with pytest.raises(MetadataError, match="'output_scale' is missing"):
        LiteRtRuntime.load(tflite_file.embed_metadata(data, without))
    with pytest.raises(MetadataError, match="not a .tflite file"):
        LiteRtRuntime.load(b"\x00" * 64)
    for cut in (100, 1_000, len(data) // 2):  # cut short: one line naming the file, not a struct.error
        short = tmp_path / f"cut-{cut}.tflite"
        short.write_bytes(data[:cut])
        with pytest.raises(SavedModelError, match=f"cut-{cut}.tflite: a damaged .tflite file"):
            open_file(short)
        assert main(["predict", str(short), str(tmp_path / "x.png")]) == 1
        assert f"cut-{cut}.tflite: a damaged .tflite file" in capsys.readouterr().err
    with pytest.raises(UsageError, match="runtime 'iree' does not run .tflite files; these do: litert, tflite-micro"):
        open_file(tflite.int8, runtime="iree")
