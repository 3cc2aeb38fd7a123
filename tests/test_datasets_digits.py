"""The built-in digits dataset and the registry's local side (catalog, register, unknown names)."""
import hashlib

import numpy as np
import pytest

from hotstart.blocks import Image, Label
from hotstart.datasets import DatasetError, Registry, Samples, catalog, load, register
from hotstart.datasets import registry as registry_module
from hotstart.datasets.digits import DIGITS_CONTENT_SHA256, DIGITS_FILE


def test_digits_loads():
    data, blocks = load("digits")
    inputs, targets = data
    assert len(inputs) == len(targets) == 1797
    assert blocks == (Image(channels=1), Label(list(range(10))))
    assert isinstance(inputs, Samples)  # images are built when read
    img = inputs[0]
    assert img.mode == "L" and img.size == (8, 8)
    assert all(type(t) is int for t in targets) and set(targets) == set(range(10))
    counts = np.bincount(targets)
    assert counts.min() >= 170 and counts.max() <= 190  # balanced-ish: 174..183
    image, label = blocks
    image.validate(inputs[5])
    label.validate(targets[5])


def test_digits_pixels_are_the_shipped_data():
    data, _ = load("digits")
    arr = np.asarray(data.inputs[0])
    assert arr.dtype == np.uint8 and arr.min() == 0 and arr.max() == 239  # 15 * 255 / 16, rounded
    with np.load(DIGITS_FILE, allow_pickle=False) as npz:
        images, targets = npz["images"], npz["targets"]
        content = hashlib.sha256(images.tobytes() + targets.tobytes()).hexdigest()
    assert content == DIGITS_CONTENT_SHA256
    assert images.max() == 255 and len(np.unique(images)) == 17  # the 17 levels 0..16, scaled
    assert np.array_equal(np.asarray(data.inputs[100]), images[100])


def test_digits_data_file_has_no_pickles():
    with np.load(DIGITS_FILE, allow_pickle=False) as npz:
        assert sorted(npz.files) == ["images", "targets"]
        assert npz["images"].dtype == np.uint8 and npz["targets"].dtype == np.uint8


def test_catalog_lists_builtins_with_metadata():
    entries = {e["name"]: e for e in catalog()}
    assert {"digits", "imagenette2-160", "oxford-iiit-pet", "mnist_png"} <= set(entries)
    assert entries["digits"]["remote"] is False and entries["digits"]["license"] == "CC BY 4.0"
    for e in entries.values():
        assert {"name", "description", "source", "license", "size", "remote"} <= set(e)
        if e["remote"]:
            assert e["url"].startswith("https://")


def test_unknown_name_lists_known_names():
    with pytest.raises(DatasetError, match=r"unknown dataset 'nope'.*'digits'"):
        load("nope")


def test_register_on_a_fresh_registry_leaves_the_default_alone():
    reg = Registry()
    reg.register("tiny", lambda n=3: ((list(range(n)), [0] * n), None), description="three zeros")
    assert reg.names() == ["tiny"] and "tiny" not in registry_module.default_registry
    (inputs, _), _ = reg.load("tiny", n=2)
    assert inputs == [0, 1]
    with pytest.raises(ValueError, match="already exists"):
        reg.register("tiny", lambda: None)
    reg.register("tiny", lambda: "new", replace=True)
    assert reg.load("tiny") == "new"
    with pytest.raises(ValueError, match="must be letters"):
        reg.register("../up", lambda: None)
    with pytest.raises(DatasetError, match="nothing to fetch"):
        reg.fetch("tiny")


def test_register_on_default_registry_is_undoable():
    before = [e["name"] for e in catalog()]
    register("mine", lambda: "mine-data", description="test entry")
    try:
        assert load("mine") == "mine-data"
    finally:
        registry_module.unregister("mine")
    assert [e["name"] for e in catalog()] == before


def test_builtin_entries_are_fresh_each_call():
    a, b = registry_module.builtin_entries(), registry_module.builtin_entries()
    assert a is not b and [e.name for e in a] == [e.name for e in b]
