"""Blocks: mocks are valid and seeded, validation errors are clear, JSON round trips, reprs read well."""
import json

import numpy as np
import pytest
import torch
from PIL import Image as PILImage

from hotstart.blocks import (Block, BlockValueError, ClassIndex, Continuous, Image, ImageTensor, Keypoints,
                             Label, LabelMulti, Mask, OneHotTensor)

ALL_BLOCKS = [
    Image(),
    Image(channels=1),
    Image(channels=3, size=(12, 20)),
    Label(["cat", "dog", "bird"]),
    Label(list(range(10))),
    LabelMulti(["a", "b", "c", "d"]),
    Mask(["background", "road", "car"]),
    Keypoints(4),
    Continuous(3),
    ImageTensor(3, (16, 24)),
    ClassIndex(["x", "y"]),
    OneHotTensor(["x", "y", "z"]),
]

# (block, an invalid value, words the error message must contain)
BAD_VALUES = [
    (Image(), "not an image", ["str", "PIL image"]),
    (Image(), np.zeros((4, 4, 5), np.uint8), ["(4, 4, 5)"]),
    (Image(), torch.zeros(2, 4, 4, dtype=torch.uint8), ["(2, 4, 4)"]),
    (Image(size=(8, 8)), PILImage.new("L", (9, 7)), ["(7, 9)", "(8, 8)"]),
    (Image(), np.full((4, 4), np.nan), ["NaN"]),
    (Label(["cat", "dog"]), "cow", ["'cow'", "'cat'", "'dog'"]),
    (Label([1, 2, 3]), 7, ["label 7", "3 classes"]),
    (Label(["a"]), ["unhashable"], ["['unhashable']"]),
    (LabelMulti(["a", "b"]), "a", ["list, tuple or set", "str"]),
    (LabelMulti(["a", "b"]), ["a", "z"], ["['z']"]),
    (Mask(["bg", "fg"]), np.array([[0, 1], [2, 1]]), ["0..2", "2 classes"]),
    (Mask(["bg", "fg"]), np.zeros((2, 2), np.float32), ["integers", "float32"]),
    (Mask(["bg", "fg"]), np.zeros((2, 2, 2), np.int64), ["2-D"]),
    (Keypoints(3), np.zeros((2, 2), np.float32), ["(3, 2)", "(2, 2)"]),
    (Keypoints(1), np.array([[0.0, np.inf]]), ["infinite"]),
    (Continuous(2), np.zeros(3), ["length 2", "(3,)"]),
    (Continuous(2), np.array([1.0, np.nan]), ["finite"]),
    (ImageTensor(3, (4, 4)), torch.zeros(3, 4, 5), ["(3, 4, 4)", "(3, 4, 5)"]),
    (ImageTensor(1, (2, 2)), torch.zeros(1, 2, 2, dtype=torch.uint8), ["float", "uint8"]),
    (ImageTensor(1, (2, 2)), np.zeros((1, 2, 2), np.float32), ["torch tensor", "ndarray"]),
    (ClassIndex(["x", "y"]), torch.tensor(2), ["index 2", "0..1"]),
    (ClassIndex(["x", "y"]), torch.tensor(0.0), ["integer scalar"]),
    (OneHotTensor(["x", "y"]), torch.zeros(3), ["(2,)"]),
    (OneHotTensor(["x", "y"]), torch.zeros(2, dtype=torch.int64), ["float", "int64"]),
]


@pytest.mark.parametrize("block", ALL_BLOCKS, ids=repr)
def test_mock_is_valid_and_seeded(block):
    for seed in range(5):
        value = block.mock(np.random.default_rng(seed))
        assert block.check(value), (block, value)
        assert block.validate(value) is value
    a, b = block.mock(np.random.default_rng(42)), block.mock(np.random.default_rng(42))
    assert _same_value(a, b)


