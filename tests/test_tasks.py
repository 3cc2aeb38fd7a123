"""Tasks: encoding per context, static encoded blocks, decoding, head/loss/metrics, JSON, describe()."""
import io
import json
import random

import numpy as np
import pytest
import torch
import torch.nn as nn
from PIL import Image as PILImage

from hotstart import datasets
from hotstart.blocks import (ClassIndex, Image, ImageTensor, Keypoints, Label, LabelMulti, Mask, OneHotTensor)
from hotstart.encodings import ImagePreprocessing, MultiHot, OneHot, ProjectiveTransforms
from hotstart.tasks import ImageClassificationMulti, ImageClassificationSingle, SupervisedTask

PETS = ["cat", "dog", "bird"]


@pytest.fixture(scope="module")
def digits():
    data, blocks = datasets.load("digits")
    inputs, targets = data
    return [(inputs[i], targets[i]) for i in range(12)], blocks


def _image(mode, size, seed=0):
    w, h = size
    rng = np.random.default_rng(seed)
    bands = {"L": 1, "RGB": 3, "RGBA": 4}[mode]
    arr = rng.integers(0, 256, size=(h, w, bands), dtype=np.uint8)
    return PILImage.fromarray(arr[..., 0] if bands == 1 else arr, mode)


# --- digits -------------------------------------------------------------------------------

def test_digits_encode_shapes_per_context(digits):
    samples, blocks = digits
    assert blocks[0] == Image(channels=1) and blocks[1] == Label(list(range(10)))
    task = ImageClassificationSingle(blocks, size=32, augment={"flip": 0.0})
    assert task.encoded_blocks() == (ImageTensor(1, (32, 32)), ClassIndex(list(range(10))))
    for ctx in ("training", "validation", "inference"):
        for i, sample in enumerate(samples):
            x, y = task.encode_sample(sample, ctx, np.random.default_rng(i))
            assert x.shape == (1, 32, 32) and x.dtype == torch.float32
            assert y.shape == () and y.dtype == torch.int64 and int(y) == sample[1]
            assert all(b.check(v) for b, v in zip(task.encoded_blocks(), (x, y)))
            assert task.decode_target(y) == sample[1]
    x = task.encode_input(samples[0][0])  # inference by default, no rng needed
    torch.testing.assert_close(x, task.encode_sample(samples[0], "validation")[0])


def test_digits_label_outside_classes_names_the_sample(digits):
    samples, blocks = digits
    task = ImageClassificationSingle(blocks, size=16)
    with pytest.raises(ValueError) as info:
        task.encode_sample((samples[0][0], 11), "validation", where="sample 7")
    msg = str(info.value)
    assert msg.startswith("sample 7: ") and "label 11" in msg and "[0, 1, 2" in msg
    with pytest.raises(ValueError, match="^label 'seven'"):
        task.encode_sample((samples[0][0], "seven"), "validation")
    with pytest.raises(ValueError, match="sample 3: .*expected a PIL image"):
        task.encode_sample(("not an image", 1), "validation", where="sample 3")
    with pytest.raises(ValueError, match="sample 2: expected 2 values"):
        task.encode_sample((samples[0][0],), "validation", where="sample 2")


# --- generated images of many kinds -----------------------------------------------------

@pytest.mark.parametrize("mode, size", [("RGB", (40, 30)), ("RGBA", (17, 23)), ("L", (8, 8)), ("RGB", (64, 16))])
@pytest.mark.parametrize("channels", [None, 1, 3])
def test_generated_images_encode_to_the_static_shapes(mode, size, channels):
    task = ImageClassificationSingle((Image(channels=channels), Label(PETS)), size=(20, 24))
    expected_c = channels or 3
    assert task.encoded_blocks() == (ImageTensor(expected_c, (20, 24)), ClassIndex(PETS))
    assert task.channels == expected_c
    im = _image(mode, size)
    for ctx in ("training", "validation"):
        x, y = task.encode_sample((im, "dog"), ctx, np.random.default_rng(0))
        assert x.shape == (expected_c, 20, 24) and x.dtype == torch.float32 and int(y) == 1
        assert task.encoded_blocks()[0].check(x)
    shown = task.decode_input(task.encode_input(im))
    assert isinstance(shown, PILImage.Image) and shown.size == (24, 20)
    assert shown.mode == ("L" if expected_c == 1 else "RGB")


