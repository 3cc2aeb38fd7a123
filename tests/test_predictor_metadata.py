"""The torch-free predictor checks an .onnx file's hotstart metadata at load, key by key.

Damaged or mismatched metadata used to give garbage labels with exit 0, or an IndexError: a
``classes`` value that is not JSON was kept as text and indexed one character at a time. Each case
here must be refused when the model is loaded, by a `MetadataError` that names the file and the key.

The models are tiny ONNX graphs built with onnx.helper (Flatten + Gemm), carrying the metadata that
hotstart's exporter writes for a real task (`task_metadata`): no training, no torch export.
"""
import json

import numpy as np
import pytest

pytest.importorskip("onnxruntime")

from hotstart import datasets
from hotstart.blocks import Image, Label
from hotstart.export.metadata import task_metadata
from hotstart.predictor import MetadataError, Predictor
from hotstart.tasks import ImageClassificationMulti, ImageClassificationSingle, TabularClassificationSingle, \
    TabularRegression


def _onnx(path, in_shape, n_out, meta):
    """input [N, *in_shape] -> Flatten -> Gemm -> logits [N, n_out], with `meta` as metadata_props."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    n_in = int(np.prod(in_shape))
    rng = np.random.default_rng(0)
    w = numpy_helper.from_array(rng.standard_normal((n_in, n_out)).astype(np.float32), "w")
    b = numpy_helper.from_array(np.zeros(n_out, np.float32), "b")
    graph = helper.make_graph(
        [helper.make_node("Flatten", ["input"], ["flat"]), helper.make_node("Gemm", ["flat", "w", "b"], ["logits"])],
        "tiny", [helper.make_tensor_value_info("input", TensorProto.FLOAT, ["N", *in_shape])],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["N", n_out])], [w, b])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    for k, v in meta.items():
        model.metadata_props.add(key=k, value=v)
    onnx.save(model, str(path))
    return path


def _image_meta(multi=False):
    cls = ImageClassificationMulti if multi else ImageClassificationSingle
    from hotstart.blocks import LabelMulti

    target = LabelMulti(["a", "b", "c"]) if multi else Label(["a", "b", "c"])
    task = cls((Image(1), target), size=(4, 5), augment=False, mean=(0.5,), std=(0.25,))
    return task_metadata(task)


@pytest.fixture(scope="module")
def table_meta():
    data, blocks = datasets.load("penguins", target="species")
    single = task_metadata(TabularClassificationSingle(blocks).setup(data))
    mass, blocks = datasets.load("penguins", target="body_mass_g")
    return single, task_metadata(TabularRegression(blocks).setup(mass))


def _table_width(meta):
    t = json.loads(meta["table"])
    return len(t["categorical"]) + len(t["na_columns"]) + len(t["continuous"])


def test_good_metadata_loads_and_predicts(tmp_path, table_meta):
    p = Predictor.load(_onnx(tmp_path / "img.onnx", (1, 4, 5), 3, _image_meta()))
    label, probs = p.predict(np.zeros((4, 5), np.uint8))
    assert label in ("a", "b", "c") and probs.shape == (3,)
    Predictor.load(_onnx(tmp_path / "multi.onnx", (1, 4, 5), 3, _image_meta(multi=True)))
    single, regression = table_meta
    Predictor.load(_onnx(tmp_path / "t.onnx", (_table_width(single),), 3, single))
    Predictor.load(_onnx(tmp_path / "r.onnx", (_table_width(regression),), 1, regression))


IMAGE_CASES = [  # (key, damaged value, what the error must say)
    ("classes", "a,b,c", "not valid JSON"),  # before: indexed one character at a time
    ("classes", '["a", "b"]', "2 classes, but the model outputs 3"),  # before: IndexError
    ("classes", '["a", "b", "c", "d"]', "4 classes, but the model outputs 3"),  # before: never "d", exit 0
    ("classes", '"abc"', "list of distinct labels"),
    ("classes", '["a", "a", "b"]', "distinct"),
    ("classes", "[]", "non-empty"),
    ("classes", '[["a"], "b", "c"]', "labels"),
    ("size", "16x16", "not valid JSON"),
    ("size", "[16]", "height, width"),
    ("size", "[0, 5]", "positive"),
    ("size", "[4.5, 5]", "integers"),
    ("size", "[8, 8]", "model takes [4, 5]"),
    ("channels", "3", "model takes 1 channels", {"mean": "[0.5, 0.5, 0.5]", "std": "[1, 1, 1]"}),
    ("channels", "2", "1 or 3"),
    ("channels", '"1"', "1 or 3"),
    ("mean", "0.5", "list of 1 finite numbers"),
    ("mean", "[0.5, 0.5, 0.5]", "list of 1"),
    ("mean", "[NaN]", "not valid JSON"),
    ("mean", "[Infinity]", "not valid JSON"),
    ("mean", "mean", "not valid JSON"),
    ("std", "[0]", "positive"),
    ("std", "[-1]", "positive"),
    ("std", '["0.25"]', "positive finite numbers"),
    ("image_mode", "CMYK", "image_mode"),
    ("activation", "sigmoid", "'softmax'"),
    ("resize", "nearest", "bilinear-antialias"),
    ("input_name", "pixels", "model's inputs are ['input']"),
    ("kind", "ImageSegmentation", "does not know task kind"),
    ("task", "[1, 2]", "JSON object"),
]


@pytest.mark.parametrize("case", IMAGE_CASES, ids=[f"{c[0]}={c[1]}" for c in IMAGE_CASES])
def test_damaged_image_metadata_is_refused_naming_the_key(tmp_path, case):
    key, value, message, *others = case
    meta = {**_image_meta(), key: value, **(others[0] if others else {})}
    path = _onnx(tmp_path / "m.onnx", (1, 4, 5), 3, meta)
    with pytest.raises(MetadataError) as e:
        Predictor.load(path)
    text = str(e.value)
    assert str(path) in text and (f"key {key!r}" in text or key == "kind"), text
    assert message in text, text


@pytest.mark.parametrize("key", ["classes", "size", "channels", "mean", "std", "kind"])
def test_a_missing_key_is_refused_naming_it(tmp_path, key):
    meta = _image_meta()
    del meta[key]
    with pytest.raises(MetadataError, match=f"'{key}'"):
        Predictor.load(_onnx(tmp_path / "m.onnx", (1, 4, 5), 3, meta))


def test_damaged_multilabel_threshold_is_refused(tmp_path):
    for bad in ("1.5", '"half"', "-0.1"):
        meta = {**_image_meta(multi=True), "threshold": bad}
        with pytest.raises(MetadataError, match="'threshold'"):
            Predictor.load(_onnx(tmp_path / "m.onnx", (1, 4, 5), 3, meta))


def _retable(meta, change):
    t = json.loads(meta["table"])
    change(t)
    return {**meta, "table": json.dumps(t)}


def test_damaged_table_metadata_is_refused_naming_the_key(tmp_path, table_meta):
    single, regression = table_meta
    width = _table_width(single)
    conts = json.loads(single["table"])["continuous"]
    cats = json.loads(single["table"])["categorical"]
    cases = {
        "table not JSON": {**single, "table": "{categorical"},
        "table a list": {**single, "table": "[]"},
        "a std of 0": _retable(single, lambda t: t["std"].update({conts[0]: 0})),
        "a missing mean": _retable(single, lambda t: t["mean"].pop(conts[0])),
        "a text median": _retable(single, lambda t: t["median"].update({conts[0]: "3"})),
        "no vocab for a column": _retable(single, lambda t: t["vocab"].pop(cats[0])),
        "na_columns not continuous": _retable(single, lambda t: t["na_columns"].append(cats[0])),
        "one column fewer": _retable(single, lambda t: t["continuous"].pop()),
    }
    for name, meta in cases.items():
        with pytest.raises(MetadataError, match="key 'table'"):
            Predictor.load(_onnx(tmp_path / "t.onnx", (width,), 3, meta))
    with pytest.raises(MetadataError, match="key 'classes'.*3 classes, but the model outputs 4"):
        Predictor.load(_onnx(tmp_path / "t.onnx", (width,), 4, single))
    rwidth = _table_width(regression)
    two = {"target_mean": "[0, 0]", "target_std": "[1, 1]"}
    with pytest.raises(MetadataError, match="key 'outputs'.*is 2, but the model outputs 1"):
        Predictor.load(_onnx(tmp_path / "r.onnx", (rwidth,), 1, {**regression, "outputs": "2", **two}))
    for key, value, message in [("outputs", "2", "key 'target_mean'.*list of 2"), ("outputs", "0", "positive integer"),
                                ("target_mean", "[]", "list of 1 finite"), ("target_std", "[0.0]", "positive"),
                                ("target_mean", "[NaN]", "not valid JSON")]:
        with pytest.raises(MetadataError, match=f"key '{key}'.*{message}" if "key" not in message else message):
            Predictor.load(_onnx(tmp_path / "r.onnx", (rwidth,), 1, {**regression, key: value}))


def test_the_command_line_reports_damaged_metadata_as_one_line(tmp_path, capsys):
    from hotstart.predictor import main

    path = _onnx(tmp_path / "m.onnx", (1, 4, 5), 3, {**_image_meta(), "classes": "a,b,c"})
    np.save(tmp_path / "x.npy", np.zeros(1))
    assert main([str(path), str(tmp_path / "x.png")]) == 1
    err = capsys.readouterr().err
    assert "metadata key 'classes'" in err and "Traceback" not in err
    for bad in ("0", "-3"):  # as `hotstart predict` refuses them: a slice [:0] printed no class at all
        with pytest.raises(SystemExit) as stop:
            main([str(path), str(tmp_path / "x.png"), "--top-k", bad])
        assert stop.value.code == 2 and f"--top-k must be at least 1, got {bad}" in capsys.readouterr().err


def test_non_finite_outputs_are_an_error_line_not_invalid_json(tmp_path, capsys):
    """A model that outputs NaN: `--json` printed NaN (not JSON) and a label picked from NaN. Now
    an error line, and in the JSON lines an ``error`` object in the input's place."""
    import onnx
    from onnx import numpy_helper

    from hotstart.predictor import predict_paths

    path = _onnx(tmp_path / "m.onnx", (1, 4, 5), 3, _image_meta())
    model = onnx.load(str(path))
    model.graph.initializer[1].CopyFrom(numpy_helper.from_array(np.full(3, np.nan, np.float32), "b"))
    onnx.save(model, str(path))
    from PIL import Image as P

    P.new("L", (5, 4)).save(tmp_path / "x.png")
    assert predict_paths(Predictor.load(path), [str(tmp_path / "x.png")], as_json=True) == 1
    out = capsys.readouterr()
    assert "x.png: the model's outputs are not finite" in out.err
    assert json.loads(out.out) == {"image": str(tmp_path / "x.png"), "error": out.err.strip()[len("error: "):]}