@pytest.mark.parametrize("block", ALL_BLOCKS, ids=repr)
def test_mock_needs_a_numpy_generator(block):
    for bad in (None, 0, np.random.RandomState(0), torch.Generator()):
        with pytest.raises(TypeError, match="numpy.random.Generator"):
            block.mock(bad)


@pytest.mark.parametrize("block", ALL_BLOCKS, ids=repr)
def test_json_round_trip(block):
    d = json.loads(json.dumps(block.to_dict()))
    assert d["kind"] == type(block).__name__
    restored = Block.from_dict(d)
    assert type(restored) is type(block)
    assert restored == block and hash(restored) == hash(block)
    assert restored.to_dict() == block.to_dict()
    assert repr(restored) == repr(block)


@pytest.mark.parametrize("block, value, words", BAD_VALUES, ids=lambda x: repr(x)[:40])
def test_validate_raises_a_clear_error(block, value, words):
    assert not block.check(value)
    with pytest.raises(BlockValueError) as info:
        block.validate(value, where="sample 12")
    msg = str(info.value)
    assert msg.startswith("sample 12: ")
    assert type(block).__name__ in msg  # names the block
    for w in words:
        assert w in msg, (w, msg)
    assert isinstance(info.value, ValueError)  # BlockValueError is a ValueError


def test_validate_without_where_has_no_prefix():
    with pytest.raises(BlockValueError, match=r"^label 'x' is not one of the 2 classes \['a', 'b'\]"):
        Label(["a", "b"]).validate("x")


def test_mocks_differ_between_seeds():
    img = Image(channels=3, size=(8, 8))
    arrays = [np.asarray(img.mock(np.random.default_rng(s))) for s in range(4)]
    assert all(not np.array_equal(arrays[0], a) for a in arrays[1:])


def test_image_mock_shape_and_mode():
    rng = np.random.default_rng(0)
    for _ in range(10):
        im = Image().mock(rng)
        assert im.mode == "RGB" and 16 <= im.width <= 48 and 16 <= im.height <= 48
    gray = Image(channels=1, size=(5, 7)).mock(rng)
    assert gray.mode == "L" and (gray.height, gray.width) == (5, 7)


def test_encoded_block_mocks_have_the_declared_types():
    rng = np.random.default_rng(0)
    t = ImageTensor(1, (3, 5)).mock(rng)
    assert t.shape == (1, 3, 5) and t.dtype == torch.float32
    c = ClassIndex(["a", "b", "c"]).mock(rng)
    assert c.ndim == 0 and c.dtype == torch.int64 and 0 <= int(c) < 3
    o = OneHotTensor(["a", "b"]).mock(rng)
    assert o.shape == (2,) and o.dtype == torch.float32 and set(o.tolist()) <= {0.0, 1.0}
    assert ImageTensor(2, (4, 6)).shape() == (2, 4, 6) and ClassIndex([1]).shape() == () \
        and OneHotTensor([1, 2]).shape() == (2,)


def test_label_from_data_is_sorted_and_distinct():
    assert Label.from_data(["dog", "cat", "dog", "bird"]).classes == ["bird", "cat", "dog"]
    assert Label.from_data(np.array([3, 1, 2, 1])).classes == [1, 2, 3]
    assert all(type(c) is int for c in Label.from_data(np.array([3, 1])).classes)  # JSON-able
    assert LabelMulti.from_data([["b"], [], ["c", "a"]]).classes == ["a", "b", "c"]
    with pytest.raises(ValueError, match="empty"):
        Label.from_data([])
    with pytest.raises(ValueError, match="empty"):
        LabelMulti.from_data([])


def test_label_dedupes_keeping_first_order():
    label = Label(["b", "a", "b", "c", "a"])
    assert label.classes == ["b", "a", "c"]
    assert [label.index(c) for c in ["b", "a", "c"]] == [0, 1, 2]
    assert label == Label(["b", "a", "c"])
    assert LabelMulti(["x", "x", "y"]).classes == ["x", "y"]
    assert Mask([0, 1, 1]).classes == [0, 1]