def test_default_rgb_task_and_decode_input_is_close_to_a_resize():
    im = _image("RGB", (24, 24), seed=3)
    task = ImageClassificationSingle((Image(), Label(PETS)), size=24)
    x = task.encode_input(im)
    assert x.shape == (3, 24, 24)
    back = task.decode_input(x)
    assert np.abs(np.asarray(back, np.int16) - np.asarray(im, np.int16)).max() <= 1  # same size: no resampling


def test_same_seed_same_encoding_and_different_seeds_differ():
    task = ImageClassificationSingle((Image(), Label(PETS)), size=16)
    im = _image("RGB", (30, 30))
    a = task.encode_sample((im, "cat"), "training", np.random.default_rng(4))
    b = task.encode_sample((im, "cat"), "training", np.random.default_rng(4))
    assert torch.equal(a[0], b[0]) and torch.equal(a[1], b[1])
    others = [task.encode_sample((im, "cat"), "training", np.random.default_rng(s))[0] for s in range(5)]
    assert len({tuple(o.flatten().tolist()) for o in others}) == 5
    v1 = task.encode_sample((im, "cat"), "validation")[0]
    v2 = task.encode_sample((im, "cat"), "validation", np.random.default_rng(123))[0]
    assert torch.equal(v1, v2)


# --- decoding outputs, heads, losses, metrics ------------------------------------------

def test_single_decode_output():
    task = ImageClassificationSingle((Image(), Label(PETS)), size=8)
    label, probs = task.decode_output(torch.tensor([0.0, 10.0, 0.0]))
    assert label == "dog"
    assert probs.shape == (3,) and abs(float(probs.sum()) - 1.0) < 1e-6 and probs.argmax() == 1
    label, probs = task.decode_output(torch.tensor([1.0, 2.0, 3.0], requires_grad=True))
    assert label == "bird"
    torch.testing.assert_close(probs, torch.tensor([1.0, 2.0, 3.0]).softmax(-1))
    assert task.decode_target(torch.tensor(2)) == "bird"


def test_single_head_loss_metrics():
    task = ImageClassificationSingle((Image(), Label(PETS)), size=8)
    head = task.head(7)
    assert isinstance(head, nn.Linear) and head(torch.zeros(5, 7)).shape == (5, 3)
    loss = task.loss_fn()
    assert isinstance(loss, nn.CrossEntropyLoss)
    logits = torch.tensor([[2.0, 0.0, 0.0], [0.0, 2.0, 0.0], [0.0, 0.0, 2.0], [2.0, 0.0, 0.0]])
    target = torch.tensor([0, 1, 1, 0])
    torch.testing.assert_close(loss(logits, target), nn.functional.cross_entropy(logits, target))
    metrics = task.metrics()
    assert list(metrics) == ["accuracy"]
    assert float(metrics["accuracy"](logits, target)) == pytest.approx(0.75)


