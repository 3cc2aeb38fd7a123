"""Property-based tests (hypothesis) for the parts that take user data: every block's check /
validate / mock / JSON round trip, every encoding's encode -> decode on mocks, the image value
rules, and the containers' subset / split. Example counts come from the hypothesis profile that
tests/conftest.py loads ("ci" by default; HYPOTHESIS_PROFILE=dev or thorough for more)."""
import json

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from hotstart.blocks import (Block, BlockValueError, ClassIndex, Continuous, Image, ImageTensor, Keypoints, Label,
                             LabelMulti, Mask, OneHotTensor)
from hotstart.datasets import Data, source_index, split_random, split_train_valid
from hotstart.encodings import Context, Encoding, ImagePreprocessing, MultiHot, OneHot, ProjectiveTransforms

# --- strategies ------------------------------------------------------------------------------

text_classes = st.lists(st.text(min_size=1, max_size=6), min_size=1, max_size=8, unique=True)
int_classes = st.lists(st.integers(-1000, 1000), min_size=1, max_size=8, unique=True)
classes = st.one_of(text_classes, int_classes)
sizes = st.tuples(st.integers(1, 24), st.integers(1, 24))
seeds = st.integers(0, 2**32 - 1)

blocks = st.one_of(
    st.builds(Image, channels=st.sampled_from([None, 1, 3]), size=st.one_of(st.none(), sizes)),
    st.builds(Label, classes), st.builds(LabelMulti, classes), st.builds(Mask, classes),
    st.builds(Keypoints, st.integers(1, 6)), st.builds(Continuous, st.integers(1, 6)),
    st.builds(ImageTensor, st.sampled_from([1, 3]), sizes), st.builds(ClassIndex, classes),
    st.builds(OneHotTensor, classes),
)


def _same(a, b):
    if isinstance(a, torch.Tensor):
        return a.dtype == b.dtype and torch.equal(a, b)
    if hasattr(a, "mode") and hasattr(a, "getpixel"):  # PIL
        return a.mode == b.mode and a.size == b.size and np.array_equal(np.asarray(a), np.asarray(b))
    if isinstance(a, np.ndarray):
        return a.dtype == b.dtype and np.array_equal(a, b)
    return a == b


# --- blocks ----------------------------------------------------------------------------------

@given(blocks, seeds)
def test_block_mock_is_valid_and_reproducible(block, seed):
    value = block.mock(np.random.default_rng(seed))
    assert block.check(value)
    assert block.validate(value, where="mock") is value
    assert _same(value, block.mock(np.random.default_rng(seed)))


@given(blocks)
def test_block_json_round_trip(block):
    d = json.loads(json.dumps(block.to_dict()))
    back = Block.from_dict(d)
    assert type(back) is type(block) and back == block and back.to_dict() == block.to_dict()
    assert repr(back) == repr(block)


@given(blocks, st.sampled_from([object(), "not a value", None, 3.5j]))
def test_block_refuses_foreign_values_with_a_clear_error(block, value):
    assert not block.check(value)
    with pytest.raises(BlockValueError, match=r"^row 7: .*\(block "):
        block.validate(value, where="row 7")


@given(classes, st.data())
def test_label_accepts_exactly_its_classes(cls, data):
    label = Label(cls)
    value = data.draw(st.one_of(st.sampled_from(cls), st.text(max_size=3), st.integers(-2000, 2000)))
    assert label.check(value) == (value in cls)


# --- image value rules -------------------------------------------------------------------------

int_dtypes = st.sampled_from([np.int8, np.int16, np.int32, np.int64, np.uint32, np.uint64])


@given(st.integers(1, 6), st.integers(1, 6), seeds)
def test_uint16_scaling_is_a_fixed_function_of_the_value(h, w, seed):
    arr = np.random.default_rng(seed).integers(0, 65536, (h, w), dtype=np.uint16)
    out = np.asarray(Image().to_pil(arr)).astype(np.int64)
    assert np.array_equal(out, np.floor(arr.astype(np.float64) * 255 / 65535 + 0.5).astype(np.int64))


@given(int_dtypes, st.integers(-300, 300), st.integers(-300, 300))
def test_other_integers_are_8_bit_values_or_refused(dtype, lo, hi):
    info = np.iinfo(dtype)
    lo, hi = (int(np.clip(v, int(info.min), int(info.max))) for v in sorted((lo, hi)))
    arr = np.array([[lo, hi]], dtype=dtype)
    ok = 0 <= lo and hi <= 255
    assert Image().check(arr) == ok
    if ok:
        assert np.asarray(Image().to_pil(arr)).tolist() == [[lo, hi]]


@given(st.lists(st.floats(-2, 300, allow_nan=False), min_size=1, max_size=6))
def test_floats_are_unit_range_or_refused(values):
    arr = np.array([values], np.float32)
    ok = bool(arr.min() >= 0 and arr.max() <= 1)
    assert Image().check(arr) == ok
    if ok:
        assert np.array_equal(np.asarray(Image().to_pil(arr)), np.floor(arr.astype(np.float64) * 255 + 0.5))


# --- encodings: encode -> decode on mocks ------------------------------------------------------

def _round_trip(enc: Encoding, block, value, context=Context.VALIDATION, rng=None):
    encoded_block = enc.encoded_block(block)
    x = enc.encode(block, value, context, rng)
    assert encoded_block.check(x), encoded_block._problem(x)
    return enc.decode(encoded_block, x)