def test_label_checks():
    label = Label(["cat", "dog"])
    assert label.check("cat") and not label.check("Cat") and not label.check(None)
    multi = LabelMulti(["a", "b"])
    assert multi.check([]) and multi.check(("a", "b")) and multi.check({"b"})
    assert not multi.check("ab")


def test_bad_constructor_arguments():
    for make in (lambda: Label([]), lambda: LabelMulti([]), lambda: Mask([]), lambda: Keypoints(0),
                 lambda: Continuous(0), lambda: Image(channels=2), lambda: Image(size=(0, 4)),
                 lambda: Image(size=(4, 4, 4))):
        with pytest.raises(ValueError):
            make()


def test_from_dict_unknown_kind():
    with pytest.raises(ValueError, match="unknown block kind 'Nope'"):
        Block.from_dict({"kind": "Nope"})


def test_readable_repr():
    assert repr(Label(["cat", "dog"])) == "Label(classes=['cat', 'dog'])"
    assert repr(Label(range(10))) == "Label(classes=[0, 1, 2, ... 10 items])"
    assert repr(Image(channels=1, size=(8, 8))) == "Image(channels=1, size=[8, 8])"
    assert repr(Image()) == "Image(channels=None)"
    assert repr(Keypoints(3)) == "Keypoints(n=3)"
    assert repr(Mask(["bg", "fg"])) == "Mask(classes=['bg', 'fg'])"
    assert repr(ImageTensor(3, (4, 5))) == "ImageTensor(channels=3, size=[4, 5])"


def test_block_equality_is_by_kind_and_params():
    assert Label(["a", "b"]) == Label(("a", "b"))
    assert Label(["a", "b"]) != Label(["b", "a"])
    assert Label(["a"]) != LabelMulti(["a"]) and Label(["a"]) != Mask(["a"])
    assert Image(size=(3, 4)) == Image(size=[3, 4]) and Image(1) != Image(3)
    assert len({Label(["a"]), Label(["a"]), Label(["b"])}) == 2


def test_image_accepts_arrays_tensors_and_converts_modes():
    block = Image()
    assert block.check(np.zeros((5, 6), np.uint8)) and block.check(np.zeros((5, 6, 4), np.uint8))
    assert block.check(torch.zeros(3, 5, 6, dtype=torch.uint8))
    rgba = PILImage.new("RGBA", (4, 3), (10, 20, 30, 0))  # fully transparent -> white
    assert block.to_pil(rgba).mode == "RGB" and block.to_pil(rgba).getpixel((0, 0)) == (255, 255, 255)
    assert Image(channels=1).to_pil(PILImage.new("RGB", (2, 2), (255, 0, 0))).mode == "L"
    assert Image(channels=3).to_pil(PILImage.new("L", (2, 2), 7)).getpixel((1, 1)) == (7, 7, 7)
    i16 = PILImage.fromarray(np.full((2, 2), 65535, np.uint16))
    assert block.to_pil(i16).mode == "L" and block.to_pil(i16).getpixel((0, 0)) == 255
    floats = np.full((2, 3), 0.5, np.float32)
    assert block.to_pil(floats).getpixel((0, 0)) == 128
    t = torch.full((3, 2, 2), 9, dtype=torch.uint8)
    assert block.to_pil(t).getpixel((0, 0)) == (9, 9, 9)
    with pytest.raises(BlockValueError, match="row 3"):
        block.to_pil("x", where="row 3")


def _same_value(a, b):
    if isinstance(a, PILImage.Image):
        return a.mode == b.mode and a.size == b.size and np.array_equal(np.asarray(a), np.asarray(b))
    if isinstance(a, torch.Tensor):
        return a.dtype == b.dtype and torch.equal(a, b)
    if isinstance(a, np.ndarray):
        return a.dtype == b.dtype and np.array_equal(a, b)
    return a == b