def test_an_empty_file_and_a_huge_declared_input_are_named(tmp_path):
    """An empty .onnx got onnxruntime's message about an old IR version; an input shape beyond what
    a sample can be (here 3 x 60000 x 60000) is refused with the file and the shape."""
    empty = tmp_path / "empty.onnx"
    empty.write_bytes(b"")
    with pytest.raises(MetadataError, match=r"empty\.onnx: the file is empty \(0 bytes\)"):
        Predictor.load(empty)
    import onnx
    from onnx import TensorProto, helper

    graph = helper.make_graph(  # no weights: pool the huge input down to 3 logits
        [helper.make_node("GlobalAveragePool", ["input"], ["pooled"]), helper.make_node("Flatten", ["pooled"], ["logits"])],
        "huge", [helper.make_tensor_value_info("input", TensorProto.FLOAT, ["N", 3, 60000, 60000])],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["N", 3])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    meta = {**_image_meta(), "channels": "3", "mean": "[0.5, 0.5, 0.5]", "std": "[1, 1, 1]"}
    for k, v in meta.items():
        model.metadata_props.add(key=k, value=v)
    path = tmp_path / "huge.onnx"
    onnx.save(model, str(path))
    with pytest.raises(MetadataError, match=r"huge\.onnx: the model declares an input of shape \['N', 3, 60000, 60000\]"):
        Predictor.load(path)
    with pytest.raises(MetadataError, match=r"metadata key 'size' is \[60000, 60000\]"):
        Predictor.load(_onnx(tmp_path / "meta.onnx", (1, 4, 5), 3, {**_image_meta(), "size": "[60000, 60000]"}))