def test_multi_encode_decode_head_loss_metrics():
    classes = ["a", "b", "c", "d"]
    task = ImageClassificationMulti((Image(), LabelMulti(classes)), size=(12, 10))
    assert task.encoded_blocks() == (ImageTensor(3, (12, 10)), OneHotTensor(classes))
    x, y = task.encode_sample((_image("RGB", (20, 20)), ["d", "a"]), "training", np.random.default_rng(0))
    assert x.shape == (3, 12, 10) and y.dtype == torch.float32 and y.tolist() == [1.0, 0.0, 0.0, 1.0]
    _, empty = task.encode_sample((_image("L", (9, 9)), []), "validation")
    assert empty.tolist() == [0.0] * 4
    assert task.decode_target(y) == ["a", "d"]

    labels, probs = task.decode_output(torch.tensor([3.0, -3.0, 0.1, -0.1]))
    assert labels == ["a", "c"]  # sigmoid >= 0.5
    torch.testing.assert_close(probs, torch.tensor([3.0, -3.0, 0.1, -0.1]).sigmoid())
    assert task.decode_output(torch.tensor([3.0, -3.0, 0.1, -0.1]), threshold=0.9)[0] == ["a"]

    assert isinstance(task.loss_fn(), nn.BCEWithLogitsLoss)
    assert task.head(5)(torch.zeros(2, 5)).shape == (2, 4)

    metrics = task.metrics()
    assert list(metrics) == ["f1", "accuracy"]
    logits = torch.tensor([[5.0, -5.0, 5.0, -5.0], [5.0, 5.0, -5.0, -5.0]])
    target = torch.tensor([[1, 0, 0, 0], [1, 1, 0, 1]])
    # predictions [[1,0,1,0],[1,1,0,0]]: 6 of 8 entries right
    assert float(metrics["accuracy"](logits, target)) == pytest.approx(0.75)
    # per-label F1: a 1, b 1, c 0 (fp only), d 0 (fn only) -> macro 0.5
    assert float(metrics["f1"](logits, target)) == pytest.approx(0.5)

    with pytest.raises(ValueError, match=r"sample 4: .*\['e'\]"):
        task.encode_sample((_image("RGB", (8, 8)), ["a", "e"]), "training", np.random.default_rng(0),
                           where="sample 4")


# --- bad tasks --------------------------------------------------------------------------

def test_wrong_blocks_are_type_errors():
    for blocks in ((Image(), LabelMulti(PETS)), (Label(PETS), Label(PETS)), (Image(),),
                   (Image(), Label(PETS), Label(PETS)), (Mask(["a"]), Label(PETS))):
        with pytest.raises(TypeError, match=r"ImageClassificationSingle needs blocks=\(Image\(\), Label"):
            ImageClassificationSingle(blocks)
    with pytest.raises(TypeError, match="ImageClassificationMulti needs"):
        ImageClassificationMulti((Image(), Label(PETS)))
    with pytest.raises(TypeError, match="input_block, target_block"):
        SupervisedTask([Image()], [])
    with pytest.raises(TypeError):
        SupervisedTask([Image(), "label"], [])


def test_bad_context_and_size():
    task = ImageClassificationSingle((Image(), Label(PETS)), size=8)
    with pytest.raises(ValueError, match="context must be one of"):
        task.encode_sample((_image("RGB", (8, 8)), "cat"), "train")
    with pytest.raises(ValueError, match="context must be one of"):
        task.encode_input(_image("RGB", (8, 8)), "predict")
    for size in ((0, 8), (8, 8, 8), -3):
        with pytest.raises(ValueError, match="size"):
            ImageClassificationSingle((Image(), Label(PETS)), size=size)
    with pytest.raises(ValueError, match="unknown augment"):
        ImageClassificationSingle((Image(), Label(PETS)), augment={"flips": 0.0})
    with pytest.raises(ValueError, match="input: "):
        task.encode_input("nope")


def test_training_without_rng_is_an_error_naming_the_sample():
    task = ImageClassificationSingle((Image(), Label(PETS)), size=8)
    with pytest.raises(ValueError, match="sample 9: .*rng"):
        task.encode_sample((_image("RGB", (8, 8)), "cat"), "training", where="sample 9")


# --- JSON, mocks, describe ----------------------------------------------------------------