@given(classes, st.booleans(), seeds)
def test_onehot_round_trip(cls, as_index, seed):
    block = Label(cls)
    value = block.mock(np.random.default_rng(seed))
    assert _round_trip(OneHot(as_index), block, value) == value


@given(classes, st.floats(0.01, 1.0), seeds)
def test_multihot_round_trip(cls, threshold, seed):
    block = LabelMulti(cls)
    value = block.mock(np.random.default_rng(seed))
    assert _round_trip(MultiHot(threshold), block, value) == [c for c in cls if c in value]


@given(st.sampled_from([1, 3]), sizes, st.data(), seeds)
def test_image_preprocessing_round_trip(channels, size, data, seed):
    mean = data.draw(st.lists(st.floats(-1, 1), min_size=channels, max_size=channels))
    std = data.draw(st.lists(st.floats(0.05, 2), min_size=channels, max_size=channels))
    enc = ImagePreprocessing(mean, std, channels=channels)
    block = Image(channels=channels, size=size)
    img = block.mock(np.random.default_rng(seed))
    assert _same(_round_trip(enc, block, img), img)


@given(st.sampled_from([1, 3]), sizes, seeds)
def test_projective_round_trip_at_own_size(channels, size, seed):
    """Validation at the image's own size is the identity; decode is the identity too."""
    import torchvision.transforms.v2.functional as F

    block = Image(channels=channels, size=size)
    img = block.mock(np.random.default_rng(seed))
    out = _round_trip(ProjectiveTransforms(size, augment=True), block, img)
    assert torch.equal(out, F.pil_to_tensor(img))


@given(sizes, sizes, st.booleans(), seeds)
def test_projective_training_is_shaped_and_reproducible(src, size, with_mask, seed):
    pt = ProjectiveTransforms(size)
    image, mask = Image(channels=3, size=src), Mask(["bg", "a", "b"])
    img = image.mock(np.random.default_rng(seed))
    m = np.random.default_rng(seed + 1).integers(1, 3, src, dtype=np.uint8)
    blocks_, values = ([image, mask], [img, m]) if with_mask else ([image], [img])
    a = pt.encode_sample(blocks_, values, Context.TRAINING, np.random.default_rng(seed))
    b = pt.encode_sample(blocks_, values, Context.TRAINING, np.random.default_rng(seed))
    assert all(torch.equal(x, y) for x, y in zip(a, b))
    assert pt.encoded_block(image).check(a[0])
    if with_mask:  # nearest-neighbour: no new classes, only 0 where rotation uncovers the canvas
        assert a[1].shape == size and set(a[1].unique().tolist()) <= {0, 1, 2}


# --- containers ----------------------------------------------------------------------------

@st.composite
def data_and_indices(draw):
    n = draw(st.integers(1, 40))
    idx = draw(st.lists(st.integers(0, n - 1), max_size=2 * n))
    return n, idx


@given(data_and_indices(), st.data())
def test_subset_of_subset_maps_to_the_source(ni, data):
    n, idx = ni
    d = Data(list(range(n)), [f"t{i}" for i in range(n)])
    s = d.subset(idx)
    assert list(s.inputs) == idx and list(s.targets) == [f"t{i}" for i in idx]
    if idx:
        inner = data.draw(st.lists(st.integers(0, len(idx) - 1), max_size=10))
        ss = s.subset(inner)
        assert list(ss.inputs) == [idx[j] for j in inner]
        assert [source_index(ss.inputs, p) for p in range(len(inner))] == [idx[j] for j in inner]
    with pytest.raises(IndexError):
        s.inputs[len(idx)]


@given(st.integers(2, 500), st.floats(0.01, 0.99), st.one_of(st.none(), seeds))
def test_split_random_partitions(n, pct, seed):
    train, valid = split_random(n, pct, seed if seed is not None else 0)
    assert sorted(train + valid) == list(range(n)) and not set(train) & set(valid)
    assert train == sorted(train) and valid == sorted(valid)
    assert len(valid) == min(max(1, int(round(n * pct))), n - 1)
    assert (train, valid) == split_random(n, pct, seed if seed is not None else 0)


@given(st.integers(3, 60), st.data())
def test_split_and_split_train_valid_keep_test_out(n, data):
    roles = data.draw(st.lists(st.sampled_from(["train", "valid", "test", None]), min_size=n, max_size=n))
    splits = {r: [i for i in range(n) if roles[i] == r] for r in ("train", "valid", "test")}
    splits = {k: v for k, v in splits.items() if v}
    d = Data(list(range(n)), ["x"] * n, splits)
    for name, idx in splits.items():
        assert list(d.split(name).inputs) == idx
    with pytest.raises(KeyError, match="no split named 'nope'"):
        d.split("nope")
    test = set(splits.get("test", []))
    if "train" in splits:
        pool = set(splits["train"])
    else:
        pool = {i for i in range(n) if i not in {j for v in splits.values() for j in v}}
    if "valid" not in splits and len(pool) < 2:
        with pytest.raises(ValueError):
            split_train_valid(d, 0.3, seed=0)
        return
    train, valid = split_train_valid(d, 0.3, seed=0)
    tr, va = set(train.inputs), set(valid.inputs)
    assert not (tr | va) & test
    if "valid" in splits:
        assert tr == pool and va == set(splits["valid"])
    else:  # validation is cut from the training pool
        assert tr | va == pool and not tr & va and va