TASKS = [
    lambda: ImageClassificationSingle((Image(channels=1), Label(list(range(10)))), size=32, augment={"flip": 0.0}),
    lambda: ImageClassificationSingle((Image(), Label(PETS)), size=(16, 12),
                                      augment={"scale": (0.8, 1.0), "ratio": (1, 1)}),
    lambda: ImageClassificationSingle((Image(channels=3), Label(PETS)), size=16, augment=False,
                                      mean=(0.1, 0.2, 0.3), std=(0.5, 0.5, 0.5)),
    lambda: ImageClassificationMulti((Image(), LabelMulti(["x", "y", "z"])), size=20),
    lambda: SupervisedTask((Image(channels=1), Label(["a", "b"])),
                           [ProjectiveTransforms(8), ImagePreprocessing(channels=1), OneHot()]),
]


@pytest.mark.parametrize("make", TASKS)
def test_json_round_trip_encodes_identically(make):
    task = make()
    d = json.loads(json.dumps(task.to_dict()))
    restored = SupervisedTask.from_dict(d)
    assert type(restored) is type(task) and restored == task
    assert restored.encoded_blocks() == task.encoded_blocks() and restored.encodings == task.encodings
    sample = task.mock_sample(np.random.default_rng(0))
    for ctx in ("training", "validation"):
        a = task.encode_sample(sample, ctx, np.random.default_rng(1))
        b = restored.encode_sample(sample, ctx, np.random.default_rng(1))
        assert all(torch.equal(u, v) for u, v in zip(a, b))


def test_from_dict_unknown_kind():
    with pytest.raises(ValueError, match="unknown task kind 'Nope'"):
        SupervisedTask.from_dict({"kind": "Nope"})


def test_stats_and_with_stats():
    task = ImageClassificationSingle((Image(), Label(PETS)), size=8, augment={"flip": 0.0})
    other = task.with_stats((0.5, 0.5, 0.5), (0.2, 0.2, 0.2))
    assert other.stats == ((0.5, 0.5, 0.5), (0.2, 0.2, 0.2)) and other.size == task.size
    assert other.augment == task.augment and other != task
    assert SupervisedTask.from_dict(json.loads(json.dumps(other.to_dict()))).stats == other.stats


@pytest.mark.parametrize("make", TASKS)
def test_mock_samples_are_valid_and_encode_to_the_encoded_blocks(make):
    task = make()
    rng = np.random.default_rng(0)
    for _ in range(4):
        sample = task.mock_sample(rng)
        assert all(b.check(v) for b, v in zip(task.blocks, sample))
        encoded = task.encode_sample(sample, "training", rng)
        assert all(b.check(v) for b, v in zip(task.encoded_blocks(), encoded))
    a = task.mock_sample(np.random.default_rng(9))
    b = task.mock_sample(np.random.default_rng(9))
    assert np.array_equal(np.asarray(a[0]), np.asarray(b[0])) and a[1] == b[1]
    with pytest.raises(TypeError, match="numpy.random.Generator"):
        task.mock_sample(0)


def test_describe_mentions_blocks_encodings_and_shapes(capsys):
    task = ImageClassificationSingle((Image(channels=1), Label(list(range(10)))), size=32)
    text = task.describe()
    assert capsys.readouterr().out == text
    for part in ("ImageClassificationSingle", repr(Image(channels=1)), repr(Label(list(range(10)))),
                 "ProjectiveTransforms", "ImagePreprocessing", "OneHot",
                 repr(ImageTensor(1, (32, 32))), repr(ClassIndex(list(range(10)))),
                 "encoded (training): input (1, 32, 32) float32, target () int64",
                 "encoded (validation): input (1, 32, 32) float32, target () int64"):
        assert part in text, part
    multi = ImageClassificationMulti((Image(), LabelMulti(["x", "y"])), size=(8, 6)).describe(file=None)
    for part in ("MultiHot", "OneHotTensor(classes=['x', 'y'])", "input (3, 8, 6) float32, target (2,) float32"):
        assert part in multi, part


def test_tasks_never_touch_global_rngs(digits):
    samples, blocks = digits
    torch_state, np_state, py_state = torch.get_rng_state(), np.random.get_state(), random.getstate()
    rng = np.random.default_rng(0)
    tasks = [ImageClassificationSingle(blocks, size=16),
             ImageClassificationSingle((Image(), Label(PETS)), size=(12, 14)),
             ImageClassificationMulti((Image(channels=1), LabelMulti(["x", "y"])), size=10)]
    blocks_to_mock = [Image(), Image(channels=1, size=(5, 5)), Label(PETS), LabelMulti(PETS), Mask(["a", "b"]),
                      Keypoints(3), ImageTensor(3, (4, 4)), ClassIndex(PETS), OneHotTensor(PETS)]
    for _ in range(10):
        for b in blocks_to_mock:
            b.mock(rng)
        for task in tasks:
            sample = task.mock_sample(rng)
            task.encode_sample(sample, "training", rng)
            task.encode_sample(sample, "validation")
        tasks[0].encode_sample(samples[_], "training", rng)
    for task in tasks:
        task.describe(file=io.StringIO())
    assert torch.equal(torch.get_rng_state(), torch_state)
    assert random.getstate() == py_state
    after = np.random.get_state()
    assert after[0] == np_state[0] and np.array_equal(after[1], np_state[1]) and after[2:] == np_state[2:]


# --- the hooks the learner and the model factory call ----------------------------------------

def test_declared_hooks_decide_the_model_and_its_output(digits):
    """model_kind / default_backbone / classes / output_shape are declared on every task with a
    default (tasks/base.py); the factory, tasklearner's default backbone, the model check and the
    CLI read them directly. Each task says what differs by overriding one."""
    from hotstart.blocks import Continuous, TimeSeries
    from hotstart.models.factory import choose_kind
    from hotstart.tasks import ImageKeypointRegression, ImageSegmentation, TSClassificationSingle, TSRegression
    from hotstart.tasks.checks import expected_output_shape

    _, blocks = digits
    label = ImageClassificationSingle(blocks, size=8)
    points = ImageKeypointRegression((Image(), Keypoints(3)), size=8)
    masks = ImageSegmentation((Image(), Mask(["bg", "fg"])), size=8)
    series = TSClassificationSingle((TimeSeries(2, length=16), Label(["a", "b"])))
    numbers = TSRegression((TimeSeries(2, length=16), Continuous(1)))
    base = SupervisedTask.__dict__
    assert base["model_kind"] is None and base["default_backbone"] is None
    assert (label.model_kind, label.default_backbone, label.output_shape()) == (None, None, None)
    assert label.classes == list(range(10)) and expected_output_shape(label) == (10,)
    assert choose_kind(label, None) == "SmallCNN" and choose_kind(label, "resnet10t") == "timm"
    assert points.classes is None and expected_output_shape(points) == (6,)
    assert masks.classes == ["bg", "fg"] and choose_kind(masks, None) == choose_kind(masks, "resnet10t") == "unet"
    assert series.default_backbone == numbers.default_backbone == "inceptiontime"
    assert series.classes == ["a", "b"] and numbers.classes is None


def test_no_module_probes_a_task_for_a_hook():
    """``getattr(task, "x", None)`` / ``hasattr(task, "x")`` hid which hooks exist: every hook is
    declared in tasks/base.py, so no module of hotstart asks a task whether it has one."""
    import ast
    from pathlib import Path

    import hotstart

    def names_a_task(node):
        name = node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else ""
        return name == "task" or name.endswith("_task")

    root = Path(hotstart.__file__).parent
    probes = [f"{path.relative_to(root)}:{node.lineno}" for path in sorted(root.rglob("*.py"))
              for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
              if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
              and node.func.id in ("getattr", "hasattr") and node.args and names_a_task(node.args[0])]
    assert not probes, probes
